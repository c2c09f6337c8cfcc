#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs every libFuzzer target of BUILD (make fuzz) for SECONDS each, two at a
# time (one per core), from the committed corpus tests/fuzz/corpus/TARGET/
# (8 GiB of memory each at most: the .dat and map parsers allocate what a
# file declares, lazily, and ASan shadows it);
# new inputs go to BUILD/corpus/TARGET/, crashes to BUILD/crash-*. Prints one
# line per target (runs, coverage) and exits non-zero if any target failed.
# Usage: scripts/fuzz.sh BUILD SECONDS
set -uo pipefail
build=$(cd "${1:?usage: scripts/fuzz.sh BUILD SECONDS}" && pwd)
seconds=${2:-30}
top=$(cd "$(dirname "$0")/.." && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:verify_asan_link_order=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/tests/sanitize/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LD_PRELOAD=${LD_PRELOAD:-$build/tests/libiok_keep_modules.so} # see tests/sanitize/keep_modules.c
export OMPI_MCA_btl=${OMPI_MCA_btl:-self} # one process, no network probing

# fuzz_replay_T replays fuzz_T's corpus (ctest): not a fuzzer of its own. A
# fuzzer whose own name starts with replay (fuzz_replay_file: the replay
# kernel's file) has no fuzz_file beside it.
targets=$(cd "$build/tests/fuzz" && for t in fuzz_*; do
  case $t in fuzz_replay_*) [ -e "fuzz_${t#fuzz_replay_}" ] && continue ;; esac
  [ -x "$t" ] && echo "$t"
done)
# FUZZ_SKIP: targets left out (none by default), e.g. FUZZ_SKIP="decomp dat".
skip=${FUZZ_SKIP-}
for s in $skip; do
  targets=$(echo "$targets" | grep -vx "fuzz_$s")
  echo "fuzz $s: skipped (FUZZ_SKIP; see tests/sanitize/README.md)"
done
[ -n "$targets" ] || { echo "no fuzz targets in $build/tests/fuzz (configure with -DIOK_FUZZ=ON)" >&2; exit 1; }

run_one() {
  local t=$1 name=${1#fuzz_}
  mkdir -p "$build/corpus/$name"
  (cd "$build" && "tests/fuzz/$t" "corpus/$name" "$top/tests/fuzz/corpus/$name" \
     -max_total_time="$seconds" -timeout=20 -rss_limit_mb=8192 -malloc_limit_mb=65536 -max_len=65536 \
     -print_final_stats=1 > "fuzz-$name.log" 2>&1)
  local rc=$?
  local stats
  stats=$(grep -aE '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+.*DONE' "$build/fuzz-$name.log" \
          | sed -E 's/^stat::number_of_executed_units: */runs /; s/^stat::peak_rss_mb: */rss_mb /; s/.*(cov: [0-9]+ ft: [0-9]+).*/\1/' | tr '\n' ' ')
  if [ $rc -eq 0 ]; then
    echo "fuzz $name: ok ${seconds}s, $stats"
  else
    echo "fuzz $name: FAILED (exit $rc), see $build/fuzz-$name.log:"
    grep -aE 'ERROR|SUMMARY|message holds|refused with|Test unit written' "$build/fuzz-$name.log" | head -5
  fi
  return $rc
}

fail=0
set -- $targets
while [ $# -gt 0 ]; do
  run_one "$1" & a=$!
  b=""
  if [ $# -gt 1 ]; then run_one "$2" & b=$!; fi
  wait $a || fail=1
  [ -n "$b" ] && { wait $b || fail=1; }
  shift; [ $# -gt 0 ] && shift
done
exit $fail
