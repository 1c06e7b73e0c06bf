#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: dependencies, build, then every test
# (unit tests and integration tests against real containerd instances) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 -j 2
