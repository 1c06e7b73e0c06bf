#!/usr/bin/env bash
# The Windows release: builds dxshim.exe and dxshim-devices.exe (scripts/build-windows.sh) and
# packs dist/dxshim-<version>-windows-amd64.zip in the layout deploy/windows/install.ps1 expects
# beside itself: dxshim.exe, dxshim-devices.exe, install.ps1, installer-pod.ps1 (the installer
# DaemonSet's container, scripts/build-installer-image.sh), dxshim.yaml (the Windows example
# configuration) and README.txt; then dxshim's LICENSE and NOTICE, and LICENSES/ with the licenses
# of the third-party code linked into the executables (scripts/third-party-licenses.sh). Prints the
# zip's path, size and SHA-256.
# usage: package-windows.sh [OUTPUT_DIR]   (default dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
scripts/build-windows.sh >&2
version=$(sed -n 's/^project(dxshim VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
name="dxshim-$version-windows-amd64"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp build-windows-mingw/shim/dxshim.exe build-windows-mingw/devices/dxshim-devices.exe \
  deploy/windows/install.ps1 deploy/windows/installer-pod.ps1 "$stage/"
cp deploy/examples/dxshim-windows.yaml "$stage/dxshim.yaml"
sed "s/@VERSION@/$version/g" deploy/windows/README.txt.in >"$stage/README.txt"
cp LICENSE NOTICE "$stage/"
scripts/third-party-licenses.sh "$stage" >&2
mkdir -p "$out"
zip="$out/$name.zip"
rm -f "$zip"
# Files at the top of the zip, in a fixed order, so install.ps1 finds them beside itself; the
# licenses after them.
python3 - "$stage" "$zip" <<'PY'
import pathlib, sys, zipfile
stage, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for f in ("dxshim.exe", "dxshim-devices.exe", "install.ps1", "installer-pod.ps1", "dxshim.yaml", "README.txt",
              "LICENSE", "NOTICE"):
        z.write(f"{stage}/{f}", f)
    for path in sorted(pathlib.Path(stage, "LICENSES").rglob("*")):
        if path.is_file():
            z.write(path, path.relative_to(stage).as_posix())
PY
size=$(stat -c %s "$zip")
echo "$zip $size bytes ($((size / 1024 / 1024)) MiB) sha256 $(sha256sum "$zip" | cut -d' ' -f1)"
