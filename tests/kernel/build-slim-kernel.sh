#!/bin/sh
# Runs the kernel-build recipe of `btfslim minimize --kernel` (README, btfslim-minimize(1)) on a real build,
# and boots both kernels: Debian's linux-source-6.1 or -6.12, `make tinyconfig` plus
# tests/kernel/slim-btf.config, built once as usual (pahole's full .BTF), then linked again with PAHOLE
# pointing at a wrapper that puts the slim .BTF in the place of pahole's, so that the section itself shrinks
# and resolve_btfids fills .BTF_ids by name against the slim BTF. Both kernels boot under qemu with the boot
# test's guest (tests/boot/) and load the profile; the script prints both guests' lines, the sizes and the
# times, and fails where the relinked kernel's .BTF is not the slim BTF, its .BTF_ids (resolve_btfids') are
# not the patched image's (btfslim's), or the kernels load differently.
#
# Usage: tests/kernel/build-slim-kernel.sh [--linux VERSION] WORKDIR [BUILDDIR]
#   --linux   which linux-source-VERSION to build: 6.1 (the default) or 6.12
#   WORKDIR   where the source is unpacked and built (about 1.5 GB for 6.1, 2 GB for 6.12; reused when run
#             again). The results have the same names for every version: give each version its own.
#   BUILDDIR  btfslim's build directory (default: build), for btfslim and tests/boot-loader
# JOBS sets make's -j (default: nproc). Needs, besides what scripts/setup.sh installs: linux-source-VERSION,
# flex, bison, bc (installed here, as root, where missing). Not part of the test suite: a build takes many
# minutes of CPU.
set -eu

usage() { echo "usage: build-slim-kernel.sh [--linux 6.1|6.12] WORKDIR [BUILDDIR]" >&2; exit 2; }
version=6.1
if [ "${1:-}" = --linux ]; then
  [ $# -ge 2 ] || usage
  version=$2
  shift 2
fi
case $version in 6.1|6.12) ;; *) usage ;; esac
[ $# -ge 1 ] || usage
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mkdir -p "$1" && cd "$1" && pwd)
build=$(cd "${2:-$root/build}" && pwd)
btfslim=$build/btfslim
loader=$build/tests/boot-loader
[ -x "$btfslim" ] && [ -x "$loader" ] || { echo "build-slim-kernel: build btfslim with its tests first ($build)" >&2; exit 2; }

missing=""
for p in linux-source-$version flex bison bc; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "build-slim-kernel: installing$missing"
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# Runs make under time(1): its wall and CPU seconds go to the file $1.
timed() {
  out=$1
  shift
  command time -f '%e %U %S' -o "$out" "$@"
}
seconds() { awk '{ printf "%.0f s wall, %.0f s CPU", $1, $2 + $3 }' "$1"; }
src=$work/linux-source-$version
if [ ! -f "$src/Makefile" ]; then
  echo "build-slim-kernel: unpacking /usr/src/linux-source-$version.tar.xz"
  tar -xJf "/usr/src/linux-source-$version.tar.xz" -C "$work"
fi
cd "$src"
[ "$(make -s kernelversion | cut -d. -f1,2)" = "$version" ] || { echo "build-slim-kernel: $src is not Linux $version" >&2; exit 1; }
jobs=${JOBS:-$(nproc)}

# 1. The kernel as usual (vmlinux linked again: a run before left the slim one there).
make -s tinyconfig
scripts/kconfig/merge_config.sh -m .config "$root/tests/kernel/slim-btf.config" >/dev/null
make -s olddefconfig
# Every option of the fragment, on either version: one that a dependency turned off is a silent difference.
for option in $(grep -o '^CONFIG_[A-Z0-9_]*=y' "$root/tests/kernel/slim-btf.config"); do
  grep -qx "$option" .config || { echo "build-slim-kernel: $option did not stick" >&2; exit 1; }
done
rm -f vmlinux
timed "$work/time-full" make -s -j"$jobs" vmlinux
cp vmlinux "$work/vmlinux.full"

# 2. The profile, for this kernel (its vmlinux.h), and the slim BTF for it.
profile=$work/profile
rm -rf "$profile" && mkdir -p "$profile"
"$btfslim" dump --format c "$work/vmlinux.full" >"$profile/vmlinux.h"
multiarch=$(cc -print-multiarch)
for p in fentry fexit tp_btf iter_task task_btf d_path ksym core_kprobe kprobe tracepoint; do
  clang-19 -target bpf -g -O2 -Wall -D__TARGET_ARCH_x86 -I"$profile" -I/usr/include/"$multiarch" \
    -c "$root/tests/boot/progs/$p.bpf.c" -o "$profile/$p.bpf.o"
done
"$btfslim" minimize --kernel "$work/vmlinux.full" -o "$work/vmlinux.patched" --btf-out "$work/slim.btf" "$profile"/*.bpf.o

# 3. The recipe: link again, with the slim .BTF in the place of pahole's. scripts/link-vmlinux.sh runs
# `pahole -J $PAHOLE_FLAGS FILE` on a temporary link and takes FILE's .BTF into the final one: FILE is
# .tmp_vmlinux.btf in 6.1, a link of its own; in 6.12 it is .tmp_vmlinux1, the first of the kallsyms links,
# whose symbols kallsyms reads after pahole (objcopy leaves them as they are). Module links name the
# module last and pass --btf_base vmlinux; `pahole --version` (Kconfig's PAHOLE_VERSION) names no file.
cat >"$work/pahole-slim" <<'EOF'
#!/bin/sh
# pahole as usual; for the vmlinux link, slim.btf in the place of what it wrote.
pahole "$@" || exit
for last; do :; done
case $last in *.tmp_vmlinux.btf|*.tmp_vmlinux1) objcopy --update-section .BTF="$SLIM_BTF" "$last" ;; esac
EOF
chmod +x "$work/pahole-slim"
rm -f vmlinux
timed "$work/time-relink" make -s -j"$jobs" SLIM_BTF="$work/slim.btf" PAHOLE="$work/pahole-slim" vmlinux
cp vmlinux "$work/vmlinux.slim"
objcopy -O binary --only-section=.BTF "$work/vmlinux.slim" "$work/relinked.btf"
if ! cmp -s "$work/relinked.btf" "$work/slim.btf"; then
  echo "build-slim-kernel: the relinked kernel's .BTF is not slim.btf" >&2
  exit 1
fi
# resolve_btfids filled the relinked kernel's slots by name; btfslim renumbered the patched image's from the
# full ids: over the same slim BTF the two must agree, sets sorted alike.
objcopy -O binary --only-section=.BTF_ids "$work/vmlinux.slim" "$work/relinked.btf_ids"
objcopy -O binary --only-section=.BTF_ids "$work/vmlinux.patched" "$work/patched.btf_ids"
if ! cmp -s "$work/relinked.btf_ids" "$work/patched.btf_ids"; then
  echo "build-slim-kernel: .BTF_ids of the relinked kernel (resolve_btfids) and of the patched image (btfslim) differ" >&2
  exit 1
fi

# 4. Boot both (and the patched image) with the profile.
sh "$root/tests/boot/make-initramfs.sh" "$work/initrd.cpio" "$loader" "$profile"/*.bpf.o
status=0
for k in full slim patched; do
  sh "$root/tests/boot/boot.sh" "$work/vmlinux.$k" "$work/initrd.cpio" "$work/boot-$k.log" || status=1
  grep -E '^(LOAD|BTF|DMESG) ' "$work/boot-$k.log" | tr -d '\r' >"$work/guest-$k.txt" || true
  echo "== vmlinux.$k"
  cat "$work/guest-$k.txt"
done
grep '^LOAD ' "$work/guest-full.txt" >"$work/loads-full.txt" || true
# The same failures everywhere prove nothing: the full kernel must load the profile.
if grep -qv ' ok$' "$work/loads-full.txt" || [ ! -s "$work/loads-full.txt" ]; then
  echo "build-slim-kernel: the full kernel does not load the whole profile (its config lacks something)" >&2
  status=1
fi
for k in slim patched; do
  grep '^LOAD ' "$work/guest-$k.txt" | cmp -s - "$work/loads-full.txt" || { echo "build-slim-kernel: vmlinux.$k loads differently" >&2; status=1; }
done

size() { stat -c %s "$1"; }
section() { objcopy -O binary --only-section=.BTF "$1" "$work/.section" && size "$work/.section"; }
echo
echo "Linux $(make -s kernelversion), make -j$jobs vmlinux: $(seconds "$work/time-full"); relink with the slim BTF: $(seconds "$work/time-relink")"
echo "vmlinux: full $(size "$work/vmlinux.full") bytes, relinked $(size "$work/vmlinux.slim") bytes"
echo ".BTF:    full $(section "$work/vmlinux.full") bytes, relinked $(section "$work/vmlinux.slim") bytes"
exit $status
