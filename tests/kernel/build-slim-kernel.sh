#!/bin/sh
# Runs the kernel-build recipe of `btfslim minimize --kernel` (README, btfslim-minimize(1)) on a real build,
# and boots both kernels: Debian's linux-source-6.1, `make tinyconfig` plus tests/kernel/slim-btf.config,
# built once as usual (pahole's full .BTF), then linked again with PAHOLE pointing at a wrapper that puts
# the slim .BTF in the place of pahole's, so that the section itself shrinks and resolve_btfids fills
# .BTF_ids by name against the slim BTF. Both kernels boot under qemu with the boot test's guest
# (tests/boot/) and load the profile; the script prints both guests' lines, the sizes and the times, and
# fails where the relinked kernel's .BTF is not the slim BTF or the two kernels load differently.
#
# Usage: tests/kernel/build-slim-kernel.sh WORKDIR [BUILDDIR]
#   WORKDIR   where the source is unpacked and built (about 1.5 GB; reused when run again)
#   BUILDDIR  btfslim's build directory (default: build), for btfslim and tests/boot-loader
# Needs, besides what scripts/setup.sh installs: linux-source-6.1, flex, bison (installed here, as root,
# where missing). Not part of the test suite: a build takes minutes of CPU.
set -eu

[ $# -ge 1 ] || { echo "usage: build-slim-kernel.sh WORKDIR [BUILDDIR]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mkdir -p "$1" && cd "$1" && pwd)
build=$(cd "${2:-$root/build}" && pwd)
btfslim=$build/btfslim
loader=$build/tests/boot-loader
[ -x "$btfslim" ] && [ -x "$loader" ] || { echo "build-slim-kernel: build btfslim with its tests first ($build)" >&2; exit 2; }

missing=""
for p in linux-source-6.1 flex bison bc; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "build-slim-kernel: installing$missing"
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

now() { date +%s; }
src=$work/linux-source-6.1
if [ ! -f "$src/Makefile" ]; then
  echo "build-slim-kernel: unpacking /usr/src/linux-source-6.1.tar.xz"
  tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$work"
fi
cd "$src"
jobs=$(nproc)

# 1. The kernel as usual.
t0=$(now)
make -s tinyconfig
scripts/kconfig/merge_config.sh -m .config "$root/tests/kernel/slim-btf.config" >/dev/null
make -s olddefconfig
for option in PVH DEBUG_INFO_BTF BPF_SYSCALL BPF_JIT NET MODULES FUNCTION_TRACER SERIAL_8250_CONSOLE BLK_DEV_INITRD; do
  grep -q "^CONFIG_$option=y" .config || { echo "build-slim-kernel: CONFIG_$option did not stick" >&2; exit 1; }
done
make -s -j"$jobs" vmlinux
cp vmlinux "$work/vmlinux.full"
t1=$(now)

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

# 3. The recipe: link again, with the slim .BTF in the place of pahole's.
cat >"$work/pahole-slim" <<'EOF'
#!/bin/sh
# pahole as usual; for the vmlinux link, slim.btf in the place of what it wrote.
pahole "$@" || exit
for last; do :; done
case $last in *.tmp_vmlinux.btf) objcopy --update-section .BTF="$SLIM_BTF" "$last" ;; esac
EOF
chmod +x "$work/pahole-slim"
t2=$(now)
rm -f vmlinux
make -s -j"$jobs" SLIM_BTF="$work/slim.btf" PAHOLE="$work/pahole-slim" vmlinux
cp vmlinux "$work/vmlinux.slim"
t3=$(now)
objcopy -O binary --only-section=.BTF "$work/vmlinux.slim" "$work/relinked.btf"
if ! cmp -s "$work/relinked.btf" "$work/slim.btf"; then
  echo "build-slim-kernel: the relinked kernel's .BTF is not slim.btf" >&2
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
echo "build: $((t1 - t0)) s (make -j$jobs vmlinux), relink with the slim BTF: $((t3 - t2)) s"
echo "vmlinux: full $(size "$work/vmlinux.full") bytes, relinked $(size "$work/vmlinux.slim") bytes"
echo ".BTF:    full $(section "$work/vmlinux.full") bytes, relinked $(section "$work/vmlinux.slim") bytes"
exit $status
