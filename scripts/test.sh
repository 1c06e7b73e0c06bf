#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: dependencies, the Windows build (dxshim.exe,
# cross-built with mingw; its libraries are built from Debian's source packages once and cached in
# /var/cache/dxshim) and the Linux build side by side, then every test (unit tests, integration
# tests against real containerd instances, the Windows programs under wine) through ctest, one per
# core, longest first; a wine test that fails gets one more run, alone (below).
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
start=$SECONDS
scripts/build.sh
phase_done "Linux build (dxshim, tests, fuzz targets, benchmarks)" "$start"
wait "$windows" || { windows=; echo "the Windows build failed (lines marked windows| above)" >&2; exit 1; }
windows=
phase_done "the two builds side by side" "$builds"
cd build
sanitizers() {
  cd ..
  scripts/test-sanitizers.sh
}
start=$SECONDS
if ctest --output-on-failure --timeout 900 -j "$(nproc)"; then
  phase_done "ctest" "$start"
  sanitizers
  exit 0
fi
phase_done "ctest" "$start"
# A test that runs the Windows programs under wine (label windows) and failed is run once more,
# alone, and must pass then; any other failure fails the suite at once. Wine on a loaded 2-core
# machine, beside another wine test, now and then fails a program that works alone (a
# `dxshim.exe rewrite` that exits 1 having written nothing; a dxshim.exe whose TCP endpoints stop
# answering mid-test): the first run's output above keeps what failed, with dxshim.exe's log.
failed=$(cut -d: -f2 Testing/Temporary/LastTestsFailed.log)
[ -n "$failed" ] || { echo "ctest failed, and no test is named as failed: the suite fails" >&2; exit 1; }
wine_tests=$(ctest -N -L windows | sed -n 's/^ *Test *#[0-9]*: //p')
for test in $failed; do
  if ! grep -qxF "$test" <<<"$wine_tests"; then
    echo "$test failed and is not a wine test: the suite fails" >&2
    exit 1
  fi
done
echo "the wine test(s) that failed, run once more alone:" $failed
start=$SECONDS
ctest --output-on-failure --timeout 900 --rerun-failed
phase_done "ctest: the wine tests that failed, again ($(echo $failed))" "$start"
sanitizers
