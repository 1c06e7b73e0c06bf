#!/usr/bin/env bash
# The nightly-length fuzzing pass: every fuzz target of the test suite (ctest label `fuzz`, each
# with the seeds its test names: tests/fuzz/fuzz_target.cmake), SECONDS each instead of the
# suite's short pass, one after the other, keeping each grown corpus in OUT_DIR/<target> for the
# next night. A crash leaves its input as OUT_DIR/<target>/crash-* and fails the run (turn it into
# a unit test: tests/README.md, "Fuzzing").
# usage: run_all_fuzz.sh BUILD_DIR SECONDS OUT_DIR
set -euo pipefail
build=${1:?usage: run_all_fuzz.sh BUILD_DIR SECONDS OUT_DIR} seconds=${2:?} out=${3:?}
mkdir -p "$out"
failed=0
while IFS=$'\t' read -r name fuzzer seeds; do
  corpus="$out/$name"
  mkdir -p "$corpus"
  for seed in $seeds; do cp -rn "$seed"/. "$corpus/"; done
  echo "== $name: $seconds s on $(find "$corpus" -type f | wc -l) input(s)"
  if ! "$fuzzer" "$corpus" -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix="$corpus/crash-" 2>&1 | tail -n 12; then
    failed=1
  fi
done < <(ctest --test-dir "$build" --show-only=json-v1 -L fuzz | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    fuzzer, _, *seeds = t["command"][1:]
    print(t["name"].removeprefix("fuzz_").removesuffix("_short"), fuzzer, " ".join(seeds), sep="\t")')
exit $failed
