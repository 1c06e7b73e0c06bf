#!/usr/bin/env bash
# The node stand-ins (tests/support/node_standin/: kubelet.exe, nssm.exe, containerd.exe,
# containerd-shim-runhcs-v1.exe, ctr.exe, rke2.exe, EKS-WindowsServiceHost.exe, kube-log-runner.exe,
# kube-proxy.exe and powershell.exe, one program copied under each name) behave as the tests of
# `dxshim.exe install` need them to, as services of wine's service control manager: a containerd
# service serves gRPC on its configured pipe and TTRPC on the pipe containerd derives for its config
# version (foreground containerds on version 2, 3 and 4 configs, an empty gRPC address refused); a
# native kubelet service logs its command line, answers healthz on its port, calls CRI Version every
# second on one connection (the endpoint of its flag, else of its --config file), stops; an NSSM
# kubelet service starts `"<Application>" <AppParameters>` at every start (the PowerShell stand-in
# running sig-windows-tools' StartKubelet.ps1, which starts kubelet.exe with kubeadm's flags first,
# or AKS's kubeletstart.ps1, whose run-process.cs starts kubelet.exe; a kubelet.exe
# Application directly), and ends it and its descendants on STOP; an rke2 service starts
# containerd.exe and kubelet.exe from its folder, kubelet with its own arguments and the kubelet-arg
# items of its config.yaml and config.yaml.d drop-ins, merged as k3s does (configfilearg, GetArgs);
# an EKS-WindowsServiceHost.exe service runs its own command line from the third word on; both end
# their children on STOP; exit codes reach the service manager (a port in use: 3; a served pipe: 4;
# no Parameters: 2). ctr.exe runs, lists, kills and removes containers through containerd
# (namespaces, --address); their tasks run under shims started with containerd's TTRPC address,
# which publish /tasks/exit to it (the task then stopped and removable); the container table
# survives containerd's restarts; a shim started before containerd moved its TTRPC address keeps
# publishing to the old one and drops the event after containerd's 6 attempts, while a new shim gets
# the new address, and an exit during a containerd restart is delivered by a retry. A kube-log-
# runner.exe service runs kubelet.exe with Go's command line and flags, its output appended to
# --log-file (a kubelet that fails ends it with 1; flag errors 2); a kube-proxy.exe service runs
# until stopped; --healthz-port=0 serves no port. Real gRPC (grpc C++ core, by Debian's
# python3-grpcio, reaching the pipes through pipe-relay.exe) calls containerd.exe (1 MiB requests,
# 16 calls at once, error statuses) and answers kubelet.exe's Version calls.
# usage: node_standin_test.sh node-standin.exe pipe-relay.exe
set -uo pipefail
exe=${1:?usage: node_standin_test.sh node-standin.exe pipe-relay.exe}
relay_exe=${2:?usage: node_standin_test.sh node-standin.exe pipe-relay.exe}
for built in "$exe" "$relay_exe"; do
  if [ ! -f "$built" ]; then
    echo "$(basename "$0"): $built is missing: build it (cmake --build build --target" \
      "node_standin_exe pipe_relay_exe)"
    exit 1
  fi
done
# Debian's python3 with python3-grpcio: real gRPC (grpc C++ core) for the wire checks.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'import grpc' 2>/dev/null; then
  echo "$(basename "$0"): $py cannot import grpc: apt-get install python3-grpcio"
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
cd_dir="$c/Program Files/containerd"
versions_from() {  # versions_from PID [FOLDER]: CRI Version calls containerd logged from PID
  grep -cx "call $1 /runtime.v1.RuntimeService/Version" "${2:-$cd_dir}/calls.log" 2>/dev/null
}
ctr() { run 'C:\Program Files\containerd\ctr.exe' "$@"; }
wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds, polled every 0.2 s
  local wait_for_polls=$(($1 * 5)) _
  shift
  for _ in $(seq 1 "$wait_for_polls"); do
    "$@" && return 0
    sleep 0.2
  done
  return 1
}
has_line() { grep -qxF -- "$2" "$1" 2>/dev/null; }  # has_line FILE LINE
task_pid() {  # task_pid ID: the task's process id in containerd's table (default root)
  awk -F'\t' -v id="$1" '$2 == id {print $6}' "$c/ProgramData/containerd/root/node-standin-containers.txt"
}
task_state() {  # task_state ID
  awk -F'\t' -v id="$1" '$2 == id {print $5}' "$c/ProgramData/containerd/root/node-standin-containers.txt"
}
wine_listening_ports() {  # the TCP ports this test's wineserver listens on (it holds every socket)
  "$py" - "$WINEPREFIX" <<'PY'
import os, sys
inodes = set()
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    for row in open(table).read().splitlines()[1:]:
        f = row.split()
        if f[3] == "0A":
            inodes.add((f[9], int(f[1].rsplit(":", 1)[1], 16)))
ports = set()
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if b"WINEPREFIX=" + sys.argv[1].encode() + b"\0" not in open(f"/proc/{pid}/environ", "rb").read():
            continue
        if not open(f"/proc/{pid}/comm").read().startswith("wineserver"):
            continue
        fds = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    except OSError:
        continue
    ports |= {port for inode, port in inodes if f"socket:[{inode}]" in fds}
print(" ".join(str(p) for p in sorted(ports)))
PY
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
exec 3< <(exec timeout 900 python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(900)')
background=($!)  # Linux processes of the test, ended with wine's at exit
read -r busy_port <&3
trap 'kill "${background[@]}" 2>/dev/null; "$wineserver" -k 2>/dev/null; rm -rf "$work"' EXIT

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
out=$(run "$exe" --probe-pipe containerd-containerd.ttrpc)
check "version 2, no [ttrpc]: TTRPC on the gRPC address + .ttrpc, by the same process" \
  "$([ "$out" = "\\\\.\\pipe\\containerd-containerd.ttrpc: served by process $containerd_pid" ]; echo $?)" "$out"
out=$(run 'C:\Program Files\containerd\containerd.exe')
check "a second containerd.exe on the same pipe exits with 4" "$([ $? = 4 ]; echo $?)" "$out"
printf "root = 'C:\\\\k\\\\literal-root'\n[grpc]\naddress = '\\\\\\\\.\\\\pipe\\\\standin-literal'\n" >"$c/k/literal.toml"
timeout 600 "$wine" 'C:\Program Files\containerd\containerd.exe' --config 'C:\k\literal.toml' \
  >/dev/null 2>&1 </dev/null &
for _ in $(seq 1 50); do
  out=$(run "$exe" --probe-pipe 'npipe://./pipe/standin-literal') && break
  sleep 0.2
done
check "in the foreground it serves the literal-string address of its --config" $? "$out"
wait_for 10 run "$exe" --probe-pipe standin-literal.ttrpc >/dev/null
check "and TTRPC on that address + .ttrpc" $?

echo "== containerd.exe's TTRPC address per config version (in the foreground)"
standin_containerd() {  # standin_containerd NAME TOML: a foreground containerd on config NAME
  printf '%s\n' "$2" >"$c/k/$1.toml"
  timeout 600 "$wine" 'C:\Program Files\containerd\containerd.exe' --config "C:\\k\\$1.toml" \
    >"$work/$1.out" 2>&1 </dev/null &
}
standin_containerd v3 'version = 3
[grpc]
  address = "//./pipe/standin-v3"'
wait_for 10 run "$exe" --probe-pipe standin-v3.ttrpc >/dev/null
check "version 3 (k3s's //./pipe address, no [ttrpc]): TTRPC at //./pipe/standin-v3.ttrpc" $?
standin_containerd v2ttrpc 'version = 2
[grpc]
  address = "\\\\.\\pipe\\standin-v2"
[ttrpc]
  address = "\\\\.\\pipe\\standin-v2-own-ttrpc"'
wait_for 10 run "$exe" --probe-pipe standin-v2-own-ttrpc >/dev/null
check "version 2 with a [ttrpc] address: TTRPC there" \
  "$(wait_for 5 run "$exe" --probe-pipe standin-v2 >/dev/null && \
     ! run "$exe" --probe-pipe standin-v2.ttrpc >/dev/null; echo $?)" "$(cat "$work/v2ttrpc.out")"
standin_containerd v4 'version = 4
[grpc]
  address = "\\\\.\\pipe\\standin-v4-legacy"
[plugins."io.containerd.server.v1.grpc"]
  address = "\\\\.\\pipe\\standin-v4"
[plugins.'"'"'io.containerd.server.v1.ttrpc'"'"']
  address = "\\\\.\\pipe\\standin-v4-ttrpc"'
wait_for 10 run "$exe" --probe-pipe standin-v4-ttrpc >/dev/null
check "version 4: gRPC and TTRPC at the server plugins' addresses, the legacy [grpc] ignored" \
  "$(wait_for 5 run "$exe" --probe-pipe standin-v4 >/dev/null && \
     ! run "$exe" --probe-pipe standin-v4-legacy >/dev/null; echo $?)" "$(cat "$work/v4.out")"
printf '%s\n' 'version = 4' '[plugins."io.containerd.server.v1.grpc"]' \
  '  address = "\\\\.\\pipe\\standin-v4-grpc-only"' >"$c/k/v4grpc.toml"
out=$(run 'C:\Program Files\containerd\containerd.exe' --config 'C:\k\v4grpc.toml')
check "version 4 with only the gRPC plugin: TTRPC stays on the default pipe, served already: exit 4" \
  "$([ $? = 4 ] && grep -qF 'containerd-containerd.ttrpc is served already' <<<"$out"; echo $?)" "$out"
printf '[grpc]\n  address = ""\n' >"$c/k/empty.toml"
out=$(run 'C:\Program Files\containerd\containerd.exe' --config 'C:\k\empty.toml')
check "an empty [grpc] address is refused (exit 1), as containerd does" \
  "$([ $? = 1 ] && grep -qF 'grpc address cannot be empty' <<<"$out"; echo $?)" "$out"

echo "== kubelet.exe as a native service"
port1=$(free_port)
sc create kubelet binPath= "C:\\k\\kubelet.exe --container-runtime-endpoint=npipe://./pipe/containerd-containerd --healthz-port=$port1" >/dev/null
sc start kubelet >/dev/null
wait_state kubelet RUNNING
check "the kubelet service reports RUNNING" $? "$(sc query kubelet)"
out=$(healthz "$port1")
check "healthz answers ok at once" "$([ "$out" = ok ]; echo $?)" "$out"
out=$(wine_listening_ports)
check "(the test sees the ports wine's processes listen on: $port1 among them)" \
  "$(grep -qw "$port1" <<<"$out"; echo $?)" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port1/metrics")
check "any other path is 404" "$([ "$out" = 404 ]; echo $?)" "$out"
out=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port1/healthz")
check "and so is any other method" "$([ "$out" = 404 ]; echo $?)" "$out"
log=$(cat "$c/k/starts.log")
kubelet_pid=$(pid_of_line "$log")
check "starts.log has one line: its pid and command line" \
  "$([ "$log" = "start $kubelet_pid C:\\k\\kubelet.exe --container-runtime-endpoint=npipe://./pipe/containerd-containerd --healthz-port=$port1" ]; echo $?)" "$log"
wait_for 10 eval '[ "$(versions_from "$kubelet_pid")" -ge 3 ]'
check "it calls CRI Version every second ($(versions_from "$kubelet_pid") calls in containerd's calls.log)" $? \
  "$(tail -n 5 "$cd_dir/calls.log")"
check "on one connection (one connect in containerd's connections.log)" \
  "$([ "$(connections_from "$kubelet_pid")" = 1 ]; echo $?)" "$(cat "$cd_dir/connections.log")"
check "and logs each answer, OK, in kubelet-calls.log" \
  "$(grep -qx "version $kubelet_pid status 0 " "$c/k/kubelet-calls.log"; echo $?)" \
  "$(tail -n 3 "$c/k/kubelet-calls.log")"
out=$(run 'C:\k\kubelet.exe' "--healthz-port=$port1")
check "a second kubelet.exe on the same port exits with 3" "$([ $? = 3 ]; echo $?)" "$out"
sc stop containerd >/dev/null
wait_state containerd STOPPED
wait_for 10 grep -q "^version $kubelet_pid unavailable " "$c/k/kubelet-calls.log"
check "containerd stopped: its calls fail (unavailable)" $? "$(tail -n 3 "$c/k/kubelet-calls.log")"
sc start containerd >/dev/null
wait_state containerd RUNNING
n=$(versions_from "$kubelet_pid")
wait_for 15 eval '[ "$(versions_from "$kubelet_pid")" -gt "$n" ]'
check "containerd back: it dials again and its calls reach the new containerd" $? \
  "$(tail -n 3 "$c/k/kubelet-calls.log")"
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
wait_for 10 eval '[ "$(versions_from "$child")" -ge 1 ]'
check "it calls the runtime through the npipe://// form" $? "$(tail -n 3 "$cd_dir/calls.log")"
sc stop kubelet >/dev/null
wait_state kubelet STOPPED
check "STOP: the NSSM service reports STOPPED with exit code 0" \
  "$([ "$(exit_codes kubelet)" = "0 0" ]; echo $?)" "$(sc query kubelet)"
check "and its kubelet.exe, PowerShell's child, is gone (its port is closed)" \
  "$(port_closed "$port2"; echo $?)"
n=$(versions_from "$child")
sleep 1.5
check "(and no longer calls the runtime)" "$([ "$(versions_from "$child")" = "$n" ]; echo $?)"

echo "== the same NSSM service, Parameters changed between starts"
port3=$(free_port)
write_aks_cluster_config "$c/k/kubeclusterconfig.json" "\"--healthz-port=$port3\"" 1.29.2
# AgentBaker kubeletfunc.ps1's New-NSSMService: AppParameters the script, AppDirectory c:\k.
reg_set kubelet AppParameters REG_EXPAND_SZ 'c:\k\kubeletstart.ps1'
reg_set kubelet AppDirectory REG_EXPAND_SZ 'c:\k'
sc start kubelet >/dev/null
wait_healthz "$port3"
check "AKS's kubeletstart.ps1: kubelet.exe answers healthz on the port of its ConfigArgs" $? \
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
expected="\"C:\\rke2bin\\kubelet.exe\" --container-runtime-endpoint=npipe://./pipe/rke2-containerd --feature-gates=X=true --healthz-port=$port4 --node-labels=a=b,c=d"
rke2_line=$(tail -n 1 "$c/rke2bin/rke2-starts.log")
child=$(pid_of_line "$rke2_line")
check "flow list over two lines: one --name=value per item, names sorted (k3s GetArgs), the items replacing rke2's endpoint and node labels" \
  "$([ "$rke2_line" = "start $child $expected" ]; echo $?)" "$rke2_line"$'\n'"expected: start PID $expected"
out=$(run "$exe" --probe-pipe rke2-containerd)
check "its containerd.exe serves the pipe of the containerd.toml in rke2's folder" \
  "$(grep -qF 'served by process' <<<"$out" &&
     grep -qE '^start [0-9]+ "C:\\rke2bin\\containerd\.exe" --config C:\\rke2bin\\containerd\.toml$' "$c/rke2bin/starts.log"; echo $?)" \
  "$out"$'\n'"$(cat "$c/rke2bin/starts.log")"
wait_for 10 eval '[ "$(versions_from "$child" "$c/rke2bin")" -ge 1 ]'
check "and its kubelet.exe calls it" $? "$(cat "$c/rke2bin/calls.log" 2>/dev/null)"
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
expected="\"C:\\rke2bin\\kubelet.exe\" --container-runtime-endpoint=npipe:////./pipe/containerd-containerd --healthz-port=$port5 --node-labels=x=y \"--pod-infra-container-image=a \\\"b\\\"\" --resolv-conf=' --v=2"
rke2_line=$(tail -n 1 "$c/rke2bin/rke2-starts.log")
check "rke2's default endpoint and its node-label items with the kubelet-arg items (CRLF, comments, quoted values)" \
  "$([ "$rke2_line" = "start $(pid_of_line "$rke2_line") $expected" ]; echo $?)" \
  "$rke2_line"$'\n'"expected: start PID $expected"
sc stop rke2 >/dev/null
wait_state rke2 STOPPED
check "it stops" "$(port_closed "$port5"; echo $?)"
# The drop-ins of config.yaml.d, in name order: a plain key replaces, a key with + appends
# (k3s pkg/configfilearg); a kubelet-arg `name+=` item adds to rke2's value (GetArgs).
mkdir -p "$c/etc/rancher/rke2/config.yaml.d"
printf 'kubelet-arg:\n  - "healthz-port=%s"\n' "$port5" >"$c/etc/rancher/rke2/config.yaml.d/10-site.yaml"
printf 'kubelet-arg+:\n  - "v=4"\n  - "node-labels+=w=1"\nnode-label+:\n  - "z=1"\n' \
  >"$c/etc/rancher/rke2/config.yaml.d/20-more.yml"
printf 'kubelet-arg: ["v=9"]\n' >"$c/etc/rancher/rke2/config.yaml.d/30-ignored.txt"
sc start rke2 >/dev/null
wait_healthz "$port5"
expected="\"C:\\rke2bin\\kubelet.exe\" --container-runtime-endpoint=npipe:////./pipe/containerd-containerd --healthz-port=$port5 --node-labels=x=y,z=1 --node-labels=w=1 --v=4"
rke2_line=$(tail -n 1 "$c/rke2bin/rke2-starts.log")
check "config.yaml.d: 10-site.yaml's kubelet-arg replaces config.yaml's, 20-more.yml's + keys append, a .txt is not read" \
  "$([ "$rke2_line" = "start $(pid_of_line "$rke2_line") $expected" ]; echo $?)" \
  "$rke2_line"$'\n'"expected: start PID $expected"
sc stop rke2 >/dev/null
wait_state rke2 STOPPED
rm -rf "$c/etc/rancher/rke2/config.yaml.d"
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

echo "== kubelet.exe's runtime endpoint from its --config file"
printf '{\r\n  "kind": "KubeletConfiguration",\r\n  "containerRuntimeEndpoint": "npipe://./pipe/containerd-containerd"\r\n}\r\n' \
  >"$c/k/kubelet-config.json"
run 'C:\k\kubelet.exe' '--config=C:\k\kubelet-config.json' --healthz-port=0 >/dev/null &
printf 'kind: KubeletConfiguration\ncontainerRuntimeEndpoint: "npipe://./pipe/nothing-here"\n' \
  >"$c/k/kubelet-config.yaml"
run 'C:\k\kubelet.exe' '--config=C:\k\kubelet-config.yaml' --healthz-port=0 \
  --container-runtime-endpoint=npipe://./pipe/containerd-containerd >/dev/null &
wait_for 20 eval '[ "$(grep -c -- "--config=C:.k.kubelet-config" "$c/k/starts.log")" = 2 ]'
json_pid=$(sed -n 's/^start \([0-9]*\) .*--config=C:\\k\\kubelet-config\.json .*/\1/p' "$c/k/starts.log")
yaml_pid=$(sed -n 's/^start \([0-9]*\) .*--config=C:\\k\\kubelet-config\.yaml .*/\1/p' "$c/k/starts.log")
wait_for 10 eval '[ "$(versions_from "$json_pid")" -ge 1 ]'
check "containerRuntimeEndpoint of a JSON config (EKS's kubelet-config.json): it calls that runtime" $? \
  "$(tail -n 3 "$cd_dir/calls.log")"
wait_for 10 eval '[ "$(versions_from "$yaml_pid")" -ge 1 ]'
check "the flag wins over a YAML config's containerRuntimeEndpoint" \
  "$([ $? = 0 ] && ! grep -q "^version $yaml_pid unavailable" "$c/k/kubelet-calls.log"; echo $?)" \
  "$(grep "^version $yaml_pid" "$c/k/kubelet-calls.log" | tail -n 2)"
run taskkill.exe /f /pid "$json_pid" >/dev/null
run taskkill.exe /f /pid "$yaml_pid" >/dev/null

echo "== ctr.exe, containerd's shims and their events"
cp "$exe" "$cd_dir/ctr.exe"
cp "$exe" "$cd_dir/containerd-shim-runhcs-v1.exe"
image=mcr.microsoft.com/windows/nanoserver:ltsc2022
out=$(ctr run --detach "$image" web)
check "ctr run --detach IMAGE ID: exit 0" $? "$out"
out=$(ctr c ls -q)
check "ctr c ls -q lists it" "$([ "$out" = web ]; echo $?)" "$out"
check "ctr's calls in containerd's calls.log: Containers/Create, Tasks/Create, Tasks/Start; List" \
  "$(tail -n 4 "$cd_dir/calls.log" | sed 's/^call [0-9]* //' | diff - <(printf '%s\n' \
     /containerd.services.containers.v1.Containers/Create /containerd.services.tasks.v1.Tasks/Create \
     /containerd.services.tasks.v1.Tasks/Start /containerd.services.containers.v1.Containers/List) \
     >/dev/null; echo $?)" "$(tail -n 4 "$cd_dir/calls.log")"
shim_line=$(grep -m1 -- '--id web serve' "$cd_dir/shim.log")
check "containerd started its shim with hcsshim's serve command line" \
  "$([ "$shim_line" = "start $(pid_of_line "$shim_line") \"C:\\Program Files\\containerd\\containerd-shim-runhcs-v1.exe\" --namespace default --address \\\\.\\pipe\\containerd-containerd --publish-binary \"C:\\Program Files\\containerd\\containerd.exe\" --id web serve --socket \\\\.\\pipe\\ProtectedPrefix\\Administrators\\containerd-shim-default-web-pipe" ]; echo $?)" \
  "$shim_line"
check "and TTRPC_ADDRESS, containerd's TTRPC address" \
  "$(has_line "$cd_dir/shim.log" 'ttrpc-address web \\.\pipe\containerd-containerd.ttrpc'; echo $?)" \
  "$(cat "$cd_dir/shim.log")"
check "the task runs" "$([ "$(task_state web)" = running ] && [ -n "$(task_pid web)" ]; echo $?)" \
  "$(cat "$c/ProgramData/containerd/root/node-standin-containers.txt")"
out=$(ctr -n k8s.io c ls -q)
check "ctr -n k8s.io: another namespace, without it" "$([ $? = 0 ] && [ -z "$out" ]; echo $?)" "$out"
out=$(ctr c rm web)
check "ctr c rm of a running task's container is refused (exit 1)" \
  "$([ $? = 1 ] && grep -qF 'ctr: cannot delete a non stopped container' <<<"$out"; echo $?)" "$out"
out=$(ctr run --detach "$image" web)
check "a second ctr run with the same id: already exists (exit 1)" \
  "$([ $? = 1 ] && [ "$out" = 'ctr: container "web": already exists' ]; echo $?)" "$out"
out=$(ctr tasks kill web)
check "ctr tasks kill ID: exit 0" $? "$out"
wait_for 15 has_line "$cd_dir/events.log" "event /tasks/exit web"
check "the shim published /tasks/exit, logged by containerd in events.log" $? \
  "$(cat "$cd_dir/events.log" "$cd_dir/shim.log" 2>/dev/null)"
check "at its first attempt, to the TTRPC address it read" \
  "$(has_line "$cd_dir/shim.log" 'publish /tasks/exit web attempt 1 to \\.\pipe\containerd-containerd.ttrpc: ok'; echo $?)" \
  "$(cat "$cd_dir/shim.log")"
check "the task is stopped, exit status 1" \
  "$([ "$(task_state web)" = stopped ] && awk -F'\t' '$2 == "web" {exit $7 != 1}' \
     "$c/ProgramData/containerd/root/node-standin-containers.txt"; echo $?)"
out=$(ctr c rm web)
check "ctr c rm ID then removes it" "$([ $? = 0 ] && [ -z "$(ctr c ls -q)" ]; echo $?)" "$out"
out=$(ctr c rm web)
check "and once more: not found (exit 1)" \
  "$([ $? = 1 ] && [ "$out" = 'ctr: container "web" in namespace "default": not found' ]; echo $?)" "$out"
out=$(ctr -a '\\.\pipe\standin-literal' run --detach "$image" lit)
check "ctr -a PIPE: another containerd (the literal-address one), which keeps its own root" \
  "$([ $? = 0 ] && awk -F'\t' '$2 == "lit" {found = 1} END {exit !found}' "$c/k/literal-root/node-standin-containers.txt" &&
     [ -z "$(ctr c ls -q)" ]; echo $?)" "$out"
check "its shim got that containerd's TTRPC address" \
  "$(has_line "$cd_dir/shim.log" 'ttrpc-address lit \\.\pipe\standin-literal.ttrpc'; echo $?)"

echo "== containerd restarted: its containers survive, an exit during the restart is delivered late"
ctr run --detach "$image" survivor >/dev/null
sc stop containerd >/dev/null
wait_state containerd STOPPED
sc start containerd >/dev/null
wait_state containerd RUNNING
out=$(ctr c ls -q)
check "after a restart ctr c ls -q still lists the container, its task running" \
  "$([ "$out" = survivor ] && [ "$(task_state survivor)" = running ]; echo $?)" "$out"
sc stop containerd >/dev/null
wait_state containerd STOPPED
run taskkill.exe /f /pid "$(task_pid survivor)" >/dev/null
wait_for 20 grep -q '^publish /tasks/exit survivor attempt 1 .*: failed: dial \\\\.\\pipe\\containerd-containerd.ttrpc: timeout$' \
  "$cd_dir/shim.log"
check "its task ended while containerd was down: the shim's first attempt fails" $? \
  "$(grep survivor "$cd_dir/shim.log")"
sc start containerd >/dev/null
wait_state containerd RUNNING
wait_for 60 grep -q '^publish /tasks/exit survivor attempt [2-6] .*: ok$' "$cd_dir/shim.log"
check "containerd back: a later attempt delivers it" $? "$(grep survivor "$cd_dir/shim.log")"
check "and the task is stopped" \
  "$(has_line "$cd_dir/events.log" "event /tasks/exit survivor" && [ "$(task_state survivor)" = stopped ]; echo $?)"
ctr c rm survivor >/dev/null

echo "== containerd restarted on another TTRPC address: old shims keep the old one"
cp "$cd_dir/config.toml" "$work/config.toml"
printf "[ttrpc]\n  address = '\\\\\\\\.\\\\pipe\\\\ttrpc-old'\n" >>"$cd_dir/config.toml"
sc stop containerd >/dev/null
wait_state containerd STOPPED
sc start containerd >/dev/null
wait_state containerd RUNNING
out=$(ctr run --detach "$image" old-shim)
check "ctr run --detach IMAGE old-shim: exit 0" $? "$out"
check "a shim started now reads \\\\.\\pipe\\ttrpc-old" \
  "$(has_line "$cd_dir/shim.log" 'ttrpc-address old-shim \\.\pipe\ttrpc-old'; echo $?)"
sed -i 's/ttrpc-old/ttrpc-new/' "$cd_dir/config.toml"
sc stop containerd >/dev/null
wait_state containerd STOPPED
sc start containerd >/dev/null
wait_state containerd RUNNING
check "containerd now serves \\\\.\\pipe\\ttrpc-new, and nothing serves ttrpc-old" \
  "$(run "$exe" --probe-pipe ttrpc-new >/dev/null && ! run "$exe" --probe-pipe ttrpc-old >/dev/null; echo $?)"
out=$(ctr run --detach "$image" new-shim)
check "ctr run --detach IMAGE new-shim: exit 0" $? "$out"
check "a shim started now reads \\\\.\\pipe\\ttrpc-new" \
  "$(has_line "$cd_dir/shim.log" 'ttrpc-address new-shim \\.\pipe\ttrpc-new'; echo $?)"
out=$(ctr tasks kill new-shim)
check "ctr tasks kill new-shim: exit 0" $? "$out"
wait_for 15 has_line "$cd_dir/events.log" "event /tasks/exit new-shim"
check "its exit reaches containerd" $? \
  "$(grep new-shim "$cd_dir/shim.log"; echo "events.log:"; tail -5 "$cd_dir/events.log"
     echo "calls.log:"; tail -8 "$cd_dir/calls.log"; echo "task: $(task_state new-shim)")"
out=$(ctr tasks kill old-shim)
check "the old shim's task is killed through its own pipe (exit 0)" $? "$out"
wait_for 20 grep -q '^publish /tasks/exit old-shim attempt 1 to \\\\.\\pipe\\ttrpc-old: failed: dial \\\\.\\pipe\\ttrpc-old: timeout$' \
  "$cd_dir/shim.log"
check "but the old shim publishes its exit to \\\\.\\pipe\\ttrpc-old, which fails" $? \
  "$(grep old-shim "$cd_dir/shim.log")"
# (its remaining attempts take about a minute: checked at the end)

echo "== kube-log-runner.exe as a service running kubelet.exe (image-builder's service)"
cp "$exe" "$c/k/kube-log-runner.exe"
mkdir -p "$c/var/log/kubelet"
port7=$(free_port)
sc create kubelet-klr binPath= "\"C:\\k\\kube-log-runner.exe\" --log-file=C:/var/log/kubelet/kubelet.log C:\\k\\kubelet.exe --healthz-port=$port7 --container-runtime-endpoint=\"npipe:////./pipe/containerd-containerd\" --enforce-node-allocatable=\"\"" >/dev/null
sc start kubelet-klr >/dev/null
wait_state kubelet-klr RUNNING
check "it reports RUNNING" $? "$(sc query kubelet-klr)$(cat "$c/k/kube-log-runner-starts.log" 2>/dev/null)"
wait_healthz "$port7"
check "its kubelet.exe answers healthz" $?
klr_line=$(tail -n 1 "$c/k/kube-log-runner-starts.log")
expected="C:\\k\\kubelet.exe --healthz-port=$port7 --container-runtime-endpoint=npipe:////./pipe/containerd-containerd --enforce-node-allocatable="
check "the child's command line is the one Go's os/exec makes of the arguments after its flags" \
  "$([ "$klr_line" = "start $(pid_of_line "$klr_line") $expected" ] &&
     [ "$(tail -n 1 "$c/k/starts.log")" = "$klr_line" ]; echo $?)" "$klr_line"$'\n'"expected: start PID $expected"
wait_for 10 eval '[ "$(versions_from "$(pid_of_line "$klr_line")")" -ge 1 ]'
check "and it calls the runtime" $?
sc stop kubelet-klr >/dev/null
wait_state kubelet-klr STOPPED
check "STOP: STOPPED with exit code 0, its kubelet.exe gone" \
  "$([ "$(exit_codes kubelet-klr)" = "0 0" ] && port_closed "$port7"; echo $?)" "$(sc query kubelet-klr)"
sc delete kubelet-klr >/dev/null
sc create kubelet-klr2 binPath= "\"C:\\k\\kube-log-runner.exe\" -log-file C:\\var\\log\\kubelet\\kubelet.log -also-stdout=false C:\\k\\kubelet.exe --healthz-port=$busy_port" >/dev/null
sc start kubelet-klr2 >/dev/null
wait_state kubelet-klr2 STOPPED
check "a kubelet.exe that exits with 3 ends it with exit code 1 (log.Fatal)" \
  "$([ "$(exit_codes kubelet-klr2)" = "1066 1" ] &&
     has_line "$c/k/kube-log-runner-starts.log" 'error running command: exit status 3'; echo $?)" \
  "$(sc query kubelet-klr2)$(tail -n 2 "$c/k/kube-log-runner-starts.log")"
check "kubelet's standard error was appended to --log-file" \
  "$(grep -qF "kubelet stand-in: cannot listen on 127.0.0.1:$busy_port" "$c/var/log/kubelet/kubelet.log"; echo $?)" \
  "$(cat "$c/var/log/kubelet/kubelet.log" 2>/dev/null)"
sc delete kubelet-klr2 >/dev/null
out=$(run 'C:\k\kube-log-runner.exe' --v=2 'C:\k\kubelet.exe')
check "an undefined flag: exit code 2, as Go's flag package words it" \
  "$([ $? = 2 ] && grep -qxF 'flag provided but not defined: -v' <<<"$out"; echo $?)" "$out"
out=$(run 'C:\k\kube-log-runner.exe' -also-stdout)
check "no command: exit code 1" \
  "$([ $? = 1 ] && grep -qxF 'not enough arguments to run' <<<"$out"; echo $?)" "$out"

echo "== kube-proxy.exe as a service"
cp "$exe" "$c/k/kube-proxy.exe"
sc create kube-proxy binPath= 'C:\k\kube-proxy.exe --v=3 --proxy-mode=kernelspace --kubeconfig=C:\k\config' >/dev/null
sc start kube-proxy >/dev/null
wait_state kube-proxy RUNNING
check "it reports RUNNING and logs its start" \
  "$([ $? = 0 ] && grep -qE '^start [0-9]+ C:\\k\\kube-proxy\.exe --v=3 --proxy-mode=kernelspace --kubeconfig=C:\\k\\config$' "$c/k/kube-proxy-starts.log"; echo $?)" \
  "$(sc query kube-proxy)$(cat "$c/k/kube-proxy-starts.log" 2>/dev/null)"
sc stop kube-proxy >/dev/null
wait_state kube-proxy STOPPED
check "STOP: STOPPED with exit code 0" "$([ "$(exit_codes kube-proxy)" = "0 0" ]; echo $?)" "$(sc query kube-proxy)"
sc delete kube-proxy >/dev/null

echo "== real gRPC (grpc C++ core, python3-grpcio) against the stand-ins, through pipe-relay.exe"
cp "$relay_exe" "$c/k/pipe-relay.exe"
relay() {  # relay PIPE BACKEND_PORT: prints the forwarder's port; stopped at the end
  timeout 600 "$wine" 'C:\k\pipe-relay.exe' "$1" "$2" "$work/stop-relays" >"$work/relay-$1.out" 2>&1 &
  wait_for 30 grep -q '^forwarder-port ' "$work/relay-$1.out"
  sed -n 's/^forwarder-port \([0-9]*\).*/\1/p' "$work/relay-$1.out"
}
forwarder=$(relay containerd-containerd 0)
versions_before=$(grep -c ' /runtime.v1.RuntimeService/Version$' "$cd_dir/calls.log")
out=$("$py" - "$forwarder" <<'PY' 2>&1
import sys, grpc
channel = grpc.insecure_channel(f"127.0.0.1:{sys.argv[1]}")
version = channel.unary_unary("/runtime.v1.RuntimeService/Version")
print("version", version(b"\n\x050.1.0", timeout=20) == b"")
print("1MiB", version(bytes(range(256)) * 4096, timeout=20) == b"")
calls = [version.future(b"\n\x02v1", timeout=20) for _ in range(16)]
print("concurrent", sum(call.result() == b"" for call in calls))
delete = channel.unary_unary("/containerd.services.containers.v1.Containers/Delete")
try:
    delete(b"\n\x04nope", metadata=[("containerd-namespace", "default")], timeout=20)
except grpc.RpcError as error:
    print("delete", error.code().name, error.details())
PY
)
check "grpc C++ calls containerd.exe: Version OK, a 1 MiB request OK, 16 calls at once OK" \
  "$(grep -qx 'version True' <<<"$out" && grep -qx '1MiB True' <<<"$out" &&
     grep -qx 'concurrent 16' <<<"$out"; echo $?)" "$out"
check "an error status with its message" \
  "$(grep -qxF 'delete NOT_FOUND container "nope" in namespace "default": not found' <<<"$out"; echo $?)" "$out"
check "containerd logged the 18 Version calls" \
  "$([ "$(grep -c ' /runtime.v1.RuntimeService/Version$' "$cd_dir/calls.log")" -ge $((versions_before + 18)) ]; echo $?)"
exec 5< <(exec timeout 600 "$py" - "$work/grpc-server.log" 2>"$work/grpc-server.err" <<'PY'
import sys, time, grpc
from concurrent import futures
log = open(sys.argv[1], "a", buffering=1)
class Any(grpc.GenericRpcHandler):
    def service(self, details):
        def answer(request, context):
            log.write(f"{details.method} {request.hex()}\n")
            return b"\n\x050.1.0\x12\x06python"  # VersionResponse: version, runtime_name
        return grpc.unary_unary_rpc_method_handler(answer)
server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
server.add_generic_rpc_handlers((Any(),))
print(server.add_insecure_port("127.0.0.1:0"), flush=True)
server.start()
time.sleep(600)
PY
)
background+=($!)
read -r grpc_port <&5
relay grpc-runtime "$grpc_port" >/dev/null
ports_before=$(wine_listening_ports)
run 'C:\k\kubelet.exe' --container-runtime-endpoint=npipe://./pipe/grpc-runtime --healthz-port=0 >/dev/null &
wait_for 20 eval '[ "$(grep -c . "$work/grpc-server.log" 2>/dev/null)" -ge 2 ]'
check "kubelet.exe's Version calls reach a grpc C++ server: VersionRequest{version: \"0.1.0\"}" \
  "$([ $? = 0 ] && ! grep -vqx '/runtime.v1.RuntimeService/Version 0a05302e312e30' "$work/grpc-server.log"; echo $?)" \
  "$(cat "$work/grpc-server.log" 2>/dev/null)"
klr_pid=$(tail -n 1 "$c/k/starts.log" | sed -n 's/^start \([0-9]*\) .*grpc-runtime.*/\1/p')
check "and kubelet.exe logs them OK" \
  "$(grep -q "^version $klr_pid status 0 $" "$c/k/kubelet-calls.log"; echo $?)" "$(tail -n 2 "$c/k/kubelet-calls.log")"
check "--healthz-port=0: it listens on no port" "$([ "$(wine_listening_ports)" = "$ports_before" ]; echo $?)" \
  "before: $ports_before; now: $(wine_listening_ports)"

echo "== the old shim's event, dropped after containerd's publisher's 6 attempts"
wait_for 90 grep -q '^evict /tasks/exit old-shim after 6 attempts$' "$cd_dir/shim.log"
check "the old shim gave its /tasks/exit up after 6 attempts" $? "$(grep old-shim "$cd_dir/shim.log")"
check "every attempt went to \\\\.\\pipe\\ttrpc-old and failed" \
  "$([ "$(grep -c '^publish /tasks/exit old-shim attempt [1-6] to \\\\.\\pipe\\ttrpc-old: failed: ' "$cd_dir/shim.log")" = 6 ] &&
     ! grep -q '^publish /tasks/exit old-shim attempt 7' "$cd_dir/shim.log"; echo $?)" "$(grep old-shim "$cd_dir/shim.log")"
out=$(ctr c rm old-shim)
check "containerd never learned: the task is still running, its container cannot be removed" \
  "$([ $? = 1 ] && ! has_line "$cd_dir/events.log" "event /tasks/exit old-shim" &&
     [ "$(task_state old-shim)" = running ]; echo $?)" "$out"
cp "$work/config.toml" "$cd_dir/config.toml"
touch "$work/stop-relays"

echo "== containerd.exe stops"
sc stop containerd >/dev/null
wait_state containerd STOPPED
check "STOP: the containerd service reports STOPPED with exit code 0" \
  "$([ "$(exit_codes containerd)" = "0 0" ]; echo $?)" "$(sc query containerd)"
out=$(run "$exe" --probe-pipe containerd-containerd)
check "and the pipe is no longer served" "$([ $? = 1 ]; echo $?)" "$out"

[ "$failures" = 0 ] && echo "all passed ($passes checks)"
exit $((failures > 0))
