#!/usr/bin/env bash
# The installer DaemonSet's image (deploy/windows/installer-daemonset.yaml), from the release zip
# (scripts/package-windows.sh), here, with no Windows machine and no registry: writes
# OUT_DIR/dxshim-installer-<version>.oci.tar, an OCI image layout as a tar (skopeo's oci-archive:
# transport), one manifest for windows/amd64 with ONE gzip layer holding the zip's files, its own
# paths kept, under Files/dxshim-release/ (scripts/installer_image.py writes it).
#
# - The layer is a Windows *child* layer, as crane append (go-containerregistry
#   internal/windows/windows.go) and BuildKit (util/winlayers/differ.go) write one: directories
#   Hives/ and Files/ first, every path under Files/, PAX records MSWINDOWS.fileattr,
#   MSWINDOWS.rawsd (a binary security descriptor, base64) and LIBARCHIVE.creationtime, which
#   go-winio's backuptar turns into the file's attributes on import (containerd
#   pkg/archive/tar_opts_windows.go applyWindowsLayer -> hcsshim ociwclayer.ImportLayerFromTar).
#   Media type application/vnd.oci.image.layer.v1.tar+gzip (containerd core/images/mediatypes.go).
# - It is not runnable alone: hcsshim imports a layer with no parent as a base layer
#   (internal/wclayer/importlayer.go), which needs registry hives under Files/Windows/System32/config.
#   scripts/push-installer-image.sh puts it on the HostProcess base image named by the label
#   io.dxshim.base-image: mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0
#   pinned by digest (as Azure/azure-container-networking cns/Dockerfile pins it). That base
#   (microsoft/windows-host-process-containers-base-image v1.0.0 = 8383af35) is one Files/-only
#   layer, os windows, architecture amd64 and no os.version (d3e3f82), so containerd >= 1.7 runs
#   it on any Windows Server version (platforms/defaults_windows.go, containerd#8101).
# - In the pod, hcsshim's job container mounts the image at CONTAINER_SANDBOX_MOUNT_POINT
#   (internal/jobcontainers/storage.go, jobcontainer.go): Files/dxshim-release/x is
#   %CONTAINER_SANDBOX_MOUNT_POINT%\dxshim-release\x.
# - Reproducible: sorted entries, the zip entries' times (the directories take the newest), uid/gid
#   0, gzip mtime 0; the same zip gives the same digests.
# The config carries no os.version, rootfs.diff_ids = [the uncompressed layer's sha256], a history
# entry, and the labels (also manifest annotations) io.dxshim.base-image, io.dxshim.assembly.
# Prints "ARCHIVE manifest sha256:... layer sha256:...".
# usage: build-installer-image.sh [ZIP] [OUT_DIR]
#   (default ZIP dist/dxshim-<version>-windows-amd64.zip, OUT_DIR dist/, both in the checkout)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^project(dxshim VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
zip=${1:-$root/dist/dxshim-$version-windows-amd64.zip}
out=${2:-$root/dist}
# What the installer pod runs and install.ps1 takes from beside itself: refused if missing.
required="dxshim.exe dxshim-devices.exe install.ps1 installer-pod.ps1 dxshim.yaml"
[ -f "$zip" ] || { echo "build-installer-image.sh: no release zip $zip (scripts/package-windows.sh makes it)" >&2; exit 1; }
mkdir -p "$out"
# shellcheck disable=SC2086  # the names are words
python3 "$root/scripts/installer_image.py" build "$zip" "$out/dxshim-installer-$version.oci.tar" \
  "$version" $required
