# Sourced by the tests of `dxshim.exe install` on one distribution's node each
# (tests/e2e/node_install_*_test.sh), after wine_test_env.sh: a Wine prefix made into that node,
# with the node stand-ins (tests/support/node_standin/) as its programs, its services made as the
# distribution makes them, and what a test does to such a node: install, uninstall, restart kubelet
# as its launcher does, reboot (every service stopped, then the boot sequence), snapshots compared
# byte for byte. The services' shapes come from the distributions' sources, cited where each test
# makes them; the PowerShell scripts from tests/support/powershell_fixtures.sh.
#
# Wine's service manager is not Windows': it starts no dependency on StartService and does not
# refuse to stop a service whose dependents run (observed in wine 8, windows_powershell_standin_
# test). scm_start and stop_services do what Windows' does: dependencies first, dependents first.
# sc.exe's `depend=` writes junk after the names under wine: dependencies are set in the registry.
# usage: source node_fixtures.sh SOURCE_DIR DXSHIM_EXE STANDIN_EXE FAKE_DXCORE
source_dir=${1:?usage: ... SOURCE_DIR DXSHIM_EXE STANDIN_EXE FAKE_DXCORE}
exe=${2:?}
standin=${3:?}
fake_dxcore=${4:?}
need_exe "$exe"
need_exe "$standin"
wineserver="$(dirname "$wine")/wineserver"
c="$WINEPREFIX/drive_c"
services_key='HKLM\System\CurrentControlSet\Services'
source "$(dirname "${BASH_SOURCE[0]}")/powershell_fixtures.sh"

W() { "$wine" "$@" 2>/dev/null </dev/null | sed -u 's/\r$//'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
lines() { [ -f "$1" ] && grep -c . "$1" || echo 0; }
dump() { printf '%s\n' "$out"; }

# A registry value's data as reg.exe prints it (a REG_MULTI_SZ's strings joined by \0), nothing
# when it is absent. Output is captured before it is searched (a grep that exits early under
# pipefail fails at random).
reg_value() {  # reg_value KEY NAME
  local text
  text=$(W reg.exe query "$1" /v "$2")
  sed -nE "s/^[[:space:]]+$2[[:space:]]+REG_[A-Z_]+[[:space:]]*//p" <<<"$text"
}
set_reg() {  # set_reg KEY NAME TYPE DATA: read back, a few times if need be (wine under load)
  for _ in 1 2 3 4 5; do
    W reg.exe add "$1" /v "$2" /t "$3" /d "$4" /f >/dev/null
    [ "$(reg_value "$1" "$2")" = "$4" ] && return 0
    sleep 1
  done
  echo "cannot set $1 $2" >&2
  return 1
}

# A Windows path in the prefix, as a host path: each folder that exists already is named as it
# exists (wine's C:\windows is lower case on the host; a second C:\Windows would not be searched).
host_path() {  # host_path WINDOWS-PATH
  local rest=${1#[Cc]:\\} path=$c part found
  local IFS='\\'
  for part in $rest; do
    found=$(find "$path" -mindepth 1 -maxdepth 1 -iname "$part" -print -quit 2>/dev/null)
    path=${found:-$path/$part}
  done
  printf '%s\n' "$path"
}
# The stand-ins, each where its distribution puts the program (node-standin.exe copied and named).
put() {  # put WINDOWS-PATH...
  local path
  for path in "$@"; do
    path=$(host_path "$path")
    mkdir -p "$(dirname "$path")"
    cp "$standin" "$path"
  done
}

# A service as Windows' service manager keeps it: sc.exe create, its start type, and its
# dependencies (REG_MULTI_SZ DependOnService).
service_create() {  # service_create NAME BINPATH START(auto|demand) [DEPENDENCY...]
  local name=$1 binpath=$2 start=$3
  shift 3
  W sc.exe create "$name" binPath= "$binpath" start= "$start" >/dev/null
  set_dependencies "$name" "$@"
}
set_dependencies() {  # set_dependencies NAME [DEPENDENCY...]
  local name=$1 list=""
  shift
  if [ $# = 0 ]; then
    W reg.exe delete "$services_key\\$name" /v DependOnService /f >/dev/null
    return 0
  fi
  list=$(printf '%s\\0' "$@")
  set_reg "$services_key\\$name" DependOnService REG_MULTI_SZ "${list%\\0}"
}
dependencies() { reg_value "$services_key\\$1" DependOnService; }  # joined by \0
# A service's start type as the service manager keeps it (2 auto, 3 demand): its Start value
# (wine's sc.exe has no `qc`).
start_type() { local start; start=$(reg_value "$services_key\\$1" Start); echo $((${start:-0})); }

# NSSM 2.24's `nssm install NAME APPLICATION PARAMETERS` (service.cpp install_service,
# registry.cpp create_parameters): ImagePath is nssm.exe's own path, quoted; Application,
# AppParameters and AppDirectory (the application's folder unless set) in Parameters, as
# REG_EXPAND_SZ; automatic start unless `nssm set NAME Start` says otherwise.
nssm_install() {  # nssm_install NAME NSSM_PATH APPLICATION PARAMETERS [APPDIR] [START] [DEPENDENCY...]
  local name=$1 nssm=$2 application=$3 parameters=$4 appdir=${5:-} start=${6:-auto}
  shift 6 2>/dev/null || shift $#
  [ -n "$appdir" ] || appdir=${application%\\*}
  service_create "$name" "\"$nssm\"" "$start" "$@"
  set_reg "$services_key\\$name\\Parameters" Application REG_EXPAND_SZ "$application"
  set_reg "$services_key\\$name\\Parameters" AppParameters REG_EXPAND_SZ "$parameters"
  set_reg "$services_key\\$name\\Parameters" AppDirectory REG_EXPAND_SZ "$appdir"
}

state() { W sc.exe query "$1" | awk '$1 == "STATE" {print $4}'; }
wait_state() {  # wait_state SERVICE STATE: up to 60 s
  local _
  for _ in $(seq 1 300); do
    [ "$(state "$1")" = "$2" ] && return 0
    sleep 0.2
  done
  return 1
}
# Starts a service as Windows' service manager does: its dependencies first (each started the
# same way), then itself; waits until it runs.
scm_start() {  # scm_start NAME
  local dependency
  [ "$(state "$1")" = RUNNING ] && return 0
  while IFS= read -r dependency; do
    [ -n "$dependency" ] && [ -n "$(reg_value "$services_key\\$dependency" ImagePath)" ] &&
      scm_start "$dependency"
  done < <(dependencies "$1" | sed 's/\\0/\n/g')
  W sc.exe start "$1" >/dev/null
  wait_state "$1" RUNNING
}
# Stops services in the order given (dependents first, as the service manager requires). A
# service still starting refuses the stop control (ERROR_SERVICE_CANNOT_ACCEPT_CTRL): asked again
# until it has stopped, up to 60 s.
stop_services() {  # stop_services NAME...
  local name _ now
  for name in "$@"; do
    [ -z "$(reg_value "$services_key\\$name" ImagePath)" ] && continue
    for _ in $(seq 1 120); do
      now=$(state "$name")
      [ "$now" = STOPPED ] && break
      [ "$now" != STOP_PENDING ] && W sc.exe stop "$name" >/dev/null
      sleep 0.5
    done
    [ "$now" = STOPPED ] || echo "service $name did not stop" >&2
  done
}
# A reboot: every service stopped (dependents first), then the boot sequence: each service of
# automatic start started (dependencies first), then the distribution's startup task, if any.
reboot() {  # reboot "STOP ORDER..." [STARTUP TASK COMMAND...]
  local order=$1 name
  shift
  # shellcheck disable=SC2086
  stop_services $order
  for name in $order; do
    [ "$(start_type "$name")" = 2 ] && scm_start "$name"
  done
  [ $# -gt 0 ] && W "$@" >/dev/null
  return 0
}

# dxshim.exe install / uninstall: their output in $out, their exit code in $code.
install() {
  out=$(W "$exe" install --node-labels none --proof-timeout "${proof_timeout:-90}" \
    --service-timeout 90 "$@")
  code=$?
}
uninstall() {
  out=$(W "$exe" uninstall --service-timeout 90 "$@")
  code=$?
}
doctor() { W "$exe" doctor --config 'C:\ProgramData\dxshim\dxshim.yaml' "$@"; }
powershell() { W 'C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe' "$@"; }
ctr() { W 'C:\Windows\System32\ctr.exe' "$@"; }
task_running() { ctr -n k8s.io c ls -q | grep -qx "$1"; }  # task_running ID: a k8s.io container
wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds, every half second
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.5
  done
}
# How long kubelet had no runtime, as install said it: "1.234 s (from ... to ...)".
window() { sed -n 's/^kubelet had no runtime for //p' <<<"$out" | tail -n 1; }
# install, then check that it proves the live kubelet.exe calls dxshim and that it says how long
# kubelet had no runtime "(from the stop of SPAN)", SPAN naming what it restarted and what closed
# the window; the window is printed for the log.
install_proves() {  # install_proves LABEL SPAN [INSTALL ARGUMENTS...]
  local label=$1 span=$2 window_seen
  shift 2
  install "$@"
  check "${label}install proves the live kubelet.exe calls dxshim" \
    "$([ "$code" = 0 ] && grep -q '^proof: kubelet.exe (pid' <<<"$out"; echo $?)" "$(dump)"
  window_seen=$(window)
  echo "${label}kubelet had no runtime for $window_seen"
  check "${label}install says how long kubelet had no runtime, from the stop of $span" \
    "$(grep -qF "(from the stop of $span" <<<"$window_seen"; echo $?)" "$(dump)"
}

# What the stand-ins record (tests/support/node_standin/main.cpp): kubelet.exe's starts
# (`start <pid> <command line>`, in $kubelet_log), the calls its process made and had answered
# (kubelet-calls.log beside it), and containerd's callers and events (calls.log, events.log in
# $cd_dir). A test sets the two where its distribution puts them.
kubelet_log="$c/k/starts.log"
cd_dir="$c/Program Files/containerd"
kubelet_starts() { lines "$kubelet_log"; }
restarted() { [ "$(kubelet_starts)" -gt "$1" ]; }  # restarted STARTS-BEFORE
kubelet_pid() { sed -n 's/^start \([0-9]*\) .*/\1/p' "$kubelet_log" 2>/dev/null | tail -n 1; }
kubelet_line() { sed -n 's/^start [0-9]* //p' "$kubelet_log" 2>/dev/null | tail -n 1; }
# The kubelet.exe started last made CRI calls straight to containerd.
kubelet_calls_containerd() {
  local pid
  pid=$(kubelet_pid)
  [ -n "$pid" ] && grep -q "^call $pid /runtime.v1.RuntimeService/Version" "$cd_dir/calls.log" 2>/dev/null
}
# The kubelet.exe started last had its CRI calls answered, none of them made to containerd itself:
# they went through dxshim (whose process is containerd's caller).
kubelet_calls_through_dxshim() {
  local pid
  pid=$(kubelet_pid)
  [ -n "$pid" ] && grep -q "^version $pid status 0" "$(dirname "$kubelet_log")/kubelet-calls.log" 2>/dev/null &&
    ! grep -q "^call $pid " "$cd_dir/calls.log" 2>/dev/null
}
# For a failure's detail: the end of dxshim's log (the service's, C:\ProgramData\dxshim\dxshim.log
# as deploy/examples/dxshim-windows.yaml names it), and the connections and calls containerd's
# stand-in answered.
service_logs() {
  echo "--- the end of dxshim.log:"
  tail -n "${1:-60}" "$c/ProgramData/dxshim/dxshim.log" 2>/dev/null
  echo "--- the end of containerd's connections.log and calls.log (each with its client's pid):"
  tail -n 10 "$cd_dir/connections.log" 2>/dev/null
  tail -n 10 "$cd_dir/calls.log" 2>/dev/null
}
exited() { grep -qx "event /tasks/exit $1" "$cd_dir/events.log" 2>/dev/null; }  # exited ID
# kubelet talks to dxshim now: a second install finds nothing to change and proves it again (the
# live kubelet.exe made CRI calls through dxshim's pipe, by dxshim's own word).
on_dxshim() {
  install
  [ "$code" = 0 ] && grep -q "nothing to change" <<<"$out" && grep -q "^proof: kubelet.exe" <<<"$out"
}

# What install may change, for byte-for-byte comparisons: the services' keys (the service
# manager's record of ImagePath, DependOnService and Start, NSSM's Parameters) and the node's
# configuration files, each under its folder's path. Logs and journals of the stand-ins are not
# part of it.
snapshot() {  # snapshot DIR SERVICE...
  local dir=$1 key f
  shift
  rm -rf "$dir"
  mkdir -p "$dir"
  for key in "$@" dxshim; do
    W reg.exe export "$services_key\\$key" "Z:${dir//\//\\}\\$key.reg" /y >/dev/null
  done
  for f in k var/lib/kubelet "Program Files/containerd" ProgramData/dxshim ProgramData/kubernetes \
    etc/rancher/rke2 etc/rancher/rke2/config.yaml.d usr/local/bin; do
    [ -d "$c/$f" ] || continue
    mkdir -p "$dir/$f"
    find "$c/$f" -maxdepth 1 -type f \( -name '*.ps1' -o -name '*.env' -o -name '*.yaml' \
      -o -name '*.yml' -o -name '*.json' -o -name '*.toml' \) -exec cp {} "$dir/$f/" \;
  done
}
same() { diff -r "$1" "$2" >/dev/null; }
differences() { diff -r "$1" "$2" | head -30; }

# The node's common parts: a persistent wineserver (wine ends services a few seconds after its last
# other process), wine's service manager settled, dxshim's configuration (no metrics endpoint:
# the proof needs none), the fake dxcore.dll, and PowerShell, ctr and containerd's shim.
"$wineserver" -w
"$wineserver" -p >/dev/null 2>&1
timeout 60 "$wine" sc.exe query containerd >/dev/null 2>&1 </dev/null
cp "$fake_dxcore" "$c/windows/system32/dxcore.dll"
mkdir -p "$c/ProgramData/dxshim"
sed -e "/^metrics-listen: /d" -e "s|^device-plugin: .*|device-plugin: false|" \
  "$source_dir/deploy/examples/dxshim-windows.yaml" >"$c/ProgramData/dxshim/dxshim.yaml"
put 'C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe' 'C:\Windows\System32\ctr.exe' \
  'C:\Windows\System32\containerd-shim-runhcs-v1.exe'
