#!/bin/sh
# Configures BUILDDIR (default build-fuzz) for the libFuzzer targets, as bench/fuzz and the test command's
# smoke pass (scripts/fuzz-smoke.sh) use it. fuzz/meson.build says why each option:
# - clang (Debian 12's clang-14; its libFuzzer is in libclang-rt-14-dev), through ccache when there is one
#   (meson only puts ccache in front of a compiler it picks itself);
# - AddressSanitizer and UBSan on everything, -fsanitize=fuzzer-no-link so that btfslim-core's code is
#   instrumented for coverage, not just the harnesses;
# - -O1 with line tables: what libFuzzer's documentation recommends, and a third of -O3's compile time;
#   assertions on (b_ndebug=false, and libstdc++'s bounds checks): a broken invariant is a finding;
# - by default no tests and no manual: only the targets and their seeds are built (ninja fuzz-targets).
#   TESTS=unit adds the in-process unit tests and the manual: the test command's one sanitized build
#   (scripts/test.sh), whose btfslim, unit tests and fuzz targets share one compile of btfslim-core, and
#   whose end-to-end pass reads the manual beside the binary.
#
#   fuzz/setup.sh [BUILDDIR] [TESTS]     (defaults: build-fuzz, none)
set -eu
builddir=${1:-build-fuzz}
tests=${2:-none}
man=disabled
[ "$tests" = none ] || man=auto
cd "$(dirname "$0")/.."
cc=clang-14 cxx=clang++-14
if command -v ccache >/dev/null; then cc="ccache $cc" cxx="ccache $cxx"; fi
CC=$cc CXX=$cxx exec meson setup "$builddir" -Dfuzz=true -Dtests="$tests" -Dman="$man" \
  --buildtype=plain -Doptimization=1 -Db_ndebug=false \
  -Db_sanitize=address,undefined -Db_lundef=false -Dcpp_args='-fsanitize=fuzzer-no-link -gline-tables-only -D_GLIBCXX_ASSERTIONS'
