#!/bin/sh
# Install what btfslim needs to build and test on Debian 12, then configure the build.
# Idempotent: when every package is present it does no apt work at all.
set -eu

PACKAGES="
  build-essential pkg-config meson ninja-build
  libbpf-dev libelf-dev zlib1g-dev liblzma-dev libzstd-dev libcli11-dev libfmt-dev catch2
  nlohmann-json3-dev libtomlplusplus-dev libarchive-dev libxml2-dev
  clang-19 llvm-19 clang-14 libclang-rt-14-dev bpftool dwarves scdoc groff-base time util-linux binutils
  bash-completion zsh fish valgrind
  lz4 zstd
  qemu-system-x86 busybox-static cpio
  dpkg-dev debhelper lintian man-db python3 python3-yaml git xz-utils
"

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The build with every test and the benchmark's tools (-Dtests=all; meson's default builds none of them),
# also where an earlier setup of the directory left the option otherwise.
builddir=${1:-build}
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup "$builddir" --buildtype=release -Dtests=all >/dev/null
elif ! meson introspect "$builddir" --buildoptions | grep -q '"name": "tests", "value": "all"'; then
  meson configure "$builddir" -Dtests=all >/dev/null
fi
ninja -C "$builddir" >/dev/null
