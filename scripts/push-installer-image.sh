#!/usr/bin/env bash
# Assembles the runnable installer image and pushes it, with skopeo: copies the HostProcess base
# image (the label io.dxshim.base-image of OCI_TAR: windows-host-process-containers-base-image
# v1.0.0 pinned by digest; or $DXSHIM_HPC_BASE, any skopeo transport) for windows/amd64 into a
# temporary OCI layout, puts OCI_TAR's one layer (scripts/build-installer-image.sh) on it
# (layers and rootfs.diff_ids = the base's + ours, history appended, our labels;
# scripts/installer_image.py append), and copies the result to DESTINATION.
#
# The release layer must not be pushed alone: hcsshim imports a layer with no parent as a base
# layer (internal/wclayer/importlayer.go), and Windows' ProcessBaseLayer needs the registry hives
# the base image carries under Files/Windows/System32/config. skopeo copy takes the base's
# reference whether its digest names an index or a manifest (--override-os/--override-arch pick
# windows/amd64 from an index).
#
# DESTINATION: any skopeo transport, e.g. docker://registry.example.com/dxshim-installer:0.1.0, or
# oci-archive:/path/out.tar. Extra skopeo copy flags (credentials, TLS) in $SKOPEO_FLAGS, given to
# both copies, e.g. SKOPEO_FLAGS="--dest-creds user:token". Prints "DESTINATION sha256:DIGEST".
# usage: push-installer-image.sh OCI_TAR DESTINATION
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: push-installer-image.sh OCI_TAR DESTINATION"
oci_tar=${1:?$usage}
destination=${2:?$usage}
[ -f "$oci_tar" ] || { echo "push-installer-image.sh: no image archive $oci_tar" >&2; exit 1; }
label=${DXSHIM_HPC_BASE:-$(python3 "$root/scripts/installer_image.py" base-ref "$oci_tar")}
base=${DXSHIM_HPC_BASE:-docker://$label}
# skopeo (1.9, Debian 12) refuses a reference with both a tag and a digest ("Docker references
# with both a tag and digest are currently not supported"): the digest alone pins it.
if [[ $base == docker://*@* ]]; then
  repo=${base%@*}
  [[ ${repo##*/} == *:* ]] && repo=${repo%:*}
  base=$repo@${base#*@}
fi
read -r -a flags <<<"${SKOPEO_FLAGS:-}"
layout=$(mktemp -d)
trap 'rm -rf "$layout"' EXIT

echo "base: $base" >&2
skopeo --override-os windows --override-arch amd64 copy --quiet ${flags[@]+"${flags[@]}"} \
  "$base" "oci:$layout/image:base"
assembled=$(python3 "$root/scripts/installer_image.py" append "$oci_tar" "$layout/image" base dxshim "$label")
echo "assembled: $assembled" >&2
skopeo copy --quiet --digestfile "$layout/digest" ${flags[@]+"${flags[@]}"} \
  "oci:$layout/image:dxshim" "$destination"
echo "$destination $(cat "$layout/digest")"
