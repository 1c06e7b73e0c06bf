#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: dependencies, the Linux build, the Windows
# build (dxshim.exe, cross-built with mingw; its libraries are built from Debian's source
# packages once and cached in /var/cache/dxshim), then every test (unit tests, integration tests
# against real containerd instances, the Windows programs under wine) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build-windows.sh
scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 -j 2
