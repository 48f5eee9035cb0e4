#!/bin/sh
# Fetches real kernels for the tests: Debian's 6.1 cloud kernel (the tests that read split BTF against the
# wrong base and the right one, and the kernel boot test) and Debian's 6.12 cloud kernel (bookworm-backports
# in Debian 12's archive; the kernel boot test again, on a kernel that looks up more of its BTF by name:
# struct_ops stub functions since 6.9, tracepoint templates since 6.12). Each comes from the one package
# linux-image-<release>-unsigned: its modules (split BTF; .ko in 6.1, .ko.xz in 6.12) and its vmlinux
# (.BTF), the image's payload unpacked (lz4 in 6.1's build, zstd in 6.12's); the -dbg package's vmlinux has
# the same .BTF but is ten times the download.
#
# Then, for the kernel boot test (which rewrites a vmlinux's .BTF and .BTF_ids and boots it under qemu),
# that same build with its symbol table: minimize needs the symbols to find .BTF_ids' slots and the stub
# functions struct_ops point to, and only the -dbg package (linux-image-<release>-dbg, ~280 MB) has them.
# Its 590 MB vmlinux is streamed out of the package and stripped of its debug info (objcopy --strip-debug,
# 83 MB); the package and the unstripped file are deleted. Its .BTF and .BTF_ids must equal the image's,
# or it is not kept.
#
# Into ${XDG_CACHE_HOME:-$HOME/.cache}/btfslim-test/kernel-6.1 and .../kernel-6.12 (or
# $BTFSLIM_TEST_KERNEL_DIR and $BTFSLIM_TEST_KERNEL_6_12_DIR), outside the checkout, each as:
# release  (the release, one line)  vmlinux  modules/ (the package's lib/modules tree)  and  vmlinux-sym
# (the -dbg vmlinux without debug info).
# Idempotent: each part (.complete, .complete-sym) is done once. Offline, or where apt has no such
# package, it says so in one line per kernel and exits 0: the tests that need the kernel skip visibly.
# BTFSLIM_TEST_KERNEL_PACKAGE names another package of 6.1's layout for the first directory.
set -eu

cache=${XDG_CACHE_HOME:-$HOME/.cache}/btfslim-test

# fetch SERIES DIR META PACKAGE: the kernel of series SERIES ("6.1") that apt's meta-package META stands for
# today (or PACKAGE, when not empty), into DIR. Run in a subshell: skip ends it, not the script.
fetch() {
  series=$1
  dir=$2
  meta=$3
  package=$4
  [ -f "$dir/.complete" ] && [ -f "$dir/.complete-sym" ] && exit 0

  consequence="the tests that need Linux $series will skip"
  skip() {
    echo "fetch-test-kernel: $*; $consequence"
    exit 0
  }
  work=""
  trap 'if [ -n "$work" ]; then rm -rf "$work"; fi' EXIT

  if [ ! -f "$dir/.complete" ]; then
    command -v apt-get >/dev/null 2>&1 || skip "no apt-get here"
    if [ -z "$package" ]; then
      # The release the meta-package stands for today, e.g. linux-image-6.1.0-57-cloud-amd64.
      pattern="Depends: linux-image-$(echo "$series" | sed 's/\./\\./g')\\."
      image=$(apt-cache depends "$meta" 2>/dev/null | awk -v p="$pattern" '$0 ~ p { print $2; exit }')
      [ -n "$image" ] || skip "apt knows no $meta on $series (run apt-get update?)"
      package=$image-unsigned
    fi

    mkdir -p "$dir"
    work=$(mktemp -d "$dir/.fetch.XXXXXX")
    (cd "$work" && apt-get download -q "$package" >/dev/null 2>&1) || skip "cannot download $package (offline?)"
    dpkg-deb -x "$work"/*.deb "$work/x"

    release=$(ls "$work/x/lib/modules")
    if [ -z "$release" ] || [ ! -d "$work/x/lib/modules/$release" ]; then skip "$package holds no lib/modules tree"; fi
    image=$work/x/boot/vmlinuz-$release
    [ -f "$image" ] || skip "$package holds no boot/vmlinuz-$release"

    # The compressed payload of a bzImage: setup_sects at 0x1f1 (the setup code is that many 512-byte
    # sectors after the boot sector), payload_offset and payload_length at 0x248 and 0x24c.
    u8() { od -An -tu1 -j "$1" -N1 "$image" | tr -d ' '; }
    u32() { od -An -tu4 -j "$1" -N4 "$image" | tr -d ' '; }
    start=$(( ($(u8 $((0x1f1))) + 1) * 512 + $(u32 $((0x248))) ))
    length=$(u32 $((0x24c)))
    payload() { tail -c +$((start + 1)) "$image" | head -c "$length"; }
    # The kernel's build appends the uncompressed size to the stream, which the tools call trailing garbage
    # and fail on after writing everything: what decides is whether an ELF came out.
    case $(payload | od -An -tx1 -N4 | tr -d ' ') in
      02214c18) unpack="lz4 -dc" ;;
      fd377a58) unpack="xz -dc" ;;
      28b52ffd) unpack="zstd -dcq" ;;
      1f8b*) unpack="gzip -dc" ;;
      *) skip "the payload of $image is in a compression this script does not know" ;;
    esac
    command -v "${unpack%% *}" >/dev/null 2>&1 || skip "no ${unpack%% *} to unpack the vmlinux of $image"
    payload | $unpack >"$work/vmlinux" 2>/dev/null || true
    [ "$(od -An -c -N4 "$work/vmlinux" | tr -d ' ')" = '177ELF' ] || skip "could not unpack the vmlinux of $image"

    rm -rf "$dir/modules" "$dir/vmlinux"
    mv "$work/x/lib/modules/$release" "$dir/modules"
    mv "$work/vmlinux" "$dir/vmlinux"
    echo "$release" >"$dir/release"
    touch "$dir/.complete"
    echo "fetch-test-kernel: $release in $dir ($(find "$dir/modules" -name '*.ko*' | wc -l) modules)"
    rm -rf "$work"
    work=""
  fi

  # The same build's vmlinux with its symbol table, from the -dbg package.
  [ -f "$dir/.complete-sym" ] && exit 0
  consequence="the kernel boot test will skip Linux $series"
  release=$(cat "$dir/release")
  dbg=linux-image-$release-dbg
  work=$(mktemp -d "$dir/.fetch.XXXXXX")
  (cd "$work" && apt-get download -q "$dbg" >/dev/null 2>&1) || skip "cannot download $dbg (offline?)"
  # Only the one file, streamed out of the package: unpacking it all would take 600 MB more.
  dpkg-deb --fsys-tarfile "$work"/*.deb | tar -x -O "./usr/lib/debug/boot/vmlinux-$release" >"$work/vmlinux-dbg" ||
    skip "$dbg holds no usr/lib/debug/boot/vmlinux-$release"
  rm -f "$work"/*.deb
  objcopy --strip-debug "$work/vmlinux-dbg" "$work/vmlinux-sym" || skip "objcopy cannot strip the vmlinux of $dbg"
  rm -f "$work/vmlinux-dbg"
  for section in .BTF .BTF_ids; do
    if ! objcopy -O binary --only-section="$section" "$dir/vmlinux" "$work/image$section" 2>/dev/null ||
       ! objcopy -O binary --only-section="$section" "$work/vmlinux-sym" "$work/sym$section" 2>/dev/null ||
       [ ! -s "$work/sym$section" ]; then
      skip "no $section in the vmlinux of $dbg or of the image"
    fi
    cmp -s "$work/image$section" "$work/sym$section" || skip "the $section of $dbg's vmlinux differs from the image's (another build?)"
  done
  mv "$work/vmlinux-sym" "$dir/vmlinux-sym"
  touch "$dir/.complete-sym"
  echo "fetch-test-kernel: $release's vmlinux with symbols in $dir/vmlinux-sym"
}

(fetch 6.1 "${BTFSLIM_TEST_KERNEL_DIR:-$cache/kernel-6.1}" linux-image-cloud-amd64 "${BTFSLIM_TEST_KERNEL_PACKAGE:-}")
(fetch 6.12 "${BTFSLIM_TEST_KERNEL_6_12_DIR:-$cache/kernel-6.12}" linux-image-6.12-cloud-amd64 "")
