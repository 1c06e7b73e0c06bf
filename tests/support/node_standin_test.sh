#!/usr/bin/env bash
# The node stand-ins (tests/support/node_standin/: kubelet.exe, nssm.exe, containerd.exe,
# rke2.exe, EKS-WindowsServiceHost.exe and powershell.exe, one program copied under each name) behave
# as the tests of `dxshim.exe install` need them to, as services of wine's service control manager:
# a containerd service serves its configured pipe; a native kubelet service logs its command line,
# answers healthz on its port, reconnects to the runtime's pipe every second, stops; an NSSM
# kubelet service starts `"<Application>" <AppParameters>` at every start (the PowerShell
# stand-in running sig-windows-tools' StartKubelet.ps1, which starts kubelet.exe with kubeadm's
# flags first, or AKS's UTF-16 kubeletstart.ps1, whose run-process.cs starts kubelet.exe; a
# kubelet.exe Application directly), and ends it and its descendants on STOP; an rke2 service
# starts containerd.exe and
# kubelet.exe from its folder, kubelet with the kubelet-arg items of its config.yaml (an item
# replacing rke2's default endpoint); an EKS-WindowsServiceHost.exe service runs its own command
# line from the third word on; both end their children on STOP; exit codes reach the service
# manager (a port in use: 3; a served pipe: 4; no Parameters: 2).
# usage: node_standin_test.sh node-standin.exe
set -uo pipefail
exe=${1:?usage: node_standin_test.sh node-standin.exe}
if [ ! -f "$exe" ]; then
  echo "$(basename "$0"): $exe is missing: build it (cmake --build build --target node_standin_exe)"
  exit 1
fi
source "$(dirname "$0")/wine_test_env.sh"
source "$(dirname "$0")/powershell_fixtures.sh"
wineserver="$(dirname "$wine")/wineserver"
c=$WINEPREFIX/drive_c

run() { timeout 60 "$wine" "$@" 2>&1 | sed -u 's/\r$//'; return "${PIPESTATUS[0]}"; }
sc() { run sc.exe "$@"; }
reg_set() {  # reg_set SERVICE NAME TYPE DATA
  run reg.exe add "HKLM\\SYSTEM\\CurrentControlSet\\Services\\$1\\Parameters" /v "$2" /t "$3" \
    /d "$4" /f >/dev/null
}
state() { sc query "$1" | awk '$1 == "STATE" {print $4}'; }
exit_codes() {  # "WIN32_EXIT_CODE SERVICE_EXIT_CODE" of a service
  sc query "$1" | awk '$1 == "WIN32_EXIT_CODE" {w = $3} $1 == "SERVICE_EXIT_CODE" {s = $3} END {print w, s}'
}
wait_state() {  # wait_state SERVICE STATE: up to 30 s
  local _
  for _ in $(seq 1 150); do
    [ "$(state "$1")" = "$2" ] && return 0
    sleep 0.2
  done
  return 1
}
healthz() { curl -s --max-time 5 "http://127.0.0.1:$1${2:-/healthz}"; }
wait_healthz() {  # wait_healthz PORT: up to 30 s for `ok`
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
pid_of_line() { sed -n 's/^start \([0-9][0-9]*\) .*/\1/p' <<<"$1"; }
connections_from() {  # connections_from PID: how many the containerd stand-in accepted from it
  grep -cx "connect $1" "$c/Program Files/containerd/connections.log" 2>/dev/null
}

# The node: C:\k\{kubelet,nssm}.exe, C:\Program Files\containerd\containerd.exe and config.toml,
# C:\var\lib\kubelet\kubeadm-flags.env, the PowerShell scripts NSSM may run and the PowerShell
# stand-in where Windows has powershell.exe (wine's own there is an empty stub).
mkdir -p "$c/k" "$c/Program Files/containerd" "$c/var/lib/kubelet"
cp "$exe" "$c/k/kubelet.exe"
cp "$exe" "$c/k/nssm.exe"
cp "$exe" "$c/Program Files/containerd/containerd.exe"
cp "$exe" "$c/windows/system32/WindowsPowerShell/v1.0/powershell.exe"
cat >"$c/Program Files/containerd/config.toml" <<'EOF'
version = 2
root = "C:\\ProgramData\\containerd\\root"

[grpc]
  address = "\\\\.\\pipe\\containerd-containerd"  # the default, spelled out

[debug]
  address = "\\\\.\\pipe\\containerd-debug"
EOF
write_swt_start_kubelet "$c/k/StartKubelet.ps1"
kubeadm_flags() {
  write_kubeadm_flags "$c/var/lib/kubelet/kubeadm-flags.env" \
    "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd --healthz-port=$1"
}
write_run_process_cs "$c/k/run-process.cs"
write_aks_cleanupnetwork "$c/k/cleanupnetwork.ps1"
write_aks_kubeletstart "$c/k/kubeletstart.ps1"

# Wine settled first (its service manager refuses starts right after wineboot), then a persistent
# wineserver: services are wine "system" processes, which wine ends a few seconds after the last
# other process has exited (between two commands of this script). Its service manager is started
# by a first command whose output nobody reads: wine's own processes that start with it keep the
# output they inherit open, and a command substitution would wait for them.
"$wineserver" -w
"$wineserver" -p >/dev/null 2>&1  # returns once the server (in the background) is ready
timeout 60 "$wine" sc.exe query containerd >/dev/null 2>&1 </dev/null

# A port in use by someone else (a Linux listener), for the exit codes.
exec 3< <(exec timeout 120 python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(120)')
holder=$!
read -r busy_port <&3
trap 'kill "$holder" 2>/dev/null; "$wineserver" -k 2>/dev/null; rm -rf "$work"' EXIT

echo "== containerd.exe as a service"
out=$(run "$exe" --probe-pipe containerd-containerd)
check "before containerd starts, nothing serves \\\\.\\pipe\\containerd-containerd" \
  "$([ $? = 1 ]; echo $?)" "$out"
sc create containerd binPath= '"C:\Program Files\containerd\containerd.exe"' >/dev/null
sc start containerd >/dev/null
wait_state containerd RUNNING
check "the containerd service reports RUNNING" $? "$(sc query containerd)"
line=$(cat "$c/Program Files/containerd/starts.log" 2>/dev/null)
containerd_pid=$(pid_of_line "$line")
check "it logged its start with its command line" \
  "$([ "$line" = "start $containerd_pid \"C:\\Program Files\\containerd\\containerd.exe\"" ]; echo $?)" "$line"
out=$(run "$exe" --probe-pipe containerd-containerd)
check "the pipe is served, by the containerd service's process" \
  "$([ "$out" = "\\\\.\\pipe\\containerd-containerd: served by process $containerd_pid" ]; echo $?)" "$out"
out=$(run 'C:\Program Files\containerd\containerd.exe')
check "a second containerd.exe on the same pipe exits with 4" "$([ $? = 4 ]; echo $?)" "$out"
printf "[grpc]\naddress = '\\\\\\\\.\\\\pipe\\\\standin-literal'\n" >"$c/k/literal.toml"
run 'C:\Program Files\containerd\containerd.exe' --config 'C:\k\literal.toml' >/dev/null &
for _ in $(seq 1 50); do
  out=$(run "$exe" --probe-pipe 'npipe://./pipe/standin-literal') && break
  sleep 0.2
done
check "in the foreground it serves the literal-string address of its --config" $? "$out"

echo "== kubelet.exe as a native service"
port1=$(free_port)
sc create kubelet binPath= "C:\\k\\kubelet.exe --container-runtime-endpoint=npipe://./pipe/containerd-containerd --healthz-port=$port1" >/dev/null
sc start kubelet >/dev/null
wait_state kubelet RUNNING
check "the kubelet service reports RUNNING" $? "$(sc query kubelet)"
out=$(healthz "$port1")
check "healthz answers ok at once" "$([ "$out" = ok ]; echo $?)" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port1/metrics")
check "any other path is 404" "$([ "$out" = 404 ]; echo $?)" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port1/healthz")
check "and so is any other method" "$([ "$out" = 404 ]; echo $?)" "$out"
log=$(cat "$c/k/starts.log")
kubelet_pid=$(pid_of_line "$log")
check "starts.log has one line: its pid and command line" \
  "$([ "$log" = "start $kubelet_pid C:\\k\\kubelet.exe --container-runtime-endpoint=npipe://./pipe/containerd-containerd --healthz-port=$port1" ]; echo $?)" "$log"
sleep 2.5
n=$(connections_from "$kubelet_pid")
check "it connects to the runtime's pipe every second ($n connections)" "$([ "$n" -ge 2 ]; echo $?)" \
  "$(cat "$c/Program Files/containerd/connections.log")"
out=$(run 'C:\k\kubelet.exe' "--healthz-port=$port1")
check "a second kubelet.exe on the same port exits with 3" "$([ $? = 3 ]; echo $?)" "$out"
sc stop kubelet >/dev/null
wait_state kubelet STOPPED
check "STOP: it reports STOPPED" $? "$(sc query kubelet)"
check "with exit code 0" "$([ "$(exit_codes kubelet)" = "0 0" ]; echo $?)" "$(sc query kubelet)"
check "and its port is closed" "$(port_closed "$port1"; echo $?)"
sc delete kubelet >/dev/null
sc create kubelet-busy binPath= "C:\\k\\kubelet.exe --healthz-port=$busy_port" >/dev/null
sc start kubelet-busy >/dev/null
wait_state kubelet-busy STOPPED
check "a kubelet service whose port is taken ends STOPPED, service-specific exit code 3" \
  "$([ "$(exit_codes kubelet-busy)" = "1066 3" ]; echo $?)" "$(sc query kubelet-busy)"
sc delete kubelet-busy >/dev/null

echo "== kubelet as an NSSM service running kubeadm's StartKubelet.ps1"
port2=$(free_port)
kubeadm_flags "$port2"
for _ in $(seq 1 25); do  # the deleted kubelet service may take a moment to go
  sc create kubelet binPath= 'C:\k\nssm.exe' >/dev/null && break
  sleep 0.2
done
# sig-windows-tools' PrepareNode.ps1: `nssm install kubelet $global:Powershell
# $global:PowershellArgs $global:StartKubeletScript`, no AppDirectory (NSSM: Application's folder).
reg_set kubelet Application REG_EXPAND_SZ 'C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe'
reg_set kubelet AppParameters REG_EXPAND_SZ '-ExecutionPolicy Bypass -NoProfile C:\k\StartKubelet.ps1'
sc start kubelet >/dev/null
wait_state kubelet RUNNING
check "the NSSM service reports RUNNING" $? "$(sc query kubelet)$(cat "$c/k/nssm-starts.log" 2>/dev/null)"
wait_healthz "$port2"
check "the kubelet.exe that the PowerShell stand-in started answers healthz on kubeadm's port" $? \
  "$(tail -n 3 "$c/windows/system32/WindowsPowerShell/v1.0/powershell.log")"
nssm_line=$(tail -n 1 "$c/k/nssm-starts.log")
shell=$(pid_of_line "$nssm_line")
check "nssm-starts.log: \"<Application>\" <AppParameters>, as NSSM 2.24 starts it" \
  "$([ "$nssm_line" = "start $shell \"C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe\" -ExecutionPolicy Bypass -NoProfile C:\\k\\StartKubelet.ps1" ]; echo $?)" \
  "$nssm_line"
expected="\"C:\\k\\kubelet.exe\" --container-runtime-endpoint=npipe:////./pipe/containerd-containerd --healthz-port=$port2 --cert-dir=C:\\var\\lib\\kubelet\\pki --config=/var/lib/kubelet/config.yaml --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --hostname-override=node-1 --enable-debugging-handlers --cgroups-per-qos=false --enforce-node-allocatable= --resolv-conf="
line=$(tail -n 1 "$c/k/starts.log")
child=$(pid_of_line "$line")
check "kubelet.exe's starts.log line: kubeadm's flags, then the script's" \
  "$([ "$line" = "start $child $expected" ]; echo $?)" "$line"$'\n'"expected: start PID $expected"
sleep 1.5
check "it connects to the runtime through the npipe://// form" \
  "$([ "$(connections_from "$child")" -ge 1 ]; echo $?)" "$(tail -n 3 "$c/Program Files/containerd/connections.log")"
sc stop kubelet >/dev/null
wait_state kubelet STOPPED
check "STOP: the NSSM service reports STOPPED with exit code 0" \
  "$([ "$(exit_codes kubelet)" = "0 0" ]; echo $?)" "$(sc query kubelet)"
check "and its kubelet.exe, PowerShell's child, is gone (its port is closed)" \
  "$(port_closed "$port2"; echo $?)"
n=$(connections_from "$child")
sleep 1.5
check "(and no longer connects to the runtime)" "$([ "$(connections_from "$child")" = "$n" ]; echo $?)"

echo "== the same NSSM service, Parameters changed between starts"
port3=$(free_port)
write_aks_cluster_config "$c/k/kubeclusterconfig.json" "\"--healthz-port=$port3\"" 1.29.2
# AgentBaker kubeletfunc.ps1's New-NSSMService: AppParameters the script, AppDirectory c:\k.
reg_set kubelet AppParameters REG_EXPAND_SZ 'c:\k\kubeletstart.ps1'
reg_set kubelet AppDirectory REG_EXPAND_SZ 'c:\k'
sc start kubelet >/dev/null
wait_healthz "$port3"
check "AKS's kubeletstart.ps1 (UTF-16): kubelet.exe answers healthz on the port of its ConfigArgs" $? \
  "$(sc query kubelet)$(tail -n 1 "$c/k/nssm-starts.log")"
expected="\"c:\\k\\kubelet.exe\" --healthz-port=$port3 --node-labels=kubernetes.azure.com/role=agent,agentpool=win --volume-plugin-dir=c:\\k\\volumeplugins --windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS --container-runtime-endpoint=npipe://./pipe/containerd-containerd"
line=$(tail -n 1 "$c/k/starts.log")
check "run-process.cs started it with ConfigArgs, then the script's flags in order" \
  "$([ "$line" = "start $(pid_of_line "$line") $expected" ]; echo $?)" \
  "$line"$'\n'"expected: start PID $expected"
sc stop kubelet >/dev/null
wait_state kubelet STOPPED
check "it stops" "$(port_closed "$port3"; echo $?)"
reg_set kubelet Application REG_SZ 'C:\k\kubelet.exe'
reg_set kubelet AppParameters REG_SZ "--healthz-port=$port3 --config=C:/var/lib/kubelet/config.yaml"
sc start kubelet >/dev/null
wait_healthz "$port3"
check "Application kubelet.exe: started directly, with AppParameters" $? "$(sc query kubelet)"
nssm_line=$(tail -n 1 "$c/k/nssm-starts.log")
check "as \"Application\" AppParameters" \
  "$([ "$nssm_line" = "start $(pid_of_line "$nssm_line") \"C:\\k\\kubelet.exe\" --healthz-port=$port3 --config=C:/var/lib/kubelet/config.yaml" ]; echo $?)" \
  "$nssm_line"
sc stop kubelet >/dev/null
wait_state kubelet STOPPED
check "it stops" "$(port_closed "$port3"; echo $?)"
reg_set kubelet AppParameters REG_SZ "--healthz-port=$busy_port"
sc start kubelet >/dev/null
wait_state kubelet STOPPED
check "a kubelet.exe that exits (port taken) ends the NSSM service with its exit code 3" \
  "$([ "$(exit_codes kubelet)" = "1066 3" ]; echo $?)" "$(sc query kubelet)$(tail -n 2 "$c/k/nssm-starts.log")"
sc delete kubelet >/dev/null

echo "== nssm.exe without its Parameters, or outside the service manager"
sc create nssm-bare binPath= 'C:\k\nssm.exe' >/dev/null
sc start nssm-bare >/dev/null
wait_state nssm-bare STOPPED
check "an NSSM service without Parameters ends STOPPED, service-specific exit code 2" \
  "$([ "$(exit_codes nssm-bare)" = "1066 2" ]; echo $?)" "$(sc query nssm-bare)"
check "and says why in nssm-starts.log" \
  "$(tail -n 1 "$c/k/nssm-starts.log" | grep -q '^error no registry key HKLM\\SYSTEM\\CurrentControlSet\\Services\\nssm-bare\\Parameters$'; echo $?)" \
  "$(tail -n 1 "$c/k/nssm-starts.log")"
out=$(run 'C:\k\nssm.exe')
check "nssm.exe from a console refuses to run (exit code 2)" "$([ $? = 2 ]; echo $?)" "$out"

echo "== rke2.exe as a service: kubelet and containerd as its children"
mkdir -p "$c/rke2bin" "$c/rke2"
for name in rke2 kubelet containerd; do cp "$exe" "$c/rke2bin/$name.exe"; done
printf '[grpc]\n  address = "\\\\\\\\.\\\\pipe\\\\rke2-containerd"\n' >"$c/rke2bin/containerd.toml"
port4=$(free_port)
cat >"$c/rke2/config.yaml" <<YAML
# kubelet-arg: ["--v=9"] in a comment reaches no kubelet
token: x
kubelet-arg: ["--healthz-port=$port4", 'container-runtime-endpoint=npipe://./pipe/rke2-containerd',
  "node-labels=a=b,c=d", feature-gates=X=true]
node-name: win-1
YAML
sc create rke2 binPath= '"C:\rke2bin\rke2.exe" agent --config C:\rke2\config.yaml' >/dev/null
sc start rke2 >/dev/null
wait_state rke2 RUNNING
check "the rke2 service reports RUNNING" $? "$(sc query rke2)$(cat "$c/rke2bin/rke2-starts.log" 2>/dev/null)"
wait_healthz "$port4"
check "its kubelet.exe answers healthz on the port of a kubelet-arg item" $?
expected="\"C:\\rke2bin\\kubelet.exe\" --healthz-port=$port4 --container-runtime-endpoint=npipe://./pipe/rke2-containerd --node-labels=a=b,c=d --feature-gates=X=true"
rke2_line=$(tail -n 1 "$c/rke2bin/rke2-starts.log")
child=$(pid_of_line "$rke2_line")
check "flow list over two lines: one --name=value per item, the item's endpoint replacing rke2's default" \
  "$([ "$rke2_line" = "start $child $expected" ]; echo $?)" "$rke2_line"$'\n'"expected: start PID $expected"
out=$(run "$exe" --probe-pipe rke2-containerd)
check "its containerd.exe serves the pipe of the containerd.toml in rke2's folder" \
  "$(grep -qF 'served by process' <<<"$out" &&
     grep -qE '^start [0-9]+ "C:\\rke2bin\\containerd\.exe" --config C:\\rke2bin\\containerd\.toml$' "$c/rke2bin/starts.log"; echo $?)" \
  "$out"$'\n'"$(cat "$c/rke2bin/starts.log")"
sleep 1.5
check "and its kubelet.exe connects to it" \
  "$([ "$(grep -cx "connect $child" "$c/rke2bin/connections.log")" -ge 1 ]; echo $?)" "$(cat "$c/rke2bin/connections.log")"
sc stop rke2 >/dev/null
wait_state rke2 STOPPED
check "STOP: the rke2 service reports STOPPED with exit code 0" \
  "$([ "$(exit_codes rke2)" = "0 0" ]; echo $?)" "$(sc query rke2)"
out=$(run "$exe" --probe-pipe rke2-containerd)
check "and both children are gone (port closed, pipe not served)" \
  "$(port_closed "$port4" && grep -q 'not served' <<<"$out"; echo $?)" "$out"
sc delete rke2 >/dev/null
port5=$(free_port)
mkdir -p "$c/etc/rancher/rke2"
sed 's/$/\r/' >"$c/etc/rancher/rke2/config.yaml" <<YAML
server: https://10.0.0.1:9345
kubelet-arg:
# a comment
- v=2

  - "healthz-port=$port5" # its port
  - 'resolv-conf='''
  - "pod-infra-container-image=a \\"b\\""
node-label:
  - "x=y"
YAML
for _ in $(seq 1 25); do  # the deleted service may take a moment to go
  sc create rke2 binPath= 'C:\rke2bin\rke2.exe agent' >/dev/null && break
  sleep 0.2
done
sc start rke2 >/dev/null
wait_healthz "$port5"
check "without --config: C:\\etc\\rancher\\rke2\\config.yaml's block list" $? \
  "$(sc query rke2)$(tail -n 1 "$c/rke2bin/rke2-starts.log")"
expected="\"C:\\rke2bin\\kubelet.exe\" --container-runtime-endpoint=npipe:////./pipe/containerd-containerd --v=2 --healthz-port=$port5 --resolv-conf=' \"--pod-infra-container-image=a \\\"b\\\"\""
rke2_line=$(tail -n 1 "$c/rke2bin/rke2-starts.log")
check "rke2's default endpoint first, then the items (CRLF, comments, quoted values)" \
  "$([ "$rke2_line" = "start $(pid_of_line "$rke2_line") $expected" ]; echo $?)" \
  "$rke2_line"$'\n'"expected: start PID $expected"
sc stop rke2 >/dev/null
wait_state rke2 STOPPED
check "it stops" "$(port_closed "$port5"; echo $?)"
printf 'kubelet-arg:\n  - "healthz-port=%s"\n' "$busy_port" >"$c/etc/rancher/rke2/config.yaml"
sc start rke2 >/dev/null
wait_state rke2 STOPPED
check "a kubelet.exe that exits (port taken) ends the rke2 service with its exit code 3" \
  "$([ "$(exit_codes rke2)" = "1066 3" ]; echo $?)" "$(sc query rke2)$(tail -n 2 "$c/rke2bin/rke2-starts.log")"
check "and rke2-starts.log says which child ended" \
  "$(tail -n 1 "$c/rke2bin/rke2-starts.log" | grep -qx 'error kubelet.exe ended with exit code 3'; echo $?)" \
  "$(tail -n 1 "$c/rke2bin/rke2-starts.log")"
out=$(run "$exe" --probe-pipe rke2-containerd)
check "and its containerd.exe was ended too" "$([ $? = 1 ]; echo $?)" "$out"
sc delete rke2 >/dev/null

echo "== EKS-WindowsServiceHost.exe running kubelet.exe"
mkdir -p "$c/Program Files/Amazon/EKS"
cp "$exe" "$c/Program Files/Amazon/EKS/EKS-WindowsServiceHost.exe"
port6=$(free_port)
args="--config=\"C:\\ProgramData\\kubernetes\\kubelet-config.json\"  --healthz-port=$port6 --resolv-conf=\"\" --container-runtime-endpoint=\"npipe:////./pipe/containerd-containerd\""
sc create kubelet-eks binPath= "\"C:\\Program Files\\Amazon\\EKS\\EKS-WindowsServiceHost.exe\" kubelet \"C:\\k\\kubelet.exe\" $args" >/dev/null
sc start kubelet-eks >/dev/null
wait_state kubelet-eks RUNNING
check "the service host reports RUNNING" $? "$(sc query kubelet-eks)"
wait_healthz "$port6"
check "its kubelet.exe answers healthz" $?
host_line=$(tail -n 1 "$c/Program Files/Amazon/EKS/servicehost-starts.log")
child=$(pid_of_line "$host_line")
check "the child's command line is its own from the third word on, verbatim" \
  "$([ "$host_line" = "start $child \"C:\\k\\kubelet.exe\" $args" ] &&
     [ "$(tail -n 1 "$c/k/starts.log")" = "$host_line" ]; echo $?)" \
  "$host_line"$'\n'"$(tail -n 1 "$c/k/starts.log")"
sc stop kubelet-eks >/dev/null
wait_state kubelet-eks STOPPED
check "STOP: STOPPED with exit code 0, and its kubelet.exe is gone" \
  "$([ "$(exit_codes kubelet-eks)" = "0 0" ] && port_closed "$port6"; echo $?)" "$(sc query kubelet-eks)"
sc delete kubelet-eks >/dev/null
sc create kubelet-eks2 binPath= "\"C:\\Program Files\\Amazon\\EKS\\EKS-WindowsServiceHost.exe\" kubelet C:\\k\\kubelet.exe --healthz-port=$busy_port" >/dev/null
sc start kubelet-eks2 >/dev/null
wait_state kubelet-eks2 STOPPED
check "a child that exits (port taken) ends the service host with its exit code 3" \
  "$([ "$(exit_codes kubelet-eks2)" = "1066 3" ]; echo $?)" "$(sc query kubelet-eks2)"
sc delete kubelet-eks2 >/dev/null

echo "== containerd.exe stops"
sc stop containerd >/dev/null
wait_state containerd STOPPED
check "STOP: the containerd service reports STOPPED with exit code 0" \
  "$([ "$(exit_codes containerd)" = "0 0" ]; echo $?)" "$(sc query containerd)"
out=$(run "$exe" --probe-pipe containerd-containerd)
check "and the pipe is no longer served" "$([ $? = 1 ]; echo $?)" "$out"

[ "$failures" = 0 ] && echo "all passed ($passes checks)"
exit $((failures > 0))
