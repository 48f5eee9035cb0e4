#!/bin/sh
# Boots a kernel with the boot test's guest (make-initramfs.sh) under qemu and keeps its console in LOG:
# the proof that a vmlinux whose .BTF btfslim rewrote still boots and loads BPF programs is a real boot.
# qemu loads the vmlinux ELF directly (its PVH entry point), under TCG: no KVM is needed, and a boot
# takes seconds. Exits 0 once the guest printed its end marker; otherwise 1, with one line on stderr
# saying why (timed out, or qemu ended early) and the kernel's panic or else the console's last line.
#
# Usage: boot.sh VMLINUX INITRD LOG
# BOOT_TIMEOUT (seconds, default 150) bounds the whole boot; BOOT_APPEND is added to the kernel's
# command line (e.g. btfslim.verbose, for the verifier's logs on the console).
set -eu

[ $# -eq 3 ] || { echo "usage: boot.sh VMLINUX INITRD LOG" >&2; exit 2; }
vmlinux=$1
initrd=$2
log=$3
limit=${BOOT_TIMEOUT:-150}

command -v qemu-system-x86_64 >/dev/null || { echo "boot.sh: no qemu-system-x86_64 (Debian: qemu-system-x86)" >&2; exit 1; }

status=0
timeout -k 5 "$limit" qemu-system-x86_64 -m 512 -smp 1 -nographic -no-reboot -nic none \
  -kernel "$vmlinux" -initrd "$initrd" \
  -append "console=ttyS0 panic=-1 quiet ${BOOT_APPEND:-}" </dev/null >"$log" 2>&1 || status=$?

if tr -d '\r' <"$log" | grep -q '^BTFSLIM-BOOT END$'; then
  exit 0
fi
# The panic, when the kernel panicked (its last line is a memory layout); else the console's last line.
last=$(tr -d '\r\033' <"$log" | grep 'Kernel panic' | tail -n 1)
[ -n "$last" ] || last=$(tr -d '\r\033' <"$log" | grep -v -e '^[[:space:]]*$' -e 'terminating on signal' | tail -n 1)
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  why="timed out after ${limit}s"
else
  why="qemu exited with status $status"
fi
echo "boot.sh: $vmlinux: no end marker in $log ($why); console: ${last:-(empty)}" >&2
exit 1
