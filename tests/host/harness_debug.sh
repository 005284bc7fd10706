#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel (mk/debug-kernel) does what it is there for: it boots
# with KASAN, KFENCE and lockdep on, and a KASAN report or a lockdep report
# in the guest fails the run (exit 125, the verdict naming the report), as
# a WARNING does on the distro kernels (harness.sh). Without a built debug
# kernel every point is skipped, never passed; make check builds it first.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
vm=$CKPT_TOP/vm-tests/vm
work=$CKPT_TOP/build/selftest-debug

ktap_plan 7
if ! kdir=$("$CKPT_TOP/mk/debug-kernel" --if-built); then
	for i in 1 2 3 4 5 6 7; do
		ktap_skip "debug kernel point $i" "the debug kernel is not built (make debug-kernel)"
	done
	exit 0
fi
rm -rf "$work"
mkdir -p "$work/mod"
ln -s "$CKPT_TOP"/vm-tests/selftest/debug/* "$work/mod/"

vm_kernel=debug
. "$CKPT_TOP/vm-tests/lib/runvm.sh"

ktap_check "the bug module builds against the debug kernel" \
	make -s -C "$kdir" M="$work/mod" modules

ktap_check "the engine builds against the debug kernel" \
	make -s -C "$CKPT_TOP" kmod-debug

# In the guest: each checker says it is on, the engine loads and unloads,
# and lockdep is still armed after (debug_locks turns 0 at its first
# report); the run's verdict says the kernel log stayed clean.
cat > "$work/on.sh" <<GUEST
dmesg | grep -q "KernelAddressSanitizer initialized" || { echo "no KASAN"; exit 1; }
grep -q "enabled: 1" /sys/kernel/debug/kfence/stats || { echo "no KFENCE"; exit 1; }
insmod "$CKPT_TOP/build/\$(uname -r)/kmod/ckpt/ckpt.ko" && rmmod ckpt || exit 1
grep -Eq "debug_locks: +1" /proc/lockdep_stats || { echo "lockdep is off"; exit 1; }
GUEST
ktap_check "the debug kernel has KASAN, KFENCE and lockdep on; the engine loads cleanly" \
	run_vm on 0 -- sh "$work/on.sh"

ktap_check "a KASAN report fails the run" \
	run_vm oob 125 -- insmod "$work/mod/ckpt_debugbug.ko" bug=oob
ktap_check "... and the verdict shows the report" \
	grep -q "BUG: KASAN: slab-out-of-bounds" "$work/oob/verdict"

ktap_check "a lockdep report fails the run" \
	run_vm abba 125 -- insmod "$work/mod/ckpt_debugbug.ko" bug=abba
ktap_check "... and the verdict shows the report" \
	grep -q "possible circular locking dependency" "$work/abba/verdict"

ktap_finish
