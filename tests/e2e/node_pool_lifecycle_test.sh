#!/usr/bin/env bash
# The installer DaemonSet's container (deploy/windows/installer-pod.ps1, which runs install.ps1,
# which runs dxshim.exe install) on an AKS node under wine (tests/support/aks_fixtures.sh), each
# script run by the PowerShell stand-in as the DaemonSet's powershell.exe would run it, from a
# release folder laid out as the installer image lays it out (%CONTAINER_SANDBOX_MOUNT_POINT%\
# dxshim-release). What Kubernetes does around the container is played here: a pod start is a
# run of the container's command, left running; a pod restart is that process killed and run
# again; the readiness probe is `installer-pod.ps1 -Ready`; relabelling a node for removal starts
# the remove DaemonSet's container.
#   - install: takeover, kubelet on dxshim, the outcome recorded, the container still running
#     (idle) afterwards, and ready (doctor passes);
#   - a pod restart with the same release does no destructive work (containerd not restarted);
#   - doctor failing (the dxshim service stopped) makes it not ready, without a restart;
#   - remove: uninstalled once, the values put back, the container idle and ready; a restart of
#     it uninstalls nothing again (install.ps1 -Uninstall on a clean node is "nothing installed");
#   - a failed install (the proof cannot pass: kubelet is stopped) is rolled back, recorded,
#     not ready, the container idle; restarted, it does not try again (containerd's starts
#     unchanged); a new DXSHIM_INSTALL_ATTEMPT tries again;
#   - a run interrupted once (its record left at running) is run again; after three, not.
# Mocked, because wine has no GPU: the GPU comes from an inventory file (device-source
# inventory:, a Tesla T4 as deploy/examples/inventories/nvidia-t4.yaml describes one, its
# runtime files empty files), and install.ps1 is given -AllowNoGpu (DXSHIM_INSTALL_ARGUMENTS)
# (dxshim-devices.exe, which it asks, sees DXCore's stand-in adapters but no device nodes).
# Windows Server 2022's build is set in the registry (wine 8 reports Windows 7 or 10 builds).
# usage: node_pool_lifecycle_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll
#        dxshim-devices.exe
set -uo pipefail
devices_exe=${5:?usage: node_pool_lifecycle_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll dxshim-devices.exe}
source "$(dirname "$0")/../support/wine_test_env.sh"
source "$(dirname "$0")/../support/node_fixtures.sh" "$@"
source "$(dirname "$0")/../support/aks_fixtures.sh"
need_exe "$devices_exe"
# -ProofTimeout 60 (dxshim.exe install's default is 180 s): a failed proof (step 5) waits that long.
export DXSHIM_INSTALL_ARGUMENTS='-AllowNoGpu -ProofTimeout 60'

nt='HKLM\Software\Microsoft\Windows NT\CurrentVersion'
set_reg "$nt" CurrentBuildNumber REG_SZ 20348
set_reg "$nt" CurrentMajorVersionNumber REG_DWORD 0xa
set_reg "$nt" CurrentMinorVersionNumber REG_DWORD 0x0
set_reg "$nt" CurrentVersion REG_SZ 6.3

# The release as the image holds it, and the node's GPU (above).
release="$c/hpc/dxshim-release"
mkdir -p "$release" "$c/DriverStore/nv"
cp "$exe" "$devices_exe" "$source_dir/deploy/windows/install.ps1" \
  "$source_dir/deploy/windows/installer-pod.ps1" "$release/"
sed -n '/^ *- {source: /s/.*source: \([^,}]*\).*/\1/p' \
  "$source_dir/deploy/examples/inventories/nvidia-t4.yaml" | while read -r f; do
  : >"$c/DriverStore/nv/$f"
done
sed "s|^    driverStore: .*|    driverStore: 'C:\\\\DriverStore\\\\nv'|" \
  "$source_dir/deploy/examples/inventories/nvidia-t4.yaml" >"$c/DriverStore/inventory.yaml"
sed -e "/^metrics-listen: /d" -e "s|^device-plugin: .*|device-plugin: false|" \
  -e "s|^device-source: .*|device-source: 'inventory:C:\\\\DriverStore\\\\inventory.yaml'|" \
  "$source_dir/deploy/examples/dxshim-windows.yaml" >"$release/dxshim.yaml"
rm -rf "$c/ProgramData/dxshim"
state_file="$c/ProgramData/dxshim/installer-pod.json"
pod_script='C:\hpc\dxshim-release\installer-pod.ps1'

# A pod of the DaemonSet for ACTION: the container's command, left running; its output in
# $work/pod-N.log. `pod_done` waits until the run's outcome is recorded and says it.
pods=0
pod_pid=
start_pod() {  # start_pod ACTION
  pods=$((pods + 1))
  pod_log="$work/pod-$pods.log"
  CONTAINER_SANDBOX_MOUNT_POINT='C:\hpc\' "$wine" \
    'C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe' -NoProfile -ExecutionPolicy \
    Bypass -File "$pod_script" -Action "$1" \
    >"$pod_log" 2>&1 </dev/null &
  pod_pid=$!
}
outcome() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1], encoding="utf-8-sig"))[sys.argv[2]])' "$state_file" "$1" 2>/dev/null; }
settled() { grep -q '^== idle' "$pod_log" 2>/dev/null; }
pod_done() { wait_for 400 settled; }  # a failed proof alone waits 60 s (-ProofTimeout)
pod_running() { kill -0 "$pod_pid" 2>/dev/null; }
stop_pod() { kill "$pod_pid" 2>/dev/null; wait "$pod_pid" 2>/dev/null; }
ready() {  # ready ACTION: the readiness probe's exit code; its output in $probe
  "$wine" 'C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe' -NoProfile \
    -ExecutionPolicy Bypass -File "$pod_script" -Action "$1" \
    -Ready >"$work/probe.log" 2>&1 </dev/null
  local code=$?
  probe=$(sed 's/\r$//' "$work/probe.log")
  return $code
}
containerd_starts() { lines "$cd_dir/starts.log"; }
# For the log: the pod's own lines (== and !!), and the probe's verdict with doctor's last lines.
show_pod() { sed -n 's/\r$//; /^\(==\|!!\) /s/^/    pod| /p' "$pod_log"; }
show_probe() { printf '%s\n' "$probe" | grep -v '^ *$' | sed -n '1p;$p' | sed 's/^/    probe| /'; }

aks_node 3
reboot "$aks_services" "${aks_boot_task[@]}"
check "the boot task starts kubelet, which calls containerd" \
  "$(wait_for 30 kubelet_calls_containerd; echo $?)"
snapshot "$work/before" containerd Kubelet Kubeproxy

echo "== 1. install"
before=$(containerd_starts)
start_pod install
check "the install pod converges" "$(pod_done; echo $?)" "$(cat "$pod_log")"
check "install took containerd's pipe over and proved kubelet calls dxshim; recorded done" \
  "$(grep -q '^proof: kubelet.exe' "$pod_log" && [ "$(outcome outcome)" = done ] &&
     [ "$(outcome code)" = 0 ]; echo $?)" "$(cat "$pod_log")"
check "containerd restarted once" "$([ "$(containerd_starts)" = $((before + 1)) ]; echo $?)"
sleep 3
check "the container does not exit: it idles" "$(pod_running; echo $?)" "$(cat "$pod_log")"
ready install
check "ready: doctor passes" "$?" "$probe"
show_pod
show_probe

echo "== 2. the pod restarted, the same release"
stop_pod
before=$(containerd_starts)
start_pod install
check "a restarted pod finds the outcome recorded and runs nothing" \
  "$(pod_done && grep -q 'nothing to do for this release' "$pod_log" &&
     ! grep -q 'install.ps1' "$pod_log"; echo $?)" "$(cat "$pod_log")"
check "containerd not restarted" "$([ "$(containerd_starts)" = "$before" ]; echo $?)"
check "and it idles" "$(sleep 2; pod_running; echo $?)"
show_pod

echo "== 3. doctor fails"
stop_services dxshim
ready install
code=$?
check "not ready when doctor fails (the dxshim service stopped)" "$([ "$code" = 1 ]; echo $?)" \
  "exit code $code: $probe"
show_probe
check "and the container keeps running, nothing retried" "$(pod_running; echo $?)"
scm_start dxshim
check "ready again once dxshim serves" "$(wait_for 60 ready install; echo $?)" "$probe"
stop_pod

echo "== 4. remove (the node labelled dxshim.io/install=remove)"
start_pod remove
check "the remove pod converges: uninstalled, recorded done" \
  "$(pod_done && [ "$(outcome outcome)" = done ] && grep -q 'dxshim removed' "$pod_log"; echo $?)" \
  "$(cat "$pod_log")"
snapshot "$work/after" containerd Kubelet Kubeproxy
# dxshim's own folder stays (its configuration, the install record, the pod's outcome): only
# -Purge removes it.
rm -rf "$work/after/ProgramData/dxshim"
rmdir "$work/after/ProgramData" 2>/dev/null
check "every value and file put back byte for byte" \
  "$(same "$work/before" "$work/after"; echo $?)" "$(differences "$work/before" "$work/after")"
check "it idles" "$(sleep 2; pod_running; echo $?)"
ready remove
check "ready after the remove" "$?" "$probe"
show_pod
show_probe
stop_pod
start_pod remove
check "restarted, the remove pod runs nothing again" \
  "$(pod_done && grep -q 'nothing to do for this release' "$pod_log"; echo $?)" "$(cat "$pod_log")"
stop_pod
check "uninstall of a node with nothing installed succeeds (install.ps1 -Uninstall)" \
  "$(powershell -NoProfile -File 'C:\hpc\dxshim-release\install.ps1' -Uninstall >"$work/u.log" 2>&1;
     [ $? = 0 ] && grep -q 'nothing installed here' "$work/u.log"; echo $?)" "$(cat "$work/u.log")"

echo "== 5. a failed install: the proof cannot pass (kubelet stopped)"
stop_services Kubeproxy Kubelet
before=$(containerd_starts)
start_pod install
check "the install fails, is rolled back and recorded failed" \
  "$(pod_done && [ "$(outcome outcome)" = failed ] && [ "$(outcome code)" = 1 ]; echo $?)" \
  "$(cat "$pod_log")"
check "install.ps1 passed -ProofTimeout on to dxshim.exe install" \
  "$(grep -q -- '--proof-timeout 60' "$pod_log"; echo $?)" "$(cat "$pod_log")"
check "the log says what to do" \
  "$(grep -q 'will not try again' "$pod_log" && grep -q 'DXSHIM_INSTALL_ATTEMPT' "$pod_log"; echo $?)" \
  "$(cat "$pod_log")"
check "the container idles" "$(sleep 2; pod_running; echo $?)"
ready install
code=$?
check "not ready, saying why" "$([ "$code" = 1 ] && grep -q 'not installed' <<<"$probe"; echo $?)" "$probe"
show_pod
show_probe
failed_starts=$(containerd_starts)
stop_pod
start_pod install
check "restarted, the pod does not try again" \
  "$(pod_done && grep -q 'nothing to do for this release' "$pod_log" &&
     [ "$(containerd_starts)" = "$failed_starts" ]; echo $?)" "$(cat "$pod_log")"
stop_pod
scm_start Kubelet
wait_for 30 kubelet_calls_containerd
DXSHIM_INSTALL_ATTEMPT=2 start_pod install
check "a new DXSHIM_INSTALL_ATTEMPT tries again, and installs" \
  "$(pod_done && [ "$(outcome outcome)" = done ] && grep -q '^proof: kubelet.exe' "$pod_log"; echo $?)" \
  "$(cat "$pod_log")"
stop_pod

echo "== 6. interrupted runs (the record a pod killed mid-run leaves: running, its attempt count)"
key=$(outcome key)
interrupted() {  # interrupted ATTEMPTS: the record as the killed pod left it
  python3 - "$state_file" "$key" "$1" <<'PY'
import json, sys
json.dump({"key": sys.argv[2], "outcome": "running", "code": -1, "attempts": int(sys.argv[3]),
           "summary": "the install is running", "time": ""}, open(sys.argv[1], "w"))
PY
}
interrupted 1
before=$(containerd_starts)
DXSHIM_INSTALL_ATTEMPT=2 start_pod install
check "a run interrupted once is run again (attempt 2): install finds nothing to change" \
  "$(pod_done && grep -q '^== install (attempt 2)' "$pod_log" && grep -q 'nothing to change' "$pod_log" &&
     [ "$(outcome outcome)" = done ] && [ "$(containerd_starts)" = "$before" ]; echo $?)" "$(cat "$pod_log")"
stop_pod
interrupted 3
DXSHIM_INSTALL_ATTEMPT=2 start_pod install
check "after three interrupted runs the key counts as failed, and nothing runs" \
  "$(pod_done && [ "$(outcome outcome)" = failed ] && grep -q 'interrupted 3 times' "$pod_log" &&
     ! grep -q 'install.ps1' "$pod_log"; echo $?)" "$(cat "$pod_log")"
show_pod
stop_pod
start_pod remove
pod_done
stop_pod

stop_services $aks_services
echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
