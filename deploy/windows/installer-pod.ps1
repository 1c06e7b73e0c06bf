<#
.SYNOPSIS
  The installer DaemonSet's container (installer-daemonset.yaml): installs dxshim on this node, or
  removes it, once per release, configuration and action; then stays running and idle.

.DESCRIPTION
  A run is named by its key: the action (install or remove), the SHA-256 of each file of the
  release beside this script (dxshim.exe, dxshim-devices.exe, install.ps1, dxshim.yaml),
  $env:DXSHIM_INSTALL_ARGUMENTS (more of install.ps1's switches) and $env:DXSHIM_INSTALL_ATTEMPT (the DaemonSet's own setting, to ask every node for a new attempt).
  The outcome of the last run is recorded in $env:ProgramData\dxshim\installer-pod.json.

  - A key already recorded as done or failed is not run again: a pod restarted (a reboot, an
    eviction, `kubectl delete pod`) finds it and idles. A failed install is never retried until
    the key changes (a new image, a new dxshim.yaml, a new DXSHIM_INSTALL_ATTEMPT, or the node
    labelled for the other action): a takeover that fails its proof restarts containerd twice,
    and must not do it again on every restart of the pod.
  - A run that was interrupted (the pod killed mid-install) is run again, and install.ps1 finishes
    or undoes it from its journal; after three interrupted attempts the key counts as failed.
  - The container never exits for an outcome it knows: it idles, and its readiness says the
    outcome (-Ready, the DaemonSet's readiness probe): not ready until the key's run is done; then,
    after an install, `dxshim.exe doctor`'s verdict; after a remove, ready.

  install.ps1's exit codes: 0 installed (or nothing to change; a doctor failure is reported, not
  an install failure), 1 refused or not proven and rolled back, 2 a bad option, 3 a kubelet
  launcher dxshim does not know (nothing changed). -Uninstall: 0 removed, or nothing was installed.

.EXAMPLE
  installer-pod.ps1 -Action install      # the container's command
.EXAMPLE
  installer-pod.ps1 -Action install -Ready   # the readiness probe's
#>
[CmdletBinding()]
param(
  [ValidateSet('install', 'remove')]
  [string]$Action = 'install',
  [switch]$Ready,
  [string]$SourceDir = $PSScriptRoot
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$DataDir = Join-Path $env:ProgramData 'dxshim'
$StateFile = Join-Path $DataDir 'installer-pod.json'
$Installed = Join-Path $env:ProgramFiles 'dxshim\dxshim.exe'
$MaxInterrupted = 3
# More of install.ps1's switches for every run, from the DaemonSet's DXSHIM_INSTALL_ARGUMENTS
# (e.g. `-AllowOtherGpuPlugin -NoNodeLabels`), separated by spaces; part of the key.
$InstallArguments = @("$env:DXSHIM_INSTALL_ARGUMENTS" -split ' ' | Where-Object { $_ })

function Get-RunKey {
  $parts = @("action=$Action")
  foreach ($name in 'dxshim.exe', 'dxshim-devices.exe', 'install.ps1', 'dxshim.yaml') {
    $parts += "$name=$((Get-FileHash -Algorithm SHA256 (Join-Path $SourceDir $name)).Hash)"
  }
  $parts += "arguments=$($InstallArguments -join ' ')"
  $parts += "attempt=$env:DXSHIM_INSTALL_ATTEMPT"
  $parts -join ';'
}

# %ProgramData% lets every user create folders: a record in a dxshim folder that is not SYSTEM's
# or Administrators' is not trusted (install.ps1 refuses such a folder too, and says so).
function Test-TrustedDataDir {
  if (-not (Test-Path $DataDir)) { return $true }
  $owner = (Get-Acl $DataDir).GetOwner([System.Security.Principal.SecurityIdentifier]).Value
  $owner -in @('S-1-5-18', 'S-1-5-32-544')
}

function Read-State {
  if (-not (Test-Path $StateFile)) { return $null }
  if (-not (Test-TrustedDataDir)) {
    Write-Warning "$DataDir is not SYSTEM's or Administrators': its record is ignored"
    return $null
  }
  try { Get-Content -Raw $StateFile | ConvertFrom-Json } catch { $null }
}

function Write-State([string]$Key, [string]$Outcome, [int]$Code, [int]$Attempts, [string]$Summary) {
  if (-not (Test-Path $DataDir)) { New-Item -ItemType Directory -Path $DataDir | Out-Null }
  if (-not (Test-TrustedDataDir)) { return [pscustomobject]@{ outcome = $Outcome; summary = $Summary; time = '' } }
  $state = [pscustomobject]@{
    key = $Key; outcome = $Outcome; code = $Code; attempts = $Attempts; summary = $Summary
    time = (Get-Date -Format o)
  }
  $state | ConvertTo-Json | Set-Content -Encoding UTF8 $StateFile
  $state
}

function Get-Summary([int]$Code) {
  if ($Action -eq 'remove') {
    if ($Code -eq 0) { return 'dxshim removed from this node' }
    return "dxshim.exe uninstall failed (exit code $Code): nothing more was removed"
  }
  $why = @{
    1 = 'refused, or not proven and rolled back'
    2 = 'install.ps1 or dxshim.exe install was given a bad option'
    3 = 'kubelet is launched in a way dxshim does not know; nothing changed'
  }
  if ($Code -eq 0) { return 'dxshim installed on this node' }
  if ($why.ContainsKey($Code)) { return "dxshim was not installed: $($why[$Code]) (exit code $Code)" }
  "dxshim was not installed: install.ps1 failed (exit code $Code)"
}

function Write-Advice($State) {
  Write-Host "!! $($State.summary)."
  Write-Host '!! This pod will not try again for this release and configuration: it idles, not ready.'
  Write-Host '!! The reason is in this log above (or in the log of the run that recorded it, at'
  Write-Host "!! $($State.time)), and in $env:ProgramData\dxshim\install-record.json on the node."
  Write-Host '!! To try again after fixing the cause: a new image or dxshim.yaml, a new'
  Write-Host '!! DXSHIM_INSTALL_ATTEMPT value in the DaemonSet, or for this node alone'
  Write-Host '!! `kubectl label node <node> dxshim.io/install=remove --overwrite`, then back to true.'
}

# The readiness probe: 0 ready, 1 not.
function Test-Ready {
  $state = Read-State
  if (-not $state -or $state.key -ne (Get-RunKey)) {
    Write-Host "not ready: the $Action of this release has not finished on this node"
    return 1
  }
  if ($state.outcome -ne 'done') {
    Write-Host "not ready: $($state.summary) (see the installer pod's log)"
    return 1
  }
  if ($Action -eq 'remove') {
    Write-Host $state.summary
    return 0
  }
  # doctor's marks are UTF-8; a probe's process may have no console to set (then they may show
  # garbled, nothing else).
  $encoding = $null
  try { $encoding = [Console]::OutputEncoding; [Console]::OutputEncoding = [System.Text.Encoding]::UTF8 } catch { $encoding = $null }
  # Its table to the host, not into this function's output (which is the exit code).
  try {
    & $Installed doctor --config (Join-Path $DataDir 'dxshim.yaml') | ForEach-Object { Write-Host $_ }
  } finally { if ($encoding) { try { [Console]::OutputEncoding = $encoding } catch { } } }
  if ($LASTEXITCODE -ne 0) { return 1 }
  return 0
}

if ($Ready) { exit (Test-Ready) }

$key = Get-RunKey
$last = Read-State
$state = $null
if ($last -and $last.key -eq $key -and $last.outcome -ne 'running') {
  Write-Host "== $($last.summary) (recorded $($last.time)): nothing to do for this release, configuration and action"
  $state = $last
} elseif ($last -and $last.key -eq $key -and $last.attempts -ge $MaxInterrupted) {
  $state = Write-State $key 'failed' -1 $last.attempts "the $Action was interrupted $($last.attempts) times; not tried again"
} else {
  $attempts = if ($last -and $last.key -eq $key) { $last.attempts + 1 } else { 1 }
  Write-State $key 'running' -1 $attempts "the $Action is running (attempt $attempts)" | Out-Null
  $arguments = @('-NoProfile', '-ExecutionPolicy', 'Bypass', '-File', (Join-Path $SourceDir 'install.ps1'),
    '-SourceDir', $SourceDir, '-ConfigFile', (Join-Path $SourceDir 'dxshim.yaml'))
  if ($Action -eq 'remove') { $arguments += '-Uninstall' } else { $arguments += $InstallArguments }
  Write-Host "== $Action (attempt $attempts): install.ps1$(if ($Action -eq 'remove') { ' -Uninstall' }) from $SourceDir"
  & (Join-Path $env:SystemRoot 'System32\WindowsPowerShell\v1.0\powershell.exe') @arguments
  $code = $LASTEXITCODE
  $outcome = if ($code -eq 0) { 'done' } else { 'failed' }
  $state = Write-State $key $outcome $code $attempts (Get-Summary $code)
  Write-Host "== $($state.summary)"
}
if ($state.outcome -ne 'done') { Write-Advice $state }
Write-Host '== idle; readiness (installer-pod.ps1 -Ready) reports the outcome and dxshim.exe doctor'
while ($true) { Start-Sleep -Seconds 3600 }
