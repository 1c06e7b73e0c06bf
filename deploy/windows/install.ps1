<#
.SYNOPSIS
  Installs dxshim on a Windows Server 2022/2025 Kubernetes node (or removes it with -Uninstall).

.DESCRIPTION
  1. Checks prerequisites: Windows build >= 20348, containerd >= 1.7 (1.6 drops devices),
     GPU drivers visible to `dxshim-devices.exe list` (unless -AllowNoGpu).
  2. Copies dxshim.exe and dxshim-devices.exe to $env:ProgramFiles\dxshim and the configuration
     to $env:ProgramData\dxshim\dxshim.yaml (an existing configuration is kept unless -Force).
  3. Registers the "dxshim" service (automatic start, depends on containerd) and makes kubelet
     depend on it, so dxshim starts before kubelet and stops after it.
  4. Points kubelet at npipe://./pipe/dxshim (service command line, or its config file), adds the
     node's GPU labels (`dxshim.exe devices --output labels`: dxshim.io/gpu.*) to kubelet's
     --node-labels unless -NoNodeLabels (Node Feature Discovery has no Windows worker), and
     restarts kubelet. Kubelet applies --node-labels when it registers the node: a node that is
     already registered gets them once with the `kubectl label` command the script prints.
  Everything it changes is recorded first in $env:ProgramData\dxshim\rollback.json; a failure
  rolls back, and -Uninstall restores from the same record. Running it again updates the binaries
  and changes nothing else.

  Expects next to it (or in -SourceDir): dxshim.exe (the Windows build of dxshim, which serves
  npipe:// and runs as a service), dxshim-devices.exe, and dxshim.yaml (start from
  deploy/examples/dxshim-windows.yaml).

  Not run on a Windows node yet (the development machine has none, and Debian offers no pwsh to
  lint it): see deploy/windows/CHECKLIST.md for the checks to run on a node first.

.EXAMPLE
  .\install.ps1 -SourceDir C:\dxshim-release
.EXAMPLE
  .\install.ps1 -Uninstall
#>
[CmdletBinding()]
param(
  [string]$SourceDir = $PSScriptRoot,
  [string]$ConfigFile = (Join-Path $PSScriptRoot 'dxshim.yaml'),
  [string]$Pipe = 'npipe://./pipe/dxshim',
  [switch]$Force,
  [switch]$AllowNoGpu,
  [switch]$NoNodeLabels,
  [switch]$Uninstall,
  [switch]$Purge
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$InstallDir = Join-Path $env:ProgramFiles 'dxshim'
$DataDir = Join-Path $env:ProgramData 'dxshim'
$RollbackFile = Join-Path $DataDir 'rollback.json'
$KubeletKey = 'HKLM:\SYSTEM\CurrentControlSet\Services\kubelet'

function Write-Step([string]$Text) { Write-Host "== $Text" }

function Get-ContainerdVersion {
  $exe = Join-Path $env:ProgramFiles 'containerd\containerd.exe'
  if (-not (Test-Path $exe)) { $exe = (Get-Command containerd.exe -ErrorAction SilentlyContinue).Source }
  if (-not $exe) { throw 'containerd.exe not found (expected in Program Files\containerd or on PATH)' }
  $text = & $exe --version
  if ($text -notmatch 'v?(\d+)\.(\d+)\.(\d+)') { throw "cannot read the containerd version from: $text" }
  [version]"$($Matches[1]).$($Matches[2]).$($Matches[3])"
}

function Test-Prerequisites {
  $build = [Environment]::OSVersion.Version.Build
  if ($build -lt 20348) { throw "Windows build $build: dxshim needs Windows Server 2022 (20348) or later" }
  $containerd = Get-ContainerdVersion
  if ($containerd -lt [version]'1.7.0') {
    throw "containerd $containerd: GPU devices need containerd 1.7 or later (1.6 drops them)"
  }
  foreach ($name in 'dxshim.exe', 'dxshim-devices.exe') {
    if (-not (Test-Path (Join-Path $SourceDir $name))) { throw "$name not found in $SourceDir" }
  }
  $json = & (Join-Path $SourceDir 'dxshim-devices.exe') list --output json
  if ($LASTEXITCODE -ne 0) { throw 'dxshim-devices.exe could not list the GPUs (see its message above)' }
  $count = @(($json | Out-String | ConvertFrom-Json).devices).Count
  if ($count -eq 0 -and -not $AllowNoGpu) {
    throw 'no usable GPU found (drivers installed? integrated GPUs need include-integrated); -AllowNoGpu installs anyway'
  }
  # The configuration the service will run with (an installed one is kept unless -Force), checked
  # by the new binary before anything changes: a typo must not cost the node its kubelet.
  $installed = Join-Path $DataDir 'dxshim.yaml'
  $config = if (-not $Force -and (Test-Path $installed)) { $installed } else { $ConfigFile }
  & (Join-Path $SourceDir 'dxshim.exe') serve --config $config --check
  if ($LASTEXITCODE -ne 0) { throw "dxshim refuses the configuration $config (see its message above)" }
  Write-Host "   Windows build $build, containerd $containerd, $count GPU(s)"
}

# The kubelet runtime endpoint lives either on the service command line or in its config file.
function Get-KubeletConfigPath([string]$ImagePath) {
  if ($ImagePath -match '--config[= ]"?([^" ]+)"?') { return $Matches[1] }
  return $null
}

function Save-Rollback {
  if (Test-Path $RollbackFile) { return }  # the first install's record is the one to go back to
  New-Item -ItemType Directory -Force -Path $DataDir | Out-Null
  $imagePath = (Get-ItemProperty $KubeletKey).ImagePath
  $configPath = Get-KubeletConfigPath $imagePath
  $record = [ordered]@{
    kubeletImagePath  = $imagePath
    kubeletDependsOn  = @((Get-Service kubelet).ServicesDependedOn | ForEach-Object Name)
    kubeletConfigPath = $configPath
    kubeletConfig     = if ($configPath -and (Test-Path $configPath)) { Get-Content -Raw $configPath } else { $null }
  }
  $record | ConvertTo-Json -Depth 4 | Set-Content -Encoding UTF8 $RollbackFile
}

function Set-KubeletEndpoint([string]$Endpoint) {
  $imagePath = (Get-ItemProperty $KubeletKey).ImagePath
  $configPath = Get-KubeletConfigPath $imagePath
  if ($imagePath -match '--container-runtime-endpoint[= ]\S+') {
    $new = $imagePath -replace '--container-runtime-endpoint[= ]\S+', "--container-runtime-endpoint=$Endpoint"
    Set-ItemProperty $KubeletKey -Name ImagePath -Value $new
  } elseif ($configPath -and (Test-Path $configPath) -and
            (Select-String -Quiet -Path $configPath -Pattern '^\s*containerRuntimeEndpoint:')) {
    $text = Get-Content -Raw $configPath
    $text = $text -replace '(?m)^(\s*containerRuntimeEndpoint:).*$', "`$1 $Endpoint"
    Set-Content -Encoding UTF8 -NoNewline -Path $configPath -Value $text
  } else {
    Set-ItemProperty $KubeletKey -Name ImagePath -Value "$imagePath --container-runtime-endpoint=$Endpoint"
  }
}

# The node's GPU labels as dxshim sees them, "key=value" each.
function Get-GpuLabels {
  $lines = & (Join-Path $InstallDir 'dxshim.exe') devices --output labels
  if ($LASTEXITCODE -ne 0) { throw "dxshim.exe devices --output labels failed ($LASTEXITCODE)" }
  @($lines | Where-Object { $_ -match '^dxshim\.io/[^=]+=[A-Za-z0-9._-]*$' })
}

# kubelet --node-labels on the service command line: dxshim.io/ labels replaced, others kept.
function Set-KubeletNodeLabels([string[]]$Labels) {
  $imagePath = (Get-ItemProperty $KubeletKey).ImagePath
  $kept = @()
  if ($imagePath -match '--node-labels[= ](\S+)') {
    $kept = @($Matches[1].Trim('"').Split(',') | Where-Object { $_ -and $_ -notlike 'dxshim.io/*' })
    $imagePath = $imagePath -replace '\s*--node-labels[= ]\S+', ''
  }
  $all = @($kept) + @($Labels)
  if ($all.Count) { $imagePath = "$imagePath --node-labels=$($all -join ',')" }
  Set-ItemProperty $KubeletKey -Name ImagePath -Value $imagePath
}

function Set-KubeletDependsOnDxshim {
  $deps = @((Get-Service kubelet).ServicesDependedOn | ForEach-Object Name)
  if ($deps -notcontains 'dxshim') { $deps += 'dxshim' }
  & sc.exe config kubelet depend= ($deps -join '/') | Out-Null
  if ($LASTEXITCODE -ne 0) { throw "sc.exe config kubelet depend= failed ($LASTEXITCODE)" }
}

function Restore-FromRollback {
  if (-not (Test-Path $RollbackFile)) { Write-Host '   nothing recorded to roll back'; return }
  $record = Get-Content -Raw $RollbackFile | ConvertFrom-Json
  Set-ItemProperty $KubeletKey -Name ImagePath -Value $record.kubeletImagePath
  $deps = @($record.kubeletDependsOn | Where-Object { $_ })
  & sc.exe config kubelet depend= $(if ($deps.Count) { $deps -join '/' } else { '/' }) | Out-Null
  if ($record.kubeletConfigPath -and $null -ne $record.kubeletConfig) {
    Set-Content -Encoding UTF8 -NoNewline -Path $record.kubeletConfigPath -Value $record.kubeletConfig
  }
  Remove-Item $RollbackFile
}

function Remove-DxshimService {
  $service = Get-Service dxshim -ErrorAction SilentlyContinue
  if ($service) {
    if ($service.Status -ne 'Stopped') { Stop-Service dxshim -Force }
    & sc.exe delete dxshim | Out-Null
  }
}

if ($Uninstall) {
  Write-Step 'stopping kubelet, restoring its runtime endpoint and dependencies'
  Stop-Service kubelet -Force -ErrorAction SilentlyContinue
  Restore-FromRollback
  Write-Step 'removing the dxshim service and binaries'
  Remove-DxshimService
  Remove-Item -Recurse -Force $InstallDir -ErrorAction SilentlyContinue
  if ($Purge) { Remove-Item -Recurse -Force $DataDir -ErrorAction SilentlyContinue }
  Start-Service kubelet
  Write-Step 'done: kubelet talks to containerd directly again'
  return
}

Write-Step 'checking prerequisites'
Test-Prerequisites

try {
  Write-Step 'recording what will change'
  Save-Rollback

  Write-Step "installing binaries to $InstallDir and configuration to $DataDir"
  $existing = Get-Service dxshim -ErrorAction SilentlyContinue
  if ($existing -and $existing.Status -ne 'Stopped') { Stop-Service dxshim -Force }
  New-Item -ItemType Directory -Force -Path $InstallDir, $DataDir | Out-Null
  Copy-Item -Force (Join-Path $SourceDir 'dxshim.exe'), (Join-Path $SourceDir 'dxshim-devices.exe') $InstallDir
  $config = Join-Path $DataDir 'dxshim.yaml'
  if ($Force -or -not (Test-Path $config)) { Copy-Item -Force $ConfigFile $config }

  Write-Step 'registering the dxshim service (before kubelet, after containerd)'
  $binary = "`"$(Join-Path $InstallDir 'dxshim.exe')`" serve --config `"$config`""
  if (-not $existing) {
    New-Service -Name dxshim -DisplayName 'dxshim CRI proxy (GPUs for containers)' `
      -BinaryPathName $binary -StartupType Automatic -DependsOn containerd | Out-Null
    & sc.exe failure dxshim reset= 60 actions= restart/2000/restart/2000/restart/10000 | Out-Null
  }
  Start-Service dxshim
  Set-KubeletDependsOnDxshim

  Write-Step "pointing kubelet at $Pipe"
  Set-KubeletEndpoint $Pipe
  if (-not $NoNodeLabels) {
    $labels = Get-GpuLabels
    Write-Step "adding the node's GPU labels to kubelet's --node-labels: $($labels -join ',')"
    Set-KubeletNodeLabels $labels
    Write-Host "   kubelet applies them when it registers the node; on a node that is already registered run once:"
    Write-Host "   kubectl label node $($env:COMPUTERNAME.ToLower()) --overwrite $($labels -join ' ')"
  }
  Write-Step 'restarting kubelet'
  Restart-Service kubelet -Force
  Write-Step 'done'
} catch {
  Write-Warning "install failed: $_ -- rolling back"
  Stop-Service kubelet -Force -ErrorAction SilentlyContinue
  Restore-FromRollback
  Remove-DxshimService
  Start-Service kubelet -ErrorAction SilentlyContinue
  throw
}
