#!/usr/bin/env bash
# `dxshim.exe install` (endpoint mode) and `uninstall` on a Cluster API Azure (CAPZ) Windows node
# built from image-builder's default image, under wine (tests/support/kubeadm_fixtures.sh, capz_node):
# kubelet is a native service (image-builder @ae63061 tasks/sc.yml: kube-log-runner.exe running
# `kubelet.exe --windows-service ...` with containerd's endpoint on its command line, reading no
# kubeadm-flags.env; start auto, depending on containerd), containerd the native service
# `containerd.exe --register-service` makes. After kubeadm join, the CAPZ templates
# (kubernetes-sigs/windows-testing @6ae6988 capz/templates/windows-base.yaml) run
# C:/KubeletRestart_nssm_sc.ps1, which runs image-builder's c:\k\RestartKubelet.ps1 (interpreted by
# the PowerShell stand-in): it deletes the kubelet service and creates it again from
# kubeadm-flags.env, its own flags first and kubeadm's last, without --container-runtime-endpoint,
# with `depend= containerd`.
# Two kubeadm versions, since where kubeadm puts the node's criSocket decides what RestartKubelet.ps1
# does to kubelet's endpoint:
#   1.36 (image-builder's default kubernetes_semver; NodeLocalCRISocket): criSocket is
#        containerRuntimeEndpoint in config.yaml (and instance-config.yaml), not in kubeadm-flags.env.
#        Install changes the flag on the service's command line and gives config.yaml and
#        instance-config.yaml dxshim's endpoint too: RestartKubelet.ps1
#        rebuilds the line without the flag, and the new kubelet.exe reads config.yaml, so kubelet
#        STAYS on dxshim; only the dependency on dxshim is lost, which doctor reports;
#   1.33: criSocket is in kubeadm-flags.env too, and install gives that file dxshim's endpoint as well:
#        the rebuilt command line carries it (kubeadm's flags last), so kubelet STAYS on dxshim; only
#        the dependency on dxshim is lost, which doctor reports.
# For each: install proves the live kubelet.exe calls dxshim, says how long kubelet had no runtime,
# changes exactly the endpoint on the service's command line (and in kubeadm-flags.env for 1.33)
# and kubelet's dependencies; containerd is not restarted and a task started before install runs
# on; a kubelet restart (Restart-Service) and a reboot leave kubelet on dxshim; after
# RestartKubelet.ps1, `dxshim install` again restores the dependency (and the endpoint); uninstall
# puts every file and every other service back byte for byte, and leaves kubelet's service as
# RestartKubelet.ps1 makes it from those files (running the script again changes nothing): for 1.33
# it puts containerd's endpoint back into the rebuilt command line, for 1.36 it leaves that line,
# which holds nothing of dxshim's, as it is; after a
# reboot kubelet calls containerd directly again. Last, on the 1.36 node: `install --service-only`
# installs the dxshim service alone, says it could not prove kubelet's use of it and prints the
# bootstrap recipe; followed (criSocket dxshim's, then RestartKubelet.ps1, then kubelet's dependency
# on dxshim, which RestartKubelet.ps1 does not set) kubelet calls dxshim and starts after it.
# usage: node_install_capz_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll
set -uo pipefail
source "$(dirname "$0")/../support/wine_test_env.sh"
source "$(dirname "$0")/../support/node_fixtures.sh" "$@"
source "$(dirname "$0")/../support/kubeadm_fixtures.sh"
# What a snapshot has that an earlier one has not (and nothing changed): the names, sorted.
added() {  # added BEFORE AFTER
  local found
  found=$(diff -rq "$1" "$2")
  grep -qv '^Only in '"$2" <<<"$found" && return 0
  sed -E 's/^Only in [^:]*: //' <<<"$found" | sort | tr '\n' ' ' | sed 's/ $//'
}
image_path() { reg_value "$services_key\\kubelet" ImagePath; }
# CAPZ's postKubeadmCommand `powershell C:/KubeletRestart_nssm_sc.ps1`, until the kubelet service
# it made again runs a new kubelet.exe. Wine's sc.exe writes junk after the names of `depend=`:
# the dependencies are then set to what Windows' sc.exe writes for `depend= containerd`.
restart_kubelet_script() {
  local starts
  starts=$(kubelet_starts)
  script_out=$(powershell C:/KubeletRestart_nssm_sc.ps1)
  set_dependencies kubelet containerd
  wait_state kubelet RUNNING && wait_for 60 restarted "$starts"
}
host=$(W hostname.exe)
rebuilt_prefix="\"C:\\k\\kube-log-runner.exe\" --log-file=/var/log/kubelet/kubelet.err.log C:\\k\\kubelet.exe --cert-dir=C:/var/lib/kubelet/pki --config=C:/var/lib/kubelet/config.yaml --bootstrap-kubeconfig=C:/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=C:/etc/kubernetes/kubelet.conf --hostname-override=$host --enable-debugging-handlers --cgroups-per-qos=false --enforce-node-allocatable=\"\" --resolv-conf=\"\" --windows-service"
dependency_lost="service kubelet no longer depends on dxshim (it depends on containerd; image-builder's RestartKubelet.ps1 makes it again with depend= containerd): at boot kubelet may start before dxshim serves its pipe"

for v in 1.36 1.33; do  # kubeadm's version
  echo "== CAPZ on image-builder's image (sc.yml: kube-log-runner.exe, kubelet.exe --windows-service), kubeadm $v"
  capz_node "$v"
  reboot "$kubeadm_services"
  check "$v: at boot the kubelet service starts (containerd first), whose kubelet.exe calls containerd" \
    "$(wait_for 60 kubelet_calls_containerd; echo $?)" \
    "$(tail -n 3 "$c/k/starts.log" 2>/dev/null)$(tail -n 3 "$cd_dir/calls.log" 2>/dev/null)"
  ctr -n k8s.io run --detach mcr.microsoft.com/pause kept >/dev/null
  check "$v: a task runs" "$(task_running kept; echo $?)"
  starts_before=$(kubelet_starts)
  containerd_before=$(lines "$cd_dir/starts.log")
  flags_before=$(cat "$c/var/lib/kubelet/kubeadm-flags.env")
  snapshot "$work/$v-before" kubelet containerd

  install_proves "$v: " "service kubelet to kubelet's new process's first CRI call through dxshim"
  expected=${capz_sc_command_line/\"npipe:\/\/\/\/.\/pipe\/containerd-containerd\"/\"npipe://./pipe/dxshim\"}
  check "$v: the service's command line has dxshim's endpoint in place of containerd's (quoted as it was), nothing else changed" \
    "$([ "$(image_path)" = "$expected" ]; echo $?)" "$(image_path)"$'\n'"expected: $expected"
  if [ "$v" = 1.33 ]; then
    check "1.33: kubeadm-flags.env gets the same endpoint (for a service rebuilt from it), nothing else" \
      "$([ "$(cat "$c/var/lib/kubelet/kubeadm-flags.env")" = "${flags_before/npipe:\/\/\/\/.\/pipe\/containerd-containerd/npipe://./pipe/dxshim}" ] &&
         grep -q 'gets the same endpoint' <<<"$out"; echo $?)" "$(cat "$c/var/lib/kubelet/kubeadm-flags.env")"
  else
    check "1.36: config.yaml gets the same endpoint (for a kubelet started again without the flag), kubeadm-flags.env (no endpoint in it) nothing" \
      "$(cmp -s "$work/$v-before/var/lib/kubelet/kubeadm-flags.env" "$c/var/lib/kubelet/kubeadm-flags.env" &&
         [ "$(cat "$c/var/lib/kubelet/config.yaml")" = "$(sed 's|^containerRuntimeEndpoint: .*|containerRuntimeEndpoint: npipe://./pipe/dxshim|' "$work/$v-before/var/lib/kubelet/config.yaml")" ] &&
         grep -q 'config.yaml gets the same endpoint' <<<"$out"; echo $?)" "$(cat "$c/var/lib/kubelet/config.yaml")"
    check "1.36: instance-config.yaml (kubeadm's record of the node's criSocket, written into config.yaml at kubeadm upgrade node) gets it too" \
      "$([ "$(cat "$c/var/lib/kubelet/instance-config.yaml")" = 'containerRuntimeEndpoint: "npipe://./pipe/dxshim"' ] &&
         grep -q 'so an upgrade keeps dxshim' <<<"$out"; echo $?)" "$(cat "$c/var/lib/kubelet/instance-config.yaml")"
  fi
  check "$v: kubelet depends on containerd and dxshim" \
    "$([ "$(dependencies kubelet)" = 'containerd\0dxshim' ]; echo $?)" "$(dependencies kubelet)"
  check "$v: kubelet restarted once, containerd never; the task runs on" \
    "$([ "$(kubelet_starts)" = $((starts_before + 1)) ] && [ "$(lines "$cd_dir/starts.log")" = "$containerd_before" ] &&
       task_running kept; echo $?)" "$(cat "$c/k/starts.log")"$'\n'"$(cat "$cd_dir/starts.log")"

  starts_before=$(kubelet_starts)
  powershell -Command 'Restart-Service kubelet -Force' >/dev/null
  check "$v: a kubelet restart (Restart-Service) leaves kubelet on dxshim" \
    "$(wait_for 60 restarted "$starts_before" && on_dxshim; echo $?)" "$(dump)"
  reboot "$kubeadm_services"
  check "$v: after a reboot kubelet is on dxshim, the task still there" \
    "$(on_dxshim && task_running kept; echo $?)" "$(dump)"

  restart_kubelet_script
  rebuilt=$?
  check "$v: RestartKubelet.ps1 made the kubelet service again and it runs a new kubelet.exe" \
    "$([ "$rebuilt" = 0 ] && grep -qx 'kubelet service deleted successfully, restarting' <<<"$script_out"; echo $?)" \
    "$script_out"$'\n'"$(tail -n 2 "$c/k/starts.log")"
  flags_now=$(sed -n 's/^KUBELET_KUBEADM_ARGS="\(.*\)"$/\1/p' "$c/var/lib/kubelet/kubeadm-flags.env")
  check "$v: its command line: the script's flags, then kubeadm's (no endpoint of the script's own)" \
    "$([ "$(image_path)" = "$rebuilt_prefix $flags_now" ]; echo $?)" "$(image_path)"$'\n'"expected: $rebuilt_prefix $flags_now"
  health=$(doctor)
  check "$v: doctor warns that kubelet no longer depends on dxshim" \
    "$(grep -qF "$dependency_lost" <<<"$health"; echo $?)" "$health"
  # 1.33: kubeadm-flags.env's endpoint is on the new command line; 1.36: config.yaml's is read.
  check "$v: kubelet is still on dxshim" \
    "$(wait_for 30 kubelet_calls_through_dxshim && ! grep -q "not dxshim's" <<<"$health"; echo $?)" \
    "$(kubelet_line)"$'\n'"$health"
  check "$v: the task runs on" "$(task_running kept; echo $?)"

  install
  check "$v: install again proves kubelet.exe calls dxshim" \
    "$([ "$code" = 0 ] && grep -q '^proof: kubelet.exe (pid' <<<"$out"; echo $?)" "$(dump)"
  check "$v: kubelet depends on dxshim again, and doctor no longer warns" \
    "$([ "$(dependencies kubelet)" = 'containerd\0dxshim' ] && ! doctor | grep -qF "$dependency_lost"; echo $?)" \
    "$(dependencies kubelet)"

  uninstall
  if [ "$v" = 1.33 ]; then
    said='only the kubelet flags dxshim set are put back'  # containerd's endpoint, in the rebuilt line
  else
    said='no longer has the kubelet flags dxshim set: left as it is now'
  fi
  check "$v: uninstall, saying what it does with the command line RestartKubelet.ps1 made ($said)" \
    "$([ "$code" = 0 ] && grep -q "service kubelet's command line changed since install.*$said" <<<"$out"; echo $?)" "$(dump)"
  snapshot "$work/$v-after" kubelet containerd
  check "$v: uninstall put every file and the other services back byte for byte" \
    "$(diff -r -x kubelet.reg "$work/$v-before" "$work/$v-after" >/dev/null; echo $?)" \
    "$(diff -r -x kubelet.reg "$work/$v-before" "$work/$v-after" | head -20)"
  restart_kubelet_script
  snapshot "$work/$v-again" kubelet containerd
  check "$v: and kubelet's service as RestartKubelet.ps1 makes it from those files (running it again changes nothing)" \
    "$(same "$work/$v-after" "$work/$v-again"; echo $?)" "$(differences "$work/$v-after" "$work/$v-again")"
  reboot "$kubeadm_services"
  check "$v: after a reboot kubelet calls containerd directly again" \
    "$(wait_for 60 kubelet_calls_containerd; echo $?)" "$(tail -n 3 "$c/k/starts.log")"

  if [ "$v" = 1.36 ]; then
    echo "== --service-only on the CAPZ node"
    snapshot "$work/so-before" kubelet containerd
    starts_before=$(kubelet_starts)
    install --service-only
    check "service-only: the dxshim service installed, kubelet's use of it said not proven" \
      "$([ "$code" = 0 ] && grep -q '^not proven: kubelet.exe (pid [0-9]*) has made no CRI call through \\\\.\\pipe\\dxshim' <<<"$out"; echo $?)" \
      "$(dump)"
    check "service-only: it prints CAPZ's bootstrap recipe (criSocket, RestartKubelet.ps1, then the dependency)" \
      "$(grep -qF "nodeRegistration.criSocket: npipe://./pipe/dxshim and RestartKubelet.ps1 after kubeadm join, then sc.exe config kubelet depend= containerd/dxshim" <<<"$out"; echo $?)" \
      "$(dump)"
    snapshot "$work/so-installed" kubelet containerd
    check "service-only: kubelet and containerd untouched, kubelet not restarted" \
      "$([ "$(added "$work/so-before" "$work/so-installed")" = 'dxshim.reg install-record.json' ] &&
         [ "$(kubelet_starts)" = "$starts_before" ]; echo $?)" \
      "$(differences "$work/so-before" "$work/so-installed")"
    # The recipe: kubeadm join with criSocket npipe://./pipe/dxshim writes it where kubeadm 1.36
    # does (instance-config.yaml, and config.yaml from it), then the CAPZ postKubeadmCommand.
    write_kubeadm_instance_config "$c/var/lib/kubelet/instance-config.yaml" npipe://./pipe/dxshim
    write_kubeadm_kubelet_config "$c/var/lib/kubelet/config.yaml" npipe://./pipe/dxshim
    restart_kubelet_script
    check "service-only: RestartKubelet.ps1 makes kubelet's service depend on containerd alone" \
      "$([ "$(dependencies kubelet)" = containerd ]; echo $?)" "$(dependencies kubelet)"
    set_dependencies kubelet containerd dxshim  # the recipe's sc.exe config (wine's sc.exe has none)
    install --service-only
    check "service-only: with the recipe followed, kubelet calls dxshim (it says so)" \
      "$([ "$code" = 0 ] && grep -q '^kubelet already uses dxshim: kubelet.exe (pid' <<<"$out"; echo $?)" "$(dump)"
    reboot "$kubeadm_services"
    check "service-only: after a reboot (dxshim started first, as kubelet's dependency) kubelet calls dxshim" \
      "$(wait_for 60 kubelet_calls_through_dxshim; echo $?)" "$(kubelet_line)"
    write_kubeadm_instance_config "$c/var/lib/kubelet/instance-config.yaml" npipe:////./pipe/containerd-containerd
    write_kubeadm_kubelet_config "$c/var/lib/kubelet/config.yaml" npipe:////./pipe/containerd-containerd
    restart_kubelet_script
    uninstall
    snapshot "$work/so-after" kubelet containerd
    check "service-only: uninstall removes the service, the node as before" \
      "$([ "$code" = 0 ] && same "$work/so-before" "$work/so-after"; echo $?)" \
      "$(dump)"$'\n'"$(differences "$work/so-before" "$work/so-after")"
  fi
  kubeadm_node_removed
done

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
