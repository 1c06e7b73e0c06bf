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
#
# With DXSHIM_WINE_TEMPLATE set (ctest sets it for every test: tests/CMakeLists.txt), the prefix
# is a copy of one made so once per build and per wine version and WINEDLLOVERRIDES
# (DXSHIM_WINE_TEMPLATE-<key>, made by the first test that needs it while the others wait on its
# lock): a wineboot costs seconds of CPU, a copy a fraction of one, and each test still has a
# prefix of its own.
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
# boot DIR: fills the prefix DIR with wineboot, retried as said above; exits the script on failure.
boot() {
  local attempt out
  for attempt in 1 2 3; do
    out=$(WINEPREFIX=$1 timeout 180 "$wine" wineboot --init 2>&1)
    [ -f "$1/drive_c/windows/system32/kernel32.dll" ] && return 0
    echo "wine_prefix.sh: attempt $attempt left $1 without system32\\kernel32.dll:" >&2
    printf '%s\n' "$out" >&2
    WINEPREFIX=$1 "$wineserver" -k 2>/dev/null
    WINEPREFIX=$1 "$wineserver" -w 2>/dev/null
    rm -rf "$1"
  done
  echo "wine_prefix.sh: no usable Wine prefix at $1 after 3 attempts" >&2
  exit 1
}
if [ -z "${DXSHIM_WINE_TEMPLATE:-}" ]; then
  boot "$prefix"
  exit 0
fi
key=$( ("$wine" --version; echo "${WINEDLLOVERRIDES:-}") | sha256sum | cut -c1-12)
template=$DXSHIM_WINE_TEMPLATE-$key
mkdir -p "$(dirname "$template")"
(
  flock 9
  [ -f "$template/.complete" ] && exit 0
  rm -rf "$template"
  boot "$template"
  # Its wineserver writes the registry out when it exits: only then is the prefix whole.
  WINEPREFIX=$template "$wineserver" -w 2>/dev/null
  touch "$template/.complete"
) 9>"$template.lock" || exit 1
mkdir -p "$prefix"
cp -a "$template/." "$prefix/" && rm -f "$prefix/.complete" &&
  [ -f "$prefix/drive_c/windows/system32/kernel32.dll" ] && exit 0
echo "wine_prefix.sh: could not copy the prefix $template to $prefix" >&2
exit 1
