#!/usr/bin/env bash
# A short, bounded libFuzzer pass for CI: runs FUZZER for SECONDS on a copy of SEED_DIRS.
# usage: run_fuzz.sh FUZZER SECONDS SEED_DIR...
set -euo pipefail
fuzzer=$1 seconds=$2
shift 2
work=$(mktemp -d /tmp/dxshim-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
for seed in "$@"; do cp -r "$seed"/. "$work/"; done
# -rss_limit_mb and -max_len keep one pass within this machine's means.
"$fuzzer" "$work" -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=1024 -print_final_stats=1 \
  -artifact_prefix="$work/crash-" 2>&1 | tail -n 12
