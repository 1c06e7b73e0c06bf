#!/usr/bin/env bash
# wine_prefix.sh makes a usable prefix even when wine's first wineboot fills nothing (a stand-in
# wine64 on PATH fails its first call as wine did once in CI, then runs the real wine), and after
# three such failures it gives up with exit 1 and says why; a prefix it accepts starts a program;
# a wine64 without wine64-preloader beside it is refused before it runs. With a template
# (DXSHIM_WINE_TEMPLATE), the first prefix boots the template and every later one is a copy of it,
# made without a wineboot, that starts a program.
set -uo pipefail
unset DXSHIM_WINE_TEMPLATE  # ctest's own template is not this test's (its last part makes one)
here=$(dirname "$0")
real=$(command -v wine64 || echo /usr/lib/wine/wine64)
work=$(mktemp -d /tmp/dxshim-wine-prefix-test-XXXXXX)
# TMPDIR in the work folder: wine makes its server folder (wine-XXXXXX) there, removed with it.
export TMPDIR=$work/tmp WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
mkdir -p "$TMPDIR"
trap 'WINEPREFIX=$work/prefix "$(dirname "$real")/wineserver" -k 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/bin"
ln -s "$(dirname "$real")/wineserver" "$work/bin/wineserver"
ln -s "$(dirname "$real")/wine64-preloader" "$work/bin/wine64-preloader"
# The stand-in: its first FAILS calls leave the prefix empty, the ones after run the real wine.
cat >"$work/bin/wine64" <<STANDIN
#!/usr/bin/env bash
calls=\$(( \$(cat "$work/calls" 2>/dev/null || echo 0) + 1 ))
echo "\$calls" >"$work/calls"
echo "\$*" >>"$work/arguments"
if [ "\$calls" -le "\$(cat "$work/fails")" ]; then
  mkdir -p "\$WINEPREFIX"
  echo "wine: could not load kernel32.dll, status c0000135"
  exit 1
fi
exec "$real" "\$@"
STANDIN
chmod +x "$work/bin/wine64"
passes=0
failures=0
check() {
  if [ "$2" = 0 ]; then passes=$((passes + 1)); echo "ok: $1"; else failures=$((failures + 1)); echo "FAILED: $1"; fi
}

echo 1 >"$work/fails"
PATH="$work/bin:$PATH" "$here/wine_prefix.sh" "$work/prefix" 2>"$work/err"
check "a first wineboot that fills nothing is retried (exit 0)" $?
check "the retry is said, with wine's message" \
  $(grep -qF 'attempt 1 left' "$work/err" && grep -qF 'kernel32.dll, status c0000135' "$work/err"; echo $?)
out=$(WINEPREFIX=$work/prefix timeout 120 "$real" cmd /c "echo started" 2>/dev/null | tr -d '\r')
check "the prefix starts a program" $([ "$out" = started ]; echo $?)
WINEPREFIX=$work/prefix "$(dirname "$real")/wineserver" -k 2>/dev/null
WINEPREFIX=$work/prefix "$(dirname "$real")/wineserver" -w 2>/dev/null
rm -rf "$work/prefix" "$work/calls"

echo 3 >"$work/fails"
PATH="$work/bin:$PATH" "$here/wine_prefix.sh" "$work/prefix" 2>"$work/err"
check "three such failures: exit 1" $([ $? = 1 ]; echo $?)
check "and it says so" $(grep -qF 'no usable Wine prefix' "$work/err"; echo $?)
check "no fourth attempt" $([ "$(cat "$work/calls")" = 3 ]; echo $?)

echo 0 >"$work/fails"
rm -f "$work/calls" "$work/arguments"
export DXSHIM_WINE_TEMPLATE=$work/template/prefix
PATH="$work/bin:$PATH" "$here/wine_prefix.sh" "$work/first" 2>"$work/err"
check "with a template, a first prefix (exit 0)" $?
PATH="$work/bin:$PATH" "$here/wine_prefix.sh" "$work/second" 2>"$work/err"
check "and a second one (exit 0)" $?
check "one wineboot made both: the template's" \
  $([ "$(grep -c wineboot "$work/arguments")" = 1 ] &&
     compgen -G "$work/template/prefix-*/.complete" >/dev/null && [ ! -e "$work/second/.complete" ]; echo $?)
out=$(WINEPREFIX=$work/second timeout 120 "$real" cmd /c "echo started" 2>/dev/null | tr -d '\r')
check "the copy starts a program" $([ "$out" = started ]; echo $?)
WINEPREFIX=$work/second "$(dirname "$real")/wineserver" -k 2>/dev/null
WINEPREFIX=$work/second "$(dirname "$real")/wineserver" -w 2>/dev/null
unset DXSHIM_WINE_TEMPLATE

rm -f "$work/bin/wine64-preloader" "$work/calls"
echo 0 >"$work/fails"
PATH="$work/bin:$PATH" "$here/wine_prefix.sh" "$work/prefix" 2>"$work/err"
check "a wine64 without its preloader: exit 1" $([ $? = 1 ]; echo $?)
check "and it names the package" $(grep -qF 'apt-get install wine64-preloader' "$work/err"; echo $?)
check "wine is not run" $([ ! -f "$work/calls" ]; echo $?)
echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
