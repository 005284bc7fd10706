#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Restart on the other kernel line: a process that calls the vdso's
# functions (tests/workloads/clocks) is checkpointed on 6.1, restarted on
# 6.12, checkpointed there and restarted on 6.1 again.
# After each restart it must run on the new kernel with the same pid, its
# line count going on, and every vdso call giving sane answers (monotonic
# time moving forward, the wall clocks agreeing with each other, a 1 ns
# resolution, a CPU number), with the vdso object glibc found at start-up
# still readable; its old vdso address must no longer be the kernel's
# [vdso] mapping (it holds the jumps to the new one). And a process whose
# thread was stopped inside the vdso is refused on the other kernel, named,
# and restarts on its own. Three VM boots in all: 6.1, 6.12, 6.1.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
vm=$CKPT_TOP/vm-tests/vm
guest=$CKPT_TOP/vm-tests/guest/cross-kernel
work=$CKPT_TOP/build/cross-kernel
k61=$("$CKPT_TOP/mk/kver" 6.1)
k612=$("$CKPT_TOP/mk/kver" 6.12)
rm -rf "$work"
mkdir -p "$work"
# One key for every VM, as a cluster shares one: images made on one
# kernel restart authenticated on the other (security.md).
(umask 077; head -c 32 /dev/urandom > "$work/cluster.key")

# boot NAME KVER STEP...: one VM run of the guest script doing the steps
# (vm-tests/guest/cross-kernel); $work/NAME is the run's directory, the one
# the guest can write to, and each step's directory is made under it, with
# a link $work/STEP-DIR to it for the checks below. A VM boot is most of
# the time here, so the steps on one kernel share one.
boot() {
	local name=$1 kver=$2 rc=0
	shift 2
	"$vm" -q -k "$kver" -t 400 -o "$work/$name" -- "$guest" "$@" \
		> "$work/$name.log" 2>&1 || rc=$?
	sed 's/^/    /' "$work/$name.log" "$work/$name/node0.out" 2> /dev/null
	return "$rc"
}

# did DIR: the step whose directory is $work/DIR ended well.
did() {
	grep -qx 0 "$work/$1/rc" 2> /dev/null && return 0
	sed 's/^/    /' "$work/$1/restart.err" 2> /dev/null
	echo "step $1: exit status $(cat "$work/$1/rc" 2> /dev/null || echo "none: not reached")"
	return 1
}

# sane NAME KVER PREV: the lines of run NAME came from a process on KVER
# that went on from run PREV's last line, and every one is sane.
sane() {
	awk -v kver="$2" -v prev="$(tail -n 1 "$work/$3/out.txt")" '
	BEGIN { split(prev, p); n = p[2]; pid = p[4]; mono = p[8] }
	function bad(why) { print "line " NR ": " why ": " $0; err = 1; exit 1 }
	{
		if ($2 != n + 1) bad("line count does not go on from " n)
		if ($4 != pid) bad("pid is not " pid)
		if ($6 != kver) bad("not running on " kver)
		if (NR > 1 && $8 <= mono) bad("monotonic time did not move forward")
		d = $10 - $12; if (d < -1 || d > 1) bad("clock_gettime and gettimeofday disagree")
		d = $10 - $14; if (d < -1 || d > 1) bad("clock_gettime and time disagree")
		if ($16 != 1) bad("resolution is not 1 ns")
		if ($18 !~ /^[0-9]+$/) bad("no CPU number")
		if ($20 != 1) bad("the vdso object is not readable")
		n = $2; mono = $8
	}
	END { if (!err && NR < 5) { print "only " NR " lines"; exit 1 } }
	' "$work/$1/out.txt"
}

# at IMAGE-RUN RUN: the maps line of run RUN at the address where the
# process of run IMAGE-RUN's image had its vdso.
at() {
	local addr
	addr=$("$CKPT_TOP/build/bin/ckpt" inspect -v "$work/$1/image" |
	       sed -n 's/.*, vdso \([0-9a-f]*\) +.*/\1/p')
	grep "^$addr-" "$work/$2/maps.txt"
}

# proxied IMAGE-RUN RUN: there, the old vdso text (with jumps), no [vdso].
proxied() {
	at "$1" "$2" | grep -v "\[vdso\]" | grep -q " r-xp "
}

# native IMAGE-RUN RUN: there, the kernel's own [vdso], moved into place.
native() {
	at "$1" "$2" | grep -q "\[vdso\]"
}

# hop NAME KVER PREV: NAME restarted PREV's image on KVER and its lines
# are sane.
hop() {
	did "$1" && sane "$1" "$2" "$3"
}

# The steps, three boots: 6.1 starts a process (a) and checkpoints one
# with its thread inside the vdso (v); 6.12 restarts a (b), refuses v
# (v612) and restarts its own b (e); 6.1 restarts b (c), runs v (v61) and
# restarts its own c (d).
ktap_plan 10
mkdir -p "$work/b61a" "$work/b612" "$work/b61b"
for d in a v; do ln -sfn "b61a/$d" "$work/$d"; done
for d in b v612 e; do ln -sfn "b612/$d" "$work/$d"; done
for d in c v61 d; do ln -sfn "b61b/$d" "$work/$d"; done
boot b61a "$k61" start "$work/b61a/a" vdso-start "$work/b61a/v" || true
boot b612 "$k612" restart "$work/b612/b" "$work/a/image" \
	vdso-restart "$work/b612/v612" "$work/v/image" \
	restart "$work/b612/e" "$work/b612/b/image" || true
boot b61b "$k61" restart "$work/b61b/c" "$work/b/image" \
	vdso-restart "$work/b61b/v61" "$work/v/image" \
	restart "$work/b61b/d" "$work/b61b/c/image" || true

vdso_refused() {
	did v612 && grep -qx refused "$work/v612/result" &&
		grep -q "stopped inside the vdso" "$work/v612/restart.err"
}
vdso_runs() {
	did v61 && grep -qx running "$work/v61/result"
}

ktap_check "a process on $k61 is checkpointed" did a
ktap_check "... restarts on $k612 and runs sanely there" hop b "$k612" a
ktap_check "... is checkpointed there and restarts on $k61 again" hop c "$k61" b
ktap_check "... and on $k61 once more, from an image made there" hop d "$k61" c
ktap_check "on $k612 the old vdso address held the jumps, not the [vdso]" \
	proxied a b
ktap_check "a $k612 image restarts on $k612 with no jumps" hop e "$k612" b
ktap_check "... its [vdso] where the image had it" native b e
ktap_check "a checkpoint on $k61 finds a thread inside the vdso" did v
ktap_check "... which $k612 refuses to restart, naming it" vdso_refused
ktap_check "... and $k61 restarts" vdso_runs
ktap_finish
