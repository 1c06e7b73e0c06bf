#!/usr/bin/env bash
# Installs what building, testing and the demo need, from Debian 12's archive (run as root).
# Runs `apt-get update` only when a package is missing.
set -euo pipefail
packages=(
  g++ cmake ninja-build pkg-config libc6-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libboost-program-options-dev libspdlog-dev libyaml-cpp-dev libgtest-dev libbenchmark-dev
  containerd runc busybox-static
  g++-mingw-w64-x86-64-posix wine64 clang libclang-rt-14-dev
  systemd
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
