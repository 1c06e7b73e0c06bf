#!/usr/bin/env bash
# Configures and builds everything (dxshim, tests, benchmarks) into build/, with the `linux`
# preset of CMakePresets.json (Windows: see deploy/windows/BUILD.md).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset linux >/dev/null
cmake --build --preset linux -j "$(nproc)"
