#!/usr/bin/env bash
# What `dxshim.exe install` refuses, rolls back or restarts alone, under wine on an AKS node as
# AgentBaker makes it (tests/support/aks_fixtures.sh, containerd config version 3), each leaving
# the node byte for byte as the case requires:
#   - a second kubelet.exe that bypasses dxshim (its endpoint containerd's moved pipe): the proof
#     fails, the takeover is rolled back, the rollback says how long kubelet had no runtime, and
#     kubelet calls containerd directly again;
#   - --service-only on AKS: refused (kubeletstart.ps1 writes the endpoint at every start), with
#     nothing changed;
#   - --restart-service on the installed node: dxshim alone is restarted, kubelet and containerd
#     are not, and the window is dxshim's restart;
#   - a value changed by hand since install: uninstall refuses, names it, changes nothing; put
#     back, uninstall goes through;
#   - a kubelet service whose launcher is unknown: exit code 3, nothing changed, the setting to
#     change printed.
# usage: node_install_refusals_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll
set -uo pipefail
source "$(dirname "$0")/../support/wine_test_env.sh"
source "$(dirname "$0")/../support/node_fixtures.sh" "$@"
source "$(dirname "$0")/../support/aks_fixtures.sh"
node_now() { snapshot "$work/now" containerd Kubelet Kubeproxy; }
no_dxshim_service() { [ -z "$(reg_value "$services_key\\dxshim" ImagePath)" ]; }

aks_node 3
reboot "$aks_services" "${aks_boot_task[@]}"
check "the boot task starts kubelet, whose kubelet.exe calls containerd" \
  "$(wait_for 30 kubelet_calls_containerd; echo $?)"
snapshot "$work/before" containerd Kubelet Kubeproxy
starts_before=$(kubelet_starts)

# A kubelet.exe started by hand on containerd's moved pipe: after the takeover it reaches
# containerd without dxshim, so dxshim cannot name it among its callers.
"$wine" 'C:\k\kubelet.exe' --container-runtime-endpoint=npipe://./pipe/containerd-behind-dxshim \
  --healthz-port=0 >/dev/null 2>&1 </dev/null &
proof_timeout=8 install
check "a kubelet.exe that bypasses dxshim fails the install" "$([ "$code" = 1 ]; echo $?)" "$(dump)"
check "and the failure names it and the pipe" \
  "$(grep -q "kubelet is not proven to use dxshim: kubelet.exe (pid [0-9]*) has made no CRI call through \\\\\\\\.\\\\pipe\\\\containerd-containerd" <<<"$out"; echo $?)" \
  "$(dump)"
check "the rollback says how long kubelet had no runtime (from dxshim's stop: it served kubelet's pipe)" \
  "$(grep -q "^kubelet had no runtime for [0-9.]* s (from the stop of service dxshim" <<<"$out" &&
     grep -q "^rolled back: the node is as it was before this install" <<<"$out"; echo $?)" "$(dump)"
echo "rollback: $(window)"
node_now
check "and everything was rolled back byte for byte, the dxshim service gone" \
  "$(same "$work/before" "$work/now" && no_dxshim_service; echo $?)" \
  "$(differences "$work/before" "$work/now")"
W taskkill.exe /f /im kubelet.exe >/dev/null
powershell -Command 'Restart-Service kubelet -Force' >/dev/null
check "kubelet calls containerd directly again" "$(wait_for 60 kubelet_calls_containerd; echo $?)"

install --service-only
node_now
check "--service-only on AKS is refused with nothing changed" \
  "$([ "$code" = 1 ] && grep -q "writes kubelet's endpoint itself at every start" <<<"$out" &&
     same "$work/before" "$work/now" && no_dxshim_service; echo $?)" "$(dump)"

install
check "install" "$code" "$(dump)"
# The dxshim service's process, as the proof names it.
dxshim_pid() { sed -n 's/^proof: .*, served by the dxshim service (pid \([0-9]*\))$/\1/p' <<<"$out"; }
pid_before=$(dxshim_pid)
containerd_starts=$(lines "$cd_dir/starts.log")
starts_before=$(kubelet_starts)
install --restart-service
check "--restart-service restarts dxshim alone and proves again" \
  "$([ "$code" = 0 ] && [ -n "$pid_before" ] && [ -n "$(dxshim_pid)" ] && [ "$(dxshim_pid)" != "$pid_before" ] &&
     [ "$(lines "$cd_dir/starts.log")" = "$containerd_starts" ] &&
     [ "$(kubelet_starts)" = "$starts_before" ] &&
     grep -q "^proof: kubelet.exe" <<<"$out"; echo $?)" \
  "$(dump)
dxshim pid $pid_before -> $(dxshim_pid); containerd starts $containerd_starts -> $(lines "$cd_dir/starts.log"); kubelet starts $starts_before -> $(kubelet_starts)"
check "and says how long kubelet had no runtime: dxshim's restart" \
  "$(grep -q "^kubelet had no runtime for [0-9.]* s (from the stop of service dxshim to the first CRI call answered through" <<<"$out"; echo $?)" \
  "$(dump)"
echo "--restart-service: $(window)"

snapshot "$work/installed" containerd Kubelet Kubeproxy
cp "$cd_dir/config.toml" "$work/config.toml"
printf '# edited by hand\r\n' >>"$cd_dir/config.toml"
uninstall
node_now
check "uninstall refuses a value changed since install, names it, and changes nothing" \
  "$([ "$code" = 1 ] && grep -q "uninstall refused, nothing changed" <<<"$out" &&
     grep -qF 'C:\Program Files\containerd\config.toml' <<<"$out" &&
     cp "$work/config.toml" "$work/now/Program Files/containerd/config.toml" &&
     same "$work/installed" "$work/now"; echo $?)" "$(dump)$(differences "$work/installed" "$work/now")"
cp "$work/config.toml" "$cd_dir/config.toml"
uninstall
node_now
check "put back, uninstall restores the node byte for byte" \
  "$([ "$code" = 0 ] && same "$work/before" "$work/now"; echo $?)" \
  "$(dump)$(differences "$work/before" "$work/now")"

stop_services $aks_services
for name in Kubeproxy Kubelet; do W sc.exe delete "$name" >/dev/null; done
W sc.exe create kubelet binPath= 'C:\tools\supervisor.exe --run kubelet' >/dev/null
snapshot "$work/unknown-before" containerd kubelet
install
snapshot "$work/unknown-after" containerd kubelet
check "an unknown launcher: exit code 3, nothing changed" \
  "$([ "$code" = 3 ] && same "$work/unknown-before" "$work/unknown-after" && no_dxshim_service; echo $?)" \
  "$(dump)"
check "and it says what it found and what to set" \
  "$(grep -q 'supervisor.exe' <<<"$out" && grep -q -- '--container-runtime-endpoint' <<<"$out"; echo $?)" \
  "$(dump)"

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
