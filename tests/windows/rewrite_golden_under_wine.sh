#!/usr/bin/env bash
# Runs rewrite_golden_test (tests/rewrite_golden_test.cpp) against the Windows dxshim.exe under
# wine: every golden case must give the same bytes as the Linux build's golden files (same code,
# two platforms). One private Wine prefix serves all cases.
# usage: rewrite_golden_under_wine.sh rewrite_golden_test dxshim.exe
set -uo pipefail
test_binary=${1:?usage: rewrite_golden_under_wine.sh rewrite_golden_test dxshim.exe}
exe=${2:?usage: rewrite_golden_under_wine.sh rewrite_golden_test dxshim.exe}
if [ ! -f "$exe" ]; then
  echo "rewrite_golden_under_wine: $exe is missing: build it with scripts/build-windows.sh"
  exit 1
fi
wine=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
work=$(mktemp -d /tmp/dxshim-wine-XXXXXX)
export WINEPREFIX=$work/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
trap '"$(dirname "$wine")/wineserver" -k 2>/dev/null; rm -rf "$work"' EXIT
"$wine" wineboot --init >/dev/null 2>&1
export DXSHIM_COMMAND="'$wine' '$exe'"
"$test_binary" --gtest_color=no
