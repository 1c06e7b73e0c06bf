#!/usr/bin/env bash
# `dxshim.exe install` takes over containerd's pipe on an AKS Windows node, under wine, with the
# node as AgentBaker provisions it (tests/support/aks_fixtures.sh: containerd and kubelet under
# NSSM, kubeletstart.ps1 run by the PowerShell stand-in, Kubeproxy depending on Kubelet, all
# started at boot by the k8s-restart-job task's windowsnodereset.ps1; containerd's config.toml
# from AgentBaker's version 1 template, then its version 3 one). The stand-ins speak real gRPC and
# TTRPC (tests/support/node_standin/main.cpp).
#   - a task started before the takeover (its shim holds containerd's TTRPC pipe, read once) and
#     killed after it through dxshim with ctr reaches containerd as exited (events.log): the
#     takeover keeps the TTRPC pipe;
#   - kubelet is never restarted by install; containerd once; install says how long kubelet had
#     no runtime, and dxshim, asked over the pipe, names the running kubelet (healthzPort 0, no
#     metrics endpoint: the proof needs neither);
#   - a kubelet restart (Restart-Service, which runs kubeletstart.ps1 again) and a reboot (every
#     service stopped, then the boot task) leave kubelet on dxshim, the other task running;
#   - cleanupnetwork.ps1's ctr calls (an HNS network left) reach containerd through dxshim and its
#     kills arrive as exits; doctor reports the takeover and its TTRPC pipe;
#   - uninstall puts every value back byte for byte, and kubelet calls containerd directly again.
# usage: node_install_aks_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll
set -uo pipefail
source "$(dirname "$0")/../support/wine_test_env.sh"
source "$(dirname "$0")/../support/node_fixtures.sh" "$@"
source "$(dirname "$0")/../support/aks_fixtures.sh"
shim_log=$(host_path 'C:\Windows\System32\shim.log')
removed() { exited "$1" && ! task_running "$1"; }

for version in 1 3; do
  echo "== AKS, containerd config version $version"
  aks_node "$version"
  reboot "$aks_services" "${aks_boot_task[@]}"
  check "v$version: the boot task starts containerd and kubelet, whose kubelet.exe calls containerd" \
    "$(wait_for 30 kubelet_calls_containerd; echo $?)" \
    "$(tail -n 5 "$c/k/starts.log" 2>/dev/null)$(tail -n 5 "$cd_dir/calls.log" 2>/dev/null)"
  ctr -n k8s.io run --detach mcr.microsoft.com/pause early >/dev/null
  ctr -n k8s.io run --detach mcr.microsoft.com/pause kept >/dev/null
  check "v$version: two tasks run, their shims on containerd's TTRPC pipe" \
    "$(grep -qF 'ttrpc-address early \\.\pipe\containerd-containerd.ttrpc' "$shim_log"; echo $?)" \
    "$(cat "$shim_log" 2>/dev/null)"
  starts_before=$(kubelet_starts)
  containerd_before=$(lines "$cd_dir/starts.log")
  snapshot "$work/aks-$version-before" containerd Kubelet Kubeproxy

  install_proves "v$version: " 'service containerd to the first CRI call answered through \\.\pipe\containerd-containerd'
  toml=$(cat "$cd_dir/config.toml")
  if [ "$version" = 1 ]; then
    moved='address = "\\\\.\\pipe\\containerd-behind-dxshim"'
    pinned='address = "\\\\.\\pipe\\containerd-containerd.ttrpc"'
  else
    moved="address = '\\\\.\\pipe\\containerd-behind-dxshim'"
    pinned="address = '\\\\.\\pipe\\containerd-containerd.ttrpc'"
  fi
  check "v$version: containerd's gRPC pipe moved, its TTRPC pipe written out where it was, in the file's own string style" \
    "$(grep -qF "$moved" <<<"$toml" && grep -qF "$pinned" <<<"$toml"; echo $?)" "$toml"
  check "v$version: containerd restarted once, kubelet never" \
    "$([ "$(lines "$cd_dir/starts.log")" = $((containerd_before + 1)) ] && [ "$(kubelet_starts)" = "$starts_before" ]; echo $?)" \
    "$(cat "$cd_dir/starts.log")"
  check "v$version: kubelet depends on containerd and dxshim; dxshim on nothing" \
    "$([ "$(dependencies Kubelet)" = 'containerd\0dxshim' ] && [ -z "$(dependencies dxshim)" ]; echo $?)" \
    "$(dependencies Kubelet) / $(dependencies dxshim)"

  ctr -n k8s.io tasks kill early >/dev/null
  check "v$version: the task started before the takeover, killed through dxshim, reaches containerd as exited" \
    "$(wait_for 60 exited early; echo $?)" \
    "$(cat "$cd_dir/events.log" 2>/dev/null)$(grep early "$shim_log")"

  powershell -Command 'Restart-Service kubelet -Force' >/dev/null
  check "v$version: a kubelet restart (kubeletstart.ps1 again) leaves kubelet on dxshim" \
    "$(wait_for 60 restarted "$starts_before" && on_dxshim; echo $?)" "$(dump)"
  check "v$version: and the other task runs on" "$(task_running kept; echo $?)"

  reboot "$aks_services" "${aks_boot_task[@]}"
  check "v$version: after a reboot (every service stopped, then the boot task) kubelet is on dxshim" \
    "$(on_dxshim; echo $?)" "$(dump)"
  check "v$version: and the other task is still there" "$(task_running kept; echo $?)"
  health=$(doctor)
  check "v$version: doctor reports the takeover and the TTRPC pipe kept and served" \
    "$(grep -q 'installed in takeover mode' <<<"$health" &&
       grep -qF "containerd's TTRPC pipe stays \\\\.\\pipe\\containerd-containerd.ttrpc, served" <<<"$health"; echo $?)" \
    "$health"

  # An HNS network left over: kubeletstart.ps1's cleanupnetwork.ps1 kills and removes every
  # k8s.io container with ctr (AKS's own behaviour), through dxshim now.
  echo azure >"$c/k/hns-networks.txt"
  powershell -Command 'Restart-Service kubelet -Force' >/dev/null
  check "v$version: cleanupnetwork.ps1's ctr calls reach containerd through dxshim: the task killed and removed" \
    "$(wait_for 60 removed kept; echo $?)" \
    "$(cat "$cd_dir/events.log")$(tail -n 8 "$cd_dir/calls.log")"
  rm -f "$c/k/hns-networks.txt" "$c/k/hns-calls.log"

  uninstall
  check "v$version: uninstall" "$code" "$(dump)"
  snapshot "$work/aks-$version-after" containerd Kubelet Kubeproxy
  check "v$version: uninstall put every value and file back byte for byte" \
    "$(same "$work/aks-$version-before" "$work/aks-$version-after"; echo $?)" \
    "$(differences "$work/aks-$version-before" "$work/aks-$version-after")"
  reboot "$aks_services" "${aks_boot_task[@]}"
  check "v$version: after a reboot kubelet calls containerd directly again" \
    "$(wait_for 30 kubelet_calls_containerd; echo $?)"
  stop_services $aks_services
  for name in Kubeproxy Kubelet containerd; do W sc.exe delete "$name" >/dev/null; done
  W reg.exe delete "$services_key\\Kubelet" /f >/dev/null
  W reg.exe delete "$services_key\\Kubeproxy" /f >/dev/null
  W reg.exe delete "$services_key\\containerd" /f >/dev/null
  rm -rf "$c/k" "$cd_dir" "$c/ProgramData/containerd" "$shim_log"
done

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
