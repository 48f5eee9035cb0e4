#!/bin/sh
# Builds the boot test's guest: an initramfs (newc cpio, uncompressed) of busybox-static, the static BPF
# loader and the BPF objects to load, whose /init loads every object on the kernel it boots and reports
# on the serial console, between two markers, what tests/e2e/test_kernel_boot.cc compares:
#
#   BTFSLIM-BOOT START <kernel release>
#   INSMOD <module> ok|fail <status>       one per -m module (.ko, or compressed .ko.xz, .ko.zst, .ko.gz:
#                                          the kernel decompresses it), in the order given, before any load
#   MODBTF <module> <size>                 one per module BTF under /sys/kernel/btf
#   LOAD <object> ok|fail ...              one per object, in the order given (the loader's lines)
#   BTF <size> <sha256>                    of /sys/kernel/btf/vmlinux, or "BTF none"
#   DMESG <line>                           the kernel's messages that mention BPF or BTF, without time
#   BTFSLIM-BOOT END
#
# then reboots the machine (which ends qemu). Each object is loaded by its own run of the loader, so that
# one that crashes or hangs the loader cannot hide the others' results. `btfslim.verbose` on the kernel
# command line makes the loader copy all of libbpf's output (the verifier's logs) to the console.
#
# Usage: make-initramfs.sh [-m MODULE.ko[.xz|.zst|.gz]]... OUT LOADER OBJECT...
# Needs busybox (Debian's busybox-static: it must run without a libc in the guest) and cpio.
set -eu

usage() {
  echo "usage: make-initramfs.sh [-m MODULE.ko]... OUT LOADER OBJECT..." >&2
  exit 2
}

modules=""
while [ $# -gt 0 ] && [ "$1" = "-m" ]; do
  [ $# -ge 2 ] || usage
  modules="$modules $2"
  shift 2
done
[ $# -ge 3 ] || usage
out=$1
loader=$2
shift 2

busybox=$(command -v busybox) || { echo "make-initramfs: no busybox (Debian: busybox-static)" >&2; exit 1; }
command -v cpio >/dev/null || { echo "make-initramfs: no cpio" >&2; exit 1; }
# The guest has no libc: a busybox with a program interpreter would not run there.
if readelf -l "$busybox" 2>/dev/null | grep -q 'INTERP'; then
  echo "make-initramfs: $busybox is dynamically linked (install busybox-static)" >&2
  exit 1
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/btfslim-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/objects" "$root/modules"
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$loader" "$root/bin/loader"

# Numbered, so that the guest's glob keeps the order given here.
n=0
for object in "$@"; do
  n=$((n + 1))
  mkdir -p "$root/objects/$(printf '%03d' "$n")"
  cp "$object" "$root/objects/$(printf '%03d' "$n")/"
done
n=0
for module in $modules; do
  n=$((n + 1))
  mkdir -p "$root/modules/$(printf '%03d' "$n")"
  cp "$module" "$root/modules/$(printf '%03d' "$n")/"
done

cat >"$root/init" <<'EOF'
#!/bin/sh
# The boot test's guest (tests/boot/make-initramfs.sh says what it prints and why).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t bpf bpf /sys/fs/bpf
echo
echo "BTFSLIM-BOOT START $(uname -r)"
verbose=
grep -q 'btfslim.verbose' /proc/cmdline && verbose=-v
for ko in /modules/*/*.ko*; do
  [ -e "$ko" ] || continue
  /bin/loader --insmod "$ko" || true
done
for f in /sys/kernel/btf/*; do
  [ "${f##*/}" = vmlinux ] || echo "MODBTF ${f##*/} $(wc -c <"$f")"
done
for object in /objects/*/*; do
  [ -e "$object" ] || continue
  /bin/loader $verbose "$object" || [ $? -eq 1 ] || echo "LOAD $(basename "$object") fail crashed the loader"
done
if [ -e /sys/kernel/btf/vmlinux ]; then
  echo "BTF $(wc -c </sys/kernel/btf/vmlinux) $(sha256sum </sys/kernel/btf/vmlinux | cut -d' ' -f1)"
else
  echo "BTF none"
fi
dmesg | sed 's/^\[[ 0-9.]*\] //' | grep -iE 'bpf|btf' | sed 's/^/DMESG /'
echo "BTFSLIM-BOOT END"
# qemu runs with -no-reboot, so a reboot ends it at once; a power-off needs ACPI, which a tiny kernel
# (tests/kernel/) lacks: it halts, and qemu would run on to boot.sh's timeout.
reboot -f
EOF
chmod 755 "$root/init"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$out"
