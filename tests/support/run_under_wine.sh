#!/usr/bin/env bash
# Runs a mingw-built test program under wine in a fresh, private Wine prefix; exits with its code.
# usage: run_under_wine.sh PROGRAM.exe [ARGS...]
set -uo pipefail
exe=${1:?usage: run_under_wine.sh PROGRAM.exe [ARGS...]}
shift
wine=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
if [ ! -x "$wine" ]; then
  echo "cannot run $exe: wine is not installed (apt-get install wine64); it was still compiled"
  exit 1
fi
work=$(mktemp -d /tmp/dxshim-wine-XXXXXX)
# TMPDIR in the work folder: wine makes its server folder (wine-XXXXXX) there, removed with it.
export WINEPREFIX=$work/prefix TMPDIR=$work/tmp WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
mkdir -p "$TMPDIR"
trap '"$(dirname "$wine")/wineserver" -k 2>/dev/null; rm -rf "$work"' EXIT
"$(dirname "$0")/wine_prefix.sh" "$WINEPREFIX" || exit 1
timeout 240 "$wine" "$exe" "$@" | sed -u 's/\r$//'  # unbuffered: a test may read the log live
exit "${PIPESTATUS[0]}"
