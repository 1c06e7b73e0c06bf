#!/usr/bin/env bash
# dxshim-devices.exe (Windows discovery; the windows-mingw build, scripts/build-windows.sh) under
# wine.
# 1. The registry reader (devices/windows/registry_runtime_files.cpp) against a Wine registry this
#    test fills with CopyToVm* values shaped like a real NVIDIA Tesla T4 driver's, plus values a
#    hostile or broken driver package could carry.
# 2. `list`: without DXCore (wine has none) it must fail cleanly; with a stand-in dxcore.dll
#    (tests/devices/windows/fake_dxcore.cpp, three canned adapters: this machine has no GPU) the DXCore
#    enumeration, merging and skipping run for real. Wine's CfgMgr32 has no GPU device nodes and
#    its D3DKMT no adapters, so the PnP and DriverStore steps can only be compiled here; how their
#    facts become a Device is unit-tested on Linux (WindowsAdapter tests in unit_tests).
# 3. NVIDIA UUIDs (`uuids`, what `list` puts in each NVIDIA GPU's uuid), with the stand-in
#    dxcore.dll's two NVIDIA adapters given device nodes by a stand-in cfgmgr32.dll
#    (tests/devices/windows/fake_cfgmgr32.cpp, shaped like a cloud VM's: each GPU alone on a PCI segment
#    at 0:0.0) and stand-ins for the driver's nvcuda.dll and nvml.dll (fake_nvcuda.cpp,
#    fake_nvml.cpp: no NVIDIA driver here):
#    - CUDA lists the two GPUs in the reverse of DXCore's order: each adapter gets its own UUID
#      by LUID (cuda-luid), also with CUDA_VISIBLE_DEVICES naming one of them in dxshim's own
#      environment (removed before cuInit). (`list` finds them the same way, in the same Discover(), but with
#      device nodes present it goes on to the DriverStore query, and wine's gdi32 has
#      D3DKMTQueryAdapterInfo only as a stub that aborts: `uuids` skips that step.)
#    - cuInit failing, then nvcuda.dll absent: NVML by PCI address with the segment (nvml-pci);
#    - nvcuda.dll absent and no segment known (Hyper-V's "Virtual PCI Bus Slot" location): the
#      two adapters at 0:0.0 get none, and the debug line names the ambiguity;
#    - neither library: none, and discovery is otherwise unchanged.
# usage: devices_exe_test.sh dxshim-devices.exe fake-dxcore.dll fake-nvml.dll fake-nvcuda.dll
#        fake-cfgmgr32.dll
set -uo pipefail
usage="usage: devices_exe_test.sh dxshim-devices.exe fake-dxcore.dll fake-nvml.dll fake-nvcuda.dll fake-cfgmgr32.dll"
exe=${1:?$usage}
fake_dxcore=${2:?$usage}
fake_nvml=${3:?$usage}
fake_nvcuda=${4:?$usage}
fake_cfgmgr32=${5:?$usage}
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
# TMPDIR in the work folder: wine makes its server folder (wine-XXXXXX) there, removed with it.
export WINEPREFIX=$work/prefix TMPDIR=$work/tmp WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
mkdir -p "$TMPDIR"
wineserver_kill() { WINEPREFIX=$WINEPREFIX "$(dirname "$wine")/wineserver" -k 2>/dev/null || true; }
"$(dirname "$0")/../../support/wine_prefix.sh" "$WINEPREFIX" || exit 1

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
  $([ "$(grep -c 'no PnP device carries its GPU LUID' <<<"$err")" = 3 ] && grep -qF '(no GPU)' <<<"$out"; echo $?)
json=$("$wine" "$exe" list --output json 2>/dev/null | tr -d '\r')
check "--output json writes an inventory" $([ "$json" = '{"devices": [
]}' ]; echo $?)
"$wine" "$exe" list --output yaml >/dev/null 2>&1
check "an unknown --output is a usage error (exit 2)" $([ $? = 2 ]; echo $?)

# --- 3. NVIDIA UUIDs: CUDA by LUID, else NVML by PCI address ---
list_before=$("$wine" "$exe" list --output json 2>/dev/null | tr -d '\r')
# The stand-in cfgmgr32.dll beside a copy of the program under another name, preferred for that
# name alone (wine's own processes, and the program itself, keep wine's).
mkdir -p "$work/bin"
cp "$exe" "$work/bin/dxshim-devices-with-nodes.exe"
cp "$fake_cfgmgr32" "$work/bin/cfgmgr32.dll"
"$wine" reg add 'HKCU\Software\Wine\AppDefaults\dxshim-devices-with-nodes.exe\DllOverrides' \
  /v cfgmgr32 /d native /f >/dev/null 2>&1 || { echo "reg add DllOverrides failed"; exit 1; }
devices="$work/bin/dxshim-devices-with-nodes.exe"
t4='0x00000000:0x0000d1a7 PCIROOT(0)#PCI(0100)#PCI(0000)'
a10='0x00000000:0x0000d1b8 PCIROOT(0)#PCI(0200)#PCI(0000)'
t4_uuid=GPU-7d1ac1e5-9d4b-4c2a-8f3e-c0ffee000001
a10_uuid=GPU-a10a10a1-0b2c-4d3e-9f40-c0ffee000002
uuids() {  # uuids NAME [ENV=VALUE...]: stdout to $work/NAME.out, stderr to $work/NAME.err
  local name=$1
  shift
  env "$@" "$wine" "$devices" uuids >"$work/$name.out" 2>"$work/$name.err"
  local code=$?
  tr -d '\r' <"$work/$name.out" >"$work/$name.txt"
  tr -d '\r' <"$work/$name.err" >"$work/$name.log"
  return $code
}

uuids none-at-all
code=$?
check "uuids with device nodes but neither CUDA nor NVML exits 0, no UUID" \
  $([ "$code" = 0 ] && [ "$(cat "$work/none-at-all.txt")" = "$t4 - -
$a10 - -" ]; echo $?)
cat "$work/none-at-all.txt" "$work/none-at-all.log"

cp "$fake_nvml" "$WINEPREFIX/drive_c/windows/system32/nvml.dll"
cp "$fake_nvcuda" "$WINEPREFIX/drive_c/windows/system32/nvcuda.dll"
uuids cuda
code=$?
check "CUDA lists the GPUs in the other order: each adapter its own UUID, by LUID" \
  $([ "$code" = 0 ] && [ "$(cat "$work/cuda.txt")" = "$t4 $t4_uuid cuda-luid
$a10 $a10_uuid cuda-luid" ]; echo $?)
cat "$work/cuda.txt" "$work/cuda.log"

uuids visible CUDA_VISIBLE_DEVICES=$a10_uuid
code=$?
check "CUDA_VISIBLE_DEVICES in dxshim's environment hides no GPU from it" \
  $([ "$code" = 0 ] && [ "$(cat "$work/visible.txt")" = "$t4 $t4_uuid cuda-luid
$a10 $a10_uuid cuda-luid" ] && grep -qF 'debug: CUDA_VISIBLE_DEVICES was set in this process: removed before cuInit' "$work/visible.log"; echo $?)

uuids init-fails DXSHIM_FAKE_NVCUDA=init-fails
code=$?
check "cuInit failing: NVML by PCI address with the segment" \
  $([ "$code" = 0 ] && [ "$(cat "$work/init-fails.txt")" = "$t4 $t4_uuid nvml-pci
$a10 $a10_uuid nvml-pci" ]; echo $?)
check "and the debug line says why CUDA gave nothing" \
  $(grep -qF 'debug: no CUDA: cuInit failed (CUDA error 100)' "$work/init-fails.log"; echo $?)

rm "$WINEPREFIX/drive_c/windows/system32/nvcuda.dll"
uuids no-cuda
code=$?
check "nvcuda.dll absent: NVML by PCI address with the segment" \
  $([ "$code" = 0 ] && [ "$(cat "$work/no-cuda.txt")" = "$t4 $t4_uuid nvml-pci
$a10 $a10_uuid nvml-pci" ]; echo $?)
check "and the debug line says CUDA is missing" \
  $(grep -qF 'debug: no CUDA: nvcuda.dll could not be loaded from System32' "$work/no-cuda.log"; echo $?)

uuids no-segment DXSHIM_FAKE_CFGMGR32=no-segment
code=$?
check "no segment known and two adapters at 0:0.0: neither gets a UUID" \
  $([ "$code" = 0 ] && [ "$(cat "$work/no-segment.txt")" = "$t4 - -
$a10 - -" ]; echo $?)
check "and the debug line names the ambiguity" \
  $(grep -qF 'debug: no UUID for adapter 0x00000000:0x0000d1a7 (NVIDIA Tesla T4): CUDA does not name its LUID, Windows does not say its PCI segment, and adapter 0x00000000:0x0000d1b8 (NVIDIA A10) share its PCI address 0:0.0: NVML could answer with another GPU' "$work/no-segment.log"; echo $?)
cat "$work/no-segment.txt" "$work/no-segment.log"

rm "$WINEPREFIX/drive_c/windows/system32/nvml.dll"
check "list without the stand-in device nodes is what it was (the adapters skipped, no UUID)" \
  $([ "$("$wine" "$exe" list --output json 2>/dev/null | tr -d '\r')" = "$list_before" ]; echo $?)
"$wine" "$exe" nvml-uuids 3b:0.0 >/dev/null 2>&1
check "the old nvml-uuids command is a usage error (exit 2)" $([ $? = 2 ]; echo $?)

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
