#!/usr/bin/env bash
# Writes DIR/config.toml for a private containerd (root, state and sockets under DIR) whose CRI
# plugin works on this kind of machine. Used by the tests (tests/support/containerd.cpp) and the
# demo, so both run containerd the same way. With TCP_ADDRESS (127.0.0.1:PORT) containerd also
# serves gRPC, CRI included, on that plain TCP address: the Windows dxshim.exe under wine reaches
# it there (gRPC 1.51 has no unix sockets on Windows).
# usage: containerd-config.sh DIR [TCP_ADDRESS]
set -euo pipefail
dir=${1:?usage: containerd-config.sh DIR [TCP_ADDRESS]}
tcp=${2:-}
cat >"$dir/config.toml" <<TOML
version = 2
root = "$dir/root"
state = "$dir/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
                    "io.containerd.internal.v1.opt"]
[grpc]
  address = "$dir/containerd.sock"
  tcp_address = "$tcp"
[ttrpc]
  address = "$dir/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  # The images are built locally (scripts/build-test-images.sh); nothing is pulled.
  sandbox_image = "registry.k8s.io/pause:3.6"
  # Sandboxes without CAP_SYS_RESOURCE: otherwise runc fails with
  # "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  # Several containerds may run at once: no fixed streaming port.
  stream_server_port = "0"
  # CRI on the TCP address too, when there is one.
  disable_tcp_service = $([ -n "$tcp" ] && echo false || echo true)
  # A second runc runtime under another handler name: the tests list it in dxshim's
  # vm-runtime-handlers, where on Windows containerd's runhcs-wcow-hypervisor (Hyper-V isolation)
  # would stand, and it carries that handler's option, SandboxIsolation = 1 (HYPERVISOR), which
  # runc ignores and dxshim doctor reads back from containerd's Status. Naming one runtime
  # replaces containerd's default table, so runc is named too.
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.dxshim-test-vm]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.dxshim-test-vm.options]
        SandboxIsolation = 1
  [plugins."io.containerd.grpc.v1.cri".cni]
    # No CNI: pods use the host network.
    bin_dir = "$dir/cni/bin"
    conf_dir = "$dir/cni/conf"
TOML
