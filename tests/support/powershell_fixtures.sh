# Sourced by the wine tests of the PowerShell stand-in: functions that write the kubelet scripts
# of kubeadm's and AKS's Windows nodes into a Wine prefix, in the shape upstream generates them.
# Each file opens with a comment naming the upstream repository, path and commit it follows;
# lines that cannot matter under wine (the HNS remediator's scheduled task, secure TLS
# bootstrapping, dual-stack HNS restarts, port pool waits) are left out and say so; the lines
# that build kubelet's arguments and call services are upstream's, verbatim.
# usage: source powershell_fixtures.sh; write_... FILE [ARGS]

# kubeadm's kubeadm-flags.env as kubeadm writes it (one line, %q-quoted): write_kubeadm_flags
# FILE FLAGS...
write_kubeadm_flags() {
  local file=$1
  shift
  printf 'KUBELET_KUBEADM_ARGS="%s"\n' "$*" >"$file"
}

# sig-windows-tools' StartKubelet.ps1 as hostprocess/PrepareNode.ps1 generates it for Kubernetes
# >= 1.27 (its $cmd_commands joined by spaces, each ending in a space): kubeadm's flags first.
write_swt_start_kubelet() {
  cat >"$1" <<'EOF'
# kubernetes-sigs/sig-windows-tools hostprocess/PrepareNode.ps1 @401ee6fcd8369cd8c293bd361275fdbe6f24ed07
# (lines 73-94) generates this C:\k\StartKubelet.ps1; HostnameOverride is node-1 here.
$FileContent = Get-Content -Path "/var/lib/kubelet/kubeadm-flags.env"
$global:KubeletArgs = $FileContent.TrimStart('KUBELET_KUBEADM_ARGS=').Trim('"')

$cmd = "C:\k\kubelet.exe  $global:KubeletArgs  --cert-dir=$env:SYSTEMDRIVE\var\lib\kubelet\pki  --config=/var/lib/kubelet/config.yaml  --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf  --kubeconfig=/etc/kubernetes/kubelet.conf  --hostname-override=node-1  --enable-debugging-handlers  --cgroups-per-qos=false  --enforce-node-allocatable=`"`"  --resolv-conf=`"`" "
Invoke-Expression $cmd
EOF
}

# image-builder's StartKubelet.ps1 (kubernetes_install_path c:\k): kubeadm's flags last.
write_ib_start_kubelet_new() {
  cat >"$1" <<'EOF'
# kubernetes-sigs/image-builder images/capi/ansible/windows/roles/kubernetes/templates/StartKubelet.ps1
# @ae63061efb154adbbd4605958c506aae8fc1d03c (lines 15-42; license header left out), rendered with
# kubernetes_install_path c:\k.
$FileContent = Get-Content -Path "/var/lib/kubelet/kubeadm-flags.env" -Raw
# Substring strip (not char-set) of the KUBELET_KUBEADM_ARGS="..." wrapper.
$kubeAdmArgs = ($FileContent -replace '(?s)^\s*KUBELET_KUBEADM_ARGS=("?)(.*?)\1\s*$', '$2').Trim()

$argList = @(
    "--cert-dir=$env:SYSTEMDRIVE/var/lib/kubelet/pki",
    "--config=$env:SYSTEMDRIVE/var/lib/kubelet/config.yaml",
    "--bootstrap-kubeconfig=$env:SYSTEMDRIVE/etc/kubernetes/bootstrap-kubelet.conf",
    "--kubeconfig=$env:SYSTEMDRIVE/etc/kubernetes/kubelet.conf",
    "--hostname-override=$(hostname)",
    "--enable-debugging-handlers",
    "--cgroups-per-qos=false",
    '--enforce-node-allocatable=""',
    '--resolv-conf=""'
)
if ($kubeAdmArgs) {
    $argList += $kubeAdmArgs -split '\s+'
}

# Log the resolved command line so failures are diagnosable from the kubelet log dir.
$kubeletExe = "c:\k\kubelet.exe"
$logDir = "$env:SYSTEMDRIVE\var\log\kubelet"
New-Item -ItemType Directory -Force -Path $logDir | Out-Null
"$(Get-Date -Format o) $kubeletExe $($argList -join ' ')" | Out-File -Append -FilePath "$logDir\start-kubelet.log"

# Splat the args so PowerShell does not re-interpret values containing `=`, `:`, `$`, etc.
& $kubeletExe @argList
EOF
}

write_ib_start_kubelet_old() {
  cat >"$1" <<'EOF'
# kubernetes-sigs/image-builder images/capi/ansible/windows/roles/kubernetes/templates/StartKubelet.ps1
# @fede56207dfaddea1950c25527bd89609fb4b1e7 (lines 15-30), rendered with kubernetes_install_path c:\k.
$FileContent = Get-Content -Path "/var/lib/kubelet/kubeadm-flags.env"
$kubeAdmArgs = $FileContent.TrimStart('KUBELET_KUBEADM_ARGS=').Trim('"')

$args = "--cert-dir=$env:SYSTEMDRIVE/var/lib/kubelet/pki",
        "--config=$env:SYSTEMDRIVE/var/lib/kubelet/config.yaml",
        "--bootstrap-kubeconfig=$env:SYSTEMDRIVE/etc/kubernetes/bootstrap-kubelet.conf",
        "--kubeconfig=$env:SYSTEMDRIVE/etc/kubernetes/kubelet.conf",
        "--hostname-override=$(hostname)",
        "--enable-debugging-handlers",
        "--cgroups-per-qos=false",
        "--enforce-node-allocatable=`"`"",
        "--resolv-conf=`"`""

$kubeletCommandLine = "c:\k\kubelet.exe " + ($args -join " ") + " $kubeAdmArgs"
Invoke-Expression $kubeletCommandLine
EOF
}

write_ib_restart_kubelet() {
  cat >"$1" <<'EOF'
# kubernetes-sigs/image-builder images/capi/ansible/windows/roles/kubernetes/templates/RestartKubelet.ps1
# @ae63061efb154adbbd4605958c506aae8fc1d03c (its license header left out).
# Need to keep sync with StartKubelet.ps1
$FileContent = Get-Content -Path "$env:SYSTEMDRIVE/var/lib/kubelet/kubeadm-flags.env"
$kubeAdmArgs = $FileContent.TrimStart('KUBELET_KUBEADM_ARGS=').Trim('"')

$args = "--cert-dir=$env:SYSTEMDRIVE/var/lib/kubelet/pki",
        "--config=$env:SYSTEMDRIVE/var/lib/kubelet/config.yaml",
        "--bootstrap-kubeconfig=$env:SYSTEMDRIVE/etc/kubernetes/bootstrap-kubelet.conf",
        "--kubeconfig=$env:SYSTEMDRIVE/etc/kubernetes/kubelet.conf",
        "--hostname-override=$(hostname)",
        "--enable-debugging-handlers",
        "--cgroups-per-qos=false",
        "--enforce-node-allocatable=`"`"",
        "--resolv-conf=`"`"",
        "--windows-service"

$KubeletArgListStr = ($args -join " ") + " $kubeAdmArgs"
$KubeletArgListStr = $KubeletArgListStr.Replace("`"", "\`"")
# Used by sc.exe to create the service
$KubeletCommandLine =  "`"" + "\`"" + "$env:SYSTEMDRIVE\k\kube-log-runner.exe" + "\`" " + "--log-file=/var/log/kubelet/kubelet.err.log " + "$env:SYSTEMDRIVE\k\kubelet.exe " + $KubeletArgListStr + "`""

# Write-Output $kubeletCommandLine
$null = sc.exe stop kubelet
$null = sc.exe delete kubelet
for ($i = 0; $i -lt 10; $i++) {
	$service = Get-Service -Name kubelet -ErrorAction SilentlyContinue
	if ($null -eq $service) {
		Write-Host "kubelet service deleted successfully, restarting"
		sc.exe create kubelet binPath= $KubeletCommandLine start= auto depend= containerd
		sc.exe start kubelet
		return
	}
	else {
		Write-Host "Waiting for service to be fully deleted... (attempt $($i + 1)/10)"
	}
	Start-Sleep -Seconds 3
}


Write-Host "kubelet service failed to restart."
EOF
}

# AKS's c:\k\kubeclusterconfig.json, the members these scripts read: write_aks_cluster_config
# FILE CONFIG_ARGS_JSON_ITEMS KUBERNETES_RELEASE
write_aks_cluster_config() {
  cat >"$1" <<EOF
{
  "Cni": { "Name": "azure" },
  "Csi": { "EnableProxy": false },
  "Install": { "Destination": "c:\\\\k" },
  "Services": { "IsSkipCleanupNetwork": false, "HNSRemediator": { "IntervalInMinutes": 0 } },
  "Kubernetes": {
    "Source": { "Release": "$3" },
    "ControlPlane": { "IpAddress": "10.0.0.4", "MasterSubnet": "10.0.0.0/16" },
    "Network": { "DnsIp": "10.0.0.10", "ClusterCidr": "10.244.0.0/16", "ServiceCidr": "10.0.0.0/16" },
    "Kubeproxy": { "FeatureGates": [], "ConfigArgs": [] },
    "Kubelet": {
      "NodeLabels": "kubernetes.azure.com/role=agent,agentpool=win",
      "ConfigArgs": [ $2 ],
      "SecureTLSBootstrapArgs": { "Enabled": false }
    }
  }
}
EOF
}

# AgentBaker's run-process.cs: only what Add-Type's stub checks (the stand-in cannot compile C#).
write_run_process_cs() {
  cat >"$1" <<'EOF'
// Azure/AgentBaker staging/cse/windows/provisioningscripts/run-process.cs @06836ee: namespace RunProcess, class exec,
// RunProcess(executable, args, priorityClass) (its body left out: a stand-in does not compile it).
namespace RunProcess { public static class exec { public static int RunProcess() { return 0; } } }
EOF
}

# AgentBaker's kubeletstart.ps1, ASCII as the repository holds it (the CSE moves it from its
# scripts archive into c:\k unchanged).
write_aks_kubeletstart() {
  cat >"$1" <<'EOF'
# Azure/AgentBaker staging/cse/windows/provisioningscripts/kubeletstart.ps1 @06836ee; left out:
# the globals it does not use here, the secure TLS bootstrapping block (Enabled is false) and its WinCNI argument string.
$Global:ClusterConfiguration = ConvertFrom-Json ((Get-Content "c:\k\kubeclusterconfig.json" -ErrorAction Stop) | out-string)

$global:KubeBinariesVersion = $Global:ClusterConfiguration.Kubernetes.Source.Release
$global:KubeDir = $Global:ClusterConfiguration.Install.Destination
$global:NetworkPlugin = $Global:ClusterConfiguration.Cni.Name
$global:KubeletNodeLabels = $Global:ClusterConfiguration.Kubernetes.Kubelet.NodeLabels
$global:IsSkipCleanupNetwork = [System.Convert]::ToBoolean($Global:ClusterConfiguration.Services.IsSkipCleanupNetwork)
$global:EnableSecureTLSBootstrapping = [System.Convert]::ToBoolean($Global:ClusterConfiguration.Kubernetes.Kubelet.SecureTLSBootstrapArgs.Enabled)

$global:HNSModule = "c:\k\hns.v2.psm1"

ipmo $global:HNSModule

# Calculate some local paths
$global:VolumePluginDir = [Io.path]::Combine($global:KubeDir, "volumeplugins")
mkdir $global:VolumePluginDir -Force

$KubeletArgList = $Global:ClusterConfiguration.Kubernetes.Kubelet.ConfigArgs # This is the initial list passed in from aks-engine
$KubeletArgList += "--node-labels=$global:KubeletNodeLabels"
# $KubeletArgList += "--hostname-override=$global:AzureHostname" TODO: remove - dead code?
$KubeletArgList += "--volume-plugin-dir=$global:VolumePluginDir"
if (-not ($KubeletArgList | Where-Object { $_ -like "--windows-priorityclass=*" })) {
    $KubeletArgList += "--windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS"
}

# Update args to use ContainerD
$KubeletArgList += @("--container-runtime-endpoint=npipe://./pipe/containerd-containerd")
if ($global:KubeBinariesVersion -lt "1.27.0") {
    $KubeletArgList += @("--container-runtime=remote")
}

netsh advfirewall set allprofiles state off

# Required to clean up the HNS policy lists properly
Write-Host "Stopping kubeproxy service"
Stop-Service kubeproxy

if ($global:NetworkPlugin -eq "azure") {
    Write-Host "NetworkPlugin azure, starting kubelet."

    if ($global:IsSkipCleanupNetwork) {
        Write-Host "Skipping legacy code: kubeletstart.ps1 invokes cleanupnetwork.ps1"
    }
    else {
        & "c:\k\cleanupnetwork.ps1"
    }

    Restart-Service Kubeproxy -Force

    # Set env file for Azure Stack
    $env:AZURE_ENVIRONMENT_FILEPATH = "c:\k\azurestackcloud.json"
}

if (Test-Path "$global:KubeDir\runprocess.dll") {
    [System.Reflection.Assembly]::LoadFrom("$global:KubeDir\runprocess.dll")
}
else {
    Add-Type -Path "$global:KubeDir\run-process.cs"
}
$exe = "$global:KubeDir\kubelet.exe"
$args = ($KubeletArgList -join " ")
[RunProcess.exec]::RunProcess($exe, $args, [System.Diagnostics.ProcessPriorityClass]::AboveNormal)
EOF
}

write_aks_cleanupnetwork() {
  cat >"$1" <<'EOF'
# Azure/AgentBaker staging/cse/windows/provisioningscripts/cleanupnetwork.ps1 @06836ee; left out: the IsSkipCleanupNetwork
# branch's HNS port pool wait (Invoke-HnsRequest) and the 10 s sleep after removing the network.
$Global:ClusterConfiguration = ConvertFrom-Json ((Get-Content "c:\k\kubeclusterconfig.json" -ErrorAction Stop) | out-string)

filter Timestamp { "$(Get-Date -Format o): $_" }

function Write-Log($message) {
    $message | Timestamp | Write-Host
}

$global:NetworkMode = "L2Bridge"
$global:NetworkPlugin = $Global:ClusterConfiguration.Cni.Name
$global:HNSModule = "c:\k\hns.v2.psm1"

ipmo $global:HNSModule

$networkname = $global:NetworkMode.ToLower()
if ($global:NetworkPlugin -eq "azure") {
    $networkname = "azure"
}

$hnsNetwork = Get-HnsNetwork | ? Name -EQ $networkname
if ($hnsNetwork) {
    # Cleanup all containers
    Write-Log "Cleaning up containers"
    ctr.exe -n k8s.io c ls -q | ForEach-Object { ctr -n k8s.io tasks kill $_ }
    ctr.exe -n k8s.io c ls -q | ForEach-Object { ctr -n k8s.io c rm $_ }

    Write-Log "Cleaning up persisted HNS policy lists"
    Get-HnsPolicyList | Remove-HnsPolicyList

    Write-Log "Original code. Remove HNS Network and sleep 10s."
    Remove-HnsNetwork $hnsNetwork

    Write-Log "Cleaning up old HNS network completed"
} else {
    Write-Log "No hnsNetwork" # Log: No hnsNetwork when provisioning a new node
}

if ($global:NetworkPlugin -eq "azure") {
    Write-Log "NetworkPlugin azure, starting kubelet."

    Write-Log "Cleaning stale CNI data"
    taskkill /IM azure-vnet.exe /f
    taskkill /IM azure-vnet-ipam.exe /f

    $filesToRemove = @(
        "c:\k\azure-vnet.json",
        "c:\k\azure-vnet.json.lock"
    )

    foreach ($file in $filesToRemove) {
        if (Test-Path $file) {
            Write-Log "Deleting stale file at $file"
            Remove-Item $file
        }
    }
}
EOF
}

write_aks_windowsnodereset() {
  cat >"$1" <<'EOF'
# Azure/AgentBaker staging/cse/windows/provisioningscripts/windowsnodereset.ps1 @06836ee; left out: the HNS remediator's
# scheduled task (IntervalInMinutes is 0, Get-ScheduledTask finds none under wine), csi-proxy and
# hosts-config-agent (disabled) and the dual-stack HNS restart.
$global:LogPath = "c:\k\windowsnodereset.log"

$Global:ClusterConfiguration = ConvertFrom-Json ((Get-Content "c:\k\kubeclusterconfig.json" -ErrorAction Stop) | out-string)

$global:CsiProxyEnabled = [System.Convert]::ToBoolean($Global:ClusterConfiguration.Csi.EnableProxy)
$global:HNSModule = "c:\k\hns.v2.psm1"

filter Timestamp { "$(Get-Date -Format o): $_" }

function Write-Log ($message) {
    $message | Timestamp | Tee-Object -FilePath $global:LogPath -Append | Write-Host
}

Write-Log "Entering windowsnodereset.ps1"

Import-Module $global:HNSModule

#
# Stop services
#
Write-Log "Stopping kubeproxy service"
Stop-Service kubeproxy

Write-Log "Stopping kubelet service"
Stop-Service kubelet

# Perform cleanup. It should run when node reset (node provsion and node restart)
& "c:\k\cleanupnetwork.ps1" >> $global:LogPath

#
# Start Services
#

Write-Log "Starting kubelet service"
Start-Service kubelet

Write-Log "Do not start kubeproxy service since kubelet will restart kubeproxy"

Write-Log "Exiting windowsnodereset.ps1"
EOF
}
