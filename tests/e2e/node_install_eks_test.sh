#!/usr/bin/env bash
# `dxshim.exe install` (endpoint mode) and `uninstall` on an EKS Windows node, under wine, with the
# node as EKS's bootstrap makes it (tests/support/eks_fixtures.sh: kubelet and kube-proxy run by
# EKS-WindowsServiceHost.exe in services of their own with no dependencies, containerd a service
# of its own; at each boot the bootstrapper starts containerd, then kubelet and kube-proxy). AWS's
# bootstrap is not public: the node rests on a community re-implementation of it and a copy of
# AWS's older script (the header of eks_fixtures.sh says which part comes from where). Two
# variants: kubelet's endpoint on its command line (the bootstrapper's --container-runtime-
# endpoint), then in kubelet-config.json. For each:
#   - install changes exactly the endpoint's value where it is (the service's command line, or the
#     file), adds dxshim to kubelet's dependencies (none before) and makes the dxshim service
#     depend on containerd; restarts kubelet's service once; proves the live kubelet.exe calls
#     dxshim and says how long kubelet had no runtime;
#   - a task started before install (its shim holds containerd's TTRPC pipe) outlives install, a
#     kubelet restart as EKS does it (Restart-Service kubelet) and a reboot (every service stopped,
#     the automatic ones started, then the bootstrapper's starts), kubelet on dxshim after each; it
#     is killed at the end and its shim still reaches containerd;
#   - uninstall puts every value back byte for byte (kubelet's service again without any
#     dependency), and after a reboot kubelet calls containerd directly again.
# usage: node_install_eks_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll
set -uo pipefail
source "$(dirname "$0")/../support/wine_test_env.sh"
source "$(dirname "$0")/../support/node_fixtures.sh" "$@"
source "$(dirname "$0")/../support/eks_fixtures.sh"
kubelet_dir="$c/Program Files/kubernetes"
kubelet_log="$kubelet_dir/starts.log"
host_log="$c/Program Files/Amazon/EKS/servicehost-starts.log"
shim_log=$(host_path 'C:\Windows\System32\shim.log')
json="$c/ProgramData/kubernetes/kubelet-config.json"

for variant in flag json; do
  echo "== EKS, kubelet's endpoint in $([ $variant = flag ] && echo "its command line" || echo kubelet-config.json)"
  eks_node "$variant"
  image_before=$(reg_value "$services_key\\kubelet" ImagePath)
  check "$variant: kubelet's service holds the bootstrapper's command line, depends on nothing, starts on demand" \
    "$([ "$image_before" = "$(eks_kubelet_command_line "$variant")" ] && [ -z "$(dependencies kubelet)" ] &&
       [ "$(start_type kubelet)" = 3 ]; echo $?)" "$(W reg.exe query "$services_key\\kubelet")"
  reboot "$eks_services" "${eks_boot_task[@]}"
  check "$variant: at boot the bootstrapper starts containerd and kubelet, whose kubelet.exe calls containerd" \
    "$(wait_for 30 kubelet_calls_containerd; echo $?)" \
    "$(tail -n 5 "$host_log" 2>/dev/null)$(tail -n 5 "$cd_dir/calls.log" 2>/dev/null)"
  run=$(ctr -n k8s.io run --detach mcr.microsoft.com/pause kept)
  check "$variant: a task runs, its shim on containerd's TTRPC pipe" \
    "$(grep -qF 'ttrpc-address kept \\.\pipe\containerd-containerd.ttrpc' "$shim_log"; echo $?)" \
    "$run$(cat "$shim_log" 2>/dev/null)"
  starts_before=$(kubelet_starts)
  hosts_before=$(lines "$host_log")
  containerd_before=$(lines "$cd_dir/starts.log")
  json_before=$(cat "$json")
  snapshot "$work/eks-$variant-before" containerd kubelet kube-proxy

  install_proves "$variant: " "service kubelet to kubelet's new process's first CRI call through dxshim"
  check "$variant: the node name is kubelet's --hostname-override" \
    "$(grep -qx "node name: $eks_node_name" <<<"$out"; echo $?)" "$(dump)"
  image=$(reg_value "$services_key\\kubelet" ImagePath)
  if [ "$variant" = flag ]; then
    expected=$(eks_kubelet_command_line flag 'npipe://./pipe/dxshim')
    check "flag: kubelet's command line changed in the endpoint's value only; kubelet-config.json untouched" \
      "$([ "$image" = "$expected" ] && [ "$(cat "$json")" = "$json_before" ]; echo $?)" \
      "before:   $image_before"$'\n'"now:      $image"$'\n'"expected: $expected"
  else
    write_eks_kubelet_config "$work/expected.json" 'npipe://./pipe/dxshim'
    check "json: kubelet-config.json changed in containerRuntimeEndpoint's value only; the command line untouched" \
      "$(cmp -s "$work/expected.json" "$json" && [ "$image" = "$image_before" ]; echo $?)" \
      "$(cat "$json")"$'\n'"$image"
  fi
  check "$variant: kubelet now depends on dxshim (nothing before); dxshim on containerd" \
    "$([ "$(dependencies kubelet)" = dxshim ] && [ "$(dependencies dxshim)" = containerd ] &&
       [ -z "$(dependencies kube-proxy)" ]; echo $?)" \
    "kubelet: $(dependencies kubelet) / dxshim: $(dependencies dxshim) / kube-proxy: $(dependencies kube-proxy)"
  check "$variant: the service host restarted kubelet once, containerd not restarted" \
    "$([ "$(lines "$host_log")" = $((hosts_before + 1)) ] && [ "$(kubelet_starts)" = $((starts_before + 1)) ] &&
       [ "$(lines "$cd_dir/starts.log")" = "$containerd_before" ]; echo $?)" "$(cat "$host_log")"
  check "$variant: the task started before install is still there" "$(task_running kept; echo $?)"

  starts_before=$(kubelet_starts)
  powershell -Command 'Restart-Service kubelet' >/dev/null
  check "$variant: a kubelet restart (Restart-Service kubelet) leaves kubelet on dxshim" \
    "$(wait_for 60 restarted "$starts_before" && on_dxshim; echo $?)" "$(dump)"
  check "$variant: and the task is still there" "$(task_running kept; echo $?)"

  reboot "$eks_services" "${eks_boot_task[@]}"
  check "$variant: after a reboot (every service stopped, containerd and dxshim started, then the bootstrapper's starts) kubelet is on dxshim" \
    "$([ "$(state dxshim)" = RUNNING ] && on_dxshim; echo $?)" "$(state dxshim) $(dump)"
  check "$variant: and the task is still there" "$(task_running kept; echo $?)"

  uninstall
  check "$variant: uninstall" "$code" "$(dump)"
  snapshot "$work/eks-$variant-after" containerd kubelet kube-proxy
  check "$variant: uninstall put every value and file back byte for byte (kubelet depends on nothing again)" \
    "$(same "$work/eks-$variant-before" "$work/eks-$variant-after"; echo $?)" \
    "$(differences "$work/eks-$variant-before" "$work/eks-$variant-after")"
  reboot "$eks_services" "${eks_boot_task[@]}"
  check "$variant: after a reboot kubelet calls containerd directly again" \
    "$(wait_for 30 kubelet_calls_containerd; echo $?)"
  ctr -n k8s.io tasks kill kept >/dev/null
  check "$variant: the task started before install ran through it all: killed now, its shim reports the exit" \
    "$(wait_for 60 exited kept; echo $?)" "$(cat "$cd_dir/events.log" 2>/dev/null)$(grep kept "$shim_log")"
  ctr -n k8s.io c rm kept >/dev/null

  stop_services $eks_services
  for name in kube-proxy kubelet containerd; do
    W sc.exe delete "$name" >/dev/null
    W reg.exe delete "$services_key\\$name" /f >/dev/null
  done
  rm -rf "$kubelet_dir" "$cd_dir" "$c/Program Files/Amazon" "$c/ProgramData/kubernetes" \
    "$c/ProgramData/containerd" "$shim_log"
done

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
