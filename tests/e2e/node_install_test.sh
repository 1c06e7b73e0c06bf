#!/usr/bin/env bash
# `dxshim.exe install` / `uninstall` under wine, whose registry and service manager are real, on
# one node fixture per launcher (shaped from the distributions' public scripts, cited in
# deploy/windows/DISTRIBUTIONS.md). kubelet, NSSM, containerd, rke2 and EKS's service host are
# stand-ins (tests/support/node_standin/: none of them, nor PowerShell, is here): they run as
# services, log each start, and the kubelet one serves /healthz and opens its runtime pipe every
# second as kubelet's gRPC client would. dxshim.exe runs for real as the dxshim service.
# For each fixture: install makes exactly the expected change and proves it on the live
# processes; a second run changes nothing and restarts nothing; uninstall restores every file
# and registry value byte for byte. An unknown launcher, a kubelet that still names containerd
# after the switch, and a value changed since install are refused with nothing changed. The
# fixtures: a native kubelet service, NSSM + kubeadm's StartKubelet.ps1, NSSM + AKS's
# kubeletstart.ps1 (takeover), an unknown launcher, EKS's EKS-WindowsServiceHost.exe (the endpoint
# on its command line, then in kubelet-config.json) and rke2 (kubelet and containerd its children,
# no kubelet or containerd service).
# usage: node_install_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll
set -uo pipefail
source_dir=${1:?usage: node_install_test.sh SOURCE_DIR dxshim.exe node-standin.exe fake-dxcore.dll}
exe=${2:?}
standin=${3:?}
fake_dxcore=${4:?}
source "$(dirname "$0")/../support/wine_test_env.sh"
need_exe "$exe"
need_exe "$standin"
wineserver="$(dirname "$wine")/wineserver"
# Wine settled first (its service manager refuses starts right after wineboot), then a persistent
# wineserver: services are wine "system" processes, which wine ends a few seconds after the last
# other process exited, i.e. between two commands of this script. The service manager is started
# by a command whose output nobody reads: wine's processes that start with it keep the output
# they inherit open, and a command substitution would wait for them.
"$wineserver" -w
"$wineserver" -p >/dev/null 2>&1
timeout 60 "$wine" sc.exe query containerd >/dev/null 2>&1 </dev/null
c="$WINEPREFIX/drive_c"
cp "$fake_dxcore" "$c/windows/system32/dxcore.dll"

W() { "$wine" "$@" 2>/dev/null </dev/null | sed -u 's/\r$//'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
healthz() { curl -s --max-time 2 "http://127.0.0.1:$1/healthz"; }
lines() { [ -f "$1" ] && grep -c . "$1" || echo 0; }
services_key='HKLM\System\CurrentControlSet\Services'
# A registry value's data as reg.exe prints it (a REG_MULTI_SZ's strings joined by \0), nothing
# when it is absent. Output is captured before it is searched: `W ... | grep -q` fails at random
# under pipefail (grep's early exit is sed's SIGPIPE).
reg_value() {  # reg_value KEY NAME
  local out
  out=$(W reg.exe query "$1" /v "$2")
  sed -nE "s/^[[:space:]]+$2[[:space:]]+REG_[A-Z_]+[[:space:]]*//p" <<<"$out"
}
no_dxshim_service() { [ -z "$(reg_value "$services_key\\dxshim" ImagePath)" ]; }
# Sets a REG_EXPAND_SZ value and reads it back, a few times if need be: under load, a value added
# just after `sc.exe create` of a service deleted a moment before was once read back empty.
set_reg() {  # set_reg KEY NAME DATA
  for _ in 1 2 3 4 5; do
    W reg.exe add "$1" /v "$2" /t REG_EXPAND_SZ /d "$3" /f >/dev/null
    [ "$(reg_value "$1" "$2")" = "$3" ] && return 0
    sleep 1
  done
  echo "cannot set $1 $2" >&2
  return 1
}

# What install may change, exported for byte-for-byte comparisons: the services' keys (the
# service manager's own record of ImagePath and DependOnService, NSSM's Parameters) and the files,
# each under its folder's path.
snapshot() {  # snapshot DIR
  rm -rf "$1"; mkdir -p "$1"
  for key in kubelet containerd dxshim rke2; do
    W reg.exe export "$services_key\\$key" "Z:${1//\//\\}\\$key.reg" /y >/dev/null
  done
  local f
  for f in k var/lib/kubelet "Program Files/containerd" ProgramData/dxshim ProgramData/kubernetes \
    etc/rancher/rke2 usr/local/bin; do
    [ -d "$c/$f" ] || continue
    mkdir -p "$1/$f"
    find "$c/$f" -maxdepth 1 -type f \( -name '*.ps1' -o -name '*.env' -o -name '*.yaml' \
      -o -name '*.json' -o -name '*.toml' \) -exec cp {} "$1/$f/" \;
  done
}

metrics_port=$(free_port)
mkdir -p "$c/ProgramData/dxshim" "$c/k" "$c/var/lib/kubelet" "$c/Program Files/containerd"
sed -e "s|^metrics-listen: .*|metrics-listen: 127.0.0.1:$metrics_port|" \
    -e "s|^device-plugin: .*|device-plugin: false|" \
    "$source_dir/deploy/examples/dxshim-windows.yaml" >"$c/ProgramData/dxshim/dxshim.yaml"
for name in kubelet nssm; do cp "$standin" "$c/k/$name.exe"; done
cp "$standin" "$c/Program Files/containerd/containerd.exe"
printf 'version = 2\n\n[grpc]\n  address = "\\\\\\\\.\\\\pipe\\\\containerd-containerd"\n' \
  >"$c/Program Files/containerd/config.toml"
W sc.exe create containerd binPath= '"C:\Program Files\containerd\containerd.exe" --config "C:\Program Files\containerd\config.toml"' >/dev/null
W sc.exe start containerd >/dev/null
install() { W "$exe" install --node-labels none --proof-timeout "${proof_timeout:-60}" --service-timeout 60 "$@"; }
uninstall() { W "$exe" uninstall --service-timeout 60; }
reset_node() {  # no kubelet, no dxshim, no record
  W sc.exe stop kubelet >/dev/null; W sc.exe stop dxshim >/dev/null; sleep 1
  W sc.exe delete kubelet >/dev/null; W sc.exe delete dxshim >/dev/null
  W reg.exe delete "$services_key\\kubelet" /f >/dev/null
  rm -f "$c/ProgramData/dxshim/install-record.json" "$c/k/starts.log" "$c/k/nssm-starts.log"
  rm -f "$c"/k/*.ps1 "$c"/var/lib/kubelet/*
}
dump() { printf '%s\n' "$out"; }

# --- 1. A native service running kubelet.exe (EKS, GKE, image-builder's default) --------------
port=$(free_port)
printf 'apiVersion: kubelet.config.k8s.io/v1beta1\r\nkind: KubeletConfiguration\r\nhealthzPort: %s\r\n' "$port" \
  >"$c/var/lib/kubelet/config.yaml"
W sc.exe create kubelet binPath= "C:\\k\\kubelet.exe --config=C:\\var\\lib\\kubelet\\config.yaml --container-runtime-endpoint=\"npipe:////./pipe/containerd-containerd\" --healthz-port=$port --v=2" depend= containerd >/dev/null
W sc.exe start kubelet >/dev/null
sleep 2
snapshot "$work/native-before"
out=$(install); code=$?
check "native service: install proves kubelet uses dxshim" "$code" "$(dump)"
image=$(W reg.exe query "$services_key\\kubelet" /v ImagePath)
check "native service: only the endpoint flag changed on kubelet's command line" \
  $(grep -qF -- "--container-runtime-endpoint=\"npipe://./pipe/dxshim\" --healthz-port=$port --v=2" <<<"$image"; echo $?) "$image"
deps=$(W reg.exe query "$services_key\\kubelet" /v DependOnService)
check "native service: kubelet now depends on containerd and dxshim" \
  $(grep -qiE 'containerd.*dxshim' <<<"$deps"; echo $?) "$deps"
check "native service: kubelet was restarted once" $([ "$(lines "$c/k/starts.log")" = 2 ]; echo $?) "$(cat "$c/k/starts.log")"
check "native service: the running kubelet names dxshim's pipe" \
  $(tail -1 "$c/k/starts.log" | grep -qF 'npipe://./pipe/dxshim'; echo $?) "$(cat "$c/k/starts.log")"
check "native service: kubelet is healthy" $([ "$(healthz "$port")" = ok ]; echo $?)
out=$(install); code=$?
check "native service: a second install changes nothing and restarts nothing" \
  $([ "$code" = 0 ] && grep -q "nothing to change" <<<"$out" && [ "$(lines "$c/k/starts.log")" = 2 ]; echo $?) "$(dump)"
# A new binary (install.ps1 moved the old one aside): dxshim restarts alone, kubelet keeps running
# and its dependency on dxshim comes back.
deps_before=$(reg_value "$services_key\\kubelet" DependOnService)
out=$(install --restart-service); code=$?
check "native service: --restart-service restarts dxshim alone while kubelet keeps running" \
  $([ "$code" = 0 ] && grep -q "restarting service dxshim alone" <<<"$out" &&
    [ "$(lines "$c/k/starts.log")" = 2 ] && [ "$(healthz "$port")" = ok ] &&
    [ "$(reg_value "$services_key\\kubelet" DependOnService)" = "$deps_before" ]; echo $?) "$(dump)"
out=$(uninstall); code=$?
check "native service: uninstall" "$code" "$(dump)"
snapshot "$work/native-after"
check "native service: uninstall restored every value and file byte for byte" \
  $(diff -r "$work/native-before" "$work/native-after" >/dev/null; echo $?) "$(diff -r "$work/native-before" "$work/native-after" | head -20)"
check "native service: the dxshim service is gone" $(no_dxshim_service; echo $?)

# A kubelet.exe still started with containerd's endpoint: the proof must fail and roll back.
stale_port=$(free_port)
"$wine" 'C:\k\kubelet.exe' --container-runtime-endpoint=npipe://./pipe/containerd-containerd --healthz-port=$stale_port >/dev/null 2>&1 </dev/null &
sleep 2
snapshot "$work/stale-before"
out=$(proof_timeout=5 install); code=$?
check "a kubelet.exe that still names containerd fails the install" $([ "$code" = 1 ]; echo $?) "$(dump)"
check "and the failure says which kubelet and which endpoint" \
  $(grep -q "uses npipe://./pipe/containerd-containerd, not npipe://./pipe/dxshim" <<<"$out"; echo $?) "$(dump)"
snapshot "$work/stale-after"
check "and everything was rolled back byte for byte" \
  $(diff -r "$work/stale-before" "$work/stale-after" >/dev/null && no_dxshim_service; echo $?) \
  "$(diff -r "$work/stale-before" "$work/stale-after" | head -20)"
W taskkill.exe /f /im kubelet.exe >/dev/null
reset_node

# --- 2. NSSM running kubeadm's StartKubelet.ps1 (sig-windows-tools PrepareNode.ps1) ----------
port=$(free_port)
printf '%s\r\n' '$FileContent = Get-Content -Path "$env:SYSTEMDRIVE/var/lib/kubelet/kubeadm-flags.env"' \
  '$global:KubeletArgs = $FileContent.TrimStart(''KUBELET_KUBEADM_ARGS='').Trim(''"'')' \
  "\$cmd = \"C:\\k\\kubelet.exe \$global:KubeletArgs --config=/var/lib/kubelet/config.yaml --hostname-override=win-node-1 --healthz-port=$port\"" \
  'Invoke-Expression $cmd' >"$c/k/StartKubelet.ps1"
printf 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=npipe:////./pipe/containerd-containerd --pod-infra-container-image=registry.k8s.io/pause:3.9"\n' \
  >"$c/var/lib/kubelet/kubeadm-flags.env"
printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n' >"$c/var/lib/kubelet/config.yaml"
W sc.exe create kubelet binPath= 'C:\k\nssm.exe' depend= containerd >/dev/null
set_reg "$services_key\\kubelet\\Parameters" Application 'C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe'
set_reg "$services_key\\kubelet\\Parameters" AppParameters '-ExecutionPolicy Bypass -NoProfile C:\k\StartKubelet.ps1'
W sc.exe start kubelet >/dev/null
sleep 2
snapshot "$work/kubeadm-before"
out=$(install); code=$?
check "kubeadm (NSSM + StartKubelet.ps1): install proves kubelet uses dxshim" "$code" "$(dump)"
check "kubeadm: kubeadm-flags.env holds dxshim's endpoint, nothing else changed in it" \
  $([ "$(cat "$c/var/lib/kubelet/kubeadm-flags.env")" = 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=npipe://./pipe/dxshim --pod-infra-container-image=registry.k8s.io/pause:3.9"' ]; echo $?) \
  "$(cat "$c/var/lib/kubelet/kubeadm-flags.env")"
check "kubeadm: NSSM's parameters and the script are untouched" \
  $(cmp -s "$work/kubeadm-before/k/StartKubelet.ps1" "$c/k/StartKubelet.ps1" &&
    [ "$(reg_value "$services_key\\kubelet\\Parameters" AppParameters)" = '-ExecutionPolicy Bypass -NoProfile C:\k\StartKubelet.ps1' ]; echo $?) \
  "$(W reg.exe query "$services_key\\kubelet\\Parameters")"
check "kubeadm: the node name comes from the script's --hostname-override" \
  $(grep -q "node name: win-node-1" <<<"$out"; echo $?) "$(dump)"
out=$(install); code=$?
check "kubeadm: a second install changes nothing and restarts nothing" \
  $([ "$code" = 0 ] && grep -q "nothing to change" <<<"$out" && [ "$(lines "$c/k/nssm-starts.log")" = 2 ]; echo $?) "$(dump)"
# Changed since install: uninstall refuses and changes nothing.
cp "$c/var/lib/kubelet/kubeadm-flags.env" "$work/flags.env"
sed -i 's/pause:3.9/pause:3.10/' "$c/var/lib/kubelet/kubeadm-flags.env"
snapshot "$work/tampered"
out=$(uninstall); code=$?
snapshot "$work/tampered-after"
check "kubeadm: uninstall refuses a value changed since install, and changes nothing" \
  $([ "$code" = 1 ] && grep -qF 'kubeadm-flags.env' <<<"$out" && diff -r "$work/tampered" "$work/tampered-after" >/dev/null; echo $?) "$(dump)"
cp "$work/flags.env" "$c/var/lib/kubelet/kubeadm-flags.env"
out=$(uninstall); code=$?
check "kubeadm: uninstall" "$code" "$(dump)"
snapshot "$work/kubeadm-after"
check "kubeadm: uninstall restored every value and file byte for byte" \
  $(diff -r "$work/kubeadm-before" "$work/kubeadm-after" >/dev/null; echo $?) "$(diff -r "$work/kubeadm-before" "$work/kubeadm-after" | head -20)"
reset_node

# --- 3. NSSM running AKS's kubeletstart.ps1: the endpoint is the script's own -> takeover -----
port=$(free_port)
printf '%s\r\n' '$KubeletArgList = $Global:ClusterConfiguration.Kubernetes.Kubelet.ConfigArgs' \
  "\$KubeletArgList += \"--healthz-port=$port\"" \
  '$KubeletArgList += "--container-runtime-endpoint=npipe://./pipe/containerd-containerd"' \
  '[RunProcess.exec]::RunProcess("c:\k\kubelet.exe", $KubeletArgList -join " ", 0)' >"$c/k/kubeletstart.ps1"
W sc.exe create kubelet binPath= 'c:\k\nssm.exe' depend= containerd >/dev/null
set_reg "$services_key\\kubelet\\Parameters" Application 'C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe'
set_reg "$services_key\\kubelet\\Parameters" AppParameters 'c:\k\kubeletstart.ps1'
W sc.exe start kubelet >/dev/null
sleep 2
containerd_starts=$(lines "$c/Program Files/containerd/starts.log")
snapshot "$work/aks-before"
out=$(install); code=$?
check "AKS (NSSM + kubeletstart.ps1): takeover proves kubelet reaches dxshim" "$code" "$(dump)"
check "AKS: kubelet was not restarted" $([ "$(lines "$c/k/starts.log")" = 1 ]; echo $?) "$(cat "$c/k/starts.log")"
check "AKS: containerd was restarted once, on its new pipe" \
  $([ "$(lines "$c/Program Files/containerd/starts.log")" = $((containerd_starts + 1)) ] &&
    grep -qF 'containerd-behind-dxshim' "$c/Program Files/containerd/config.toml"; echo $?) \
  "$(cat "$c/Program Files/containerd/config.toml")"
check "AKS: dxshim serves containerd's old pipe and relays to the new one" \
  $(grep -qF 'listen: npipe://./pipe/containerd-containerd' "$c/ProgramData/dxshim/dxshim.yaml" &&
    grep -qF 'runtime: npipe://./pipe/containerd-behind-dxshim' "$c/ProgramData/dxshim/dxshim.yaml"; echo $?) \
  "$(cat "$c/ProgramData/dxshim/dxshim.yaml")"
metrics=$(curl -s "http://127.0.0.1:$metrics_port/metrics" | grep '^dxshim_pipe_clients_total')
check "AKS: dxshim counts kubelet.exe among its pipe's clients" \
  $(grep -q 'program="kubelet.exe"' <<<"$metrics"; echo $?) "$metrics"
out=$(install); code=$?
check "AKS: a second install changes nothing and restarts nothing" \
  $([ "$code" = 0 ] && grep -q "nothing to change" <<<"$out" &&
    [ "$(lines "$c/Program Files/containerd/starts.log")" = $((containerd_starts + 1)) ]; echo $?) "$(dump)"
out=$(uninstall); code=$?
check "AKS: uninstall" "$code" "$(dump)"
snapshot "$work/aks-after"
check "AKS: uninstall restored every value and file byte for byte" \
  $(diff -r "$work/aks-before" "$work/aks-after" >/dev/null; echo $?) "$(diff -r "$work/aks-before" "$work/aks-after" | head -20)"
check "AKS: kubelet was never restarted" $([ "$(lines "$c/k/starts.log")" = 1 ]; echo $?) "$(cat "$c/k/starts.log")"
reset_node

# --- 4. Unknown launcher: nothing changes, the setting to change is printed -------------------
W sc.exe create kubelet binPath= 'C:\tools\supervisor.exe --run kubelet' >/dev/null
snapshot "$work/unknown-before"
out=$(install); code=$?
snapshot "$work/unknown-after"
check "an unknown launcher: exit code 3, nothing changed" \
  $([ "$code" = 3 ] && diff -r "$work/unknown-before" "$work/unknown-after" >/dev/null &&
    no_dxshim_service; echo $?) "$(dump)"
check "and it says what it found and what to set" \
  $(grep -q 'supervisor.exe' <<<"$out" && grep -q -- '--container-runtime-endpoint' <<<"$out"; echo $?) "$(dump)"

reset_node

# --- 5. EKS: EKS-WindowsServiceHost.exe runs kubelet.exe, the endpoint on the command line ----
# (the bootstrap's service, deploy/windows/DISTRIBUTIONS.md; kubelet-config.json as its C#
# bootstrapper writes it: indented JSON, no endpoint)
mkdir -p "$c/Program Files/Amazon/EKS" "$c/ProgramData/kubernetes"
cp "$standin" "$c/Program Files/Amazon/EKS/EKS-WindowsServiceHost.exe"
eks_json='{\r\n  "kind": "KubeletConfiguration",\r\n  "apiVersion": "kubelet.config.k8s.io/v1beta1",\r\n  "authentication": {\r\n    "anonymous": {\r\n      "enabled": false\r\n    },\r\n    "webhook": {\r\n      "enabled": true\r\n    }\r\n  },\r\n%b  "clusterDomain": "cluster.local",\r\n  "clusterDNS": [\r\n    "10.100.0.10"\r\n  ],\r\n  "serializeImagePulls": false\r\n}\r\n'
eks_host='"C:\Program Files\Amazon\EKS\EKS-WindowsServiceHost.exe" kubelet "C:\k\kubelet.exe" --config="C:\ProgramData\kubernetes\kubelet-config.json" --hostname-override=ip-10-0-0-1.ec2.internal'
# shellcheck disable=SC2059
printf "$eks_json" '' >"$c/ProgramData/kubernetes/kubelet-config.json"
port=$(free_port)
eks_line="$eks_host --container-runtime-endpoint=\"npipe:////./pipe/containerd-containerd\" --healthz-port=$port"
W sc.exe create kubelet binPath= "$eks_line" depend= containerd >/dev/null
W sc.exe start kubelet >/dev/null
sleep 2
check "EKS: the fixture's service holds the bootstrap's command line and depends on containerd" \
  $([ "$(reg_value "$services_key\\kubelet" ImagePath)" = "$eks_line" ] &&
    [ "$(reg_value "$services_key\\kubelet" DependOnService)" = containerd ] &&
    [ "$(healthz "$port")" = ok ]; echo $?) "$(W reg.exe query "$services_key\\kubelet")"
snapshot "$work/eks-before"
out=$(install); code=$?
check "EKS (EKS-WindowsServiceHost.exe): install proves kubelet uses dxshim" "$code" "$(dump)"
image=$(reg_value "$services_key\\kubelet" ImagePath)
expected="$eks_host --container-runtime-endpoint=\"npipe://./pipe/dxshim\" --healthz-port=$port"
check "EKS: the command line changed in the endpoint's value only" \
  $([ "$image" = "$expected" ]; echo $?) "before:   $eks_line"$'\n'"now:      $image"$'\n'"expected: $expected"
check "EKS: kubelet-config.json is untouched" \
  $(cmp -s "$work/eks-before/ProgramData/kubernetes/kubelet-config.json" "$c/ProgramData/kubernetes/kubelet-config.json"; echo $?) \
  "$(cat "$c/ProgramData/kubernetes/kubelet-config.json")"
check "EKS: the node name is kubelet's --hostname-override" \
  $(grep -qx "node name: ip-10-0-0-1.ec2.internal" <<<"$out"; echo $?) "$(dump)"
deps=$(reg_value "$services_key\\kubelet" DependOnService)
check "EKS: kubelet now depends on containerd and dxshim" $([ "$deps" = 'containerd\0dxshim' ]; echo $?) "$deps"
check "EKS: the service host was restarted once, and its kubelet.exe names dxshim's pipe" \
  $([ "$(lines "$c/Program Files/Amazon/EKS/servicehost-starts.log")" = 2 ] &&
    tail -1 "$c/k/starts.log" | grep -qF -- '--container-runtime-endpoint="npipe://./pipe/dxshim"'; echo $?) \
  "$(cat "$c/Program Files/Amazon/EKS/servicehost-starts.log")"
out=$(install); code=$?
check "EKS: a second install changes nothing and restarts nothing" \
  $([ "$code" = 0 ] && grep -q "nothing to change" <<<"$out" &&
    [ "$(lines "$c/Program Files/Amazon/EKS/servicehost-starts.log")" = 2 ]; echo $?) "$(dump)"
out=$(uninstall); code=$?
check "EKS: uninstall" "$code" "$(dump)"
snapshot "$work/eks-after"
check "EKS: uninstall restored every value and file byte for byte" \
  $(diff -r "$work/eks-before" "$work/eks-after" >/dev/null && no_dxshim_service; echo $?) \
  "$(diff -r "$work/eks-before" "$work/eks-after" | head -20)"
reset_node
rm -f "$c/Program Files/Amazon/EKS/servicehost-starts.log"

# --- 5b. EKS with the endpoint in kubelet-config.json instead of on the command line ----------
# shellcheck disable=SC2059
printf "$eks_json" '  "containerRuntimeEndpoint": "npipe://./pipe/containerd-containerd",\r\n' \
  >"$c/ProgramData/kubernetes/kubelet-config.json"
port=$(free_port)
eks_line="$eks_host --healthz-port=$port"
W sc.exe create kubelet binPath= "$eks_line" depend= containerd >/dev/null
W sc.exe start kubelet >/dev/null
sleep 2
snapshot "$work/eks-json-before"
out=$(install); code=$?
check "EKS, endpoint in kubelet-config.json: install proves kubelet uses dxshim" "$code" "$(dump)"
# shellcheck disable=SC2059
printf "$eks_json" '  "containerRuntimeEndpoint": "npipe://./pipe/dxshim",\r\n' >"$work/eks-expected.json"
check "EKS, endpoint in kubelet-config.json: only that value changed in the file" \
  $(cmp -s "$work/eks-expected.json" "$c/ProgramData/kubernetes/kubelet-config.json"; echo $?) \
  "$(cat "$c/ProgramData/kubernetes/kubelet-config.json")"
check "EKS, endpoint in kubelet-config.json: the command line is untouched" \
  $([ "$(reg_value "$services_key\\kubelet" ImagePath)" = "$eks_line" ]; echo $?) \
  "$(reg_value "$services_key\\kubelet" ImagePath)"
check "EKS, endpoint in kubelet-config.json: the restarted kubelet.exe has no endpoint flag" \
  $([ "$(lines "$c/Program Files/Amazon/EKS/servicehost-starts.log")" = 2 ] &&
    ! tail -1 "$c/k/starts.log" | grep -qF -- '--container-runtime-endpoint'; echo $?) \
  "$(cat "$c/Program Files/Amazon/EKS/servicehost-starts.log")"
out=$(install); code=$?
check "EKS, endpoint in kubelet-config.json: a second install changes nothing and restarts nothing" \
  $([ "$code" = 0 ] && grep -q "nothing to change" <<<"$out" &&
    [ "$(lines "$c/Program Files/Amazon/EKS/servicehost-starts.log")" = 2 ]; echo $?) "$(dump)"
out=$(uninstall); code=$?
check "EKS, endpoint in kubelet-config.json: uninstall" "$code" "$(dump)"
snapshot "$work/eks-json-after"
check "EKS, endpoint in kubelet-config.json: uninstall restored every value and file byte for byte" \
  $(diff -r "$work/eks-json-before" "$work/eks-json-after" >/dev/null && no_dxshim_service; echo $?) \
  "$(diff -r "$work/eks-json-before" "$work/eks-json-after" | head -20)"
reset_node

# --- 6. rke2: its service runs kubelet and containerd as children, kubelet-arg in config.yaml -
# No containerd service on an rke2 node (its containerd is rke2's child, on the same pipe).
W sc.exe stop containerd >/dev/null; sleep 1
W sc.exe delete containerd >/dev/null
W reg.exe delete "$services_key\\containerd" /f >/dev/null
mkdir -p "$c/usr/local/bin" "$c/etc/rancher/rke2"
for name in rke2 kubelet containerd; do cp "$standin" "$c/usr/local/bin/$name.exe"; done
port=$(free_port)
rke2_config() {  # rke2_config [EXTRA-ITEM-LINE]
  printf 'server: https://10.0.0.1:9345\ntoken: x\nkubelet-arg:\n  - v=2\n  - "healthz-port=%s"\n%bnode-label:\n  - "pool=gpu"\n' \
    "$port" "${1:-}"
}
rke2_config >"$c/etc/rancher/rke2/config.yaml"
W sc.exe create rke2 binPath= '"C:\usr\local\bin\rke2.exe" agent' >/dev/null
W sc.exe start rke2 >/dev/null
sleep 2
rke2_log="$c/usr/local/bin/rke2-starts.log"
check "rke2: the fixture runs kubelet on containerd's pipe, without containerd or kubelet services" \
  $([ "$(healthz "$port")" = ok ] && [ -z "$(reg_value "$services_key\\containerd" ImagePath)" ] &&
    [ -z "$(reg_value "$services_key\\kubelet" ImagePath)" ] &&
    tail -1 "$rke2_log" | grep -qF -- '--container-runtime-endpoint=npipe:////./pipe/containerd-containerd'; echo $?) \
  "$(cat "$rke2_log")"
snapshot "$work/rke2-before"
out=$(install); code=$?
check "rke2: install proves kubelet uses dxshim" "$code" "$(dump)"
rke2_config '  - "container-runtime-endpoint=npipe://./pipe/dxshim"\n' >"$work/rke2-expected.yaml"
check "rke2: config.yaml gained exactly the kubelet-arg item container-runtime-endpoint=npipe://./pipe/dxshim" \
  $(cmp -s "$work/rke2-expected.yaml" "$c/etc/rancher/rke2/config.yaml"; echo $?) \
  "$(cat "$c/etc/rancher/rke2/config.yaml")"
deps=$(reg_value "$services_key\\rke2" DependOnService)
check "rke2: the rke2 service now depends on dxshim" $([ "$deps" = dxshim ]; echo $?) "$deps"
deps=$(W reg.exe query "$services_key\\dxshim")
check "rke2: the dxshim service depends on nothing" \
  $(grep -q ImagePath <<<"$deps" && [ -z "$(reg_value "$services_key\\dxshim" DependOnService)" ] &&
    [ -z "$(reg_value "$services_key\\dxshim" DependOnGroup)" ]; echo $?) "$deps"
kubelet_line=$(tail -1 "$rke2_log")
check "rke2: rke2 was restarted once; its kubelet.exe has one endpoint, dxshim's" \
  $([ "$(lines "$rke2_log")" = 2 ] && [ "$(grep -o -- '--container-runtime-endpoint=[^ ]*' <<<"$kubelet_line")" = \
    '--container-runtime-endpoint=npipe://./pipe/dxshim' ]; echo $?) "$(cat "$rke2_log")"
check "rke2: kubelet is healthy" $([ "$(healthz "$port")" = ok ]; echo $?)
out=$(install); code=$?
check "rke2: a second install changes nothing and restarts nothing" \
  $([ "$code" = 0 ] && grep -q "nothing to change" <<<"$out" && [ "$(lines "$rke2_log")" = 2 ]; echo $?) "$(dump)"
out=$(uninstall); code=$?
check "rke2: uninstall" "$code" "$(dump)"
snapshot "$work/rke2-after"
check "rke2: uninstall restored every value and file byte for byte" \
  $(diff -r "$work/rke2-before" "$work/rke2-after" >/dev/null && no_dxshim_service; echo $?) \
  "$(diff -r "$work/rke2-before" "$work/rke2-after" | head -20)"
check "rke2: restarted once more, its kubelet.exe back on containerd's pipe" \
  $([ "$(lines "$rke2_log")" = 3 ] &&
    tail -1 "$rke2_log" | grep -qF -- '--container-runtime-endpoint=npipe:////./pipe/containerd-containerd'; echo $?) \
  "$(cat "$rke2_log")"

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
