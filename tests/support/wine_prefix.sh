#!/usr/bin/env bash
# Makes the Wine prefix PREFIX ready for a test (wine's own DLLs in its system32) and exits 0, or
# says why not and exits 1. Every test that runs a program under wine makes its private prefix
# here first: run_under_wine.sh, wine_test_env.sh, devices_exe_test.sh, tests/support/wine_dxshim.
#
# Why: wine 8 fills a new prefix with wineboot on its first start. In a loaded CI run that once
# ended within a second having filled nothing, and the test's program then failed to start with
# "could not load kernel32.dll, status c0000135" before any of its code ran. A prefix left
# without kernel32.dll is removed and made again, at most 3 times; nothing the test checks is
# ever retried here.
# usage: wine_prefix.sh PREFIX  (WINEDEBUG and WINEDLLOVERRIDES as the caller exported them)
set -uo pipefail
prefix=${1:?usage: wine_prefix.sh PREFIX}
wine=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
wineserver="$(dirname "$wine")/wineserver"
if [ ! -x "$wine" ]; then
  echo "wine_prefix.sh: wine is not installed (apt-get install wine64)" >&2
  exit 1
fi
# wine64 without its preloader starts a process that now and then dies before it runs, when the
# heap lands on the page Windows keeps at 0x7ffe0000 (CreateProcess then fails with 1359): a
# failure that would look like a defect of whatever the test started.
preloader="$(dirname "$(readlink -f "$wine")")/wine64-preloader"
if [ ! -x "$preloader" ]; then
  echo "wine_prefix.sh: $preloader is missing (apt-get install wine64-preloader," \
    "or run scripts/install-deps.sh): without it wine fails to start a process now and then" >&2
  exit 1
fi
for attempt in 1 2 3; do
  out=$(WINEPREFIX=$prefix timeout 180 "$wine" wineboot --init 2>&1)
  [ -f "$prefix/drive_c/windows/system32/kernel32.dll" ] && exit 0
  echo "wine_prefix.sh: attempt $attempt left $prefix without system32\\kernel32.dll:" >&2
  printf '%s\n' "$out" >&2
  WINEPREFIX=$prefix "$wineserver" -k 2>/dev/null
  WINEPREFIX=$prefix "$wineserver" -w 2>/dev/null
  rm -rf "$prefix"
done
echo "wine_prefix.sh: no usable Wine prefix at $prefix after 3 attempts" >&2
exit 1
