#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A pseudo-terminal between the members of a process tree, as Open MPI's
# mpirun has one with each rank, and a session's controlling terminal, as
# `script` or sshd give a shell one: tests/workloads/ptytree (a root
# holding the master; a child leading a session of its own whose
# controlling terminal is the slave, which it holds open twice, ONLCR and
# ECHO off on it, a window of 33x77; a grandchild in a group of its own,
# the terminal's foreground, writing "line I" to the slave; the root
# counts the lines and prints one line at the end, exit 3). Checkpointed
# mid-run with --kill and restarted, and checkpointed while it runs on
# (the original then ends, and the image restarts): each run prints the
# line of an uninterrupted run (no line lost, none twice), and the child
# and grandchild find their terminal as they left it: its settings, the
# child's session's controlling terminal, the grandchild's group its
# foreground. The images show the pty and who has it as a controlling
# terminal. A tree holding a slave whose master is outside it is refused
# by name, and runs on.
#
# Topology: one node, no network.
#
# The CLI on trees: on the 6.1 line only, for CI's hour; the engine's
# side of trees (cr_tree) runs on both lines.
# kernels: 6.1
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
. "$CKPT_TOP/vm-tests/lib/tree.sh"

ptytree=$CKPT_TOP/build/tests/workloads/ptytree
tmp=$(mktemp -d)

cleanup() {
	pkill -KILL -x ptytree 2> /dev/null || true
	wait 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# start NAME [LINES]: the tree in a session of its own, in the background,
# LINES ($lines) lines 50 ms apart, the last held until $tmp/hold is
# removed (let_go), output to NAME.out and NAME.err; sets $root once its
# child and grandchild run and a few lines went through, and $pids.
start() {
	touch "$tmp/hold"
	setsid "$ptytree" "${2:-$lines}" 50 "$tmp/hold" > "$tmp/$1.out" 2> "$tmp/$1.err" &
	root=$!
	for _ in $(seq 300); do
		[ "$(members "$root" | wc -w)" = 3 ] && break
		sleep 0.1
	done
	sleep 1
	pids=$(members "$root")
}

# let_go: the tree's last line may come (after the checkpoint).
let_go() {
	rm -f "$tmp/hold"
}

ktap_plan 10
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"

# 240 lines, 12 s a run: on the debug kernel the tree took longer than
# 120 lines' 6 s to show its two members, and ended before its checkpoint.
lines=240
timeout 60 "$ptytree" $lines 5 > "$tmp/expected" 2> "$tmp/plain.err" && rc=0 || rc=$?
sed 's/^/# uninterrupted: /' "$tmp/expected" "$tmp/plain.err"
ktap_check "an uninterrupted run: $lines lines through the pty, exit 3" sh -c "
	test $rc = 3 && grep -qx 'ptytree: $lines lines, sum $((lines * (lines - 1) / 2)), child 0' '$tmp/expected'"

start kill
ktap_check "--kill mid-run: an image each, both with the pty" sh -c "
	ckpt checkpoint --tree $root --kill -o '$tmp/k' > /dev/null &&
	for p in $pids; do ckpt inspect '$tmp/k/'\$p.img | grep -A1 '^pseudo-terminals: 1' | grep -q 'pts .*rows 33 cols 77' || exit 1; done"
let_go
reap "$root" 60 > /dev/null 2>&1 || true
# tree: lines of the root, the child (the session's leader) and the printer.
ktap_check "the images say whose controlling terminal the pty is, and whose group its foreground" sh -c "
	set -- $pids
	for p; do ckpt inspect '$tmp/k/'\$p.img | grep '^tree: '; done > '$tmp/k.tree'; cat '$tmp/k.tree'
	sed -n 1p '$tmp/k.tree' | grep -v -q 'controlling terminal' &&
	sed -n 2p '$tmp/k.tree' | grep -v 'terminal foreground' | grep -q ', controlling terminal: pts [0-9]*$' &&
	sed -n 3p '$tmp/k.tree' | grep -q ', terminal foreground, controlling terminal: pts [0-9]*$' &&
	ckpt inspect --json '$tmp/k/'\$2.img | grep -q '\"ctty\":[0-9]' &&
	ckpt inspect --json '$tmp/k/'\$1.img | grep -q '\"ctty\":null'"
ktap_check "the image's JSON names the pty's settings" sh -c "
	ckpt inspect --json '$tmp/k/$(echo $pids | cut -d' ' -f2).img' | grep -q '\"ptys\":\[{\"pts\":[0-9]*,\"rows\":33,\"cols\":77,\"canonical\":true,\"echo\":false'"
ktap_check "--kill, restarted: every line once, the terminal as it was: the same line, exit 3" sh -c "
	timeout 60 ckpt restart '$tmp/k' > '$tmp/k.out' 2> '$tmp/k.err'; rc=\$?
	cat '$tmp/k.out' '$tmp/k.err'; test \$rc = 3 && cmp '$tmp/expected' '$tmp/k.out'"

start cont
ktap_check "continue: checkpointed mid-run, the tree runs on" sh -c "
	ckpt checkpoint --tree $root -o '$tmp/c' > /dev/null && kill -0 $root"
let_go
reap "$root" 60 && rc=0 || rc=$?
ktap_check "continue: the original ends with the uninterrupted run's line" sh -c "
	cat '$tmp/cont.out' '$tmp/cont.err'; test $rc = 3 && cmp '$tmp/expected' '$tmp/cont.out'"
ktap_check "continue: the image restarted afterwards prints it too" sh -c "
	timeout 60 ckpt restart '$tmp/c' > '$tmp/c.out' 2> '$tmp/c.err'; rc=\$?
	cat '$tmp/c.out' '$tmp/c.err'; test \$rc = 3 && cmp '$tmp/expected' '$tmp/c.out'"

# The child alone: the slave it opened again at fd 3 (fd 1, the tree's
# standard output, is the restarter's at a restart) has its master in its
# parent, outside the tree. A minute of lines, so that it still runs
# after the refusal on a slow kernel; ended after.
start outside 1200
child=$(echo $pids | cut -d' ' -f2)
ktap_check "a slave whose master is outside the tree: refused by name, it runs on" sh -c "
	! ckpt checkpoint --tree $child -o '$tmp/o' 2> '$tmp/o.err'; cat '$tmp/o.err'
	grep -q 'pid $child fd 3 (/dev/pts/[0-9]*) is a pseudo-terminal whose master is closed or held outside the tree' '$tmp/o.err' &&
	test ! -e '$tmp/o' && kill -0 $child && kill -0 $root"
let_go
kill -KILL "$child" 2> /dev/null || true
reap "$root" 10 > /dev/null 2>&1 || true
ktap_finish
