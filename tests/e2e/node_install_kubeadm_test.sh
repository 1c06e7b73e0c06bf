#!/usr/bin/env bash
# `dxshim.exe install` (endpoint mode) and `uninstall` on kubeadm-joined Windows nodes, under wine,
# made as their sources make them (tests/support/kubeadm_fixtures.sh): NSSM runs PowerShell, which
# runs C:\k\StartKubelet.ps1 (interpreted by the PowerShell stand-in), which starts kubelet.exe
# with kubeadm's flags from /var/lib/kubelet/kubeadm-flags.env; containerd is the native service
# `containerd.exe --register-service` makes.
#   a. sig-windows-tools @401ee6f (PrepareNode.ps1's NSSM settings, its generated StartKubelet.ps1:
#      kubeadm's flags FIRST), kubeadm 1.33: the endpoint is in kubeadm-flags.env, and install
#      changes it there, nothing else in the file;
#   b. image-builder @ae63061 (tasks/nssm.yml, templates/StartKubelet.ps1: kubeadm's flags LAST),
#      kubeadm 1.36: the endpoint is no longer in kubeadm-flags.env but in config.yaml and
#      instance-config.yaml (NodeLocalCRISocket), and install changes it there, nothing else; a
#      `kubeadm upgrade node` (config.yaml written again from instance-config.yaml) keeps it.
# For each: install proves the live kubelet.exe makes its CRI calls through dxshim and says how
# long kubelet had no runtime (its restart by NSSM); kubelet's new command line keeps the source's
# order; kubelet's service depends on containerd and dxshim; containerd is not restarted, and a
# task started before install runs on; a kubelet restart (Restart-Service) and a reboot (every
# service stopped, then the automatic ones started, dependencies first) leave kubelet on dxshim;
# uninstall puts every value and file back byte for byte, and after a reboot kubelet calls
# containerd directly again.
# usage: node_install_kubeadm_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll
set -uo pipefail
source "$(dirname "$0")/../support/wine_test_env.sh"
source "$(dirname "$0")/../support/node_fixtures.sh" "$@"
source "$(dirname "$0")/../support/kubeadm_fixtures.sh"
# The files and service keys install changed: "only-in NAME" or "changed NAME", sorted.
changed() {  # changed BEFORE AFTER
  diff -rq "$1" "$2" | sed -E -e "s|^Only in $2/?([^:]*): (.*)|only-in \1/\2|" \
    -e "s|^Files $1/(.*) and .* differ$|changed \1|" -e 's|only-in /|only-in |' | sort
}
# A service key as reg.exe exports it, without its DependOnService value (a hex(7) line and its
# continuation lines).
without_dependencies() {
  iconv -f UTF-16 -t UTF-8 "$1" | awk '/^"DependOnService"=/ {skip = 1; next}
    skip && /^  / {next} {skip = 0; print}'
}
host=$(W hostname.exe)

for variant in swt ib; do
  if [ "$variant" = swt ]; then
    echo "== a. sig-windows-tools' PrepareNode.ps1 (NSSM, StartKubelet.ps1: kubeadm's flags first), kubeadm 1.33"
    swt_node
    moved='var/lib/kubelet/kubeadm-flags.env'
    also=''
  else
    echo "== b. image-builder's nssm.yml (NSSM, StartKubelet.ps1: kubeadm's flags last), kubeadm 1.36"
    ib_nssm_node
    moved='var/lib/kubelet/config.yaml'
    also='changed var/lib/kubelet/instance-config.yaml'
  fi
  reboot "$kubeadm_services"
  check "$variant: at boot the kubelet service starts (containerd first), whose kubelet.exe calls containerd" \
    "$(wait_for 60 kubelet_calls_containerd; echo $?)" \
    "$(tail -n 3 "$c/k/starts.log" 2>/dev/null)$(tail -n 3 "$cd_dir/calls.log" 2>/dev/null)"
  ctr -n k8s.io run --detach mcr.microsoft.com/pause kept >/dev/null
  check "$variant: a task runs" "$(task_running kept; echo $?)"
  starts_before=$(kubelet_starts)
  containerd_before=$(lines "$cd_dir/starts.log")
  snapshot "$work/$variant-before" kubelet containerd

  install_proves "$variant: " "service kubelet to kubelet's new process's first CRI call through dxshim"
  snapshot "$work/$variant-installed" kubelet containerd
  found=$(changed "$work/$variant-before" "$work/$variant-installed")
  expected=$(printf '%s\n' "changed $moved" ${also:+"$also"} 'changed kubelet.reg' 'only-in ProgramData/dxshim/install-record.json' \
    'only-in dxshim.reg' | sort)
  check "$variant: install changed $moved${also:+ (and instance-config.yaml)} and kubelet's dependencies, nothing else (the script, NSSM's Parameters, containerd untouched)" \
    "$([ "$found" = "$expected" ] &&
       [ "$(without_dependencies "$work/$variant-before/kubelet.reg")" = "$(without_dependencies "$work/$variant-installed/kubelet.reg")" ]; echo $?)" \
    "$found"$'\n'"$(differences "$work/$variant-before" "$work/$variant-installed")"
  if [ "$variant" = swt ]; then
    flags='--container-runtime-endpoint=npipe://./pipe/dxshim --pod-infra-container-image=registry.k8s.io/pause:3.10'
    check "swt: kubeadm-flags.env holds dxshim's endpoint in place of containerd's, in kubeadm's form" \
      "$([ "$(cat "$c/var/lib/kubelet/kubeadm-flags.env")" = "KUBELET_KUBEADM_ARGS=\"$flags\"" ]; echo $?)" \
      "$(cat "$c/var/lib/kubelet/kubeadm-flags.env")"
    line="\"C:\\k\\kubelet.exe\" $flags --cert-dir=C:\\var\\lib\\kubelet\\pki --config=/var/lib/kubelet/config.yaml --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --hostname-override=node-1 --enable-debugging-handlers --cgroups-per-qos=false --enforce-node-allocatable= --resolv-conf="
  else
    check "ib: config.yaml's containerRuntimeEndpoint is dxshim's, every other line as kubeadm wrote it" \
      "$([ "$(diff "$work/ib-before/$moved" "$c/$moved" | grep '^[<>]')" = $'< containerRuntimeEndpoint: npipe:////./pipe/containerd-containerd\n> containerRuntimeEndpoint: npipe://./pipe/dxshim' ]; echo $?)" \
      "$(diff "$work/ib-before/$moved" "$c/$moved")"
    check "ib: instance-config.yaml (kubeadm's record of the node's criSocket) holds dxshim's endpoint, as kubeadm writes it" \
      "$([ "$(cat "$c/var/lib/kubelet/instance-config.yaml")" = 'containerRuntimeEndpoint: "npipe://./pipe/dxshim"' ] &&
         grep -q 'so an upgrade keeps dxshim' <<<"$out"; echo $?)" "$(cat "$c/var/lib/kubelet/instance-config.yaml")"
    line="\"c:\\k\\kubelet.exe\" --cert-dir=C:/var/lib/kubelet/pki --config=C:/var/lib/kubelet/config.yaml --bootstrap-kubeconfig=C:/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=C:/etc/kubernetes/kubelet.conf --hostname-override=$host --enable-debugging-handlers --cgroups-per-qos=false --enforce-node-allocatable=\"\" --resolv-conf=\"\" $capz_kubeadm_args"
  fi
  check "$variant: the running kubelet.exe's command line is the script's, in the source's order" \
    "$([ "$(kubelet_line)" = "$line" ]; echo $?)" "$(kubelet_line)"$'\n'"expected: $line"
  check "$variant: kubelet depends on containerd and dxshim" \
    "$([ "$(dependencies kubelet)" = 'containerd\0dxshim' ]; echo $?)" "$(dependencies kubelet)"
  check "$variant: kubelet restarted once, containerd never" \
    "$([ "$(kubelet_starts)" = $((starts_before + 1)) ] && [ "$(lines "$cd_dir/starts.log")" = "$containerd_before" ]; echo $?)" \
    "$(cat "$c/k/starts.log")"$'\n'"$(cat "$cd_dir/starts.log")"
  check "$variant: the task started before install runs on" "$(task_running kept; echo $?)"

  starts_before=$(kubelet_starts)
  powershell -Command 'Restart-Service kubelet -Force' >/dev/null
  check "$variant: a kubelet restart (Restart-Service: NSSM runs StartKubelet.ps1 again) leaves kubelet on dxshim" \
    "$(wait_for 60 restarted "$starts_before" && on_dxshim; echo $?)" "$(dump)"
  reboot "$kubeadm_services"
  check "$variant: after a reboot kubelet is on dxshim" "$(on_dxshim; echo $?)" "$(dump)"
  check "$variant: and the task is still there" "$(task_running kept; echo $?)"
  if [ "$variant" = ib ]; then
    # `kubeadm upgrade node` (1.36) writes config.yaml again from the cluster's KubeletConfiguration
    # with instance-config.yaml as a patch (WriteConfigToDisk), then kubelet is restarted.
    starts_before=$(kubelet_starts)
    endpoint=$(sed -n 's/^containerRuntimeEndpoint: "\(.*\)"$/\1/p' "$c/var/lib/kubelet/instance-config.yaml")
    write_kubeadm_kubelet_config "$c/var/lib/kubelet/config.yaml" "$endpoint"
    powershell -Command 'Restart-Service kubelet -Force' >/dev/null
    check "ib: after kubeadm upgrade node (config.yaml written again from instance-config.yaml) kubelet is on dxshim" \
      "$(wait_for 60 restarted "$starts_before" && on_dxshim; echo $?)" "$(dump)"
  fi

  uninstall
  check "$variant: uninstall" "$code" "$(dump)"
  snapshot "$work/$variant-after" kubelet containerd
  check "$variant: uninstall put every value and file back byte for byte" \
    "$(same "$work/$variant-before" "$work/$variant-after"; echo $?)" \
    "$(differences "$work/$variant-before" "$work/$variant-after")"
  reboot "$kubeadm_services"
  check "$variant: after a reboot kubelet calls containerd directly again" \
    "$(wait_for 60 kubelet_calls_containerd; echo $?)" "$(tail -n 3 "$c/k/starts.log")"
  kubeadm_node_removed
done

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
