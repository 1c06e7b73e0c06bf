#!/usr/bin/env bash
# The licenses of the third-party code statically linked into the Windows release
# (deploy/windows/third-party.tsv): copies each component's license files into
# OUT_DIR/LICENSES/<component>/ from the Debian source packages scripts/build-windows-deps.sh
# unpacked in /var/cache/dxshim/src (or, for the MinGW-w64 runtime, from the installed toolchain
# packages), and writes OUT_DIR/LICENSES/README.txt listing components, versions and licenses.
# Each row's version is checked against what is built (build-windows-deps.sh: a mismatch fails) or
# installed (dpkg: a toolchain point release is listed as installed, with a warning).
# Fails naming the component and the file when a license file is missing. Builds nothing.
# usage: third-party-licenses.sh OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: third-party-licenses.sh OUT_DIR}
tsv=$here/../deploy/windows/third-party.tsv
deps=$here/build-windows-deps.sh
srcs=/var/cache/dxshim/src
die() { echo "third-party-licenses.sh: $*" >&2; exit 1; }

dest=$out/LICENSES
rm -rf "$dest"
mkdir -p "$dest"
rows=()
while IFS=$'\t' read -r component package version license source files libraries extra; do
  [[ -z $component || $component == \#* || $component == component ]] && continue
  [[ -n $libraries && -z ${extra:-} ]] ||
    die "$tsv: the row of '$component' needs 7 tab-separated columns"
  if [[ $source == /* ]]; then
    base=$source
    installed=$(dpkg-query -W -f '${Version}' "$package" 2>/dev/null) ||
      die "$component: package $package is not installed"
    # The toolchain is Debian's, installed by scripts/install-deps.sh: a point release may move
    # it on. Its license texts come from the installed package, so the zip names what is
    # installed; the table's version is then stale, which is worth a warning, not a failed build.
    if [ "$installed" != "$version" ]; then
      echo "third-party-licenses.sh: warning: $component: third-party.tsv says $package" \
        "$version, $installed is installed (listed as installed)" >&2
      version=$installed
    fi
  else
    base=$srcs/$source
    grep -qF "\"$package=$version $source\"" "$deps" ||
      die "$component: third-party.tsv says $package=$version in $source," \
        "scripts/build-windows-deps.sh builds another version"
    [ -d "$base" ] ||
      die "$component: source $base is missing (scripts/build-windows-deps.sh unpacks it)"
  fi
  mkdir -p "$dest/$component"
  copied=()
  for f in $files; do
    [ -f "$base/$f" ] || die "$component: license file $base/$f is missing"
    name=$(basename "$f")
    [ ! -e "$dest/$component/$name" ] || die "$component: two license files named $name"
    cp "$base/$f" "$dest/$component/$name"
    copied+=("$component/$name")
  done
  rows+=("$component"$'\t'"$package $version"$'\t'"$license"$'\t'"${copied[*]}")
done <"$tsv"
[ "${#rows[@]}" -gt 0 ] || die "$tsv lists no component"

{
  cat <<'EOF'
Third-party software in dxshim.exe and dxshim-devices.exe
==========================================================

dxshim itself is licensed under the Apache License 2.0 (LICENSE and NOTICE beside this
directory). Both executables are statically linked with the components below, built from or
shipped in Debian 12 packages (Debian package and version given). Each component's license
texts are in the directory of its name; "copyright" files are Debian's copyright files, which
carry the full license texts of the package's parts.

EOF
  printf '%s\n' "${rows[@]}" | awk -F'\t' '
    { printf "%-16s %s\n                 license: %s\n                 files:   %s\n", $1, $2, $3, $4 }'
} >"$dest/README.txt"
echo "$dest: ${#rows[@]} components"
