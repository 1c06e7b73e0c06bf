#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: dependencies, the Windows build (dxshim.exe,
# cross-built with mingw; its libraries are built from Debian's source packages once and cached in
# /var/cache/dxshim) and the Linux build side by side, then every test (unit tests, integration
# tests against real containerd instances, the Windows programs under wine) through ctest, one per
# core, longest first.
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
ctest --output-on-failure --timeout 900 -j "$(nproc)"
