#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel (mk/debug-kernel) does what it is there for: it boots
# with KASAN, KFENCE and lockdep on, and a KASAN report or a lockdep report
# in the guest fails the run (exit 125, the verdict naming the report), as
# a WARNING does on the distro kernels (harness.sh). Without a built debug
# kernel every point is skipped, never passed (as in CI's make check); make
# check-debug or make debug-kernel builds it.
#
# One boot does it all (a debug boot is minutes under TCG): the guest
# checks the checkers and the engine with a clean log first, then commits
# a lockdep bug and a KASAN bug, and sees each one's own trace (lockdep
# disarmed, the KASAN line in dmesg); the harness must fail the run and
# name both. That a report of either kind alone fails a run is the
# scanner's rule, which scanlog.sh tests on logs of each.
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

# In the guest, each step leaves a file in the run's directory when it
# holds: each checker says it is on, the engine loads and unloads with the
# kernel log clean and lockdep still armed (debug_locks turns 0 at its
# first report); then the lockdep bug disarms lockdep, and the KASAN bug
# leaves its report in dmesg.
out=$work/bugs
cat > "$work/bugs.sh" <<GUEST
set -u
dmesg | grep -q "KernelAddressSanitizer initialized" || { echo "no KASAN"; exit 1; }
grep -q "enabled: 1" /sys/kernel/debug/kfence/stats || { echo "no KFENCE"; exit 1; }
insmod "$CKPT_TOP/build/\$(uname -r)/kmod/ckpt/ckpt.ko" && rmmod ckpt || exit 1
grep -Eq "debug_locks: +1" /proc/lockdep_stats || { echo "lockdep is off"; exit 1; }
dmesg | "$CKPT_TOP/vm-tests/lib/scanlog" /dev/stdin || { echo "log not clean"; exit 1; }
touch "$out/on"
insmod "$work/mod/ckpt_debugbug.ko" bug=abba
grep -Eq "debug_locks: +0" /proc/lockdep_stats && touch "$out/abba"
insmod "$work/mod/ckpt_debugbug.ko" bug=oob
dmesg | grep -q "BUG: KASAN: slab-out-of-bounds" && touch "$out/oob"
exit 0
GUEST
failed=0
run_vm bugs 125 -- sh "$work/bugs.sh" || failed=1

ktap_check "the debug kernel has KASAN, KFENCE and lockdep on; the engine loads cleanly" \
	test -e "$out/on"
ktap_check "a lockdep report and a KASAN report: the guest sees both" \
	sh -c 'test -e "$1/abba" && test -e "$1/oob"' - "$out"
ktap_check "... and the harness fails the run (exit 125)" \
	test "$failed" = 0
ktap_check "... its verdict naming the lockdep report" \
	grep -q "possible circular locking dependency" "$out/verdict"
ktap_check "... and the KASAN report" \
	grep -q "BUG: KASAN: slab-out-of-bounds" "$out/verdict"
ktap_finish
