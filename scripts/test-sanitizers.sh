#!/usr/bin/env bash
# The test suite under clang 14's sanitizers (tests/README.md#sanitizers), each build in a tree of
# its own beside build/:
#   build-asan/  AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer: the test
#                suite's own tree. Everything is built here (dxshim, every test, the Windows
#                test programs, the fuzz targets, the benchmarks) and every ctest runs here, once:
#                the Windows ones need scripts/build-windows.sh's dxshim.exe first.
#   build-tsan/  ThreadSanitizer: the concurrent parts (the proxy's relay, the ledger and the
#                runtime record's poller, the device plugin, the metrics endpoint), through their
#                unit tests and the end-to-end tests that drive them.
# Any report fails the run: a test program's own makes it fail, and the processes the tests start
# (dxshim, the stand-ins) write theirs to <tree>/sanitizer-reports/, which must stay empty.
# Needs scripts/install-deps.sh's packages (clang, libclang-rt-14-dev, llvm-14); scripts/test.sh
# runs it. Alone: scripts/test-sanitizers.sh [--build-only | --labels L | --labels-except L]
# [asan|tsan]...
#   --build-only       build the trees, run nothing (scripts/test.sh builds build-asan/ so,
#                      beside the Windows build);
#   --labels L         asan runs only the ctests labelled L (a ctest -L regex), and
#   --labels-except L  only the others (scripts/test.sh runs those that need no Windows build
#                      while it finishes, then the rest).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
source scripts/phase_log.sh
export -n DXSHIM_PHASE_LOG  # the phases are this script's; the tests it runs log none
supp=$root/tests/sanitizers
build_only=false
select=()  # the asan phase's ctest label selection
case ${1:-} in
  --build-only) build_only=true; shift ;;
  --labels) select=(-L "${2:?--labels needs a label}"); shift 2 ;;
  --labels-except) select=(-LE "${2:?--labels-except needs a label}"); shift 2 ;;
esac
phases=("$@")
[ ${#phases[@]} -gt 0 ] || phases=(asan tsan)
jobs=$(nproc)
export ASAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-14 TSAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-14
# The sanitizer reports' stacks need it; without it they are addresses only.
[ -x "$ASAN_SYMBOLIZER_PATH" ] || { echo "$ASAN_SYMBOLIZER_PATH is missing: run scripts/install-deps.sh" >&2; exit 1; }

# configure DIR SANITIZERS: clang at -O1 with debug information (readable stacks at a third of
# -O0's cost), warnings as errors, each target's sources compiled a few at a time (unity build).
configure() {
  cmake -S "$root" -B "$1" -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DDXSHIM_WERROR=ON -DDXSHIM_SANITIZE="$2" -DCMAKE_UNITY_BUILD=ON >/dev/null
}

# check_reports DIR: fails, printing them, if the processes wrote any sanitizer report to DIR.
check_reports() {
  local reports
  reports=$(find "$1" -type f | sort)
  [ -z "$reports" ] && return 0
  for r in $reports; do
    echo "==== $r"
    cat "$r"
  done
  echo "sanitizer reports above ($(wc -l <<<"$reports") files in $1)" >&2
  return 1
}

asan() {
  local dir=$root/build-asan
  # (set -e does not apply inside a function called from `if`: each step checks.)
  configure "$dir" address,undefined || return 1
  nice -n 5 cmake --build "$dir" -j "$jobs" || return 1
  ! $build_only || return 0
  # detect_leaks: LeakSanitizer at every exit; log_path: each process's reports in a file of its
  # own (a dxshim child's stderr is its test's log, which a passing test never prints).
  export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:strict_string_checks=1:log_path=$dir/sanitizer-reports/asan"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:report_error_type=1:log_path=$dir/sanitizer-reports/ubsan"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  local reports=$dir/sanitizer-reports status=0
  rm -rf "$reports" && mkdir -p "$reports"
  ctest --test-dir "$dir" --output-on-failure --timeout 900 -j "$jobs" "${select[@]}" || status=1
  check_reports "$reports" || status=1
  unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
  return $status
}

# ThreadSanitizer: the unit tests of the concurrent parts (their own program, tests/CMakeLists.txt)
# and these end-to-end tests.
tsan_e2e=(interceptor_test relay_e2e_test containerd_passthrough_e2e_test pod_hold_e2e_test
  device_plugin_e2e_test metrics_e2e_test metrics_slow_clients_e2e_test)

tsan() {
  local dir=$root/build-tsan
  configure "$dir" thread || return 1
  nice -n 5 cmake --build "$dir" -j "$jobs" --target dxshim concurrent_unit_tests "${tsan_e2e[@]}" || return 1
  ! $build_only || return 0
  # second_deadlock_stack: both stacks of a lock-order inversion. ignore_noninstrumented_modules:
  # what Debian's uninstrumented gRPC and abseil do through interceptors (memmove, epoll_wait) is
  # not checked, as their locks are invisible (tests/sanitizers/tsan.supp's opening comment).
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4:ignore_noninstrumented_modules=1:suppressions=$supp/tsan.supp:log_path=$dir/sanitizer-reports/tsan"
  local reports=$dir/sanitizer-reports status=0
  rm -rf "$reports" && mkdir -p "$reports"
  "$dir/tests/concurrent_unit_tests" --gtest_brief=1 --gtest_color=no || status=1
  ctest --test-dir "$dir" --output-on-failure --timeout 900 -j "$jobs" \
    -R "^($(IFS='|'; echo "${tsan_e2e[*]}"))\$" || status=1
  check_reports "$reports" || status=1
  unset TSAN_OPTIONS
  return $status
}

# Each phase runs even when an earlier one failed; the run fails if any did.
failed=()
for phase in "${phases[@]}"; do
  case $phase in
    asan | tsan) ;;
    *) echo "usage: $0 [--build-only | --labels L | --labels-except L] [asan|tsan]..." >&2; exit 2 ;;
  esac
  start=$SECONDS
  if "$phase"; then result=passed; else result=FAILED; failed+=("$phase"); fi
  echo "sanitizers: $phase $result in $((SECONDS - start)) s"
  case $phase in
    asan) what="build-asan/ (ASan, UBSan): every test" ;;
    tsan) what="build-tsan/ (TSan): the concurrent parts" ;;
  esac
  if $build_only; then
    what="${what%%:*}: build"
  elif [ ${#select[@]} -gt 0 ] && [ "$phase" = asan ]; then
    if [ "${select[0]}" = -L ]; then which=labelled; else which="not labelled"; fi
    what="${what%%:*}: the tests $which ${select[1]}"
  fi
  phase_done "$what ($result)" "$start"
done
[ ${#failed[@]} -eq 0 ] || { echo "sanitizers: failed: ${failed[*]}" >&2; exit 1; }
