#!/usr/bin/env bash
# Cross-builds, with Debian 12's mingw-w64 (posix threads), the libraries dxshim.exe links, from
# Debian 12's own source packages at the versions the Linux build uses: zlib, c-ares, abseil,
# protobuf, gRPC, yaml-cpp, fmt, spdlog, Boost.Program_options, and prometheus-cpp's core for the
# metrics endpoint. Nothing comes from anywhere but Debian's archive, nothing is
# vendored in the repository. Only what dxshim.exe links is built (no tools, tests or examples):
# of gRPC, its unsecure C++ library (scripts/grpc-unsecure/), since dxshim uses no TLS, so neither
# OpenSSL nor gRPC's secure core, nor RE2 that only that core uses, is built.
#
# The result is a static prefix under /var/cache/dxshim/, keyed by the versions and by the contents
# of this script, the toolchain file, the patches and scripts/grpc-unsecure/, so a second run
# reuses it. Prints the prefix on its last line (and only that with --prefix). Run as root
# (apt-get).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
toolchain="$here/mingw-w64-toolchain.cmake"
cache=/var/cache/dxshim
jobs=$(nproc)

# source package=version, and the directory apt-get source unpacks it into.
sources=(
  "zlib=1:1.2.13.dfsg-1 zlib-1.2.13.dfsg"
  "c-ares=1.18.1-3 c-ares-1.18.1"
  "abseil=20220623.1-1+deb12u2 abseil-20220623.1"
  "protobuf=3.21.12-3+deb12u1 protobuf-3.21.12"
  "grpc=1.51.1-3 grpc-1.51.1"
  "yaml-cpp=0.7.0+dfsg-8 yaml-cpp-0.7.0+dfsg"
  "fmtlib=9.1.0+ds1-2 fmtlib-9.1.0+ds1"
  "spdlog=1:1.10.0+ds-0.4 spdlog-1.10.0+ds"
  "boost1.74=1.74.0+ds1-21 boost1.74-1.74.0+ds1"
  "prometheus-cpp=1.0.1-1 prometheus-cpp-1.0.1"
)

patches=("$here"/patches/*.patch)
# The key covers every input of the build: versions, this script, the toolchain file, the patches
# and the gRPC subset's CMake project.
grpc_subset="$here/grpc-unsecure"
key=$( (printf '%s\n' "${sources[@]}"; cat "$0" "$toolchain" "${patches[@]}" "$grpc_subset"/*) |
  sha256sum | cut -c1-16)
prefix="$cache/mingw-$key"
# --prefix: only print the prefix this run would build or reuse (tests/windows/deps_key_test.sh).
if [ "${1:-}" = --prefix ]; then
  echo "$prefix"
  exit 0
fi
if [ -f "$prefix/.complete" ]; then
  echo "Windows dependencies: cached"
  echo "$prefix"
  exit 0
fi

echo "Windows dependencies (Debian 12 source packages, cross-built with mingw-w64):"
printf '  %s\n' "${sources[@]%% *}"

# Source packages come through the deb-src entry and the tools scripts/install-deps.sh installs.
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
  echo "no deb-src entry for apt-get source: run scripts/install-deps.sh first" >&2
  exit 1
fi

mkdir -p "$cache/src"
for entry in "${sources[@]}"; do
  read -r package dir <<<"$entry"
  [ -d "$cache/src/$dir" ] && continue
  echo "fetching $package"
  # --only-source: the names are source packages; a boost tarball of 60 MB is unpacked in full.
  (cd "$cache/src" && apt-get source -qq --only-source "$package" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  [ -d "$cache/src/$dir" ] || { echo "apt-get source $package did not give $dir" >&2; exit 1; }
done

# A run cut short resumes: each library that was installed has its stamp in the prefix.
mkdir -p "$prefix/include" "$prefix/lib" "$cache/build"
log() { echo "[$(date +%T)] $*"; }
built() { [ -f "$prefix/.built-$1" ]; }
stamp() { touch "$prefix/.built-$1"; rm -rf "$cache/build/$1"; }

# CMake packages: SRC (relative to src/, or absolute), then cache variables.
cmake_package() {
  local name=$1 src=$2
  shift 2
  built "$name" && return 0
  log "building $name"
  [[ $src == /* ]] || src="$cache/src/$src"
  cmake -S "$src" -B "$cache/build/$name" -G Ninja -Wno-dev \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DDXSHIM_MINGW_PREFIX="$prefix" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$prefix" \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=OFF -DCMAKE_CXX_STANDARD=17 \
    "$@" >"$cache/build/$name.log" 2>&1 || { tail -40 "$cache/build/$name.log"; exit 1; }
  cmake --build "$cache/build/$name" -j "$jobs" >>"$cache/build/$name.log" 2>&1 ||
    { tail -60 "$cache/build/$name.log"; exit 1; }
  cmake --install "$cache/build/$name" >>"$cache/build/$name.log" 2>&1 ||
    { tail -40 "$cache/build/$name.log"; exit 1; }
  stamp "$name"
}

built zlib || {
log "building zlib"
(
  # The dfsg tarball has no win32/ makefile: the library is its 15 C files.
  rm -rf "$cache/build/zlib" && mkdir -p "$cache/build/zlib" &&
    cd "$cache/build/zlib" &&
    for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast \
      inflate inftrees trees uncompr zutil; do
      x86_64-w64-mingw32-gcc-posix -O2 -c "$cache/src/zlib-1.2.13.dfsg/$f.c" -o "$f.o" || exit 1
    done &&
    x86_64-w64-mingw32-gcc-ar-posix rcs libz.a ./*.o &&
    cp "$cache/src/zlib-1.2.13.dfsg"/{zlib.h,zconf.h} "$prefix/include/" &&
    cp libz.a "$prefix/lib/"
) >"$cache/build/zlib.log" 2>&1 || { tail -20 "$cache/build/zlib.log"; exit 1; }
stamp zlib
}

# c-ares 1.18.1 uses INADDRSZ, which only glibc's <arpa/nameser_compat.h> defines (the size of an
# IPv4 address, NS_INADDRSZ); on Windows it is defined here instead of patching the source.
cmake_package c-ares c-ares-1.18.1 -DCARES_STATIC=ON -DCARES_SHARED=OFF -DCARES_BUILD_TOOLS=OFF \
  -DCARES_BUILD_TESTS=OFF -DCMAKE_C_FLAGS=-DINADDRSZ=4
cmake_package abseil abseil-20220623.1 -DABSL_PROPAGATE_CXX_STD=ON -DBUILD_TESTING=OFF \
  -DABSL_ENABLE_INSTALL=ON
cmake_package protobuf protobuf-3.21.12 -Dprotobuf_BUILD_TESTS=OFF \
  -Dprotobuf_BUILD_PROTOC_BINARIES=OFF -Dprotobuf_BUILD_LIBPROTOC=OFF -Dprotobuf_WITH_ZLIB=OFF \
  -Dprotobuf_BUILD_EXAMPLES=OFF
plugins=()
# Our fix to gRPC's Windows TCP writes (see the patch's header), once: a patch that reverses
# cleanly is in already.
grpc_patch="$here/patches/grpc-1.51.1-windows-short-send.patch"
if ! patch -d "$cache/src/grpc-1.51.1" -p1 -R --dry-run -s -f <"$grpc_patch" >/dev/null 2>&1; then
  patch -d "$cache/src/grpc-1.51.1" -p1 -s -f <"$grpc_patch"
fi
for p in CPP CSHARP NODE OBJECTIVE_C PHP PYTHON RUBY; do plugins+=("-DgRPC_BUILD_GRPC_${p}_PLUGIN=OFF"); done
# Only what dxshim.exe links: grpc++_unsecure and its libraries (see scripts/grpc-unsecure/).
cmake_package grpc "$grpc_subset" -DDXSHIM_GRPC_SOURCE="$cache/src/grpc-1.51.1" \
  -DgRPC_BUILD_TESTS=OFF -DgRPC_BUILD_CODEGEN=OFF -DgRPC_BUILD_CSHARP_EXT=OFF "${plugins[@]}" \
  -DgRPC_ZLIB_PROVIDER=package -DgRPC_CARES_PROVIDER=package -DgRPC_PROTOBUF_PROVIDER=package \
  -DgRPC_PROTOBUF_PACKAGE_TYPE=CONFIG -DgRPC_ABSL_PROVIDER=package -DZLIB_ROOT="$prefix"
cmake_package yaml-cpp yaml-cpp-0.7.0+dfsg -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF \
  -DYAML_CPP_BUILD_CONTRIB=OFF -DYAML_BUILD_SHARED_LIBS=OFF
cmake_package fmt fmtlib-9.1.0+ds1 -DFMT_TEST=OFF -DFMT_DOC=OFF
# As Debian builds it: a compiled spdlog on the external fmt.
cmake_package spdlog spdlog-1.10.0+ds -DSPDLOG_FMT_EXTERNAL=ON -DSPDLOG_BUILD_EXAMPLE=OFF \
  -DSPDLOG_BUILD_TESTS=OFF -DSPDLOG_BUILD_BENCH=OFF

built boost || {
log "building boost program_options"
(
  boost="$cache/src/boost1.74-1.74.0+ds1" &&
    rm -rf "$cache/build/boost" && mkdir -p "$cache/build/boost" && cd "$cache/build/boost" &&
    # The source package is modular: each library's headers live in libs/<lib>/include (what
    # `b2 headers` would link together). Merge them into the prefix as hard links (no copy of
    # 160 MB): Program_options' headers pull in a large part of Boost.
    mkdir -p "$prefix/include/boost" &&
    for inc in "$boost"/libs/*/include/boost "$boost"/libs/numeric/*/include/boost; do
      cp -rlf "$inc/." "$prefix/include/boost/" || exit 1
    done &&
    for f in "$boost"/libs/program_options/src/*.cpp; do
      x86_64-w64-mingw32-g++-posix -std=c++17 -O2 -DBOOST_ALL_NO_LIB -I"$prefix/include" \
        -c "$f" -o "$(basename "$f" .cpp).o" || exit 1
    done &&
    x86_64-w64-mingw32-gcc-ar-posix rcs libboost_program_options.a ./*.o &&
    cp libboost_program_options.a "$prefix/lib/"
) >"$cache/build/boost.log" 2>&1 || { tail -30 "$cache/build/boost.log"; exit 1; }
stamp boost
}

# The metrics endpoint's metrics and text format: prometheus-cpp's core (dxshim serves HTTP itself).
cmake_package prometheus-cpp prometheus-cpp-1.0.1 -DENABLE_PULL=OFF -DENABLE_PUSH=OFF \
  -DENABLE_COMPRESSION=OFF -DENABLE_TESTING=OFF -DUSE_THIRDPARTY_LIBRARIES=OFF \
  -DGENERATE_PKGCONFIG=OFF -DOVERRIDE_CXX_STANDARD_FLAGS=OFF

touch "$prefix/.complete"
log "done: $(du -sh "$prefix" | cut -f1) in $prefix"
echo "$prefix"
