#!/usr/bin/env bash
# scripts/package-windows.sh: the release zip holds exactly the files deploy/windows/install.ps1
# expects beside itself, the very binaries the windows-mingw build made and the Windows example
# configuration, carries no TLS library, and stays under 40 MiB.
# usage: package_test.sh SOURCE_DIR VERSION
set -uo pipefail
src=${1:?usage: package_test.sh SOURCE_DIR VERSION}
version=${2:?usage: package_test.sh SOURCE_DIR VERSION}
work=$(mktemp -d /tmp/dxshim-package-XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check NAME CONDITION-RESULT [DETAIL]
  if [ "$2" = 0 ]; then echo "ok: $1"; else failures=$((failures + 1)); echo "FAILED: $1"; [ -n "${3:-}" ] && printf '%s\n' "$3"; fi
}

line=$("$src/scripts/package-windows.sh" "$work/dist" 2>"$work/build.log" | tail -n 1)
check "package-windows.sh succeeds" $? "$(tail -20 "$work/build.log")"
echo "$line"
zip="$work/dist/dxshim-$version-windows-amd64.zip"
check "it names the zip, its size and its SHA-256" \
  $([[ "$line" == "$zip "*" bytes "*"sha256 $(sha256sum "$zip" | cut -d' ' -f1)" ]]; echo $?) "$line"
mkdir "$work/unpacked"
python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print("\n".join(z.namelist())); z.extractall(sys.argv[2])' \
  "$zip" "$work/unpacked" >"$work/names"
check "it holds exactly dxshim.exe, dxshim-devices.exe, install.ps1, dxshim.yaml, README.txt" \
  $([ "$(sort "$work/names" | tr '\n' ' ')" = "README.txt dxshim-devices.exe dxshim.exe dxshim.yaml install.ps1 " ]; echo $?) \
  "$(cat "$work/names")"
# Every file install.ps1 takes from beside itself (-SourceDir or $PSScriptRoot) is there.
wanted=$(grep -oE "Join-Path \\\$(SourceDir|PSScriptRoot) '[^']+'" "$src/deploy/windows/install.ps1" |
  sed -E "s/.*'([^']+)'/\1/" | sort -u)
missing=$(for f in $wanted; do [ -f "$work/unpacked/$f" ] || echo "$f"; done)
check "install.ps1 finds what it needs beside itself ($(echo $wanted))" \
  $([ -n "$wanted" ] && [ -z "$missing" ]; echo $?) "missing: $missing"
check "the binaries are the windows-mingw build's" \
  $(cmp -s "$work/unpacked/dxshim.exe" "$src/build-windows-mingw/shim/dxshim.exe" &&
    cmp -s "$work/unpacked/dxshim-devices.exe" "$src/build-windows-mingw/devices/dxshim-devices.exe"; echo $?)
check "dxshim.yaml is the Windows example configuration" \
  $(cmp -s "$work/unpacked/dxshim.yaml" "$src/deploy/examples/dxshim-windows.yaml"; echo $?)
check "README.txt names the version and no placeholder is left" \
  $(grep -qF "dxshim $version for Windows" "$work/unpacked/README.txt" && ! grep -q '@' "$work/unpacked/README.txt"; echo $?)
# dxshim uses no TLS: gRPC's unsecure library is linked, and OpenSSL, which announces itself in
# its version text, is not (scripts/grpc-unsecure/).
check "dxshim.exe carries no OpenSSL" $(! grep -qa 'OpenSSL' "$work/unpacked/dxshim.exe"; echo $?)
size=$(stat -c %s "$zip")
check "the zip is under 40 MiB ($size bytes)" $([ "$size" -lt $((40 << 20)) ]; echo $?)
[ "$failures" = 0 ] && echo "all passed"
exit $((failures > 0))
