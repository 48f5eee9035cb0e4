#!/bin/sh
# Compiles one C file into an object that is the same bytes wherever the checkout and the build
# directory are. The fixed-seed mutation tests draw their offsets over such objects, and a seed must
# test the same mutants in every clone (issue 15).
#
#   same-bytes-cc.sh SOURCE_ROOT BUILD_ROOT SOURCE OUT [HEADER...] -- CC [CFLAG...]
#
# SOURCE lies under SOURCE_ROOT; each HEADER, which it includes by file name, under BUILD_ROOT (the
# trace programs' vmlinux.h). They are copied into a fresh directory, as tests/... and build/tests/...,
# and compiled in its build/ with the directory mapped to /btfslim: the object names its source
# /btfslim/tests/bpf/NAME.bpf.c and its compilation directory /btfslim/build, whatever the real ones.
#
# Mapping the real paths instead (-ffile-prefix-map) keeps them out of the object, but not their
# lengths out of its layout: clang-19's BTF writer emits the FWD types it makes for pointers to
# undefined structs in the order of their addresses in memory (a std::map keyed by DICompositeType *),
# and where malloc puts those depends on the lengths of the paths clang held before them: arguments, and
# the real paths of the files it opens. Ten checkouts at paths of 1 to 90 characters gave
# trace_exit.bpf.o three type orders. The copy's directory name has the same length everywhere
# (mktemp's letters change nothing); it is under /tmp rather than $TMPDIR, whose length varies too.
set -eu
source_root=$1 build_root=$2 source=$3 out=$4
shift 4
case $out in /*) ;; *) out=$(pwd -P)/$out ;; esac

work=$(mktemp -d /tmp/btfslim-cc.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/build"

# Copies FILE (under ROOT) to TO/ with its path below ROOT, and prints that directory.
copy_under() {
  case $1 in "$2"/*) ;; *) echo "same-bytes-cc.sh: $1 is not under $2" >&2; exit 1 ;; esac
  rel=${1#"$2"/}
  mkdir -p "$3/$(dirname "$rel")"
  cp "$1" "$3/$rel"
  echo "$3/$(dirname "$rel")"
}
copied_source=$(copy_under "$source" "$source_root" "$work")/${source##*/}
includes=""
while [ "$1" != "--" ]; do
  includes="$includes -I$(copy_under "$1" "$build_root" "$work/build")"
  shift
done
shift

cd "$work/build"
# shellcheck disable=SC2086  # the include directories are under $work, which has no spaces
"$@" $includes -ffile-prefix-map="$work=/btfslim" -c "$copied_source" -o "$work/out.o"
mv "$work/out.o" "$out"
