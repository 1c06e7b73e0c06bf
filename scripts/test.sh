#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: dependencies; the Windows build (dxshim.exe,
# cross-built with mingw; its libraries are built from Debian's source packages once and cached in
# /var/cache/dxshim) and the Linux build side by side; then every test, once, through ctest, one
# per core, longest first. The Linux build is the test suite's only one: clang 14 with
# AddressSanitizer and UndefinedBehaviorSanitizer (build-asan/, scripts/test-sanitizers.sh), so
# the unit tests, the end-to-end tests against real containerd instances, the Windows programs
# under wine and the fuzz passes all run with the sanitizers watching the Linux processes. Then
# ThreadSanitizer's tree for the concurrent parts. Each phase's wall time is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phase_log.sh
# Each phase's wall time, printed at the end however the run ends.
DXSHIM_PHASE_LOG=$(mktemp)
export DXSHIM_PHASE_LOG
windows=
finish() {
  [ -z "$windows" ] || kill -- "-$windows" 2>/dev/null || true
  phase_table "$SECONDS"
  rm -f "$DXSHIM_PHASE_LOG"
}
trap finish EXIT
start=$SECONDS
scripts/install-deps.sh
phase_done "dependencies (apt-get)" "$start"
# The two builds share nothing until the tests run, and each leaves cores idle at times (CMake
# configuring a dependency, linking): run together, they fill each other's gaps. The Windows
# build's lines carry a "windows|" prefix; it runs in its own process group, stopped as a whole if
# the Linux build fails.
builds=$SECONDS
setsid bash -c 'set -o pipefail; scripts/build-windows.sh 2>&1 | sed -u "s/^/windows| /"' &
windows=$!
scripts/test-sanitizers.sh --build-only asan
# Every test runs once; a failure fails the suite, and no test is run again. (The wine failure a
# rerun used to hide, a process start failing with 1359, came from a missing wine64-preloader;
# tests/README.md.) Those that need no Windows build run while it finishes (niced: the Windows
# build gates the longest tests), the wine tests once it is done, then ThreadSanitizer's.
status=0
nice -n 5 scripts/test-sanitizers.sh --labels-except windows asan || status=1
wait "$windows" || { windows=; echo "the Windows build failed (lines marked windows| above)" >&2; exit 1; }
windows=
phase_done "both builds, and the tests that need no Windows build" "$builds"
scripts/test-sanitizers.sh --labels windows asan || status=1
scripts/test-sanitizers.sh tsan || status=1
exit "$status"
