#!/usr/bin/env bash
# `dxshim.exe install` (endpoint mode) and `uninstall` on an rke2 Windows agent node, under wine,
# with the node as rke2 @6ce1a80 makes it (tests/support/rke2_fixtures.sh: the rke2 service runs
# `rke2.exe agent --config /etc/rancher/rke2/config.yaml`, kubelet and containerd are its children;
# config.yaml has node-label and kubelet-arg items, an operator's drop-in in config.yaml.d adds
# more). The rke2 stand-in merges the drop-ins and makes kubelet's arguments as k3s does
# (configfilearg, GetArgs), with code of its own.
#   - containerd serves k3s's //./pipe/containerd-containerd, the same pipe as ctr's default
#     \\.\pipe\containerd-containerd: ctr reaches it without --address, and a task's shim gets
#     //./pipe/containerd-containerd.ttrpc;
#   - install adds exactly one file, config.yaml.d\zz-dxshim.yaml (kubelet-arg+ with dxshim's
#     endpoint, node-label+ with the GPU labels), makes the rke2 service depend on dxshim (nothing
#     before) and dxshim on nothing, restarts rke2 once; kubelet's new command line keeps every
#     label of config.yaml and of the operator's drop-in, the GPU labels after them, and names
#     dxshim; install proves the live kubelet.exe calls dxshim and says how long kubelet had no
#     runtime;
#   - a task started before install outlives install, a restart as rke2's documentation does it
#     (Restart-Service rke2: containerd restarts too) and a reboot, kubelet on dxshim after each;
#   - uninstall removes the drop-in and puts every value back byte for byte; after a reboot kubelet
#     calls containerd directly again; the task, killed at the end, still reaches containerd.
# usage: node_install_rke2_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll
set -uo pipefail
source "$(dirname "$0")/../support/wine_test_env.sh"
source "$(dirname "$0")/../support/node_fixtures.sh" "$@"
source "$(dirname "$0")/../support/rke2_fixtures.sh"
# GPU labels, so that dxshim's drop-in has node-label+ items; node_fixtures.sh's install (and
# on_dxshim's second install through it) passes --node-labels none, which would plan a drop-in
# without them: the same install with these labels.
gpu_labels='dxshim.io/gpu.present=true,dxshim.io/gpu.count=1'
install() {
  out=$(W "$exe" install --node-labels "$gpu_labels" --proof-timeout "${proof_timeout:-90}" \
    --service-timeout 90 "$@")
  code=$?
}
bin=$(host_path "$rke2_bin")
rke2_log="$bin/rke2-starts.log"
shim_log=$(host_path 'C:\Windows\System32\shim.log')
dropins="$c/etc/rancher/rke2/config.yaml.d"
# (kubelet.exe and containerd.exe, side by side, share starts.log: rke2's own log names kubelet.)
kubelet_log=$rke2_log
cd_dir=$bin

echo "== rke2"
rke2_node
check "the rke2 service as \`rke2 agent service --add\` makes it: automatic, no dependencies" \
  "$([ "$(reg_value "$services_key\\rke2" ImagePath)" = "$rke2_command_line" ] &&
     [ "$(start_type rke2)" = 2 ] && [ -z "$(dependencies rke2)" ]; echo $?)" \
  "$(W reg.exe query "$services_key\\rke2")"
reboot "$rke2_services"
check "at boot rke2 starts containerd and kubelet (no services of their own), whose kubelet.exe calls containerd" \
  "$(wait_for 30 kubelet_calls_containerd && [ -z "$(reg_value "$services_key\\kubelet" ImagePath)" ] &&
     [ -z "$(reg_value "$services_key\\containerd" ImagePath)" ]; echo $?)" \
  "$(cat "$rke2_log" 2>/dev/null)$(tail -n 5 "$bin/calls.log" 2>/dev/null)"
check "kubelet's command line: rke2's endpoint and every node-label item of config.yaml and its drop-in" \
  "$([ "$(kubelet_line)" = "$(rke2_kubelet_line)" ]; echo $?)" \
  "now:      $(kubelet_line)"$'\n'"expected: $(rke2_kubelet_line)"
run=$(ctr -n k8s.io run --detach mcr.microsoft.com/pause kept)
check "ctr's default pipe reaches rke2's containerd; the task's shim gets k3s's TTRPC pipe" \
  "$(grep -qF 'ttrpc-address kept //./pipe/containerd-containerd.ttrpc' "$shim_log"; echo $?)" \
  "$run$(cat "$shim_log" 2>/dev/null)"
rke2_before=$(lines "$rke2_log")
snapshot "$work/rke2-before" rke2

install_proves "" "service rke2 to kubelet's new process's first CRI call through dxshim"
printf '%s\n' '# Written by dxshim install, removed by dxshim uninstall: kubelet talks to containerd' \
  '# through dxshim (its items are added to those of the files before this one).' \
  'kubelet-arg+:' '  - "container-runtime-endpoint=npipe://./pipe/dxshim"' 'node-label+:' \
  '  - "dxshim.io/gpu.present=true"' '  - "dxshim.io/gpu.count=1"' >"$work/zz-dxshim.yaml"
changed=$(diff -r "$work/rke2-before/etc/rancher/rke2/config.yaml.d" "$dropins")
check "install added config.yaml.d\\zz-dxshim.yaml (kubelet-arg+, node-label+) and changed no other file" \
  "$(cmp -s "$work/zz-dxshim.yaml" "$dropins/zz-dxshim.yaml" &&
     cmp -s "$work/rke2-before/etc/rancher/rke2/config.yaml" "$c/etc/rancher/rke2/config.yaml" &&
     [ "$changed" = "Only in $dropins: zz-dxshim.yaml" ] && [ "$(find "$dropins" -type f | wc -l)" = 2 ] &&
     cmp -s "$work/rke2-before/usr/local/bin/containerd.toml" "$bin/containerd.toml"; echo $?)" \
  "$(cat "$dropins/zz-dxshim.yaml" 2>/dev/null)"$'\n'"$changed"
expected=$(rke2_kubelet_line 'npipe://./pipe/dxshim' "$gpu_labels")
check "kubelet's new command line: dxshim's endpoint; config.yaml's and the operator's labels kept, the GPU labels after them" \
  "$([ "$(kubelet_line)" = "$expected" ]; echo $?)" "now:      $(kubelet_line)"$'\n'"expected: $expected"
check "the rke2 service now depends on dxshim (nothing before); dxshim on nothing" \
  "$([ "$(dependencies rke2)" = dxshim ] && [ -n "$(reg_value "$services_key\\dxshim" ImagePath)" ] &&
     [ -z "$(dependencies dxshim)" ]; echo $?)" "rke2: $(dependencies rke2) / dxshim: $(dependencies dxshim)"
check "rke2 was restarted once" "$([ "$(lines "$rke2_log")" = $((rke2_before + 1)) ]; echo $?)" "$(cat "$rke2_log")"
check "the task started before install is still there" "$(task_running kept; echo $?)"

rke2_before=$(lines "$rke2_log")
powershell -Command 'Restart-Service rke2' >/dev/null
check "a restart (Restart-Service rke2: kubelet and containerd again) leaves kubelet on dxshim" \
  "$(wait_for 60 restarted "$rke2_before" && on_dxshim; echo $?)" "$(dump)"
check "and the task is still there" "$(task_running kept; echo $?)"

reboot "$rke2_services"
check "after a reboot (every service stopped, then rke2 started, dxshim first) kubelet is on dxshim" \
  "$([ "$(state dxshim)" = RUNNING ] && on_dxshim; echo $?)" "$(state dxshim) $(dump)"
check "and the task is still there" "$(task_running kept; echo $?)"

uninstall
check "uninstall" "$code" "$(dump)"
snapshot "$work/rke2-after" rke2
check "uninstall removed the drop-in and put every value and file back byte for byte" \
  "$([ ! -e "$dropins/zz-dxshim.yaml" ] && same "$work/rke2-before" "$work/rke2-after"; echo $?)" \
  "$(differences "$work/rke2-before" "$work/rke2-after")"
reboot "$rke2_services"
check "after a reboot kubelet calls containerd directly again, rke2's command line for it as before" \
  "$(wait_for 30 kubelet_calls_containerd && [ "$(kubelet_line)" = "$(rke2_kubelet_line)" ]; echo $?)" \
  "$(kubelet_line)"
ctr -n k8s.io tasks kill kept >/dev/null
check "the task started before install ran through it all: killed now, its shim reports the exit" \
  "$(wait_for 60 exited kept; echo $?)" "$(cat "$bin/events.log" 2>/dev/null)$(grep kept "$shim_log")"

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
