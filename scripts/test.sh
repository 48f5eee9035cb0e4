#!/bin/sh
# Installs what is missing, builds btfslim, runs the whole test suite, then runs it again against one
# sanitized build (clang, AddressSanitizer + UBSan): the unit tests built sanitized, the end-to-end tests
# driving the sanitized binary, and every libFuzzer target, built from the same compile of btfslim-core,
# run over its seeds and briefly beyond (scripts/fuzz-smoke.sh).
# Ends with one line "N passed, N failed, N skipped"; exit 1 on any failure.
set -eu
cd "$(dirname "$0")/.."

./scripts/setup.sh build
# A second, real kernel for the tests of split BTF on the wrong base (fetched once; skips offline).
./scripts/fetch-test-kernel.sh

# The sanitized build: the binary, the in-process unit tests and the fuzz targets (fuzz/setup.sh says
# why each option). clang's: g++'s UBSan at -O1 took three times as long to compile (12 of CI's 40
# minutes) and made the tests run three to five times slower. A build-asan configured otherwise (by an
# older checkout, with g++ and no fuzz targets) is configured again.
sanitized_as_wanted() {
  options=$(meson introspect build-asan --buildoptions 2>/dev/null) &&
    echo "$options" | grep -q '"name": "fuzz", "value": true' &&
    echo "$options" | grep -q '"name": "tests", "value": "unit"'
}
if [ -f build-asan/build.ninja ] && ! sanitized_as_wanted; then rm -rf build-asan; fi
if [ ! -f build-asan/build.ninja ]; then
  ./fuzz/setup.sh build-asan unit >/dev/null
fi
# Everything that can be built is (-k 0): a fuzz target that does not build fails as a test in the fuzz
# pass below, not the whole run; the binary and the unit tests (with the objects they read) must build.
ninja -C build-asan -k 0 >build-asan/build.log 2>&1 || true
if ! ninja -C build-asan -n btfslim tests/btfslim-unit-tests 2>/dev/null | grep -q 'no work to do'; then
  grep -A 20 '^FAILED' build-asan/build.log | head -n 60
  echo "the sanitized build failed (build-asan/build.log)"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1

status=0
echo "== tests"
meson test -C build --no-rebuild --print-errorlogs || status=1
echo "== unit tests built with AddressSanitizer and UBSan"
meson test -C build-asan --no-rebuild --print-errorlogs || status=1
echo "== end-to-end tests of the sanitized binary"
# One process per test area, two at a time (the machine's two CPUs; most areas wait on the binary they
# run), each with its own log. [kernel-boot] is left out: its time is qemu booting guests, the same in
# both passes, and what it runs of btfslim (minimize --kernel, --modules) the sanitized binary runs in
# [minimize-kernel] and [modules].
asan_logs=build-asan/e2e
rm -rf "$asan_logs"
mkdir -p "$asan_logs"
# The environment meson gives the end-to-end tests (tests/meson.build: test_env), with the trace objects the
# build made (none where the kernel had no BTF at configure time).
trace_objects=$(cd build/tests && ls trace_*.bpf.o 2>/dev/null | sed 's/\.bpf\.o$//' | paste -sd: -)
export BTFSLIM="$PWD/build-asan/btfslim" BTFSLIM_TEST_BUILD_DIR="$PWD/build/tests" BTFSLIM_TEST_CC=cc \
  BTFSLIM_TEST_TRACE_OBJECTS="$trace_objects" BTFSLIM_TEST_SOURCE_DIR="$PWD/tests" ASAN_LOGS="$asan_logs"
build/tests/btfslim-e2e-tests --list-tags | sed -n 's/.*\[\(.*\)\].*/\1/p' | grep -vx kernel-boot |
  xargs -P 2 -I AREA sh -c 'build/tests/btfslim-e2e-tests "[AREA]" >"$ASAN_LOGS/AREA.e2e-tests.log" 2>&1 ||
                            echo AREA >>"$ASAN_LOGS/failed"'
if [ -s "$asan_logs/failed" ]; then
  status=1
  for area in $(cat "$asan_logs/failed"); do cat "$asan_logs/$area.e2e-tests.log"; done
fi
for log in "$asan_logs"/*.e2e-tests.log; do
  printf '%s: ' "$(basename "$log" .e2e-tests.log)"
  grep -E '^(All tests passed|test cases:)' "$log" || echo "no summary"
done

# Every fuzz target (fuzz/fuzz_*.cc): built in build-asan, run over its seeds (the generated ones and the
# minimized findings kept in fuzz/corpus/) and for BTFSLIM_FUZZ_SECONDS more (default 15). One passed or
# failed per target in the count below: a target that does not build fails, as does any finding.
echo "== fuzz targets: each built, then run over its seeds and for ${BTFSLIM_FUZZ_SECONDS:-15} s"
fuzz_log=build-asan/fuzz-smoke.log
./scripts/fuzz-smoke.sh "${BTFSLIM_FUZZ_SECONDS:-15}" build-asan >"$fuzz_log" 2>&1 || status=1
cat "$fuzz_log"
fuzz_counts=$(sed -n 's/^fuzz: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$fuzz_log" | tail -n 1)
[ -n "$fuzz_counts" ] || fuzz_counts="0 1"

# Count Catch2 test cases from the logs. In meson's logs a test that died before Catch2 printed its
# summary counts as one failure; so does the direct run above.
tally() {
  awk '
    function flush() {
      if (name != "" && !summary && !ok) failed++
      name = ""; summary = 0; ok = 1
    }
    FNR == 1 && FILENAME ~ /e2e-tests.log$/ { flush(); name = "e2e"; ok = 0 }
    /^test:/            { flush(); name = $2; ok = 0 }
    /^result:/          { ok = ($0 ~ /exit status 0/) }
    /^All tests passed/ { summary = 1; s = $0; sub(/.* in /, "", s); sub(/ test case.*/, "", s); passed += s }
    /^test cases:/      { summary = 1; n = split($0, f, "|")
                          for (i = 2; i <= n; i++) {
                            v = f[i]; gsub(/[^0-9]/, "", v)
                            if (f[i] ~ /passed|as expected/) passed += v
                            else if (f[i] ~ /failed/) failed += v
                          } }
    /btfslim-test: SKIP:/ { skipped++ }
    END { flush(); printf "%d %d %d\n", passed, failed, skipped }
  ' "$@"
}
# shellcheck disable=SC2046
set -- $(tally build/meson-logs/testlog.txt build-asan/meson-logs/testlog.txt "$asan_logs"/*.e2e-tests.log)
passed=$1 failed=$2 skipped=$3
# shellcheck disable=SC2086
set -- $fuzz_counts
passed=$((passed + $1)) failed=$((failed + $2))
[ "$failed" -eq 0 ] || status=1
[ "$status" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
echo "$((passed - skipped)) passed, $failed failed, $skipped skipped"
exit $status
