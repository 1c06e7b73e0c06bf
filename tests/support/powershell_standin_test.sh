#!/usr/bin/env bash
# The PowerShell stand-in (node-standin.exe as powershell.exe, put where wine's empty
# powershell.exe stub is) runs the kubelet scripts of kubeadm's and AKS's Windows nodes under
# wine (tests/support/powershell_fixtures.sh): each gives kubelet.exe the command line upstream
# builds, in its order (sig-windows-tools' StartKubelet.ps1: kubeadm's flags first; image-builder's
# StartKubelet.ps1, new and old: kubeadm's last; AKS's kubeletstart.ps1: its ConfigArgs, then
# --node-labels, --volume-plugin-dir, --windows-priorityclass, --container-runtime-endpoint,
# started by run-process.cs in c:\k); image-builder's RestartKubelet.ps1 deletes the kubelet
# service and creates it again with kube-log-runner.exe and `depend= containerd`; AKS's
# windowsnodereset.ps1 stops kubeproxy and kubelet, runs cleanupnetwork.ps1 (its HNS network
# and policy lists removed through the stubs) and starts kubelet; Stop-Service refuses a service
# whose dependents run unless -Force, which stops them first, and Start-Service starts a
# service's dependencies; what the stand-in does not implement stops a script with exit code 70
# and says where. It also records what wine's own service manager does with dependencies.
# usage: powershell_standin_test.sh node-standin.exe
set -uo pipefail
exe=${1:?usage: powershell_standin_test.sh node-standin.exe}
if [ ! -f "$exe" ]; then
  echo "$(basename "$0"): $exe is missing: build it (cmake --build build --target node_standin_exe)"
  exit 1
fi
source "$(dirname "$0")/wine_test_env.sh"
source "$(dirname "$0")/powershell_fixtures.sh"
wineserver="$(dirname "$wine")/wineserver"
c=$WINEPREFIX/drive_c
ps_dir="$c/windows/system32/WindowsPowerShell/v1.0"

run() { timeout 90 "$wine" "$@" 2>&1 | sed -u 's/\r$//'; return "${PIPESTATUS[0]}"; }
sc() { run sc.exe "$@"; }
ps() { run 'C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe' "$@"; }
# powershell.exe ARGS in C:\k, as NSSM's AppDirectory would run it there (wine starts a program in
# the Z: path of the shell's folder): a path like /var/lib/... is then on drive C.
ps_in_k() { run cmd.exe /c "cd /d C:\k && C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe $*"; }
state() { sc query "$1" | awk '$1 == "STATE" {print $4}'; }
wait_state() {  # wait_state SERVICE STATE: up to 30 s
  local _
  for _ in $(seq 1 150); do
    [ "$(state "$1")" = "$2" ] && return 0
    sleep 0.2
  done
  return 1
}
healthz() { curl -s --max-time 5 "http://127.0.0.1:$1/healthz"; }
wait_healthz() {
  local _
  for _ in $(seq 1 150); do
    [ "$(healthz "$1")" = ok ] && return 0
    sleep 0.2
  done
  return 1
}
port_closed() { ! curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$1/healthz"; }
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
last_start() { tail -n 1 "$1" 2>/dev/null | sed 's/^start [0-9][0-9]* //'; }
utf16() { iconv -f UTF-16 -t UTF-8 "$1" | sed 's/\r$//'; }
registry() {  # registry SERVICE VALUE: the data of a service's registry value
  run reg.exe query "HKLM\\SYSTEM\\CurrentControlSet\\Services\\$1" /v "$2" |
    sed -n "s/^ *$2 *REG_[A-Z_]* *//p"
}

"$wineserver" -w
"$wineserver" -p >/dev/null 2>&1
timeout 60 "$wine" sc.exe query eventlog >/dev/null 2>&1 </dev/null

echo "== wine's own powershell.exe"
out=$(ps -NoProfile -Command 'Write-Host wine')
check "wine's powershell.exe runs nothing (so the test puts the stand-in in its place)" \
  "$([ -z "$out" ]; echo $?)" "$out"
cp "$exe" "$ps_dir/powershell.exe"
out=$(ps -NoProfile -Command 'Write-Host "stand-in on $env:SYSTEMDRIVE"')
check "the stand-in now answers as powershell.exe" "$([ "$out" = "stand-in on C:" ]; echo $?)" "$out"

# The node: C:\k\kubelet.exe, containerd on its default pipe, kubeadm-flags.env. A port another
# process holds makes a kubelet.exe started in the foreground exit at once (code 3) after
# logging its command line, so that a script that starts it ends.
mkdir -p "$c/k" "$c/kp" "$c/Program Files/containerd" "$c/var/lib/kubelet"
cp "$exe" "$c/k/kubelet.exe"
cp "$exe" "$c/kp/kubelet.exe"
cp "$exe" "$c/Program Files/containerd/containerd.exe"
exec 3< <(exec timeout 300 python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(300)')
holder=$!
read -r busy <&3
trap 'kill "$holder" 2>/dev/null; "$wineserver" -k 2>/dev/null; rm -rf "$work"' EXIT
kubeadm="--cloud-provider=external --container-runtime-endpoint=npipe:////./pipe/containerd-containerd --healthz-port=$busy --pod-infra-container-image=registry.k8s.io/pause:3.10 --v=2"
write_kubeadm_flags "$c/var/lib/kubelet/kubeadm-flags.env" "$kubeadm"
host=$(run hostname.exe)

echo "== sig-windows-tools' StartKubelet.ps1: kubeadm's flags first"
write_swt_start_kubelet "$c/k/StartKubelet.ps1"
ps_in_k -ExecutionPolicy Bypass -NoProfile 'C:\k\StartKubelet.ps1' >/dev/null
line=$(last_start "$c/k/starts.log")
expected="\"C:\\k\\kubelet.exe\" $kubeadm --cert-dir=C:\\var\\lib\\kubelet\\pki --config=/var/lib/kubelet/config.yaml --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --hostname-override=node-1 --enable-debugging-handlers --cgroups-per-qos=false --enforce-node-allocatable= --resolv-conf="
check "Invoke-Expression runs kubelet.exe with kubeadm's flags, then the script's (\`\"\`\" an empty value)" \
  "$([ "$line" = "$expected" ]; echo $?)" "$line"$'\n'"expected: $expected"

echo "== image-builder's StartKubelet.ps1 (new): the script's flags, then kubeadm's"
write_ib_start_kubelet_new "$c/k/StartKubelet.ps1"
ps_in_k -ExecutionPolicy Bypass -NoProfile 'C:\k\StartKubelet.ps1' >/dev/null
line=$(last_start "$c/k/starts.log")
args="--cert-dir=C:/var/lib/kubelet/pki --config=C:/var/lib/kubelet/config.yaml --bootstrap-kubeconfig=C:/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=C:/etc/kubernetes/kubelet.conf --hostname-override=$host --enable-debugging-handlers --cgroups-per-qos=false --enforce-node-allocatable=\"\" --resolv-conf=\"\" $kubeadm"
check "splatted: each item one argument, '\"\"' kept, kubeadm's flags split on blanks and last" \
  "$([ "$line" = "\"c:\\k\\kubelet.exe\" $args" ]; echo $?)" "$line"$'\n'"expected: \"c:\\k\\kubelet.exe\" $args"
log=$(utf16 "$c/var/log/kubelet/start-kubelet.log" 2>/dev/null)
stamp=${log%% *}
check "start-kubelet.log (Out-File -Append, UTF-16): Get-Date -Format o, then the same command line" \
  "$([[ "$stamp" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{7}[+-][0-9]{2}:[0-9]{2}$ ]] &&
     [ "${log#* }" = "c:\\k\\kubelet.exe $args" ]; echo $?)" "$log"

echo "== image-builder's StartKubelet.ps1 (old): the script's flags, then kubeadm's"
write_ib_start_kubelet_old "$c/k/StartKubelet.ps1"
ps_in_k -ExecutionPolicy Bypass -NoProfile 'C:\k\StartKubelet.ps1' >/dev/null
line=$(last_start "$c/k/starts.log")
expected="\"c:\\k\\kubelet.exe\" --cert-dir=C:/var/lib/kubelet/pki --config=C:/var/lib/kubelet/config.yaml --bootstrap-kubeconfig=C:/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=C:/etc/kubernetes/kubelet.conf --hostname-override=$host --enable-debugging-handlers --cgroups-per-qos=false --enforce-node-allocatable= --resolv-conf= $kubeadm"
check "Invoke-Expression of the joined line: kubeadm's flags last" \
  "$([ "$line" = "$expected" ]; echo $?)" "$line"$'\n'"expected: $expected"

echo "== AKS's kubeletstart.ps1: ConfigArgs, then the script's own flags"
write_aks_cluster_config "$c/k/kubeclusterconfig.json" \
  "\"--max-pods=30\", \"--healthz-port=$busy\", \"--v=2\"" 1.29.2
write_run_process_cs "$c/k/run-process.cs"
write_aks_cleanupnetwork "$c/k/cleanupnetwork.ps1"
write_aks_kubeletstart "$c/k/kubeletstart.ps1"
sc create kubeproxy binPath= 'C:\kp\kubelet.exe --healthz-port=0' >/dev/null
sc start kubeproxy >/dev/null
wait_state kubeproxy RUNNING
before=$(wc -l <"$c/kp/starts.log")
out=$(ps_in_k -ExecutionPolicy Unrestricted -File 'C:\k\kubeletstart.ps1')
code=$?
line=$(last_start "$c/k/starts.log")
expected="\"c:\\k\\kubelet.exe\" --max-pods=30 --healthz-port=$busy --v=2 --node-labels=kubernetes.azure.com/role=agent,agentpool=win --volume-plugin-dir=c:\\k\\volumeplugins --windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS --container-runtime-endpoint=npipe://./pipe/containerd-containerd"
check "[RunProcess.exec]::RunProcess starts kubelet.exe with ConfigArgs first, then the script's flags" \
  "$([ "$line" = "$expected" ]; echo $?)" "$line"$'\n'"expected: $expected"$'\n'"$out"
check "the script's last output is kubelet.exe's exit code (3: its port was taken); powershell.exe exits 0" \
  "$([ "$(tail -n 1 <<<"$out")" = 3 ] && [ "$code" = 0 ]; echo $?)" "$out"
check "Stop-Service kubeproxy, then Restart-Service Kubeproxy -Force: kube-proxy runs again" \
  "$([ "$(wc -l <"$c/kp/starts.log")" = $((before + 1)) ] && [ "$(state kubeproxy)" = RUNNING ]; echo $?)" \
  "$(cat "$c/kp/starts.log")"
check "mkdir -Force made c:\\k\\volumeplugins" "$([ -d "$c/k/volumeplugins" ]; echo $?)"
sc stop kubeproxy >/dev/null
wait_state kubeproxy STOPPED
sc delete kubeproxy >/dev/null

echo "== the service cmdlets: dependents and dependencies"
port=$(free_port)
cat >"$c/Program Files/containerd/config.toml" <<'EOF'
version = 2
EOF
sc create containerd binPath= '"C:\Program Files\containerd\containerd.exe"' >/dev/null
sc create kubelet binPath= "C:\\k\\kubelet.exe --healthz-port=$port" depend= containerd >/dev/null
sc create kubeproxy binPath= 'C:\kp\kubelet.exe --healthz-port=0' depend= kubelet >/dev/null
sc start kubeproxy >/dev/null
wait_state kubeproxy RUNNING
check "(wine's service manager) StartService of kubeproxy does not start kubelet, its dependency" \
  "$([ "$(state kubelet)" = STOPPED ]; echo $?)" "$(sc query kubelet)"
sc stop kubeproxy >/dev/null
wait_state kubeproxy STOPPED
out=$(ps -NoProfile -Command 'Start-Service kubeproxy')
check "Start-Service kubeproxy starts containerd, then kubelet, then kubeproxy (as Windows' manager does)" \
  "$([ "$(state containerd)" = RUNNING ] && [ "$(state kubelet)" = RUNNING ] && [ "$(state kubeproxy)" = RUNNING ]; echo $?)" \
  "$out"
out=$(ps -NoProfile -Command 'Stop-Service kubelet; "after: $((Get-Service kubelet).Status)"')
check "Stop-Service kubelet while kubeproxy runs: refused, kubelet still runs" \
  "$(grep -q "Cannot stop service 'kubelet (kubelet)' because it has dependent services. It can only be stopped if the Force flag is set." <<<"$out" &&
     [ "$(tail -n 1 <<<"$out")" = "after: Running" ]; echo $?)" "$out"
out=$(ps -NoProfile -Command 'Stop-Service kubelet -Force')
check "Stop-Service kubelet -Force stops kubeproxy first, then kubelet" \
  "$([ "$(state kubeproxy)" = STOPPED ] && [ "$(state kubelet)" = STOPPED ] && port_closed "$port"; echo $?)" "$out"
sc start kubelet >/dev/null
wait_state kubelet RUNNING
sc start kubeproxy >/dev/null
wait_state kubeproxy RUNNING
sc stop kubelet >/dev/null
wait_state kubelet STOPPED
check "(wine's service manager) ControlService(STOP) of kubelet succeeds while kubeproxy runs" \
  "$([ "$(state kubelet)" = STOPPED ] && [ "$(state kubeproxy)" = RUNNING ]; echo $?)" \
  "$(sc query kubelet)"
sc stop kubeproxy >/dev/null
wait_state kubeproxy STOPPED

echo "== AKS's windowsnodereset.ps1: kubeproxy and kubelet stopped, the network cleaned, kubelet started"
write_aks_windowsnodereset "$c/k/windowsnodereset.ps1"
printf 'azure L2Bridge\r\n' >"$c/k/hns-networks.txt"
printf 'policylist-1\r\npolicylist-2\r\n' >"$c/k/hns-policylists.txt"
sc start containerd >/dev/null
wait_state containerd RUNNING
sc start kubelet >/dev/null
wait_state kubelet RUNNING
sc start kubeproxy >/dev/null
wait_state kubeproxy RUNNING
wait_healthz "$port"
starts=$(wc -l <"$c/k/starts.log")
out=$(ps_in_k -File 'C:\k\windowsnodereset.ps1')
code=$?
check "it ends with exit code 0" "$([ "$code" = 0 ]; echo $?)" "$out"
wait_healthz "$port"
check "kubelet was stopped and started again: a new kubelet.exe answers healthz" \
  "$([ "$(wc -l <"$c/k/starts.log")" = $((starts + 1)) ] && [ "$(state kubelet)" = RUNNING ]; echo $?)" \
  "$(tail -n 2 "$c/k/starts.log")"$'\n'"$out"
check "kubeproxy stays stopped (kubelet restarts it on a real node)" \
  "$([ "$(state kubeproxy)" = STOPPED ]; echo $?)" "$(sc query kubeproxy)"
check "cleanupnetwork.ps1 removed the azure network and the policy lists (Get-/Remove-Hns* stubs)" \
  "$([ "$(sed 's/\r$//' "$c/k/hns-calls.log")" = $'Remove-HnsPolicyList policylist-1\nRemove-HnsPolicyList policylist-2\nRemove-HnsNetwork azure' ] &&
     [ ! -s "$c/k/hns-networks.txt" ]; echo $?)" "$(cat "$c/k/hns-calls.log" 2>/dev/null)"
log=$(utf16 "$c/k/windowsnodereset.log")
check "windowsnodereset.log (Tee-Object, UTF-16): its steps in order" \
  "$(sed 's/^[^ ]*: //' <<<"$log" | grep -E '^(Entering|Stopping|Starting|Do not|Exiting)' | tr '\n' '|' |
     grep -qx 'Entering windowsnodereset.ps1|Stopping kubeproxy service|Stopping kubelet service|Starting kubelet service|Do not start kubeproxy service since kubelet will restart kubeproxy|Exiting windowsnodereset.ps1|'; echo $?)" \
  "$log"

echo "== image-builder's RestartKubelet.ps1: the kubelet service deleted and created again"
kubeadm2="--container-runtime-endpoint=npipe:////./pipe/containerd-containerd --v=2"
write_kubeadm_flags "$c/var/lib/kubelet/kubeadm-flags.env" "$kubeadm2"
write_ib_restart_kubelet "$c/k/RestartKubelet.ps1"
out=$(ps -NoProfile -Command '& "$env:SYSTEMDRIVE/k/RestartKubelet.ps1"')
check "it says it deleted the service and restarts it" \
  "$(grep -qx 'kubelet service deleted successfully, restarting' <<<"$out"; echo $?)" "$out"
check "the old kubelet.exe is gone (sc.exe stop)" "$(port_closed "$port"; echo $?)"
image=$(registry kubelet ImagePath)
expected="\"C:\\k\\kube-log-runner.exe\" --log-file=/var/log/kubelet/kubelet.err.log C:\\k\\kubelet.exe --cert-dir=C:/var/lib/kubelet/pki --config=C:/var/lib/kubelet/config.yaml --bootstrap-kubeconfig=C:/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=C:/etc/kubernetes/kubelet.conf --hostname-override=$host --enable-debugging-handlers --cgroups-per-qos=false --enforce-node-allocatable=\"\" --resolv-conf=\"\" --windows-service $kubeadm2"
check "the new service's command: kube-log-runner.exe, kubelet.exe, the script's flags, kubeadm's last" \
  "$([ "$image" = "$expected" ]; echo $?)" "$image"$'\n'"expected: $expected"
depends=$(registry kubelet DependOnService)
check "created with depend= containerd (wine's sc.exe writes junk after the first name)" \
  "$([ "${depends%%\\0*}" = containerd ]; echo $?)" "$depends"
check "and start= auto" "$([ "$(registry kubelet Start)" = 0x2 ]; echo $?)" "$(registry kubelet Start)"

echo "== what the stand-in does not implement"
cat >"$c/k/unknown.ps1" <<'EOF'
Write-Host "before"
$hostIp = (Get-NetIPAddress -AddressFamily IPv4 | Select-Object -First 1).IPAddress
Write-Host "after"
EOF
out=$(ps -File 'C:\k\unknown.ps1')
code=$?
check "a cmdlet it lacks stops the script with exit code 70, naming the script, line and command" \
  "$([ "$code" = 70 ] && grep -qx 'before' <<<"$out" && ! grep -q after <<<"$out" &&
     grep -q 'C:\\k\\unknown.ps1:2:.*not implemented: the command Get-NetIPAddress' <<<"$out"; echo $?)" "$out"
check "and powershell.log next to powershell.exe says so" \
  "$(grep -q '^not-implemented [0-9]* C:\\k\\unknown.ps1:2:.*Get-NetIPAddress' "$ps_dir/powershell.log"; echo $?)" \
  "$(tail -n 3 "$ps_dir/powershell.log")"

for service in kubeproxy kubelet containerd; do sc stop "$service" >/dev/null; done
[ "$failures" = 0 ] && echo "all passed ($passes checks)"
exit $((failures > 0))
