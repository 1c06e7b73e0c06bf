# Sourced by the shell tests that run the Windows build under wine: `need_exe PATH` refuses a
# missing program with how to build it; then $wine (the launcher), $work (a temporary directory
# with a private Wine prefix, removed with its wineserver on exit) and `check NAME RESULT [DETAIL]`
# (prints ok/FAILED, counts $passes and $failures). The prefix is made ready here
# (wine_prefix.sh); nothing else runs under wine before the caller says.
need_exe() {
  if [ ! -f "$1" ]; then
    echo "$(basename "$0"): $1 is missing: build it with scripts/build-windows.sh"
    exit 1
  fi
}
wine=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
work=$(mktemp -d /tmp/dxshim-wine-XXXXXX)
# TMPDIR in the work folder: wine makes its server folder (wine-XXXXXX) there, removed with it.
export WINEPREFIX=$work/prefix TMPDIR=$work/tmp WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
mkdir -p "$TMPDIR"
trap '"$(dirname "$wine")/wineserver" -k 2>/dev/null; rm -rf "$work"' EXIT
"$(dirname "${BASH_SOURCE[0]}")/wine_prefix.sh" "$WINEPREFIX" || exit 1
passes=0
failures=0
check() {  # check NAME CONDITION-RESULT [DETAIL]
  if [ "$2" = 0 ]; then
    passes=$((passes + 1)); echo "ok: $1"
  else
    failures=$((failures + 1)); echo "FAILED: $1"; [ -n "${3:-}" ] && printf '%s\n' "$3"
  fi
}
