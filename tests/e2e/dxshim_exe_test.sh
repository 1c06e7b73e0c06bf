#!/usr/bin/env bash
# The real Windows dxshim.exe (cross-built with mingw: scripts/build-windows.sh) under wine:
# --version, `serve --check` on the Windows example configuration (without DXCore: a clean
# refusal naming the device source; with the stand-in dxcore.dll: accepted), a broken
# configuration refused with file, line and key, and `devices --source windows` listing what
# dxshim-devices.exe lists. Wine has no GPU, no DXCore and no GPU device nodes: the stand-in
# dxcore.dll (tests/devices/windows/fake_dxcore.cpp) reports canned adapters, none of which has a PnP
# device, so both programs list no GPU and report the same skipped adapters. And the hidden
# `nvidia-uuids` child that serve's discovery runs to ask CUDA answers from dxshim.exe itself.
# usage: dxshim_exe_test.sh SOURCE_DIR dxshim.exe dxshim-devices.exe fake-dxcore.dll VERSION
#        LINUX_DXSHIM
set -uo pipefail
source_dir=${1:?usage: dxshim_exe_test.sh SOURCE_DIR dxshim.exe dxshim-devices.exe fake-dxcore.dll VERSION LINUX_DXSHIM}
exe=${2:?}
devices_exe=${3:?}
fake_dxcore=${4:?}
version=${5:?}
linux_dxshim=${6:?}
source "$(dirname "$0")/../support/wine_test_env.sh"
need_exe "$exe"
run() {  # run ARGS...: dxshim.exe's stdout in $work/out, stderr in $work/err, exit code in $code
  timeout 120 "$wine" "$exe" "$@" >"$work/out" 2>"$work/err"
  code=$?
}

run --version
# The same commit as the Linux build of the same sources, and the platform.
linux_version=$("$linux_dxshim" --version)
commit=$(sed -n 's/^dxshim [^ ]* (commit \([0-9a-f]\{12\}\(-dirty\)\{0,1\}\|unknown\), linux\/amd64)$/\1/p' <<<"$linux_version")
check "the Linux build's --version names a commit ($linux_version)" $([ -n "$commit" ]; echo $?)
check "--version prints 'dxshim $version (commit $commit, windows/amd64)' and exits 0" \
  $([ "$code" = 0 ] && [ "$(cat "$work/out")" = "dxshim $version (commit $commit, windows/amd64)" ]; echo $?) \
  "$(cat "$work/out" "$work/err")"
check "its output has no carriage return (binary stdout: the same bytes as Linux)" \
  $(! grep -q $'\r' "$work/out"; echo $?)

config="$source_dir/deploy/examples/dxshim-windows.yaml"
run serve --config "$config" --check
check "serve --check without DXCore exits 2" $([ "$code" = 2 ]; echo $?) "$(cat "$work/err")"
check "and names the device source and DXCore" \
  $(grep -qF 'dxshim serve: device source auto:' "$work/err" && grep -qF 'dxcore.dll' "$work/err"; echo $?) \
  "$(cat "$work/err")"

cp "$fake_dxcore" "$WINEPREFIX/drive_c/windows/system32/dxcore.dll"
run serve --config "$config" --check
check "serve --check on the Windows example configuration exits 0" $([ "$code" = 0 ]; echo $?) \
  "$(cat "$work/out" "$work/err")"
check "and reports the Windows endpoints and target" \
  $(grep -qF 'listen   npipe://./pipe/dxshim' "$work/out" &&
    grep -qF 'runtime  npipe://./pipe/containerd-containerd' "$work/out" &&
    grep -qF 'target   windows, 2 pod(s) per GPU, spread' "$work/out" &&
    grep -qF 'vm       runhcs-wcow-hypervisor (' "$work/out"; echo $?) "$(cat "$work/out")"
check "--check opens no log file" $([ ! -e "$WINEPREFIX/drive_c/ProgramData/dxshim" ]; echo $?)

broken="$work/broken.yaml"
{ head -n 3 "$config"; echo "max-containers-per-gpu: 2"; } >"$broken"
run serve --config "$broken" --check
check "a broken configuration exits 2" $([ "$code" = 2 ]; echo $?) "$(cat "$work/err")"
check "and its message names the file, the line and the key" \
  $(grep -qF "$broken" "$work/err" && grep -qF 'line 4' "$work/err" &&
    grep -qF "max-containers-per-gpu" "$work/err"; echo $?) "$(cat "$work/err")"

run devices --source windows
dxshim_out=$(cat "$work/out")
dxshim_err=$(grep -E 'adapter|skipped' "$work/err")
check "devices --source windows exits 0 with the stand-in DXCore" $([ "$code" = 0 ]; echo $?) \
  "$(cat "$work/err")"
timeout 120 "$wine" "$devices_exe" list >"$work/out" 2>"$work/err"
check "dxshim-devices.exe list exits 0" $([ $? = 0 ]; echo $?)
check "dxshim.exe lists what dxshim-devices.exe lists" \
  $([ "$dxshim_out" = "$(tr -d '\r' <"$work/out")" ]; echo $?) \
  "dxshim.exe: $dxshim_out / dxshim-devices.exe: $(cat "$work/out")"
check "and reports the same adapters, skipped for the same reasons" \
  $([ -n "$dxshim_err" ] && [ "$dxshim_err" = "$(tr -d '\r' <"$work/err" | grep -E 'adapter|skipped')" ]; echo $?) \
  "dxshim.exe: $dxshim_err / dxshim-devices.exe: $(cat "$work/err")"

# The hidden child serve's discovery runs to ask CUDA (devices/windows/nvidia_query.h): dxshim.exe
# answers it itself (the stand-in nvcuda.dll's answers are tested with dxshim-devices.exe in
# windows_devices_exe_test; here there is no nvcuda.dll, so the answer says why).
run nvidia-uuids cuda
check "dxshim.exe nvidia-uuids cuda answers CUDA's JSON, saying there is no CUDA here" \
  $([ "$code" = 0 ] && grep -qF '{"cuda": {"error": "no CUDA: nvcuda.dll could not be loaded from System32' "$work/out"; echo $?) \
  "$(cat "$work/out" "$work/err")"
run nvidia-uuids nvml 'bad id'
check "and refuses what is not a PCI bus id (exit 2)" $([ "$code" = 2 ]; echo $?) "$(cat "$work/err")"

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
