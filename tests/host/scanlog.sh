#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest kernel log scanner flags every kind of kernel trouble the VM
# harness must fail a run on, and nothing else.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
scan=$CKPT_TOP/vm-tests/lib/scanlog
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bad=(
	"[   12.345678] WARNING: CPU: 1 PID: 42 at kmod/ckpt/main.c:10 ckpt_init+0x1/0x2 [ckpt]"
	"[    1.000001] BUG: kernel NULL pointer dereference, address: 0000000000000000"
	"[    2.5] BUG: KASAN: slab-out-of-bounds in ckpt_read+0x10/0x20"
	"[    3.100000] kernel BUG at mm/slub.c:123!"
	"[    4.000000] Oops: 0002 [#1] PREEMPT SMP NOPTI"
	"[    4.000000] general protection fault, probably for non-canonical address"
	"[    5.000000] Kernel panic - not syncing: Fatal exception"
	"[    6.000000] WARNING: possible circular locking dependency detected"
	"[    6.000000] INFO: task ckpt:123 blocked for more than 60 seconds."
	"[    7.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [ckpt:1]"
	"[    8.000000] rcu: INFO: rcu_preempt self-detected stall on CPU"
	"[    9.000000] UBSAN: array-index-out-of-bounds in kmod/ckpt/image.c:42:7"
	"[   10.000000] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"
	"[   11.000000] Call Trace:"
	"[   12.000000] BUG: KFENCE: use-after-free read in ckpt_release+0x1/0x2 [ckpt]"
	"[   13.000000] list_add corruption. prev->next should be next (ffff8880), but was 0000."
	"[   14.000000] WARNING: suspicious RCU usage"
	"[   15.000000] WARNING: inconsistent lock state"
)
ktap_plan $((${#bad[@]} + 3))
for line in "${bad[@]}"; do
	printf '[    0.000000] Linux version 6.1.0\n%s\n[    0.1] done\n' "$line" > "$tmp/log"
	if out=$("$scan" "$tmp/log") && [ -z "$out" ]; then
		ktap_fail "missed: $line"
	else
		ktap_ok "flags: ${line#*] }"
	fi
done

cat > "$tmp/clean" <<-'LOG'
[    0.000000] Linux version 6.1.0-56-amd64 (debian-kernel@lists.debian.org)
[    3.357053] 9p: Installing v9fs 9p2000 file system support
[    5.100000] ckpt: loading out-of-tree module taints kernel.
[    5.100001] ckpt: module verification failed: signature and/or required key missing - tainting kernel
[    5.2] ckpt: engine 0.1.0 loaded (uAPI 1)
[    0.000000] KernelAddressSanitizer initialized (generic)
[    0.100000] kfence: initialized - using 2097152 bytes for 255 objects
[    0.200000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
[    0.300000] ODEBUG: 7 of 7 active objects replaced
ckptvm[node0]: running job
LOG
ktap_check "a clean boot log passes" "$scan" "$tmp/clean"

printf 'WARNING: this is test output, not the kernel\nBUG: also not\n' > "$tmp/user"
ktap_check "untimestamped (userspace) lines are not kernel trouble" "$scan" "$tmp/user"

cp "$tmp/clean" "$tmp/one"
echo "[   12.000000] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x0" > "$tmp/two"
if "$scan" "$tmp/one" "$tmp/two" > "$tmp/out"; then
	ktap_fail "a problem in the second of two logs is found"
else
	grep -q '^two: ' "$tmp/out" && ktap_ok "a problem in the second of two logs is found, named by file" ||
		ktap_fail "a problem in the second of two logs is found, named by file"
fi
ktap_finish
