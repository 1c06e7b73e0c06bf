#!/usr/bin/env bash
# dxshim-devices.exe (Windows discovery; the windows-mingw build, scripts/build-windows.sh) under
# wine.
# 1. The registry reader (devices/windows/registry_runtime_files.cpp) against a Wine registry this
#    test fills with CopyToVm* values shaped like a real NVIDIA Tesla T4 driver's, plus values a
#    hostile or broken driver package could carry.
# 2. `list`: without DXCore (wine has none) it must fail cleanly; with a stand-in dxcore.dll
#    (tests/windows/fake_dxcore.cpp, three canned adapters: this machine has no GPU) the DXCore
#    enumeration, merging and skipping run for real. Wine's CfgMgr32 has no GPU device nodes and
#    its D3DKMT no adapters, so the PnP and DriverStore steps can only be compiled here; how their
#    facts become a Device is unit-tested on Linux (WindowsAdapter tests in unit_tests).
# 3. NVIDIA UUIDs (`nvml-uuids`, what `list` puts in each NVIDIA GPU's uuid): without nvml.dll
#    none, and `list` is unchanged; with a stand-in nvml.dll (tests/windows/fake_nvml.cpp, two
#    GPUs by PCI address: no NVIDIA driver here) the UUIDs matched by PCI address; with the
#    stand-in failing nvmlInit_v2, none again and nothing else changes.
# usage: devices_exe_test.sh PATH/TO/dxshim-devices.exe PATH/TO/fake-dxcore.dll PATH/TO/fake-nvml.dll
set -uo pipefail
usage="usage: devices_exe_test.sh dxshim-devices.exe fake-dxcore.dll fake-nvml.dll"
exe=${1:?$usage}
fake_dxcore=${2:?$usage}
fake_nvml=${3:?$usage}
wine=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
if [ ! -x "$wine" ]; then
  echo "devices_exe_test: cannot run: wine is not installed (apt-get install wine64); the reader was still compiled: $exe"
  exit 1
fi
if [ ! -f "$exe" ]; then
  echo "devices_exe_test: $exe is missing: build it with scripts/build-windows.sh"
  exit 1
fi
work=$(mktemp -d /tmp/dxshim-wine-XXXXXX)
trap 'wineserver_kill; rm -rf "$work"' EXIT
export WINEPREFIX=$work/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wineserver_kill() { WINEPREFIX=$WINEPREFIX "$(dirname "$wine")/wineserver" -k 2>/dev/null || true; }
"$(dirname "$0")/wine_prefix.sh" "$WINEPREFIX" || exit 1

key='HKLM\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}\0001'
failures=0
passes=0
add() {  # add SUBKEY NAME TYPE DATA
  "$wine" reg add "$key\\$1" /v "$2" /t "$3" /d "$4" /f >/dev/null 2>&1 || { echo "reg add $1\\$2 failed"; exit 1; }
}
check() {  # check NAME CONDITION-RESULT
  if [ "$2" = 0 ]; then passes=$((passes + 1)); echo "ok: $1"; else failures=$((failures + 1)); echo "FAILED: $1"; fi
}

# System32 list, as the T4 GRID driver registers it (value names carry no meaning).
add CopyToVmOverwrite nvcudadebugger REG_MULTI_SZ 'nvcudadebugger.dll'
add CopyToVmOverwrite nvcuda REG_MULTI_SZ 'nvcuda_loader64.dll\0nvcuda.dll'
add CopyToVmOverwrite nvcuvid REG_MULTI_SZ 'nvcuvid64.dll\0nvcuvid.dll'
add CopyToVmOverwrite nvenc REG_MULTI_SZ 'nvEncodeAPI64.dll'
add CopyToVmOverwrite nvapi REG_MULTI_SZ 'nvapi64.dll'
add CopyToVmWhenNewer nvml REG_MULTI_SZ 'nvml_loader.dll\0nvml.dll'
add CopyToVmWhenNewer opencl REG_MULTI_SZ 'OpenCL64.dll\0OpenCL.dll'
add CopyToVmWhenNewer vulkan REG_MULTI_SZ 'vulkan-1-x64.dll\0vulkan-1.dll'
# SysWOW64 list.
add CopyToVmOverwriteWow64 nvcuda REG_MULTI_SZ 'nvcuda_loader32.dll\0nvcuda.dll'
add CopyToVmOverwriteWow64 nvcuvid REG_MULTI_SZ 'nvcuvid32.dll\0nvcuvid.dll'
add CopyToVmOverwriteWow64 nvenc REG_MULTI_SZ 'nvEncodeAPI.dll'
add CopyToVmOverwriteWow64 nvapi REG_MULTI_SZ 'nvapi.dll'
add CopyToVmWhenNewerWow64 opencl REG_MULTI_SZ 'OpenCL32.dll\0OpenCL.dll'
add CopyToVmWhenNewerWow64 vulkan REG_MULTI_SZ 'vulkan-1-x86.dll\0vulkan-1.dll'
# What must never be used: a second file for a destination already taken (other case), paths
# that leave the DriverStore folder, the wrong value type, too many strings.
add CopyToVmWhenNewer dup REG_MULTI_SZ 'other_cuda.dll\0NVCUDA.DLL'
add CopyToVmWhenNewer escape REG_MULTI_SZ '..\..\Windows\System32\config\SAM\0sam.dll'
add CopyToVmWhenNewer drive REG_MULTI_SZ 'C:\evil\evil.dll\0evil.dll'
add CopyToVmWhenNewer rooted REG_MULTI_SZ '\Windows\evil.dll'
add CopyToVmWhenNewer badname REG_MULTI_SZ 'ok.dll\0..\evil.dll'
add CopyToVmWhenNewer plain REG_SZ 'nvapi64.dll'
add CopyToVmWhenNewer three REG_MULTI_SZ 'a.dll\0b.dll\0c.dll'

out=$("$wine" "$exe" runtime-files '{4d36e968-e325-11ce-bfc1-08002be10318}\0001' 2>"$work/stderr" | tr -d '\r')
code=$?
err=$(tr -d '\r' <"$work/stderr")
check "reader exits 0" $([ "$code" = 0 ]; echo $?)
expected="system32 nvcudadebugger.dll => nvcudadebugger.dll
system32 nvcuda_loader64.dll => nvcuda.dll
system32 nvcuvid64.dll => nvcuvid.dll
system32 nvEncodeAPI64.dll => nvEncodeAPI64.dll
system32 nvapi64.dll => nvapi64.dll
system32 nvml_loader.dll => nvml.dll
system32 OpenCL64.dll => OpenCL.dll
system32 vulkan-1-x64.dll => vulkan-1.dll
syswow64 nvcuda_loader32.dll => nvcuda.dll
syswow64 nvcuvid32.dll => nvcuvid.dll
syswow64 nvEncodeAPI.dll => nvEncodeAPI.dll
syswow64 nvapi.dll => nvapi.dll
syswow64 OpenCL32.dll => OpenCL.dll
syswow64 vulkan-1-x86.dll => vulkan-1.dll"
# Windows does not promise an enumeration order: compare as sets.
check "the 14 T4 runtime files, and nothing else" \
  $([ "$(sort <<<"$out")" = "$(sort <<<"$expected")" ]; echo $?)
[ "$(sort <<<"$out")" = "$(sort <<<"$expected")" ] || diff <(sort <<<"$expected") <(sort <<<"$out")
for refused in 'CopyToVmWhenNewer\escape: source' "contains '..'" 'CopyToVmWhenNewer\drive: source' \
  'has a drive letter' 'CopyToVmWhenNewer\rooted: source' 'is absolute' \
  "CopyToVmWhenNewer\\badname: destination '..\\evil.dll'" 'CopyToVmWhenNewer\plain: not REG_MULTI_SZ' \
  'CopyToVmWhenNewer\three: expected 1 or 2 strings'; do
  check "refusal reported: $refused" $(grep -qF -- "$refused" <<<"$err"; echo $?)
done
check "a destination taken twice keeps the first" $(! grep -q other_cuda <<<"$out"; echo $?)

"$wine" "$exe" runtime-files '{4d36e968-e325-11ce-bfc1-08002be10318}\9999' >/dev/null 2>"$work/stderr2"
code=$?
check "a missing driver key exits 1" $([ "$code" = 1 ]; echo $?)
check "and says which key" $(tr -d '\r' <"$work/stderr2" | grep -qF 'cannot open driver key' ; echo $?)
"$wine" "$exe" runtime-files '..\..\Software' >/dev/null 2>"$work/stderr3"
code=$?
check "a driver key with '..' is refused" $([ "$code" = 1 ] && tr -d '\r' <"$work/stderr3" | grep -qF "contains '..'"; echo $?)

# --- 2. discovery (`list`) ---
"$wine" "$exe" list >/dev/null 2>"$work/stderr4"
code=$?
check "list without DXCore exits 1" $([ "$code" = 1 ]; echo $?)
check "and says DXCore is missing" \
  $(tr -d '\r' <"$work/stderr4" | grep -qF 'discovery failed: dxcore.dll could not be loaded'; echo $?)
cp "$fake_dxcore" "$WINEPREFIX/drive_c/windows/system32/dxcore.dll"
out=$("$wine" "$exe" list 2>"$work/stderr5" | tr -d '\r')
code=$?
err=$(tr -d '\r' <"$work/stderr5")
echo "$err"
check "list with the stand-in DXCore exits 0" $([ "$code" = 0 ]; echo $?)
check "the software adapter is skipped as such" \
  $(grep -qF 'skipped adapter 0x00000000:0x0000e0b2 (Microsoft Basic Render Driver): software adapter' <<<"$err"; echo $?)
check "the D3D12 graphics+compute adapter is listed once (lists merged by LUID)" \
  $([ "$(grep -c 'NVIDIA Tesla T4' <<<"$err")" = 1 ]; echo $?)
check "the compute-only adapter (LUID high part 1) is enumerated" \
  $(grep -qF 'adapter 0x00000001:0x0000f3c1 (AMD Instinct MI300X)' <<<"$err"; echo $?)
check "adapters without a PnP device (none under wine) are skipped, not invented" \
  $([ "$(grep -c 'no PnP device carries its GPU LUID' <<<"$err")" = 2 ] && grep -qF '(no GPU)' <<<"$out"; echo $?)
json=$("$wine" "$exe" list --output json 2>/dev/null | tr -d '\r')
check "--output json writes an inventory" $([ "$json" = '{"devices": [
]}' ]; echo $?)
"$wine" "$exe" list --output yaml >/dev/null 2>&1
check "an unknown --output is a usage error (exit 2)" $([ $? = 2 ]; echo $?)

# --- 3. NVIDIA UUIDs through NVML ---
list_before=$("$wine" "$exe" list --output json 2>/dev/null | tr -d '\r')
out=$("$wine" "$exe" nvml-uuids 3b:0.0 2>"$work/stderr6" | tr -d '\r')
code=$?
check "nvml-uuids without nvml.dll exits 0 and gives no UUID" $([ "$code" = 0 ] && [ "$out" = "3b:0.0 -" ]; echo $?)
check "and says so in a debug line" \
  $(tr -d '\r' <"$work/stderr6" | grep -qF 'debug: no NVIDIA UUIDs: nvml.dll could not be loaded from System32'; echo $?)
cp "$fake_nvml" "$WINEPREFIX/drive_c/windows/system32/nvml.dll"
out=$("$wine" "$exe" nvml-uuids 3b:0.0 86:0.0 99:0.0 2>"$work/stderr7" | tr -d '\r')
code=$?
expected="3b:0.0 GPU-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e
86:0.0 GPU-1a2b3c4d-6e7f-4a8b-9c0d-e1f2a3b4c5d6
99:0.0 -"
check "with the stand-in nvml.dll: the UUIDs matched by PCI address, in the order asked" \
  $([ "$code" = 0 ] && [ "$out" = "$expected" ]; echo $?)
[ "$out" = "$expected" ] || diff <(echo "$expected") <(echo "$out")
check "an address NVML does not know is said in a debug line" \
  $(tr -d '\r' <"$work/stderr7" | grep -qF 'debug: no UUID for PCI 99:0.0: nvmlDeviceGetHandleByPciBusId_v2 failed (NVML error 6)'; echo $?)
check "list with nvml.dll present still succeeds, unchanged (no GPU device nodes under wine)" \
  $([ "$("$wine" "$exe" list --output json 2>/dev/null | tr -d '\r')" = "$list_before" ]; echo $?)
out=$(DXSHIM_FAKE_NVML=init-fails "$wine" "$exe" nvml-uuids 3b:0.0 86:0.0 2>"$work/stderr8" | tr -d '\r')
code=$?
check "a failing nvmlInit_v2 gives no UUID and exits 0" \
  $([ "$code" = 0 ] && [ "$out" = "3b:0.0 -
86:0.0 -" ]; echo $?)
check "and says why" \
  $(tr -d '\r' <"$work/stderr8" | grep -qF 'debug: no NVIDIA UUIDs: nvmlInit_v2 failed (NVML error 9)'; echo $?)
check "list with a failing nvml.dll: unchanged" \
  $([ "$(DXSHIM_FAKE_NVML=init-fails "$wine" "$exe" list --output json 2>/dev/null | tr -d '\r')" = "$list_before" ]; echo $?)

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
