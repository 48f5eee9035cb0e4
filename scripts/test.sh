#!/bin/sh
# Installs what is missing, builds btfslim twice (release, and with AddressSanitizer + UBSan), runs the
# whole test suite in both, and ends with one line "N passed, N failed, N skipped". Exit 1 on any failure.
set -eu
cd "$(dirname "$0")/.."

./scripts/setup.sh build

if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan --buildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
ninja -C build-asan >/dev/null

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1

status=0
for dir in build build-asan; do
  echo "== tests in $dir"
  meson test -C "$dir" --no-rebuild --print-errorlogs || status=1
done

# Count Catch2 test cases across both runs from meson's log; a test that died before Catch2 could
# print its summary counts as one failure.
tally() {
  awk '
    function flush() {
      if (name != "" && !summary && !ok) failed++
      name = ""; summary = 0; ok = 0
    }
    /^test:/            { flush(); name = $2 }
    /^result:/          { ok = ($0 ~ /exit status 0/) }
    /^All tests passed/ { summary = 1; s = $0; sub(/.* in /, "", s); sub(/ test case.*/, "", s); passed += s }
    /^test cases:/      { summary = 1; n = split($0, f, "|")
                          for (i = 2; i <= n; i++) {
                            if (f[i] ~ /passed/) { v = f[i]; gsub(/[^0-9]/, "", v); passed += v }
                            if (f[i] ~ /failed/) { v = f[i]; gsub(/[^0-9]/, "", v); failed += v }
                          } }
    /btfslim-test: SKIP:/ { skipped++ }
    END { flush(); printf "%d %d %d\n", passed, failed, skipped }
  ' "$@"
}
set -- $(tally build/meson-logs/testlog.txt build-asan/meson-logs/testlog.txt)
passed=$1 failed=$2 skipped=$3
[ "$failed" -eq 0 ] || status=1
[ "$status" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
echo "$((passed - skipped)) passed, $failed failed, $skipped skipped"
exit $status
