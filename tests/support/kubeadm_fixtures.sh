# Sourced by the tests of `dxshim.exe install` on kubeadm-joined Windows nodes
# (node_install_kubeadm_test.sh, node_install_capz_test.sh), after node_fixtures.sh: the nodes as
# their sources make them.
#   - sig-windows-tools @401ee6fcd8369cd8c293bd361275fdbe6f24ed07: hostprocess/Install-Containerd.ps1
#     (containerd 1.7.1, `containerd.exe config default` with its CNI fix-ups, `containerd.exe
#     --register-service`) and hostprocess/PrepareNode.ps1 (NSSM 2.24 in %ProgramFiles%\nssm, the
#     kubelet service running the C:\k\StartKubelet.ps1 it generates, lines 73-128);
#   - kubernetes-sigs/image-builder @ae63061efb154adbbd4605958c506aae8fc1d03c,
#     images/capi/ansible/windows: roles/runtimes (containerd 2.3.2 from packer/config/
#     containerd.json, templates/config.toml, `containerd.exe --register-service`) and
#     roles/kubernetes (tasks/nssm.yml with templates/StartKubelet.ps1, or tasks/sc.yml, the
#     default windows_service_manager of packer/config/windows/common.json, with
#     templates/RestartKubelet.ps1; tasks/kubelet.yml: start auto, depending on containerd);
#   - kubeadm's files: kubeadm-flags.env (cmd/kubeadm/app/phases/kubelet/flags.go: the flags
#     sorted by name, %q-quoted) and config.yaml (the cluster's KubeletConfiguration); kubeadm
#     1.34 and later (NodeLocalCRISocket, on by default since 1.34, locked on in 1.36) no longer
#     write --container-runtime-endpoint into kubeadm-flags.env but merge the node's
#     /var/lib/kubelet/instance-config.yaml (containerRuntimeEndpoint) into config.yaml
#     (kubernetes/enhancements KEP-4656, kubernetes/kubernetes#128031).
# The research notes with the verbatim upstream lines: deploy/windows/DISTRIBUTIONS.md.

kubeadm_powershell='C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe'
# Every service, dependents first (stop_services, reboot). Nothing else starts at boot: neither
# source registers a startup task.
kubeadm_services="kubelet dxshim containerd"

# `containerd.exe --register-service` (containerd/containerd cmd/containerd/command/
# service_windows.go registerService, @02e0fef84b721aece327bfa9cc7a218eb0990e59 and the same at
# 132485adb0b2289a2fda2b67122ff6a16a977dc5; Install-Containerd.ps1 line 269 and image-builder's
# roles/runtimes/tasks/containerd.yml "Register Containerd" run it): service "containerd", its command line
# the executable (quoted by x/sys/windows/svc/mgr's EscapeArg) and `--run-service`, automatic
# start, DisplayName "Containerd", Description "Container runtime", no dependencies. Its recovery
# actions (restart twice after 15 s) are not set: wine's `sc.exe failure` writes nothing.
containerd_register_service() {
  W sc.exe create containerd binPath= '"C:\Program Files\containerd\containerd.exe" --run-service' \
    start= auto DisplayName= Containerd >/dev/null
  W sc.exe description containerd "Container runtime" >/dev/null
}

# sig-windows-tools @401ee6f hostprocess/Install-Containerd.ps1 (lines 224-263): `containerd.exe
# config default` of containerd 1.7.1 (its default $ContainerDVersion; a version 2 file), here with
# its [plugins] cut to the CRI plugin's CNI table, whose bin_dir and conf_dir
# Update-TomlKeyInSection rewrites as literal strings; CRLF (Set-Content). containerd reads it
# from its default path; install in endpoint mode does not touch it.
swt_containerd_config() {  # swt_containerd_config FILE
  cat <<'TOML' | sed 's/$/\r/' >"$1"
disabled_plugins = []
imports = []
oom_score = 0
plugin_dir = ""
required_plugins = []
root = "C:\\ProgramData\\containerd\\root"
state = "C:\\ProgramData\\containerd\\state"
temp = ""
version = 2

[cgroup]
  path = ""

[debug]
  address = ""
  format = ""
  gid = 0
  level = ""
  uid = 0

[grpc]
  address = "\\\\.\\pipe\\containerd-containerd"
  gid = 0
  max_recv_message_size = 16777216
  max_send_message_size = 16777216
  tcp_address = ""
  tcp_tls_ca = ""
  tcp_tls_cert = ""
  tcp_tls_key = ""
  uid = 0

[metrics]
  address = ""
  grpc_histogram = false

[plugins]

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "registry.k8s.io/pause:3.8"

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = 'c:/opt/cni/bin'
      conf_dir = 'c:/etc/cni/net.d'
      conf_template = ""
      ip_pref = ""
      max_conf_num = 1
      setup_serially = false

[ttrpc]
  address = ""
  gid = 0
  uid = 0
TOML
}

# image-builder @ae63061 roles/runtimes/templates/config.toml as win_template renders it (Jinja's
# trim_blocks, CRLF; its license comment left out) for containerd 2.3.2 (version 3), an Azure build
# (the X-Meta-Source-Client header), pause_image registry.k8s.io/pause:3.10.2
# (packer/config/common.json), allusersprofile C:\\ProgramData (node_windows.yml doubles its
# backslashes), containerd_conf_dir as tasks/containerd.yml makes it, no
# containerd_additional_settings.
ib_containerd_config() {  # ib_containerd_config FILE
  cat <<'TOML' | sed 's/$/\r/' >"$1"
root = "C:\\ProgramData\\containerd\\root"
state = "C:\\ProgramData\\containerd\\state"
version = 3
imports = ["C:\\Program Files\\\\containerd\\conf.d\\*.toml"]

[grpc]
  address = "\\\\.\\pipe\\containerd-containerd"

[plugins]
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "registry.k8s.io/pause:3.10.2"
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dir = "C:/opt/cni/bin"
      conf_dir = "C:/etc/cni/net.d"
    [plugins.'io.containerd.cri.v1.images'.registry.headers]
      X-Meta-Source-Client = ["azure/capz"]


TOML
}

# kubeadm's /var/lib/kubelet/config.yaml (kubeadm join writes the cluster's KubeletConfiguration
# there, its fields sorted as marshalled; kubernetes/kubernetes cmd/kubeadm/app/phases/kubelet),
# containerRuntimeEndpoint the node's own (kubeadm >= 1.34: merged from instance-config.yaml,
# KEP-4656; "" before). Only containerRuntimeEndpoint and healthzPort matter here. healthzPort is 0
# (kubeadm's default is 10248): two of these tests at once would both bind 10248, and install's
# proof needs no healthz.
write_kubeadm_kubelet_config() {  # write_kubeadm_kubelet_config FILE ENDPOINT
  cat >"$1" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 0s
    cacheUnauthorizedTTL: 0s
cgroupDriver: cgroupfs
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: $2
cpuManagerReconcilePeriod: 0s
evictionPressureTransitionPeriod: 0s
fileCheckFrequency: 0s
healthzBindAddress: 127.0.0.1
healthzPort: 0
httpCheckFrequency: 0s
imageMaximumGCAge: 0s
imageMinimumGCAge: 0s
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
  verbosity: 0
memorySwap: {}
nodeStatusReportFrequency: 0s
nodeStatusUpdateFrequency: 0s
rotateCertificates: true
runtimeRequestTimeout: 0s
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
staticPodPath: /etc/kubernetes/manifests
streamingConnectionIdleTimeout: 0s
syncFrequency: 0s
volumeStatsAggPeriod: 0s
EOF
}

# kubeadm >= 1.34's /var/lib/kubelet/instance-config.yaml (NodeLocalCRISocket): the node's
# criSocket alone, `containerRuntimeEndpoint: %q` (kubernetes/kubernetes
# cmd/kubeadm/app/phases/kubelet/config.go, WriteInstanceConfigToDisk), which WriteConfigToDisk
# patches into config.yaml at join and at `kubeadm upgrade node`.
write_kubeadm_instance_config() {  # write_kubeadm_instance_config FILE ENDPOINT
  printf 'containerRuntimeEndpoint: "%s"\n' "$2" >"$1"
}

# NSSM 2.24's `nssm set SERVICE SETTING VALUE` for the Parameters values PrepareNode.ps1 and
# win_nssm set (settings.cpp: AppStdout and AppStderr REG_EXPAND_SZ, the rotation settings
# REG_DWORD); wine's reg.exe reads and prints a DWORD in hexadecimal.
nssm_set() {  # nssm_set SERVICE SETTING REG_TYPE DATA
  set_reg "$services_key\\$1\\Parameters" "$2" "$3" "$4"
}

# (a) sig-windows-tools @401ee6f: hostprocess/Install-Containerd.ps1, then hostprocess/
# PrepareNode.ps1 -KubernetesVersion v1.33 (nssm.exe in $env:ProgramFiles\nssm, lines 49-53 and
# 96-104; the StartKubelet.ps1 of lines 73-94 for >= 1.27: kubeadm's flags first; the kubelet service
# of lines 113-126), then `kubeadm join` with criSocket npipe:////./pipe/containerd-containerd:
# kubeadm 1.33 writes it into kubeadm-flags.env with the pause image (flags.go).
swt_node() {
  put 'C:\Program Files\nssm\nssm.exe' 'C:\k\kubelet.exe' 'C:\Program Files\containerd\containerd.exe'
  swt_containerd_config "$c/Program Files/containerd/config.toml"
  containerd_register_service
  mkdir -p "$c/var/lib/kubelet" "$c/var/log/kubelet" "$c/etc/kubernetes"
  write_swt_start_kubelet "$c/k/StartKubelet.ps1"
  write_kubeadm_flags "$c/var/lib/kubelet/kubeadm-flags.env" \
    "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd --pod-infra-container-image=registry.k8s.io/pause:3.10"
  write_kubeadm_kubelet_config "$c/var/lib/kubelet/config.yaml" '""'
  # PrepareNode.ps1 lines 113-126: nssm install kubelet $global:Powershell $global:PowershellArgs
  # $global:StartKubeletScript (NSSM joins its arguments with spaces), then its nssm set calls.
  nssm_install kubelet 'C:\Program Files\nssm\nssm.exe' "$kubeadm_powershell" \
    '-ExecutionPolicy Bypass -NoProfile C:\k\StartKubelet.ps1'
  nssm_set kubelet AppStdout REG_EXPAND_SZ 'C:\var\log\kubelet\kubelet.out.log'
  nssm_set kubelet AppStderr REG_EXPAND_SZ 'C:\var\log\kubelet\kubelet.err.log'
  nssm_set kubelet AppRotateFiles REG_DWORD 0x1
  nssm_set kubelet AppRotateOnline REG_DWORD 0x1
  nssm_set kubelet AppRotateSeconds REG_DWORD 0x15180
  nssm_set kubelet AppRotateBytes REG_DWORD 0xa00000
  set_dependencies kubelet containerd  # nssm set kubelet DependOnService containerd
}

# (b) image-builder @ae63061 with windows_service_manager nssm, Kubernetes v1.36.1
# (packer/config/kubernetes.json): roles/runtimes, then roles/kubernetes tasks/nssm.yml (lines
# 15-39: nssm.exe in c:\k, templates/StartKubelet.ps1, win_nssm's Application
# %SystemRoot%\...\powershell.exe kept unexpanded, its arguments, stdout/stderr files and
# rotation, start auto) and tasks/kubelet.yml (lines 39-49: depending on containerd), then
# `kubeadm join` as CAPZ's templates make it (kubeletExtraArgs of CAPZ @69ec3a4
# templates/flavors/windows): kubeadm 1.36 writes the endpoint into config.yaml, not
# kubeadm-flags.env.
ib_nssm_node() {
  put 'C:\k\nssm.exe' 'C:\k\kubelet.exe' 'C:\Program Files\containerd\containerd.exe'
  ib_containerd_config "$c/Program Files/containerd/config.toml"
  containerd_register_service
  mkdir -p "$c/var/lib/kubelet" "$c/var/log/kubelet" "$c/etc/kubernetes"
  write_ib_start_kubelet_new "$c/k/StartKubelet.ps1"
  write_kubeadm_flags "$c/var/lib/kubelet/kubeadm-flags.env" "$capz_kubeadm_args"
  write_kubeadm_instance_config "$c/var/lib/kubelet/instance-config.yaml" npipe:////./pipe/containerd-containerd
  write_kubeadm_kubelet_config "$c/var/lib/kubelet/config.yaml" npipe:////./pipe/containerd-containerd
  nssm_install kubelet 'c:\k\nssm.exe' '%SystemRoot%\System32\WindowsPowerShell\v1.0\powershell.exe' \
    '-ExecutionPolicy Bypass -NoProfile c:\k\StartKubelet.ps1'
  nssm_set kubelet AppRotateBytes REG_DWORD 0xa00000
  nssm_set kubelet AppStderr REG_EXPAND_SZ 'C:\var\log\kubelet\kubelet.err.log'
  nssm_set kubelet AppStdout REG_EXPAND_SZ 'C:\var\log\kubelet\kubelet.log'
  nssm_set kubelet AppRotateOnline REG_DWORD 0x1
  set_dependencies kubelet containerd
}

# kubeletExtraArgs of CAPZ @69ec3a40a818ccbc32b8ce88c84609404d8cb7a2
# templates/flavors/windows/machine-deployment-windows.yaml, as kubeadm writes them (sorted).
capz_kubeadm_args="--cloud-provider=external --register-with-taints=node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule --v=2 --windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS"
# The same from kubeadm 1.33: criSocket and the pause image among them.
capz_kubeadm_args_1_33="--cloud-provider=external --container-runtime-endpoint=npipe:////./pipe/containerd-containerd --pod-infra-container-image=registry.k8s.io/pause:3.10 --register-with-taints=node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule --v=2 --windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS"

# image-builder @ae63061 roles/kubernetes/tasks/sc.yml (lines 15-31): the service's `path`, folded
# by YAML's >- into one line (kubernetes_install_path c:\k, systemdrive C:); start auto,
# depending on containerd (tasks/kubelet.yml lines 39-49).
capz_sc_command_line='"c:\k\kube-log-runner.exe" --log-file=C:/var/log/kubelet/kubelet.log c:\k\kubelet.exe --windows-service --cert-dir=C:/var/lib/kubelet/pki --config=C:/var/lib/kubelet/config.yaml --bootstrap-kubeconfig=C:/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=C:/etc/kubernetes/kubelet.conf --enable-debugging-handlers --cgroups-per-qos=false --enforce-node-allocatable="" --container-runtime-endpoint="npipe:////./pipe/containerd-containerd" --resolv-conf=""'

# kubernetes-sigs/windows-testing @6ae6988090b1a0f0b6c7e93db30b8aabe030c8b4
# capz/templates/windows-base.yaml (lines 169-184): C:/KubeletRestart_nssm_sc.ps1, which the CAPZ
# templates' postKubeadmCommands run (`powershell C:/KubeletRestart_nssm_sc.ps1`) after kubeadm join.
write_windows_testing_kubelet_restart() {  # FILE
  cat >"$1" <<'EOF'
# This script restarts the kubelet service.
# It supports both nssm and Windows service configurations,
# ensuring a smooth transition between service managers without interruption.
# This script will eventually be removed once nssm is no longer used.
$scriptPath = "$env:SYSTEMDRIVE/k/RestartKubelet.ps1"
if (Test-Path $scriptPath) {
    Write-Host "Found RestartKubelet.ps1, executing..."
    & $scriptPath
} else {
    Write-Host "RestartKubelet.ps1 not found. Running fallback command..."
    & "$env:SYSTEMDRIVE\k\nssm.exe" set kubelet start SERVICE_AUTO_START
    # Actually restart the running kubelet so config.yaml changes take effect.
    & "$env:SYSTEMDRIVE\k\nssm.exe" restart kubelet
}
EOF
}

# (c) CAPZ on image-builder @ae63061's default image (windows_service_manager windows_service,
# packer/config/windows/common.json): roles/runtimes, tasks/sc.yml's kubelet service
# (kube-log-runner.exe running kubelet.exe, reading no kubeadm-flags.env) and its
# templates/RestartKubelet.ps1 in c:\k (sc.yml lines 33-36), windows-testing's
# C:/KubeletRestart_nssm_sc.ps1, then `kubeadm join` with CAPZ @69ec3a4's kubeletExtraArgs
# (KUBEADM: 1.36, image-builder's default Kubernetes, the endpoint in config.yaml; or 1.33, the
# endpoint in kubeadm-flags.env).
capz_node() {  # capz_node 1.36|1.33
  put 'C:\k\kube-log-runner.exe' 'C:\k\kubelet.exe' 'C:\Program Files\containerd\containerd.exe'
  ib_containerd_config "$c/Program Files/containerd/config.toml"
  containerd_register_service
  mkdir -p "$c/var/lib/kubelet" "$c/var/log/kubelet" "$c/etc/kubernetes"
  write_ib_restart_kubelet "$c/k/RestartKubelet.ps1"
  write_windows_testing_kubelet_restart "$c/KubeletRestart_nssm_sc.ps1"
  if [ "$1" = 1.33 ]; then
    write_kubeadm_flags "$c/var/lib/kubelet/kubeadm-flags.env" "$capz_kubeadm_args_1_33"
    write_kubeadm_kubelet_config "$c/var/lib/kubelet/config.yaml" '""'
  else
    write_kubeadm_flags "$c/var/lib/kubelet/kubeadm-flags.env" "$capz_kubeadm_args"
    write_kubeadm_instance_config "$c/var/lib/kubelet/instance-config.yaml" npipe:////./pipe/containerd-containerd
    write_kubeadm_kubelet_config "$c/var/lib/kubelet/config.yaml" npipe:////./pipe/containerd-containerd
  fi
  service_create kubelet "$capz_sc_command_line" auto containerd
}

# The node's services and files removed, for the next variant.
kubeadm_node_removed() {
  # shellcheck disable=SC2086
  stop_services $kubeadm_services
  local name
  for name in kubelet dxshim containerd; do
    W sc.exe delete "$name" >/dev/null
    W reg.exe delete "$services_key\\$name" /f >/dev/null
  done
  rm -rf "${c:?}/k" "$c/Program Files/containerd" "$c/Program Files/nssm" "$c/ProgramData/containerd" \
    "${c:?}/var" "$c/etc/kubernetes" "$c/KubeletRestart_nssm_sc.ps1" \
    "$c/ProgramData/dxshim/install-record.json"
  rm -f "$(host_path 'C:\Windows\System32\shim.log')"
}
