# Sourced by the tests of `dxshim.exe install` on an AKS node (node_install_aks_test.sh,
# node_install_interruption_test.sh), after node_fixtures.sh: the node as Azure/AgentBaker
# @06836ee2301e362039418c3a7ed0fe6004a641fd provisions it (research notes in
# deploy/windows/DISTRIBUTIONS.md, "AKS"):
#   - containerd: an NSSM service (staging/cse/windows/containerdfunc.ps1, RegisterContainerDService:
#     Application C:\Program Files\containerd\containerd.exe with no AppParameters, so containerd
#     reads its default config.toml; AppDirectory c:\k; SERVICE_DEMAND_START; no dependencies), its
#     config.toml rendered from containerdtemplate.toml (containerd 1.6/1.7, no `version`: version
#     1) or containerd2template.toml (2.x, version 3) as ProcessAndWriteContainerdConfig does
#     (process isolation, containerd >= 1.7.9: the annotation lines kept, the hypervisors line
#     dropped; CRLF, as Out-File writes it);
#   - Kubelet: NSSM running powershell.exe c:\k\kubeletstart.ps1, AppDirectory c:\k,
#     SERVICE_DEMAND_START, depending on containerd; Kubeproxy: NSSM running
#     c:\k\kubeproxystart.ps1, depending on Kubelet (staging/cse/windows/kubeletfunc.ps1,
#     Install-KubernetesServices);
#   - the boot task k8s-restart-job: powershell.exe -File c:\k\windowsnodereset.ps1
#     (kubernetesfunc.ps1, Register-NodeResetScriptTask), which stops kubeproxy and kubelet, runs
#     cleanupnetwork.ps1 and starts kubelet: nothing here is started at boot but by it.
# usage: aks_node CONFIG_VERSION (1 or 3)

# The two templates, verbatim (staging/cse/windows/containerdtemplate.toml and
# containerd2template.toml); aks_containerd_config renders one.
aks_template_v1() {
  cat <<'TOML'
root = "C:\\ProgramData\\containerd\\root"
state = "C:\\ProgramData\\containerd\\state"

[grpc]
  address = "\\\\.\\pipe\\containerd-containerd"
  max_recv_message_size = 16777216
  max_send_message_size = 16777216

[ttrpc]
  address = ""

[debug]
  address = ""
  level = "info"

[metrics]
  address = "0.0.0.0:10257"
  grpc_histogram = false

[cgroup]
  path = ""

[plugins]
  [plugins.cri]
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    sandbox_image = "{{pauseImage}}"
    stats_collect_period = 10
    systemd_cgroup = false
    enable_tls_streaming = false
    max_container_log_line_size = 16384
    disable_http2_client = false
    [plugins.cri.containerd]
      snapshotter = "windows"
      discard_unpacked_layers = true
      no_pivot = false
      [plugins.cri.containerd.default_runtime]
        runtime_type = "io.containerd.runhcs.v1"
        {{containerAnnotations}}
        {{podAnnotations}}
        [plugins.cri.containerd.default_runtime.options]
          Debug = false
          DebugType = 0
          SandboxImage = "{{pauseImage}}"
          SandboxPlatform = "windows/amd64"
          SandboxIsolation = {{sandboxIsolation}}
      [plugins.cri.containerd.runtimes]
        [plugins.cri.containerd.runtimes.runhcs-wcow-process]
          runtime_type = "io.containerd.runhcs.v1"
          {{containerAnnotations}}
          {{podAnnotations}}
          [plugins.cri.containerd.runtimes.runhcs-wcow-process.options]
            Debug = true
            DebugType = 2
            SandboxImage = "{{pauseImage}}"
            SandboxPlatform = "windows/amd64"
{{hypervisors}}
    [plugins.cri.cni]
      bin_dir = "{{cnibin}}"
      conf_dir = "{{cniconf}}"
    [plugins.cri.registry]
      config_path = "C:\\ProgramData\\containerd\\certs.d"
  [plugins.diff-service]
    default = ["windows"]
  [plugins.scheduler]
    pause_threshold = 0.02
    deletion_threshold = 0
    mutation_threshold = 100
    schedule_delay = "0s"
    startup_delay = "100ms"
TOML
}
aks_template_v3() {
  cat <<'TOML'
version = 3
root = 'C:\ProgramData\containerd\root'
state = 'C:\ProgramData\containerd\state'

[grpc]
  address = '\\.\pipe\containerd-containerd'
  max_recv_message_size = 16777216
  max_send_message_size = 16777216

[ttrpc]
  address = ''

[debug]
  address = ''
  level = 'info'

[metrics]
  address = '0.0.0.0:10257'
  grpc_histogram = false

[cgroup]
  path = ''

[plugins]

  [plugins.'io.containerd.cri.v1.images']
    stats_collect_period = 10
    discard_unpacked_layers = true
    snapshotter = 'windows'

    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '{{pauseImage}}'

    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = 'C:\ProgramData\containerd\certs.d'

  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false
    max_container_log_line_size = 16384

    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'default_runtime'

      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes]
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.default_runtime]
          runtime_type = 'io.containerd.runhcs.v1'
          {{containerAnnotations}}
          {{podAnnotations}}
          [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.default_runtime.options]
            Debug = false
            DebugType = 0
            SandboxImage = '{{pauseImage}}'
            SandboxPlatform = 'windows/amd64'
            SandboxIsolation = {{sandboxIsolation}}

        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runhcs-wcow-process]
          runtime_type = 'io.containerd.runhcs.v1'
          {{containerAnnotations}}
          {{podAnnotations}}
          [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runhcs-wcow-process.options]
            Debug = true
            DebugType = 2
            SandboxImage = '{{pauseImage}}'
            SandboxPlatform = 'windows/amd64'
{{hypervisors}}
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dir = '{{cnibin}}'
      conf_dir = '{{cniconf}}'

  [plugins.'io.containerd.gc.v1.scheduler']
    pause_threshold = 0.02
    deletion_threshold = 0
    mutation_threshold = 100
    schedule_delay = '0s'
    startup_delay = '100ms'

  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
    stream_idle_timeout = '4h0m0s'
    enable_tls_streaming = false

  [plugins.'io.containerd.service.v1.diff-service']
    default = ['windows']
TOML
}

# ProcessAndWriteContainerdConfig's rendering: process isolation (SandboxIsolation 0, the
# hypervisors line dropped), the annotations of containerd >= 1.7.9, azure CNI's folders, the
# pause image from kubeclusterconfig.json; Out-File's CRLF.
aks_containerd_config() {  # aks_containerd_config VERSION FILE
  local pause='mcr.microsoft.com/oss/v2/kubernetes/pause:3.10.2'
  "aks_template_v$1" | grep -v '{{hypervisors}}' |
    sed -e "s|{{pauseImage}}|$pause|g" -e 's|{{sandboxIsolation}}|0|g' \
      -e 's|{{cnibin}}|c:/k/azurecni/bin|g' -e 's|{{cniconf}}|c:/k/azurecni/netconf|g' \
      -e 's|{{containerAnnotations}}|container_annotations = ["io.microsoft.container.processdumplocation", "io.microsoft.wcow.processdumptype", "io.microsoft.wcow.processdumpcount"]|' \
      -e 's|{{podAnnotations}}|pod_annotations = ["io.microsoft.container.processdumplocation","io.microsoft.wcow.processdumptype", "io.microsoft.wcow.processdumpcount"]|' \
      -e 's/$/\r/' >"$2"
}

# kubeproxystart.ps1 (staging/cse/windows/provisioningscripts/kubeproxystart.ps1 @06836ee), the
# lines that start kube-proxy: its arguments, the wait for the azure HNS network (legacy, while
# IsSkipCleanupNetwork is false) and run-process.cs. Left out: the feature gates and the HNS
# policy list cleanup.
write_aks_kubeproxystart() {
  cat >"$1" <<'PS1'
# Azure/AgentBaker staging/cse/windows/provisioningscripts/kubeproxystart.ps1 @06836ee, the lines
# that start kube-proxy (feature gates and the HNS policy list cleanup left out).
$Global:ClusterConfiguration = ConvertFrom-Json ((Get-Content "c:\k\kubeclusterconfig.json" -ErrorAction Stop) | out-string)
$global:IsSkipCleanupNetwork = [System.Convert]::ToBoolean($Global:ClusterConfiguration.Services.IsSkipCleanupNetwork)

$KubeNetwork = "azure"

$env:KUBE_NETWORK = $KubeNetwork
$global:HNSModule = "c:\k\hns.v2.psm1"
$global:KubeDir = $Global:ClusterConfiguration.Install.Destination
$global:KubeproxyArgList = @("--v=3", "--proxy-mode=kernelspace", "--hostname-override=$env:computername", "--kubeconfig=$KubeDir\config")

if ($global:IsSkipCleanupNetwork) {
    Write-Host "Skipping legacy code: kube-proxy waits for network to be created"
} else {
    # Legacy codes
    $hnsNetwork = Get-HnsNetwork | ? Name -EQ $KubeNetwork
    while (!$hnsNetwork) {
        Write-Host "$(Get-Date -Format o) Waiting for Network [$KubeNetwork] to be created . . ."
        Start-Sleep 10
        $hnsNetwork = Get-HnsNetwork | ? Name -EQ $KubeNetwork
    }
}

if (Test-Path "$global:KubeDir\runprocess.dll") {
    [System.Reflection.Assembly]::LoadFrom("$global:KubeDir\runprocess.dll")
} else {
    Add-Type -Path "$global:KubeDir\run-process.cs"
}
$exe = "$global:KubeDir\kube-proxy.exe"
$args = $global:KubeproxyArgList -join " "
[RunProcess.exec]::RunProcess($exe, $args, [System.Diagnostics.ProcessPriorityClass]::AboveNormal)
PS1
}

# The whole node, its services stopped (reboot starts them as the boot task does).
aks_node() {  # aks_node CONFIG_VERSION
  local powershell='C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe'
  put 'C:\k\nssm.exe' 'C:\k\kubelet.exe' 'C:\k\kube-proxy.exe' \
    'C:\Program Files\containerd\containerd.exe'
  aks_containerd_config "$1" "$c/Program Files/containerd/config.toml"
  write_aks_cluster_config "$c/k/kubeclusterconfig.json" \
    "\"--address=0.0.0.0\", \"--healthz-port=0\", \"--max-pods=30\", \"--v=2\"" "1.30.5"
  write_run_process_cs "$c/k/run-process.cs"
  write_aks_kubeletstart "$c/k/kubeletstart.ps1"
  write_aks_kubeproxystart "$c/k/kubeproxystart.ps1"
  write_aks_cleanupnetwork "$c/k/cleanupnetwork.ps1"
  write_aks_windowsnodereset "$c/k/windowsnodereset.ps1"
  nssm_install containerd 'c:\k\nssm.exe' 'C:\Program Files\containerd\containerd.exe' '' 'c:\k' demand
  nssm_install Kubelet 'c:\k\nssm.exe' "$powershell" 'c:\k\kubeletstart.ps1' 'c:\k' demand containerd
  nssm_install Kubeproxy 'c:\k\nssm.exe' "$powershell" 'c:\k\kubeproxystart.ps1' 'c:\k' demand Kubelet
}
aks_services="Kubeproxy Kubelet dxshim containerd"
aks_boot_task=('C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe' -File 'c:\k\windowsnodereset.ps1')
