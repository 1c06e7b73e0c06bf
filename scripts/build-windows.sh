#!/usr/bin/env bash
# Builds the Windows x64 dxshim.exe and dxshim-devices.exe on Linux: the cross-built libraries
# (scripts/build-windows-deps.sh, cached), then the project's own CMake with the `windows-mingw`
# preset (same sources and _WIN32 branches as the MSVC build, static, warnings as errors), into
# build-windows-mingw/. Prints the two executables' paths.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phase_log.sh
start=$SECONDS
# Its output goes on to stderr as it comes (not `tee /dev/stderr`: reopening a log file that
# stderr points to truncates it); its last line is the prefix.
prefix=$(scripts/build-windows-deps.sh | {
  last=
  while IFS= read -r line; do
    echo "$line" >&2
    last=$line
  done
  echo "$last"
})
export DXSHIM_MINGW_PREFIX="$prefix"
phase_done "Windows dependencies (built, or the cache's)" "$start"
start=$SECONDS
# The gRPC source those libraries were built from, beside them in the cache: the handoff of a
# connection to gRPC on Windows needs its internal headers (shim/socket_bridge/grpc_handoff.h).
grpc_dir=$(sed -n 's/^ *"grpc=[^ ]* \(grpc-[^"]*\)"$/\1/p' scripts/build-windows-deps.sh)
export DXSHIM_GRPC_SOURCE="$(dirname "$prefix")/src/$grpc_dir"
# A new prefix (other versions, script or patches): configure afresh, or CMake keeps finding the
# old prefix's libraries in its cache.
stamp=build-windows-mingw/.dxshim-mingw-prefix
fresh=()
[ "$(cat "$stamp" 2>/dev/null)" = "$prefix" ] || fresh=(--fresh)
cmake --preset windows-mingw "${fresh[@]}" >/dev/null
echo "$prefix" >"$stamp"
cmake --build --preset windows-mingw -j "$(nproc)" --target dxshim dxshim-devices
phase_done "Windows build (dxshim.exe, dxshim-devices.exe)" "$start"
ls -1 "$PWD/build-windows-mingw/shim/dxshim.exe" "$PWD/build-windows-mingw/devices/dxshim-devices.exe"
