#!/usr/bin/env bash
# The demo: dxshim in front of a real containerd on this machine. Installs dependencies, builds,
# starts a private containerd and dxshim, runs a pod through dxshim the way kubelet would, shows
# that containerd's own API passes through too, and stops everything cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
top=$(pwd)
work=$(mktemp -d /tmp/dxshim-demo-XXXXXX)
cleanup() {
  [ -n "${dxshim_pid:-}" ] && kill "$dxshim_pid" 2>/dev/null || true
  [ -n "${containerd_pid:-}" ] && kill "$containerd_pid" 2>/dev/null && wait "$containerd_pid" 2>/dev/null || true
  grep -o " $work/[^ ]*" /proc/self/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
wait_for_socket() {
  for _ in $(seq 1 200); do [ -S "$1" ] && return 0; sleep 0.05; done
  echo "no socket at $1" >&2
  return 1
}

echo "== 1. a private containerd ($(containerd --version | cut -d' ' -f3)) in $work"
scripts/containerd-config.sh "$work"
containerd --config "$work/config.toml" >"$work/containerd.log" 2>&1 &
containerd_pid=$!
wait_for_socket "$work/containerd.sock"
for image in pause busybox; do
  ctr --address "$work/containerd.sock" -n k8s.io images import "build/test-images/$image.tar" >/dev/null
done
ctr --address "$work/containerd.sock" -n k8s.io images ls -q | grep -v '^sha256:' | sed 's/^/   image: /'

echo "== 2. dxshim serve in front of it"
build/shim/dxshim serve --listen "$work/dxshim.sock" --runtime "$work/containerd.sock" \
  >"$work/dxshim.log" 2>&1 &
dxshim_pid=$!
wait_for_socket "$work/dxshim.sock"
ls -l "$work/dxshim.sock" | sed 's/^/   /'

echo "== 3. a pod, the way kubelet runs one, through dxshim's socket"
build/tests/cri_demo "$work/dxshim.sock" "$work"

echo "== 4. containerd's own API (not CRI) passes through untouched: ctr via dxshim"
ctr --address "$work/dxshim.sock" version | sed 's/^/   /'

echo "== 5. SIGTERM: dxshim stops, removes its socket, exits 0"
kill -TERM "$dxshim_pid"
wait "$dxshim_pid" && echo "   exit code 0"
dxshim_pid=
[ -e "$work/dxshim.sock" ] && echo "   socket still there!" || echo "   socket removed"
echo "== dxshim's log"
sed 's/^/   /' "$work/dxshim.log"
echo
echo "Point kubelet at dxshim with --container-runtime-endpoint=unix:///run/dxshim/dxshim.sock (see README.md)."
echo "GPU selection and injection on CreateContainer arrive with the device inventory and allocation work;"
echo "today every call, CreateContainer included, is relayed byte-identical."
