#!/bin/sh
# Builds a user-space object with DWARF and converts its DWARF to a .BTF section, as `pahole -J` does
# for kernels: the ELF-with-.BTF input that users get from their own binaries. CFLAGS after OUT go to
# the compiler (tests/meson.build passes the maps that keep the object the same wherever it is built).
#
#   pahole-elf.sh CC IN OUT [CFLAG...]
set -eu
cc=$1 in=$2 out=$3
shift 3
"$cc" -g -O0 "$@" -c "$in" -o "$out.tmp"
pahole -J "$out.tmp" >/dev/null 2>&1
mv "$out.tmp" "$out"
