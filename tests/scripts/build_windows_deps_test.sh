#!/usr/bin/env bash
# scripts/build-windows-deps.sh keys its cached prefix (/var/cache/dxshim/mingw-<key>) by every input
# of the Windows libraries' build: a change to a pinned version, to the script itself (its build
# options), to the toolchain file, to a patch or to the gRPC subset's CMake project gives a new
# prefix, and undoing it gives the old one back. Works on a copy of scripts/ (builds nothing).
# usage: deps_key_test.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: deps_key_test.sh SOURCE_DIR}
work=$(mktemp -d /tmp/dxshim-deps-key-XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check NAME CONDITION-RESULT [DETAIL]
  if [ "$2" = 0 ]; then echo "ok: $1"; else failures=$((failures + 1)); echo "FAILED: $1"; [ -n "${3:-}" ] && printf '%s\n' "$3"; fi
}
cp -r "$src/scripts" "$work/scripts"
prefix() { bash "$work/scripts/build-windows-deps.sh" --prefix; }

base=$(prefix)
check "--prefix prints a keyed prefix under /var/cache/dxshim ($base)" \
  $([[ "$base" =~ ^/var/cache/dxshim/mingw-[0-9a-f]{16}$ ]]; echo $?)
check "the key is the same on a second run" $([ "$(prefix)" = "$base" ]; echo $?)
check "the copy's key is the repository's" \
  $([ "$(bash "$src/scripts/build-windows-deps.sh" --prefix)" = "$base" ]; echo $?)

# Each input, changed then restored: the prefix follows.
inputs=("$work/scripts/build-windows-deps.sh" "$work/scripts/mingw-w64-toolchain.cmake"
  "$work"/scripts/patches/*.patch "$work"/scripts/grpc-unsecure/*)
for f in "${inputs[@]}"; do
  name=${f#"$work/"}
  cp "$f" "$work/saved"
  echo "# changed" >>"$f"
  changed=$(prefix)
  cp "$work/saved" "$f"
  check "changing $name changes the prefix" $([ "$changed" != "$base" ]; echo $?) "$changed"
  check "restoring $name restores it" $([ "$(prefix)" = "$base" ]; echo $?)
done
# A dependency's version (the gRPC source package's Debian revision here).
sed -i 's/^  "grpc=1.51.1-3 /  "grpc=1.51.1-4 /' "$work/scripts/build-windows-deps.sh"
check "the version was edited" $(grep -q '"grpc=1.51.1-4 ' "$work/scripts/build-windows-deps.sh"; echo $?)
check "a new gRPC version changes the prefix" $([ "$(prefix)" != "$base" ]; echo $?)
# A build option (one of gRPC's cache variables).
cp "$src/scripts/build-windows-deps.sh" "$work/scripts/build-windows-deps.sh"
sed -i 's/-DgRPC_BUILD_CODEGEN=OFF/-DgRPC_BUILD_CODEGEN=ON/' "$work/scripts/build-windows-deps.sh"
check "the option was edited" $(grep -q 'gRPC_BUILD_CODEGEN=ON' "$work/scripts/build-windows-deps.sh"; echo $?)
check "a changed build option changes the prefix" $([ "$(prefix)" != "$base" ]; echo $?)
[ "$failures" = 0 ] && echo "all passed"
exit $((failures > 0))
