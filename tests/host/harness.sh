#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The VM harness itself: a command's exit status comes back, and a run fails
# (exit 125, with a verdict naming why) when the guest kernel WARNs, when it
# panics and when the run times out; a boot that does not reach /init in
# time is tried again, five boots at most (CKPT_VM_BOOTS; three here).
# Uses the default kernel.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
vm=$CKPT_TOP/vm-tests/vm
kver=$("$CKPT_TOP/mk/kver" --default)
work=$CKPT_TOP/build/selftest
rm -rf "$work"
mkdir -p "$work/warn"
ln -s "$CKPT_TOP"/vm-tests/selftest/warn/* "$work/warn/"

vm_kernel="$kver"
. "$CKPT_TOP/vm-tests/lib/runvm.sh"

ktap_plan 10
ktap_check "the warning module builds" \
	make -s -C "/lib/modules/$kver/build" M="$work/warn" modules

# One boot for two points: the guest mounts its own /tmp, and a working
# directory (or a clone) of the host's under it is bound back, not hidden;
# the command's status, 7 only when it read the file there, comes back.
tmpdir=$(mktemp -d /tmp/ckpt-harness.XXXXXX)
trap 'rm -rf "$tmpdir"' EXIT
echo hosttmp > "$tmpdir/file"
in_tmp() {
	(cd "$tmpdir" && run_vm exit 7 -- sh -c 'grep -qx hosttmp file && exit 7')
}
ktap_check "a command's exit status comes back, run in a directory under the host's /tmp" in_tmp
ktap_check "... with a clean verdict" grep -qx ok "$work/exit/verdict"

ktap_check "a guest kernel WARNING fails the run" \
	run_vm warn 125 -- insmod "$work/warn/ckpt_warn.ko"
ktap_check "... and the verdict shows the warning" \
	grep -q "WARNING: .*ckpt_warn_init" "$work/warn/verdict"

ktap_check "a guest panic fails the run" \
	run_vm panic 125 -- sh -c 'echo c > /proc/sysrq-trigger'
ktap_check "... and the verdict says the job did not finish" \
	grep -q "stopped before the job finished" "$work/panic/verdict"

ktap_check "a run that does not finish in time fails" \
	run_vm timeout 125 -t 30 -- sleep 600

# A boot limit no kernel can meet: every boot cut at the limit, three of
# them (five by default: each costs some 17 s here).
stall() {
	CKPT_VM_BOOT_LIMIT=2 CKPT_VM_BOOTS=3 run_vm stall 125 -- true
}
ktap_check "a boot that does not reach /init in time fails, after its boots (3 here)" stall
ktap_check "... the verdict says so and two retries are logged" \
	sh -c 'grep -q "made no way to /init in 2s, 3 boot" "$1/verdict" &&
		[ "$(grep -c "made no way to /init" "$1/retries")" = 2 ] &&
		[ -d "$1/boot1" ] && [ -d "$1/boot2" ] && [ ! -d "$1/boot3" ]' - "$work/stall"
ktap_finish
