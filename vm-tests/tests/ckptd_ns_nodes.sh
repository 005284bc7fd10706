#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ckpt-run --ns over two nodes (Documentation/ckptd.md, "Jobs in
# namespaces of their own"). The job's program on node0 launches a share
# on node1 through ckpt-ssh, as mpirun would: ckptd starts it there in a
# pid, an IPC and a mount namespace of the job's own, as ckpt-run's
# program is on node0. Each side makes a System V segment and a
# semaphore (which node1's own IPC namespace would have had refused at
# the checkpoint, as before) and counts to 30. A second ckpt-ssh to
# node1 enters the namespaces the job has there already (one pid
# namespace a node, as the engine takes a node's share). The job is
# checkpointed with --kill, restarted: node1's share comes back in a new
# IPC namespace with its segment and semaphore, and every side counts
# every line once.
#
# Topology: node0 and node1 on the private link, each with ckptd, the
# snapshot root on the results share both mount.
# nodes: 2
# kernels: 6.12
# timeout: 900
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

shared=${ckptvm_out:?}/ckptd-ns-nodes
. "$CKPT_TOP/vm-tests/lib/twonodes.sh"
trap twonodes_cleanup EXIT

ktap_plan 11
start_nodes

# count.sh DIR NAME [ipc]: with ipc, a segment and a semaphore; then 0
# to 29 into DIR/out-NAME, one every 0.3 s, held at 10 while DIR/hold
# exists (each look a sleep forked: a checkpoint that meets a fork looks
# again).
cat > "$shared/count.sh" <<'COUNT'
if [ "${3:-}" = ipc ]; then
	ipcmk -M 4096 > /dev/null && ipcmk -S 1 > /dev/null || exit 9
fi
i=0
while [ $i -lt 30 ]; do
	echo $i >> "$1/out-$2"
	i=$((i + 1))
	while [ $i = 10 ] && [ -e "$1/hold" ]; do sleep 1; done
	sleep 0.3
done
COUNT
# find.sh JOB DIR NAME: the pid of JOB's count.sh DIR NAME on this node.
cat > "$shared/find.sh" <<'FIND'
for p in $(cat /sys/fs/cgroup/ckpt/$1/cgroup.procs); do
	case "$(tr '\0' ' ' < /proc/$p/cmdline 2> /dev/null)" in
	*"count.sh $2 $3 "*) echo "$p"; exit 0 ;;
	esac
done
exit 1
FIND
touch "$shared/hold"
(cd /tmp && "$bin/ckpt-run" --ns --name nsn sh -c \
	"'$bin/ckpt-ssh' node1 sh '$shared/count.sh' '$shared' b ipc &
	 sleep 2; '$bin/ckpt-ssh' node1 sh '$shared/count.sh' '$shared' c &
	 sh '$shared/count.sh' '$shared' a ipc; wait" \
	> "$shared/run.out" 2> "$shared/run.err") &
runner=$!
ktap_poll 60 grep -q "^ckpt-run: job " "$shared/run.err" || true
job=$(job_of "$shared/run.err")
ktap_poll 180 sh -c "for n in a b c; do test -e '$shared/out-'\$n || exit 1; done" ||
	ktap_note "not every side is counting yet"

# on_node1 NAME TEST: TEST, a shell condition on $p, node1's count.sh
# NAME of job $job; if not, what the job and the daemons said.
on_node1() {
	ssh node1 "p=\$(sh '$shared/find.sh' '$job' '$shared' $1) && $2" && return 0
	tail -n 5 "$shared/run.err" "$shared/ckptd-node0.log" "$shared/ckptd-node1.log"
	return 1
}
ktap_check "node1's first share is in a pid and an IPC namespace of the job's own" \
	on_node1 b 'test "$(readlink /proc/$p/ns/ipc)" != "$(readlink /proc/1/ns/ipc)" &&
		test "$(readlink /proc/$p/ns/pid)" != "$(readlink /proc/1/ns/pid)"'
ktap_check "node1's second share entered the first one's pid and IPC namespaces" \
	on_node1 c "b=\$(sh '$shared/find.sh' '$job' '$shared' b) &&
		test \"\$(readlink /proc/\$p/ns/ipc)\" = \"\$(readlink /proc/\$b/ns/ipc)\" &&
		test \"\$(readlink /proc/\$p/ns/pid)\" = \"\$(readlink /proc/\$b/ns/pid)\""
ktap_check "checkpointed with --kill: snapshot 1 (both nodes' segments taken)" sh -c \
	"'$bin/ckpt' job '$job' --kill > '$shared/c1.out' 2>&1 || { cat '$shared/c1.out'; false; }"
rc=0
wait_for "$runner" || rc=$?
ktap_check "ckpt-run exits as its killed job: 137" test "$rc" = 137
ktap_check "node1's share is gone with it" \
	ktap_poll 60 ssh node1 "! grep -qs . /sys/fs/cgroup/ckpt/$job/cgroup.procs"

(cd /tmp && "$bin/ckpt" restart "$snap/$job/1" > "$shared/r.out" 2> "$shared/r.err") &
runner=$!
ktap_check "restarted" ktap_poll 120 grep -q "job $job restarted" "$shared/r.err"
ktap_check "node1's first share: a new IPC namespace, its segment and semaphore in it" \
	on_node1 b 'test "$(readlink /proc/$p/ns/ipc)" != "$(readlink /proc/1/ns/ipc)" &&
		nsenter -t $p -i ipcs -m | grep -q " 4096 " &&
		nsenter -t $p -i ipcs -s | grep -q " 1 *$"'
rm -f "$shared/hold"
rc=0
wait_for "$runner" || rc=$?
ktap_check "ckpt restart exits as the job did: 0" test "$rc" = 0
ktap_check "every side counted every line once" sh -c \
	"seq 0 29 > '$shared/want' && for n in a b c; do
		cmp '$shared/want' '$shared/out-'\$n || { cat '$shared/r.err'; exit 1; }; done"
ktap_finish
