#!/usr/bin/env bash
# `dxshim.exe install` and `uninstall` killed after each of their steps in turn, under wine, on an
# AKS node as AgentBaker makes it (tests/support/aks_fixtures.sh, containerd config version 3):
# the takeover, whose steps restart containerd and move its pipe, so that a kill between two of
# them leaves kubelet without a runtime or without its dependency on containerd unless the next run
# finishes or undoes them.
#   - a reference install and uninstall give the node installed and the node as it was (each a
#     snapshot of every service key and configuration file install may touch);
#   - for each step N of install: the run is ended at once after step N is applied, before it is
#     journaled as done (DXSHIM_TEST_INTERRUPT=N:applied: TerminateProcess, as a kill would); then
#       a. `install` again finishes it: the node is the installed one, byte for byte, and dxshim
#          says the live kubelet.exe made CRI calls through it;
#       b. `uninstall` then leaves the node as it was, byte for byte;
#     and, killed at step N again, `uninstall` straight away also leaves the node as it was;
#   - for each step N of uninstall (from the installed node): killed there, `uninstall` again
#     leaves the node as it was, byte for byte;
#   - all along, a task started before the first install runs on (its shim's exit events have a
#     TTRPC pipe to go to) and, at the end, kubelet calls containerd directly.
# The steps and their order are install's own (it prints them); every point of every step (begun,
# applied, done) is covered by the unit tests (tests/install/installer_test.cpp) on a fake node.
# usage: node_install_interruption_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll
set -uo pipefail
source "$(dirname "$0")/../support/wine_test_env.sh"
source "$(dirname "$0")/../support/node_fixtures.sh" "$@"
source "$(dirname "$0")/../support/aks_fixtures.sh"
# The steps a run printed: "  N. what" after "steps, each journaled before and after it is applied:".
step_count() { sed -n '/^steps, each journaled/,$ s/^  \([0-9]*\)\. .*/\1/p' <<<"$out" | tail -n 1; }
# The node now, compared with a reference snapshot; the journal itself (install-record.json, with
# its steps' times) is not compared: what it records is proven by the uninstall that follows.
node_is() {  # node_is REFERENCE-DIR NAME
  snapshot "$work/now" containerd Kubelet Kubeproxy
  rm -f "$work/now/ProgramData/dxshim/install-record.json"
  same "$1" "$work/now"
}
interrupted() {  # interrupted STEP install|uninstall
  local run=$2
  DXSHIM_TEST_INTERRUPT="$1:applied" "$run"
  [ "$code" = 86 ] && grep -q "^interrupted at step $1 (applied)" <<<"$out"
}

aks_node 3
reboot "$aks_services" "${aks_boot_task[@]}"
check "the boot task starts containerd and kubelet, whose kubelet.exe calls containerd" \
  "$(wait_for 30 kubelet_calls_containerd; echo $?)"
ctr -n k8s.io run --detach mcr.microsoft.com/pause kept >/dev/null
snapshot "$work/before" containerd Kubelet Kubeproxy

install
check "reference install" "$code" "$(dump)"
install_steps=$(step_count)
echo "install has $install_steps steps:"
sed -n '/^steps, each journaled/,/^[^ ]/ s/^  /  /p' <<<"$out"
snapshot "$work/installed" containerd Kubelet Kubeproxy
rm -f "$work/installed/ProgramData/dxshim/install-record.json"
uninstall
check "reference uninstall" "$code" "$(dump)"
uninstall_steps=$(step_count)
echo "uninstall has $uninstall_steps steps:"
sed -n '/^steps, each journaled/,/^[^ ]/ s/^  /  /p' <<<"$out"
check "reference uninstall leaves the node as it was" \
  "$(node_is "$work/before"; echo $?)" "$(differences "$work/before" "$work/now")"
check "install and uninstall printed their steps" \
  "$([ "${install_steps:-0}" -ge 5 ]; echo $?)" "$install_steps"

for step in $(seq 1 "$install_steps"); do
  interrupted "$step" install
  check "install killed after step $step" "$?" "$(dump)"
  install
  check "install again after step $step finishes it: the node installed, byte for byte, kubelet on dxshim" \
    "$([ "$code" = 0 ] && grep -q "^an interrupted install stopped after step $((step - 1)) of " <<<"$out" &&
       grep -q "^proof: kubelet.exe" <<<"$out" && node_is "$work/installed"; echo $?)" \
    "$(dump)$(differences "$work/installed" "$work/now")$(service_logs)"
  uninstall
  check "then uninstall: the node as it was" \
    "$([ "$code" = 0 ] && node_is "$work/before"; echo $?)" "$(dump)$(differences "$work/before" "$work/now")"

  interrupted "$step" install
  check "install killed after step $step again" "$?" "$(dump)"
  uninstall
  check "uninstall straight after: the node as it was, byte for byte" \
    "$([ "$code" = 0 ] && node_is "$work/before"; echo $?)" "$(dump)$(differences "$work/before" "$work/now")"
done

for step in $(seq 1 "${uninstall_steps:-0}"); do
  install
  check "install (for uninstall's step $step)" "$code" "$(dump)"
  interrupted "$step" uninstall
  check "uninstall killed after step $step" "$?" "$(dump)"
  uninstall
  check "uninstall again after step $step: the node as it was, byte for byte" \
    "$([ "$code" = 0 ] && grep -q "^an interrupted uninstall stopped after step $((step - 1)) of " <<<"$out" &&
       node_is "$work/before"; echo $?)" "$(dump)$(differences "$work/before" "$work/now")"
done

check "the task started before the first install runs on" "$(task_running kept; echo $?)"
check "kubelet calls containerd directly at the end" "$(wait_for 60 kubelet_calls_containerd; echo $?)" \
  "$(tail -n 5 "$c/k/starts.log")"
echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
