#!/usr/bin/env bash
# The real dxshim.exe as a Windows service under wine's service control manager, on the Windows
# example configuration (deploy/examples/dxshim-windows.yaml) with its own pipe name and log path:
# dxshim-service-driver.exe (tests/support/dxshim_service_driver.cpp) checks RUNNING only once the
# pipe is served and STOP -> STOPPED with exit code 0; this script checks the log it wrote and
# that it was rotated under the configured path (the log file is filled to its size limit
# beforehand, as a long-running node's would be). A broken configuration must reach the service
# manager as dxshim's exit code. DXCore is the test stand-in (no GPU in wine).
# usage: dxshim_service_test.sh SOURCE_DIR dxshim.exe dxshim-service-driver.exe fake-dxcore.dll
set -uo pipefail
source_dir=${1:?usage: dxshim_service_test.sh SOURCE_DIR dxshim.exe driver.exe fake-dxcore.dll}
exe=${2:?}
driver=${3:?}
fake_dxcore=${4:?}
source "$(dirname "$0")/../support/wine_test_env.sh"
need_exe "$exe"
winpath() { printf 'Z:%s' "${1//\//\\}"; }

pipe="dxshim-service-test-$$"
mkdir -p "$work/log"
log="$work/log/dxshim.log"
winlog=$(winpath "$log")
sed -e "s|^listen: .*|listen: npipe://./pipe/$pipe|" \
    -e "s|^log-file: .*|log-file: '${winlog//\\/\\\\}'|" \
    -e "s|^metrics-listen: .*|metrics-listen: 127.0.0.1:0|" \
    "$source_dir/deploy/examples/dxshim-windows.yaml" >"$work/dxshim.yaml"
printf 'log-file-max-size: 64Ki\nlog-file-count: 2\n' >>"$work/dxshim.yaml"
# The log as a node's would be after a while: at its size limit, so the service's lines rotate it.
for i in $(seq 1 1100); do echo "earlier run, line $i: ............................................"; done >"$log"
# Wine settled first: right after wineboot (wine_test_env.sh made the prefix) its service
# manager is still starting its own services and refuses other starts
# (ERROR_SERVICE_DATABASE_LOCKED); the wineserver exits once they are done.
"$(dirname "$wine")/wineserver" -w
cp "$fake_dxcore" "$WINEPREFIX/drive_c/windows/system32/dxcore.dll"

{ head -n 5 "$work/dxshim.yaml"; echo "max-containers-per-gpu: 2"; } >"$work/broken.yaml"
timeout 240 "$wine" "$driver" "$exe" "$work/dxshim.yaml" "$pipe" "$work/broken.yaml" |
  sed -u 's/\r$//'
check "the service driver's checks" "${PIPESTATUS[0]}"

current=$(cat "$log" 2>/dev/null)
check "the service wrote its log at the configured path" \
  $(grep -qF "listening on npipe://./pipe/$pipe" <<<"$current"; echo $?) "$current"
check "as a service it served its metrics endpoint too" \
  $(grep -qE "metrics: serving http://127\.0\.0\.1:[0-9]+/metrics" <<<"$current"; echo $?) "$current"
check "and logged its stop by the service manager and its end" \
  $(grep -qF "stopping: service stop" <<<"$current" && grep -qF "info stopped" <<<"$current"; echo $?) "$current"
check "the full log was rotated to dxshim.1.log" \
  $(grep -qF "earlier run, line 1100:" "$work/log/dxshim.1.log" 2>/dev/null; echo $?) "$(ls -l "$work/log")"
check "and the current log holds only this run" \
  $(! grep -qF "earlier run" <<<"$current" && [ "$(stat -c %s "$log")" -lt 65536 ]; echo $?) "$(ls -l "$work/log")"
[ "$failures" = 0 ] && echo "all passed"
exit $((failures > 0))
