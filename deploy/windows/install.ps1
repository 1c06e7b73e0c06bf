<#
.SYNOPSIS
  Installs dxshim on a Windows Server 2022/2025 Kubernetes node (or removes it with -Uninstall).

.DESCRIPTION
  A thin wrapper around `dxshim.exe install` / `dxshim.exe uninstall`, which do the node's part
  (see deploy/windows/DISTRIBUTIONS.md):
    - find how this node's kubelet is launched (a service running kubelet.exe, as on EKS, GKE
      and CAPZ; NSSM running kubeadm's StartKubelet.ps1 or AKS's kubeletstart.ps1; rke2);
    - point kubelet at dxshim where that launcher reads its endpoint, or, where the
      distribution's own script writes the endpoint (AKS), take over containerd's pipe;
    - register the dxshim service, make kubelet's service depend on it, restart only what the
      change needs (a takeover keeps containerd's TTRPC pipe where the running shims publish
      their events, and says how long kubelet had no runtime), and report success only when
      dxshim itself, asked over the pipe kubelet uses, names the running kubelet.exe among the
      processes that made CRI calls through it; otherwise roll back and say why.
  Every step is journaled before and after it is applied, in
  $env:ProgramData\dxshim\install-record.json: a run that was interrupted is finished (or undone)
  by the next one, and -Uninstall undoes whatever the journal holds, a finished install or any
  part of one. A value the distribution rebuilt since (image-builder's RestartKubelet.ps1) gets
  only dxshim's own settings taken out.

  This script does what PowerShell does well: the prerequisites (Windows build, containerd
  version, a GPU), copying the release to $env:ProgramFiles\dxshim (the running service is
  stopped only when a binary changed), the configuration to $env:ProgramData\dxshim\dxshim.yaml
  (an existing one is kept unless -Force), and checking it with the new binary first. At the
  end it runs `dxshim.exe doctor` with the installed configuration and prints its table: the
  whole GPU path (dxshim, containerd, kubelet, the device plugin, the GPUs' runtime files, the
  metrics endpoint); a check it fails is reported, not undone.

  Expects next to it (or in -SourceDir): dxshim.exe, dxshim-devices.exe and dxshim.yaml (start
  from deploy/examples/dxshim-windows.yaml).

  Exit codes: 0 installed and proven, or nothing to change (a check doctor fails afterwards is
  reported, not an install failure); 1 refused, or not proven and rolled back (a prerequisite
  that is not met, a configuration dxshim refuses, dxshim.exe install's own refusals); 2 a bad
  option; 3 a kubelet launcher dxshim.exe install does not know, nothing changed. -Uninstall: 0
  removed, or nothing was installed; 1 dxshim.exe uninstall refused (nothing more removed).

.EXAMPLE
  .\install.ps1 -SourceDir C:\dxshim-release
.EXAMPLE
  .\install.ps1 -DryRun          # prints what would change, changes nothing
.EXAMPLE
  .\install.ps1 -ServiceOnly     # the dxshim service alone, for nodes whose bootstrap points kubelet at it:
                                # it says this launcher's bootstrap setting (refused on AKS, which has none),
                                # proves dxshim serves, and says whether kubelet already uses it
.EXAMPLE
  .\install.ps1 -AllowOtherGpuPlugin  # install although kubelet has another GPU device plugin
                                # (AKS's microsoft.com/directx): each GPU is then advertised twice
.EXAMPLE
  .\install.ps1 -ProofTimeout 300  # wait up to 5 minutes (dxshim.exe install's default: 180 s) for
                                # kubelet to call through dxshim before rolling back
.EXAMPLE
  .\install.ps1 -Uninstall
#>
[CmdletBinding()]
param(
  [string]$SourceDir = $PSScriptRoot,
  [string]$ConfigFile = (Join-Path $PSScriptRoot 'dxshim.yaml'),
  [string]$Pipe = '',
  [ValidateSet('auto', 'endpoint', 'takeover')]
  [string]$Mode = 'auto',
  [switch]$ServiceOnly,
  [switch]$DryRun,
  [switch]$Force,
  [switch]$AllowNoGpu,
  [switch]$NoNodeLabels,
  [switch]$AllowOtherGpuPlugin,
  [int]$ProofTimeout = 0,
  [switch]$Uninstall,
  [switch]$Purge
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$InstallDir = Join-Path $env:ProgramFiles 'dxshim'
$DataDir = Join-Path $env:ProgramData 'dxshim'
$Installed = Join-Path $InstallDir 'dxshim.exe'

function Write-Step([string]$Text) { Write-Host "== $Text" }

function Get-ContainerdVersion {
  $exe = Join-Path $env:ProgramFiles 'containerd\containerd.exe'
  if (-not (Test-Path $exe)) { $exe = (Get-Command containerd.exe -ErrorAction SilentlyContinue).Source }
  if (-not $exe) { return $null }  # rke2 and others ship their own: dxshim.exe install checks the launcher
  $text = & $exe --version
  if ($text -notmatch 'v?(\d+)\.(\d+)\.(\d+)') { throw "cannot read the containerd version from: $text" }
  [version]"$($Matches[1]).$($Matches[2]).$($Matches[3])"
}

function Test-Prerequisites {
  $build = [Environment]::OSVersion.Version.Build
  if ($build -lt 20348) { throw "Windows build $build: dxshim needs Windows Server 2022 (20348) or later" }
  $containerd = Get-ContainerdVersion
  if ($containerd -and $containerd -lt [version]'1.7.0') {
    throw "containerd $containerd: GPU devices need containerd 1.7 or later (1.6 drops them)"
  }
  foreach ($name in 'dxshim.exe', 'dxshim-devices.exe') {
    if (-not (Test-Path (Join-Path $SourceDir $name))) { throw "$name not found in $SourceDir" }
  }
  # Every GPU first (integrated and detachable ones too: the configuration may hand them out),
  # then the ones dxshim hands out by default, to say why a node with only the others gets none.
  $devices = Join-Path $SourceDir 'dxshim-devices.exe'
  $all = & $devices list --output json --include-integrated --include-detachable
  if ($LASTEXITCODE -ne 0) { throw 'dxshim-devices.exe could not list the GPUs (see its message above)' }
  $count = @(($all | Out-String | ConvertFrom-Json).devices).Count
  if ($count -eq 0 -and -not $AllowNoGpu) {
    throw 'no GPU found (drivers installed?); -AllowNoGpu installs anyway'
  }
  $discrete = @((& $devices list --output json | Out-String | ConvertFrom-Json).devices).Count
  if ($count -gt 0 -and $discrete -eq 0) {
    Write-Warning 'only integrated or detachable GPUs: dxshim hands them out only with include-integrated or include-detachable in its configuration'
  }
  # The configuration the service will run with, checked by the new binary before anything
  # changes: a typo must not cost the node its kubelet.
  $current = Join-Path $DataDir 'dxshim.yaml'
  $config = if (-not $Force -and (Test-Path $current)) { $current } else { $ConfigFile }
  & (Join-Path $SourceDir 'dxshim.exe') serve --config $config --check
  if ($LASTEXITCODE -ne 0) { throw "dxshim refuses the configuration $config (see its message above)" }
  Write-Host "   Windows build $build, containerd $(if ($containerd) { $containerd } else { 'not a service here' }), $count GPU(s)"
}

# %ProgramData% lets every user create folders and files. dxshim's folder (its configuration, the
# install record, the log, all read by SYSTEM) is made SYSTEM's and Administrators' only, and a
# folder a user made first is refused (SIDs, not names: the names are localized).
function Protect-DataDir {
  if (Test-Path $DataDir) {
    $owner = (Get-Acl $DataDir).GetOwner([System.Security.Principal.SecurityIdentifier]).Value
    if ($owner -notin @('S-1-5-18', 'S-1-5-32-544')) {
      throw "$DataDir is owned by $owner, not SYSTEM or Administrators: check it and remove it first"
    }
  } else {
    New-Item -ItemType Directory -Path $DataDir | Out-Null
  }
  & icacls.exe $DataDir /setowner '*S-1-5-32-544' /T /C /Q | Out-Null
  & icacls.exe $DataDir /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' '*S-1-5-32-545:(OI)(CI)RX' /T /C /Q | Out-Null
  if ($LASTEXITCODE -ne 0) { throw "icacls could not restrict $DataDir ($LASTEXITCODE)" }
}

# Copies the release and returns whether a binary changed. A running binary cannot be
# overwritten but can be renamed: the old one moves aside, and dxshim.exe install
# --restart-service then restarts the dxshim service alone. Stopping it here with -Force would
# stop kubelet too (kubelet's service depends on dxshim's).
function Copy-Release {
  New-Item -ItemType Directory -Force -Path $InstallDir | Out-Null
  Protect-DataDir
  $changed = @('dxshim.exe', 'dxshim-devices.exe') | Where-Object {
    $target = Join-Path $InstallDir $_
    -not (Test-Path $target) -or
      (Get-FileHash (Join-Path $SourceDir $_)).Hash -ne (Get-FileHash $target).Hash
  }
  foreach ($name in $changed) {
    $target = Join-Path $InstallDir $name
    if (Test-Path $target) { Move-Item -Force $target "$target.old" }
    Copy-Item -Force (Join-Path $SourceDir $name) $InstallDir
  }
  $config = Join-Path $DataDir 'dxshim.yaml'
  if ($Force -or -not (Test-Path $config)) { Copy-Item -Force $ConfigFile $config }
  [bool]$changed
}

if ($Uninstall) {
  if (-not (Test-Path $Installed)) {
    Write-Step "$Installed not found: nothing installed here, nothing to undo"
    exit 0
  }
  Write-Step 'undoing what dxshim.exe install recorded'
  & $Installed uninstall
  if ($LASTEXITCODE -ne 0) { throw "dxshim.exe uninstall failed ($LASTEXITCODE): see above; nothing more was removed" }
  Remove-Item -Recurse -Force $InstallDir -ErrorAction SilentlyContinue
  if ($Purge) { Remove-Item -Recurse -Force $DataDir -ErrorAction SilentlyContinue }
  Write-Step 'done'
  return
}

Write-Step 'checking prerequisites'
Test-Prerequisites
$arguments = @('install', '--mode', $Mode)
if ($Pipe) { $arguments += @('--endpoint', $Pipe) }
if ($ServiceOnly) { $arguments += '--service-only' }
if ($NoNodeLabels) { $arguments += @('--node-labels', 'none') }
if ($AllowOtherGpuPlugin) { $arguments += '--allow-other-gpu-plugin' }
if ($ProofTimeout -gt 0) { $arguments += @('--proof-timeout', "$ProofTimeout") }
if ($DryRun) {
  # Nothing is copied: the new binary reads the node with the configuration it would get.
  $current = Join-Path $DataDir 'dxshim.yaml'
  $config = if (-not $Force -and (Test-Path $current)) { $current } else { $ConfigFile }
  & (Join-Path $SourceDir 'dxshim.exe') @arguments --dry-run --config $config
  exit $LASTEXITCODE
}
$arguments += @('--config', (Join-Path $DataDir 'dxshim.yaml'))
Write-Step "installing the release to $InstallDir"
if (Copy-Release) { $arguments += '--restart-service' }
Write-Step "dxshim.exe $($arguments -join ' ')"
& $Installed @arguments
$code = $LASTEXITCODE
Get-ChildItem (Join-Path $InstallDir '*.old') | Remove-Item -Force -ErrorAction SilentlyContinue
if ($code -ne 0) {
  # dxshim.exe install's own code, passed on (deploy/windows/README.md): 3 (a kubelet launcher it
  # does not know; nothing changed) must reach the installer DaemonSet as 3.
  $what = if ($code -eq 3) { 'changed nothing: see above for the setting to make' } else { 'rolled back what it changed' }
  [Console]::Error.WriteLine("dxshim.exe install failed ($code): see above (it $what)")
  exit $code
}
Write-Step 'checking the GPU path (dxshim.exe doctor)'
$doctor = @('doctor', '--config', (Join-Path $DataDir 'dxshim.yaml'))
# kubelet registers the device plugin, and writes its checkpoint, within seconds of dxshim's
# start: a run every 5 s, up to seven, until nothing fails, then the table as it stands.
$runs = 0
while ($true) {
  $runs += 1
  & $Installed @doctor --output json | Out-Null
  if ($LASTEXITCODE -eq 0 -or $runs -ge 7) { break }
  Start-Sleep -Seconds 5
}
# Its marks are UTF-8: the console shows them as such, where there is a console to set (a
# process without one, as in a HostProcess container, cannot: the marks may show garbled there).
$encoding = $null
try { $encoding = [Console]::OutputEncoding; [Console]::OutputEncoding = [System.Text.Encoding]::UTF8 } catch { $encoding = $null }
try { & $Installed @doctor } finally { if ($encoding) { try { [Console]::OutputEncoding = $encoding } catch { } } }
if ($LASTEXITCODE -ne 0) {
  [Console]::Error.WriteLine('dxshim is installed, but dxshim.exe doctor failed a check: see the lines marked with a cross above and their fix')
}
Write-Step 'done'
exit 0  # installed and proven: doctor's verdict is reported above, not this script's exit code
