#!/usr/bin/env bash
# Builds the two container images the tests and the demo use, as single-layer OCI archives that
# `ctr images import` loads (there is no registry here):
#   OUT/pause.tar    registry.k8s.io/pause:3.6   a static pause binary (tests/images/pause.c)
#   OUT/busybox.tar  dxshim.test/busybox:1        Debian's busybox-static with applet links
# Usage: build-test-images.sh OUT_DIR
set -euo pipefail
out=${1:?usage: build-test-images.sh OUT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }

# make_image NAME REF ROOTFS_DIR CONFIG_JSON_FRAGMENT
make_image() {
  local name=$1 ref=$2 rootfs=$3 cfg=$4
  local dir=$work/$name-oci
  mkdir -p "$dir/blobs/sha256"
  # Reproducible layer: fixed owner, mtime and order.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$work/$name-layer.tar" .
  local layer_digest layer_size
  layer_digest=$(sha "$work/$name-layer.tar")
  layer_size=$(size "$work/$name-layer.tar")
  cp "$work/$name-layer.tar" "$dir/blobs/sha256/$layer_digest"
  printf '{"architecture":"amd64","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$cfg" "$layer_digest" >"$work/$name-config.json"
  local config_digest config_size
  config_digest=$(sha "$work/$name-config.json")
  config_size=$(size "$work/$name-config.json")
  cp "$work/$name-config.json" "$dir/blobs/sha256/$config_digest"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "$config_digest" "$config_size" "$layer_digest" "$layer_size" >"$work/$name-manifest.json"
  local manifest_digest manifest_size
  manifest_digest=$(sha "$work/$name-manifest.json")
  manifest_size=$(size "$work/$name-manifest.json")
  cp "$work/$name-manifest.json" "$dir/blobs/sha256/$manifest_digest"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "$manifest_digest" "$manifest_size" "$ref" "${ref##*:}" >"$dir/index.json"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$dir" -cf "$out/$name.tar" .
}

# pause
mkdir -p "$work/pause-root"
gcc -static -Os -o "$work/pause-root/pause" "$here/tests/images/pause.c"
strip "$work/pause-root/pause"
make_image pause registry.k8s.io/pause:3.6 "$work/pause-root" '{"Entrypoint":["/pause"]}'

# busybox
bb=/bin/busybox
[ -x "$bb" ] || { echo "build-test-images: $bb missing (apt-get install busybox-static)" >&2; exit 1; }
mkdir -p "$work/bb-root/bin" "$work/bb-root/etc" "$work/bb-root/tmp" "$work/bb-root/dev" "$work/bb-root/proc" "$work/bb-root/sys"
cp "$bb" "$work/bb-root/bin/busybox"
for applet in sh ls cat echo sleep test stat id env true false head wc mount grep; do
  ln -s busybox "$work/bb-root/bin/$applet"
done
echo 'root:x:0:0:root:/root:/bin/sh' >"$work/bb-root/etc/passwd"
echo 'root:x:0:' >"$work/bb-root/etc/group"
make_image busybox dxshim.test/busybox:1 "$work/bb-root" '{"Env":["PATH=/bin"],"Cmd":["sh"]}'
echo "built $out/pause.tar $out/busybox.tar"
