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
#    (tests/devices/windows/fake_cfgmgr32.cpp, shaped like a cloud VM's: each GPU alone on a PCI
#    segment at 0:0.0) and stand-ins for the driver's nvcuda.dll and nvml.dll (fake_nvcuda.cpp,
#    fake_nvml.cpp: no NVIDIA driver here). Discovery asks each library in a short-lived child
#    (`nvidia-uuids cuda|nvml`); the stand-ins log every load, so the test sees which processes
#    loaded them. (`list` finds UUIDs the same way, in the same Discover(), but with device nodes
#    present it goes on to the DriverStore query, and wine's gdi32 has D3DKMTQueryAdapterInfo only
#    as a stub that aborts: `uuids` skips that step.)
#    - CUDA lists the two GPUs in the reverse of DXCore's order: each adapter gets its own UUID by
#      LUID (cuda-luid), also with CUDA_VISIBLE_DEVICES in dxshim's own environment, and with
#      every device reading TCC=1 (no TCC skip); nvcuda.dll is loaded by the child only;
#    - CUDA's failures, each leaving that GPU to NVML by PCI address with the segment (nvml-pci)
#      with the reason in a debug line: a zero LUID, cuDeviceGetLuid failing, two devices with one
#      LUID, cuInit failing, a child hanging (killed at the deadline) or crashing, a driver without
#      cuDeviceGetLuid, nvcuda.dll absent; and the v1 cuDeviceGetUuid on a driver without _v2;
#    - no segment known (Hyper-V's "Virtual PCI Bus Slot" location) while NVML sees 5 GPUs, one of
#      them at segment 0's 0:0.0: none (that GPU is another), and found_by says why;
#    - a driver update acted out between two discoveries of one watching process (the stand-in
#      driver's generation gives the adapters new LUIDs): the second names the new LUIDs, each
#      with its UUID by LUID, which an in-process cuInit (frozen at its first answer) could not;
#    - neither library: none, and discovery is otherwise unchanged.
# usage: devices_exe_test.sh dxshim-devices.exe fake-dxcore.dll fake-nvml.dll fake-nvcuda.dll
#        fake-cfgmgr32.dll fake-nvcuda-v1-uuid.dll fake-nvcuda-no-luid.dll
set -uo pipefail
usage="usage: devices_exe_test.sh dxshim-devices.exe fake-dxcore.dll fake-nvml.dll fake-nvcuda.dll fake-cfgmgr32.dll fake-nvcuda-v1-uuid.dll fake-nvcuda-no-luid.dll"
exe=${1:?$usage}
fake_dxcore=${2:?$usage}
fake_nvml=${3:?$usage}
fake_nvcuda=${4:?$usage}
fake_cfgmgr32=${5:?$usage}
fake_nvcuda_v1=${6:?$usage}
fake_nvcuda_no_luid=${7:?$usage}
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
# Non-ASCII file names (UTF-16 in the registry) come out as the same characters in UTF-8, never
# through the ANSI code page; a name with an unpaired surrogate (no UTF-8 form) is refused, named.
# Imported from a UTF-16 .reg file, whose hex(7) data are the exact UTF-16LE bytes (`wine reg add`
# would take the data through the shell's locale).
utf8_key='{4d36e968-e325-11ce-bfc1-08002be10318}\0002'
hex7() {  # hex7 STRING...: REG_MULTI_SZ data as a .reg file's hex(7) bytes (UTF-16LE)
  { for s in "$@"; do printf '%s\0' "$s"; done; printf '\0'; } | iconv -f UTF-8 -t UTF-16LE |
    od -An -v -tx1 | tr -s ' \n' ',' | sed 's/^,//; s/,$//'
}
{
  printf 'Windows Registry Editor Version 5.00\r\n\r\n'
  printf '[HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Class\\%s\\CopyToVmOverwrite]\r\n' "$utf8_key"
  printf '"nvcuda"=hex(7):%s\r\n' "$(hex7 'nvcuda_ñ€漢.dll' 'ñ€漢.dll')"
  printf '"漢字"=hex(7):%s\r\n' "$(hex7 'nvapi64.dll')"
  # "nv", U+D800 alone, ".dll": no UTF-8 form.
  printf '"lone"=hex(7):6e,00,76,00,00,d8,2e,00,64,00,6c,00,6c,00,00,00,00,00\r\n'
} | iconv -f UTF-8 -t UTF-16LE | { printf '\xff\xfe'; cat; } >"$work/utf8.reg"
"$wine" reg import "Z:$work/utf8.reg" >/dev/null 2>&1 || { echo "reg import utf8.reg failed"; exit 1; }
out=$("$wine" "$exe" runtime-files "$utf8_key" 2>"$work/stderr-utf8" | tr -d '\r')
code=$?
err=$(tr -d '\r' <"$work/stderr-utf8")
expected=$(printf 'system32 nvcuda_\xc3\xb1\xe2\x82\xac\xe6\xbc\xa2.dll => \xc3\xb1\xe2\x82\xac\xe6\xbc\xa2.dll\nsystem32 nvapi64.dll => nvapi64.dll')
check "non-ASCII registry names: the reader exits 0" $([ "$code" = 0 ]; echo $?)
check "non-ASCII file names come out as their UTF-8 bytes, and nothing else" \
  $([ "$(sort <<<"$out")" = "$(sort <<<"$expected")" ]; echo $?)
[ "$(sort <<<"$out")" = "$(sort <<<"$expected")" ] || diff <(sort <<<"$expected" | od -c) <(sort <<<"$out" | od -c)
check "a file name with an unpaired surrogate is refused, naming it" \
  $(grep -qxF "refused CopyToVmOverwrite\\lone: 'nv\\uD800.dll' holds an unpaired UTF-16 surrogate (U+D800 at character 2), which has no UTF-8 form" <<<"$err"; echo $?)
grep -qF 'lone' <<<"$err" || echo "$err"

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
  $(grep -qF 'skipped adapter 0x00000000_0x0000E0B2 (Microsoft Basic Render Driver): software adapter' <<<"$err"; echo $?)
check "the D3D12 graphics+compute adapter is listed once (lists merged by LUID)" \
  $([ "$(grep -c 'NVIDIA Tesla T4' <<<"$err")" = 1 ]; echo $?)
check "the compute-only adapter (LUID high part 1) is enumerated" \
  $(grep -qF 'adapter 0x00000001_0x0000F3C1 (AMD Instinct MI300X)' <<<"$err"; echo $?)
check "adapters without a PnP device (none under wine) are skipped, not invented" \
  $([ "$(grep -c 'no PnP device carries its GPU LUID' <<<"$err")" = 3 ] && grep -qF '(no GPU)' <<<"$out"; echo $?)
json=$("$wine" "$exe" list --output json 2>/dev/null | tr -d '\r')
check "--output json writes an inventory" $([ "$json" = '{"devices": [
]}' ]; echo $?)
"$wine" "$exe" list --output yaml >/dev/null 2>&1
check "an unknown --output is a usage error (exit 2)" $([ $? = 2 ]; echo $?)

# --- 3. NVIDIA UUIDs: CUDA by LUID, else NVML by PCI address, each asked in a child ---
list_before=$("$wine" "$exe" list --output json 2>/dev/null | tr -d '\r')
# The stand-in cfgmgr32.dll beside a copy of the program under another name, preferred for that
# name alone (wine's own processes, and the program itself, keep wine's).
mkdir -p "$work/bin"
cp "$exe" "$work/bin/dxshim-devices-with-nodes.exe"
cp "$fake_cfgmgr32" "$work/bin/cfgmgr32.dll"
"$wine" reg add 'HKCU\Software\Wine\AppDefaults\dxshim-devices-with-nodes.exe\DllOverrides' \
  /v cfgmgr32 /d native /f >/dev/null 2>&1 || { echo "reg add DllOverrides failed"; exit 1; }
devices="$work/bin/dxshim-devices-with-nodes.exe"
system32="$WINEPREFIX/drive_c/windows/system32"
loads="$WINEPREFIX/drive_c/fake-gpu-loads.log"
t4_at='0x00000000_0x0000D1A7 PCIROOT(0)#PCI(0100)#PCI(0000)'
a10_at='0x00000000_0x0000D1B8 PCIROOT(0)#PCI(0200)#PCI(0000)'
t4_uuid=GPU-7d1ac1e5-9d4b-4c2a-8f3e-c0ffee000001
a10_uuid=GPU-a10a10a1-0b2c-4d3e-9f40-c0ffee000002
both() {  # both FOUND-BY-T4 FOUND-BY-A10: the expected lines, each GPU with its own UUID
  printf '%s %s %s\n%s %s %s\n' "$t4_at" "$t4_uuid" "$1" "$a10_at" "$a10_uuid" "$2"
}
# One line per GPU of each discovery's JSON line: "LUID LOCATION-PATH UUID-or-- FOUND-BY".
gpu_lines() {
  python3 -c '
import json, sys
for line in sys.stdin:
    if line.strip():
        for g in json.loads(line)["gpus"]:
            print(g["luid"], g["location_path"], g["uuid"] or "-", g["found_by"])'
}
uuids() {  # uuids NAME [ENV=VALUE...]: lines in $work/NAME.txt, stderr in $work/NAME.log
  local name=$1
  shift
  # A discovery stuck past its children's deadlines is a failure here, not a hung test.
  env "$@" timeout 120 "$wine" "$devices" uuids --nvidia-deadline 5 >"$work/$name.out" 2>"$work/$name.err"
  local code=$?
  tr -d '\r' <"$work/$name.out" | gpu_lines >"$work/$name.txt"
  tr -d '\r' <"$work/$name.err" >"$work/$name.log"
  echo "--- uuids $name $*:"; cat "$work/$name.txt" "$work/$name.log"
  return $code
}
log_has() { grep -qF -- "$2" "$work/$1.log"; }

uuids none-at-all
code=$?
check "uuids with device nodes but neither CUDA nor NVML exits 0, no UUID, and says why" \
  $([ "$code" = 0 ] && [ "$(cut -d' ' -f1-4 "$work/none-at-all.txt")" = "$t4_at - none:
$a10_at - none:" ] && grep -qF 'none: CUDA does not name its LUID and NVML gave nothing (no NVIDIA UUIDs: nvml.dll could not be loaded from System32' "$work/none-at-all.txt"; echo $?)

cp "$fake_nvml" "$system32/nvml.dll"
cp "$fake_nvcuda" "$system32/nvcuda.dll"
rm -f "$loads"
uuids cuda
code=$?
check "CUDA lists the GPUs in the other order: each adapter its own UUID, by LUID" \
  $([ "$code" = 0 ] && [ "$(cat "$work/cuda.txt")" = "$(both cuda-luid cuda-luid)" ]; echo $?)
tr -d '\r' <"$loads" >"$work/loads.txt"
cat "$work/loads.txt"
check "nvcuda.dll was loaded by the child \`nvidia-uuids cuda\` only, nvml.dll not at all" \
  $([ "$(wc -l <"$work/loads.txt")" = 1 ] && grep -qE '^nvcuda.dll .*dxshim-devices-with-nodes.exe"? nvidia-uuids cuda$' "$work/loads.txt"; echo $?)
"$wine" "$devices" nvidia-uuids cuda 2>/dev/null | tr -d '\r' >"$work/child.json"
cat "$work/child.json"
check "the child prints CUDA's answer as JSON: LUID, UUID and the call that gave it" \
  $(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["cuda"]["devices"]
assert d == [{"ordinal": 0, "luid": "0x00000000_0x0000D1B8", "uuid": sys.argv[3], "uuid_call": "cuDeviceGetUuid_v2"},
             {"ordinal": 1, "luid": "0x00000000_0x0000D1A7", "uuid": sys.argv[2], "uuid_call": "cuDeviceGetUuid_v2"}], d
' "$work/child.json" "$t4_uuid" "$a10_uuid"; echo $?)

uuids visible CUDA_VISIBLE_DEVICES=$a10_uuid
code=$?
check "CUDA_VISIBLE_DEVICES in dxshim's environment hides no GPU from it" \
  $([ "$code" = 0 ] && [ "$(cat "$work/visible.txt")" = "$(both cuda-luid cuda-luid)" ] &&
    log_has visible 'debug: CUDA_VISIBLE_DEVICES was set in this process: removed before cuInit'; echo $?)

uuids tcc DXSHIM_FAKE_NVCUDA=tcc
code=$?
check "a device reading TCC=1 that has an adapter keeps its UUID by LUID (no TCC skip)" \
  $([ "$code" = 0 ] && [ "$(cat "$work/tcc.txt")" = "$(both cuda-luid cuda-luid)" ]; echo $?)

uuids zero-luid DXSHIM_FAKE_NVCUDA=zero-luid
check "a zero LUID from CUDA: that GPU by NVML, the other by LUID" \
  $([ "$(cat "$work/zero-luid.txt")" = "$(both cuda-luid nvml-pci)" ] &&
    log_has zero-luid 'debug: CUDA device 0: no LUID (cuDeviceGetLuid gave zeros)'; echo $?)

uuids luid-fails DXSHIM_FAKE_NVCUDA=luid-fails
check "cuDeviceGetLuid failing for one device: that GPU by NVML, and the error said" \
  $([ "$(cat "$work/luid-fails.txt")" = "$(both cuda-luid nvml-pci)" ] &&
    log_has luid-fails 'debug: CUDA device 0: no LUID (cuDeviceGetLuid: CUDA error 801)'; echo $?)

uuids same-luid DXSHIM_FAKE_NVCUDA=same-luid
check "two CUDA devices with one LUID name neither: both by NVML" \
  $([ "$(cat "$work/same-luid.txt")" = "$(both nvml-pci nvml-pci)" ] &&
    log_has same-luid 'debug: CUDA devices 0 and 1 give one LUID, 0x00000000_0x0000D1B8: it names none of them'; echo $?)

uuids init-fails DXSHIM_FAKE_NVCUDA=init-fails
code=$?
check "cuInit failing: NVML by PCI address with the segment, and the reason said" \
  $([ "$code" = 0 ] && [ "$(cat "$work/init-fails.txt")" = "$(both nvml-pci nvml-pci)" ] &&
    log_has init-fails 'debug: no CUDA: cuInit: CUDA error 100'; echo $?)

uuids hang DXSHIM_FAKE_NVCUDA=hang
code=$?
check "a child hanging in cuInit is killed at the deadline: no CUDA, NVML by PCI address" \
  $([ "$code" = 0 ] && [ "$(cat "$work/hang.txt")" = "$(both nvml-pci nvml-pci)" ] &&
    log_has hang 'warning: no CUDA: the child `nvidia-uuids cuda` did not answer within 5 s and was killed'; echo $?)
heartbeat="$WINEPREFIX/drive_c/fake-nvcuda-heartbeat"
beat=$(cat "$heartbeat" 2>/dev/null)
sleep 1
check "and the hung child is gone: its heartbeat ($beat) had started and has stopped" \
  $([ -n "$beat" ] && [ "$beat" -gt 1 ] && [ "$(cat "$heartbeat")" = "$beat" ]; echo $?)

uuids crash DXSHIM_FAKE_NVCUDA=crash
code=$?
check "a child crashing in cuInit: no CUDA with the reason, NVML by PCI address" \
  $([ "$code" = 0 ] && [ "$(cat "$work/crash.txt")" = "$(both nvml-pci nvml-pci)" ] &&
    log_has crash 'warning: no CUDA: the child `nvidia-uuids cuda` ended with exception 0xC0000005'; echo $?)

cp "$fake_nvcuda_v1" "$system32/nvcuda.dll"
uuids v1-uuid
check "a driver without cuDeviceGetUuid_v2: cuDeviceGetUuid, by LUID" \
  $([ "$(cat "$work/v1-uuid.txt")" = "$(both cuda-luid cuda-luid)" ] &&
    log_has v1-uuid 'debug: nvcuda.dll has no cuDeviceGetUuid_v2: cuDeviceGetUuid used'; echo $?)
check "and the child names the call" \
  $("$wine" "$devices" nvidia-uuids cuda 2>/dev/null | grep -qF '"uuid_call": "cuDeviceGetUuid"}'; echo $?)

cp "$fake_nvcuda_no_luid" "$system32/nvcuda.dll"
uuids no-luid-export
check "a driver without cuDeviceGetLuid (before CUDA 10): no CUDA, NVML by PCI address" \
  $([ "$(cat "$work/no-luid-export.txt")" = "$(both nvml-pci nvml-pci)" ] &&
    log_has no-luid-export 'debug: no CUDA: nvcuda.dll lacks cuDeviceGetLuid (a driver before CUDA 10)'; echo $?)

rm "$system32/nvcuda.dll"
uuids no-cuda
code=$?
check "nvcuda.dll absent: NVML by PCI address with the segment" \
  $([ "$code" = 0 ] && [ "$(cat "$work/no-cuda.txt")" = "$(both nvml-pci nvml-pci)" ] &&
    log_has no-cuda 'debug: no CUDA: nvcuda.dll could not be loaded from System32'; echo $?)

uuids no-segment DXSHIM_FAKE_CFGMGR32=no-segment
code=$?
why='none: CUDA does not name its LUID, Windows does not say its PCI segment, and NVML sees 5 NVIDIA GPUs: its GPU at 0:0.0 (read as segment 0) could be another'
check "no segment known and NVML sees 5 GPUs: neither takes NVML's GPU at 0:0.0, and found_by says why" \
  $([ "$code" = 0 ] && [ "$(cat "$work/no-segment.txt")" = "$t4_at - $why
$a10_at - $why" ]; echo $?)

# A driver update: the adapters come back with new LUIDs (the stand-in driver's generation), and
# the same discovery object, watching as serve does, must name them again with the new LUIDs.
cp "$fake_nvcuda" "$system32/nvcuda.dll"
rm -f "$loads"
env "$wine" "$devices" uuids --discoveries 2 --nvidia-deadline 20 >"$work/watch.out" 2>"$work/watch.err" &
watcher=$!
for _ in $(seq 1 120); do
  [ -s "$work/watch.out" ] && break
  sleep 0.5
done
first=$(tr -d '\r' <"$work/watch.out" | gpu_lines)
"$wine" reg add 'HKLM\Software\dxshim-test\FakeGpu' /v Generation /t REG_DWORD /d 1 /f >/dev/null 2>&1 ||
  { echo "reg add Generation failed"; exit 1; }
for _ in $(seq 1 120); do
  kill -0 "$watcher" 2>/dev/null || break
  sleep 0.5
done
kill "$watcher" 2>/dev/null
wait "$watcher"
watch_code=$?
all=$(tr -d '\r' <"$work/watch.out" | gpu_lines)
second=$(tail -n 2 <<<"$all")
echo "--- watching across a driver update, first discovery:"
echo "$first"
echo "--- second discovery:"
echo "$second"
tr -d '\r' <"$work/watch.err"
check "first discovery: each GPU its UUID by its LUID" \
  $([ "$first" = "$(both cuda-luid cuda-luid)" ]; echo $?)
check "after the driver update, in the same process: the new LUIDs, each with its UUID by LUID" \
  $([ "$watch_code" = 0 ] && [ "$(wc -l <<<"$all")" = 4 ] && [ "$second" = "0x00000000_0x0000D2A7 PCIROOT(0)#PCI(0100)#PCI(0000) $t4_uuid cuda-luid
0x00000000_0x0000D2B8 PCIROOT(0)#PCI(0200)#PCI(0000) $a10_uuid cuda-luid" ]; echo $?)
tr -d '\r' <"$loads" >"$work/watch-loads.txt"
cat "$work/watch-loads.txt"
check "the watching process never loaded nvcuda.dll: a child per discovery did" \
  $([ "$(grep -c '^nvcuda.dll .* nvidia-uuids cuda$' "$work/watch-loads.txt")" = 2 ] &&
    [ "$(wc -l <"$work/watch-loads.txt")" = 2 ]; echo $?)
"$wine" reg delete 'HKLM\Software\dxshim-test' /f >/dev/null 2>&1

rm "$system32/nvcuda.dll" "$system32/nvml.dll"
check "list without the stand-in device nodes is what it was (the adapters skipped, no UUID)" \
  $([ "$("$wine" "$exe" list --output json 2>/dev/null | tr -d '\r')" = "$list_before" ]; echo $?)
"$wine" "$exe" nvml-uuids 3b:0.0 >/dev/null 2>&1
check "the old nvml-uuids command is a usage error (exit 2)" $([ $? = 2 ]; echo $?)
"$wine" "$exe" nvidia-uuids nvml '3b:0.0;calc' >/dev/null 2>&1
check "the child refuses what is not a PCI bus id (exit 2)" $([ $? = 2 ]; echo $?)

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
