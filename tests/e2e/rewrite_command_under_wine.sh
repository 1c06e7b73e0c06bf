#!/usr/bin/env bash
# Runs rewrite_command_e2e_test (tests/e2e/rewrite_command_e2e_test.cpp) against the Windows
# dxshim.exe under wine: every golden case must give the same bytes as the Linux build's golden
# files (same code, two platforms). One private Wine prefix serves all cases.
# usage: rewrite_command_under_wine.sh rewrite_command_e2e_test dxshim.exe
set -uo pipefail
test_binary=${1:?usage: rewrite_command_under_wine.sh rewrite_command_e2e_test dxshim.exe}
exe=${2:?usage: rewrite_command_under_wine.sh rewrite_command_e2e_test dxshim.exe}
source "$(dirname "$0")/../support/wine_test_env.sh"
need_exe "$exe"
"$wine" wineboot --init >/dev/null 2>&1
export DXSHIM_COMMAND="'$wine' '$exe'"
"$test_binary" --gtest_color=no
