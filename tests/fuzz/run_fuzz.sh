#!/usr/bin/env bash
# A short, bounded libFuzzer pass for CI: runs FUZZER for SECONDS on a copy of SEED_DIRS.
# usage: run_fuzz.sh FUZZER SECONDS SEED_DIR...
set -euo pipefail
fuzzer=$1 seconds=$2
shift 2
work=$(mktemp -d /tmp/dxshim-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
for seed in "$@"; do cp -r "$seed"/. "$work/"; done
# -rss_limit_mb and -max_len keep one pass within this machine's means. A fixed seed: the suite's
# short pass explores the same inputs on every run (as far as its time goes), so a test run fails
# only for a change of the code, never for a new random path; tests/fuzz/run_all_fuzz.sh, the
# nightly pass, explores with random seeds. DXSHIM_FUZZ_SEED picks another.
"$fuzzer" "$work" -seed="${DXSHIM_FUZZ_SEED:-1}" -max_total_time="$seconds" -max_len=8192 \
  -rss_limit_mb=1024 -print_final_stats=1 \
  -artifact_prefix="$work/crash-" 2>&1 | tail -n 12
