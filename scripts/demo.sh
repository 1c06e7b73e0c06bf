#!/usr/bin/env bash
# The demo: dxshim in front of a real containerd on this machine. Installs dependencies, builds,
# starts a private containerd and dxshim with an example inventory (linux target; the "GPU" is a
# device node made here, as this machine has none), runs a pod that asks for a GPU the way kubelet
# would, shows what its container sees and that a second GPU pod is refused, shows that
# containerd's own API passes through, shows what dxshim's metrics endpoint reports, shows two
# pods sharing the GPU by memory and a third refused (a second dxshim, 4 pods per GPU), prints what
# `dxshim rewrite --explain` would do for a CUDA pod on a Windows Tesla T4 node, runs
# `dxshim doctor` on the whole path, and stops everything cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
top=$(pwd)
work=$(mktemp -d /tmp/dxshim-demo-XXXXXX)
gpu_node=/dev/dxshim-demo-gpu0
cleanup() {
  rm -f "$gpu_node"
  [ -n "${dxshim_pid:-}" ] && kill "$dxshim_pid" 2>/dev/null || true
  [ -n "${memory_pid:-}" ] && kill "$memory_pid" 2>/dev/null || true
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

echo "== 2. the node's GPU inventory (a device node and one runtime file made by this demo)"
rm -f "$gpu_node" && mknod -m 666 "$gpu_node" c 1 3
mkdir -p "$work/driver-store"
echo "a GPU runtime library from the driver store" >"$work/driver-store/libdemo-gpu.so"
sed -e "s|@GPU_NODE@|$gpu_node|" -e "s|@STORE@|$work/driver-store|" \
  scripts/demo-inventory.yaml.in >"$work/inventory.yaml"
build/shim/dxshim devices --source "inventory:$work/inventory.yaml" | sed 's/^/   /'
echo "   the node labels the scheduler can select by (dxshim devices --output labels):"
build/shim/dxshim devices --source "inventory:$work/inventory.yaml" --output labels | sed 's/^/     /'

echo "== 3. dxshim serve in front of containerd (linux target, 1 container per GPU)"
build/shim/dxshim serve --listen "$work/dxshim.sock" --runtime "$work/containerd.sock" \
  --device-source "inventory:$work/inventory.yaml" --target linux \
  --max-containers-per-device 1 --linux-system32-path /usr/lib/dxshim \
  --device-plugin-dir "$work/device-plugins" --metrics-listen 127.0.0.1:0 \
  --vm-runtime-handlers dxshim-test-vm >"$work/dxshim.log" 2>&1 &
dxshim_pid=$!
wait_for_socket "$work/dxshim.sock"
ls -l "$work/dxshim.sock" | sed 's/^/   /'

echo "== 4. a pod that asks for a GPU, the way kubelet runs one, through dxshim's socket"
build/tests/cri_demo "$work/dxshim.sock" "$work" "$gpu_node" /usr/lib/dxshim/libdemo-gpu.so

echo "== 5. containerd's own API (not CRI) passes through untouched: ctr via dxshim"
ctr --address "$work/dxshim.sock" version | sed 's/^/   /'

echo "== 6. what an operator's Prometheus sees: dxshim's /metrics and /readyz (metrics-listen)"
echo "   (the first pod was removed above: its GPU has no holder any more)"
metrics=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/dxshim.log" | head -n 1)
python3 - "$metrics" <<'PY' | sed 's/^/   /'
import sys, urllib.error, urllib.request
base = sys.argv[1]
try:
    urllib.request.urlopen(base + "/readyz")
    print("GET /readyz: 200 ready")
except urllib.error.HTTPError as e:
    print("GET /readyz:", e.code, e.read().decode().strip())
text = urllib.request.urlopen(base + "/metrics").read().decode()
wanted = ("dxshim_create_container_decisions_total", "dxshim_gpu_pods", "dxshim_gpu_pod_slots",
          'dxshim_cri_calls_total{code="OK",method="CreateContainer"',
          'dxshim_cri_calls_total{code="RESOURCE_EXHAUSTED"', "dxshim_runtime_connected",
          "dxshim_build_info")
for line in text.splitlines():
    # the outcomes that did not happen are there too, at 0: left out here
    zero_decision = line.startswith("dxshim_create_container_decisions_total") and line.endswith(" 0")
    if line.startswith(wanted) and not zero_decision:
        print(line)
print(f"({len(text.splitlines())} lines in all; docs/metrics.md lists them)")
PY

echo "== 7. one GPU shared by memory: a second dxshim on its own socket, 4 pods per GPU, whose"
echo "   pods reserve GPU memory (dxshim.io/gpu-memory) of the demo's 16Gi GPU"
build/shim/dxshim serve --listen "$work/dxshim-memory.sock" --runtime "$work/containerd.sock" \
  --device-source "inventory:$work/inventory.yaml" --target linux \
  --max-containers-per-device 4 --linux-system32-path /usr/lib/dxshim --device-plugin false \
  --metrics-listen 127.0.0.1:0 >"$work/dxshim-memory.log" 2>&1 &
memory_pid=$!
wait_for_socket "$work/dxshim-memory.sock"
memory_metrics=$(grep -o '127.0.0.1:[0-9]*' "$work/dxshim-memory.log" | head -n 1)
build/tests/cri_demo --memory "$work/dxshim-memory.sock" "$work" "$memory_metrics"
kill -TERM "$memory_pid"
wait "$memory_pid"
memory_pid=

echo "== 8. the same kind of request on a Windows node with a Tesla T4: dxshim rewrite --explain"
echo "   (deploy/examples/rewrite/pod-cuda.json asks for an NVIDIA GPU with CUDA and 8Gi)"
build/shim/dxshim rewrite --explain --target windows --skip-host-file-check \
  --inventory deploy/examples/inventories/nvidia-t4.yaml --format ctr \
  deploy/examples/rewrite/container-cuda.json deploy/examples/rewrite/pod-cuda.json 2>&1 |
  sed 's/^/   /'

echo "== 9. dxshim doctor with serve's flags: the node's whole GPU path, a line per check and"
echo "   what to do for each one not ok (this machine runs no kubelet: the kubelet and device"
echo "   plugin lines say so)"
build/shim/dxshim doctor --listen "$work/dxshim.sock" --runtime "$work/containerd.sock" \
  --device-source "inventory:$work/inventory.yaml" --target linux \
  --max-containers-per-device 1 --linux-system32-path /usr/lib/dxshim \
  --device-plugin-dir "$work/device-plugins" --metrics-listen "${metrics#http://}" \
  --vm-runtime-handlers dxshim-test-vm |
  sed 's/^/   /' || echo "   (exit code 1: a check failed)"

echo "== 10. SIGTERM: dxshim stops, removes its socket, exits 0"
kill -TERM "$dxshim_pid"
wait "$dxshim_pid" && echo "   exit code 0"
dxshim_pid=
[ -e "$work/dxshim.sock" ] && echo "   socket still there!" || echo "   socket removed"
echo "== dxshim's log"
sed 's/^/   /' "$work/dxshim.log"
echo
echo "Point kubelet at dxshim with --container-runtime-endpoint=unix:///run/dxshim/dxshim.sock (see docs/linux.md)."
echo "Pods without dxshim.io/ annotations and without GPU devices are relayed byte-identical."
