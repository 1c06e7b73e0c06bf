#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: dependencies, the Windows build (dxshim.exe,
# cross-built with mingw; its libraries are built from Debian's source packages once and cached in
# /var/cache/dxshim) and the Linux build side by side, then every test (unit tests, integration
# tests against real containerd instances, the Windows programs under wine) through ctest, one per
# core, longest first; a wine test that fails gets one more run, alone (below).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The two builds share nothing until the tests run, and each leaves cores idle at times (CMake
# configuring a dependency, linking): run together, they fill each other's gaps. The Windows
# build's lines carry a "windows|" prefix; it runs in its own process group, stopped as a whole if
# the Linux build fails.
setsid bash -c 'set -o pipefail; scripts/build-windows.sh 2>&1 | sed -u "s/^/windows| /"' &
windows=$!
trap 'kill -- "-$windows" 2>/dev/null || true' EXIT
scripts/build.sh
wait "$windows" || { echo "the Windows build failed (lines marked windows| above)" >&2; exit 1; }
trap - EXIT
cd build
sanitizers() {
  cd ..
  local start=$SECONDS
  scripts/test-sanitizers.sh
  echo "the sanitizer phase (scripts/test-sanitizers.sh) took $((SECONDS - start)) s"
}
if ctest --output-on-failure --timeout 900 -j "$(nproc)"; then sanitizers; exit 0; fi
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
ctest --output-on-failure --timeout 900 --rerun-failed
sanitizers
