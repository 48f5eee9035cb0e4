#!/bin/bash
# The test command's fuzz pass: builds every libFuzzer target (fuzz/fuzz_*.cc) and runs each over its seeds
# (the generated ones, BUILDDIR/fuzz/seeds/TARGET, and the ones kept in the tree, fuzz/corpus/TARGET) and
# then for SECONDS more, so that a target that no longer builds, or a seed that crashes again, fails CI.
#
#   scripts/fuzz-smoke.sh [SECONDS] [BUILDDIR]      (defaults: 15, build-fuzz)
#
# One line per target, "fuzz TARGET: ok (...)" or "fuzz TARGET: FAILED (...)", then the last line
# "fuzz: N passed, N failed" (scripts/test.sh counts them). Exit status 1 when a target failed. Each run
# starts from an empty corpus of its own (BUILDDIR/fuzz/smoke/TARGET), so that CI does not depend on what
# an earlier run grew; bench/fuzz is the long run, which keeps its corpora.
set -u
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-15}
builddir=$(realpath -m "${2:-build-fuzz}")
passed=0 failed=0

if [ ! -f "$builddir/build.ninja" ]; then
  setup_log=$(mktemp)
  if ! ./fuzz/setup.sh "$builddir" >"$setup_log" 2>&1; then
    cat "$setup_log"
    rm -f "$setup_log"
    echo "fuzz: configuring $builddir failed"
    echo "fuzz: 0 passed, 1 failed"
    exit 1
  fi
  rm -f "$setup_log"
fi

targets=$(cd fuzz && ls fuzz_*.cc | sed 's/\.cc$//')
log=$builddir/fuzz-smoke-build.log
# -k 0: every target that can be built is, so that one broken target does not hide the others' state.
nice -n 10 ninja -C "$builddir" -k 0 fuzz-targets >"$log" 2>&1
build_status=$?

# One target: its seeds, then SECONDS more. Writes its line to WORK/result; its exit status is the verdict.
smoke() {
  local t=$1 name=${1#fuzz_}
  local exe=$builddir/fuzz/$t work=$builddir/fuzz/smoke/${1#fuzz_}
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/findings"
  # Built, and not stale: ninja has nothing left to do for it (a failed rebuild leaves the old binary).
  if [ ! -x "$exe" ] || ! ninja -C "$builddir" -n "fuzz/$t" 2>/dev/null | grep -q 'no work to do'; then
    { echo "fuzz $name: FAILED (does not build; $log:)"
      grep -A 12 -E "^FAILED: .*fuzz/$t(\.p/| |$)" "$log" | head -n 40 | sed 's/^/    /'; } >"$work/result"
    return 1
  fi
  local seeds="$builddir/fuzz/seeds/$name" kept=
  [ -d "$seeds" ] || seeds=
  [ -d "fuzz/corpus/$name" ] && kept="$root/fuzz/corpus/$name"
  # In-process, so that the exit status is the verdict; the watchdog only for a libFuzzer that hangs
  # outside a unit. -timeout is wall-clock time: 60 s per input, so that a machine busy with other builds
  # does not fail CI (no unit takes a second of CPU; bench/fuzz, run on a quiet machine, allows 10).
  (cd "$work" && timeout $((seconds + 300)) nice -n 10 "$exe" -max_total_time="$seconds" -timeout=60 \
     -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix=findings/ corpus $seeds $kept \
     >fuzz.log 2>&1)
  local status=$?
  final_stat() { sed -n "s/^stat::$1: *//p" "$work/fuzz.log" | tail -n 1; }
  local cov findings
  cov=$(grep -E '^#[0-9]+.* cov: ' "$work/fuzz.log" | tail -n 1 | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  local what="$(final_stat number_of_executed_units) runs, $(final_stat average_exec_per_sec)/s, ${cov:-?} edges"
  findings=$(ls "$work/findings" 2>/dev/null)
  if [ "$status" -eq 0 ] && [ -z "$findings" ]; then
    # A differential target's own counts (what it compared, and with what), below its line.
    { echo "fuzz $name: ok ($what)"; grep "^$t: " "$work/fuzz.log" | sed 's/^/    /'; } >"$work/result"
    return 0
  fi
  { echo "fuzz $name: FAILED (exit status $status; $what; findings: ${findings:-none} in $work/findings)"
    grep -m 1 -B 2 -A 30 -E '^==[0-9]+==ERROR|runtime error:|ALARM: working on the last Unit|out-of-memory|deadly signal|^fuzz' \
      "$work/fuzz.log" | head -n 40 | sed 's/^/    /'; } >"$work/result"
  return 1
}

# As many targets at a time as there are CPUs (each runs for SECONDS of wall-clock time, whatever it
# gets of a CPU), their lines printed in the targets' order.
jobs=$(nproc 2>/dev/null || echo 1)
running=0
for t in $targets; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  smoke "$t" &
  running=$((running + 1))
done
wait
for t in $targets; do
  result=$builddir/fuzz/smoke/${t#fuzz_}/result
  if [ -f "$result" ] && head -n 1 "$result" | grep -q ': ok ('; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
  cat "$result" 2>/dev/null || echo "fuzz ${t#fuzz_}: FAILED (no result)"
done
[ "$build_status" -eq 0 ] || [ "$failed" -gt 0 ] || { echo "fuzz: the build failed (see $log)"; failed=$((failed + 1)); }
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
