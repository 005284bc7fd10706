#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A job over two nodes whose snapshot roots are their own, as on a cluster
# without a shared file system (Documentation/ckptd.md, "Snapshot roots of
# their own", "Copies on other nodes"). ckpt job on node0 takes node1's
# share into a stage there and gathers it into node0's snapshot, which
# then holds the whole job, and copies the committed snapshot to node1
# (copies = 1, the default), whose copy checks whole (ckpt inspect there).
# ckpt restart on node0 finds node1's share in node1's copy: nothing is
# shipped. node0's disk lost (its snapshots removed), node1's copy is
# restarted from there with the nodes swapped: node0 is shipped its new
# share (first with a byte of it changed: node0 refuses it, named, and
# nothing runs). A share whose stage fills up (a small tmpfs) fails the
# checkpoint, naming the node and the cause, and the job runs on, its
# earlier snapshot intact; the next checkpoint gathers, and copies to
# node0; one into a --dir each node has of its own is copied into
# node0's. Every share's output is the uninterrupted run's. A second job,
# checkpointed with --kill into such a --dir, is copied into node1's. An
# ordinary user's job over both nodes, checkpointed by the user into a
# --dir of theirs on each node's own disk, is copied into node1's.
#
# Topology: node0 and node1 on the private link, each with ckptd and a
# snapshot root in its own overlay (/var/lib/ckpt-own).
# nodes: 2
# kernels: 6.12
# 381 s in a whole make check here (stop 48): a limit of 20 minutes, not
# the default 10, for a slow day (testing.md, "Time limits").
# timeout: 1200
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

shared=${ckptvm_out:?}/ckptd-local
. "$CKPT_TOP/vm-tests/lib/twonodes.sh"
own=/var/lib/ckpt-own
sed "s|^snapshot_root = .*|snapshot_root = $own|" "$conf" > "$conf.own"
conf=$conf.own
local_cleanup() {
	# The daemons' logs outlive the run, for a failure's story.
	mkdir -p "$ckptvm_out/ckptd-local-logs"
	cp "$shared"/ckptd-node*.log "$shared"/*.err "$ckptvm_out/ckptd-local-logs/" 2> /dev/null || true
	ssh node0 "umount '$own/.ship' 2> /dev/null; rm -rf '$own' '$own.dir' '$own.u'" || true
	ssh node1 "umount '$own/.ship' 2> /dev/null; rm -rf '$own' '$own.dir' '$own.u'" || true
	twonodes_cleanup
}
trap local_cleanup EXIT
for n in node0 node1; do
	ssh "$n" "umount '$own/.ship' 2> /dev/null; rm -rf '$own'; mkdir -p -m 0700 '$own'"
done

ktap_plan 21
start_nodes

reference_run

# nothing_staged NODE: no stage left in NODE's root.
nothing_staged() {
	ssh "$1" "test -z \"\$(ls -A '$own/.ship' 2> /dev/null)\""
}

# started_from FILE NODE SNAP: ckpt restart's FILE says the job restarted,
# and NODE's ckptd was shipped its share of SNAP.
started_from() {
	ktap_poll 180 grep -q "job $job restarted" "$1" &&
		ktap_poll 30 grep -q "job $job: its share of $3, shipped from its coordinator" \
			"$shared/ckptd-$2.log"
}

gathered_1() {
	"$bin/ckpt" job "$job" > "$shared/c1.out" &&
		grep -q "^snapshot *$own/$job/1\$" "$shared/c1.out" &&
		grep -q '^stopped (us) *[0-9]*$' "$shared/c1.out" &&
		grep -q '^commit (us) *[0-9]*$' "$shared/c1.out" &&
		test -f "$own/$job/1/node0/0/manifest" && test -f "$own/$job/1/node1/0/manifest" &&
		! test -e "$own/$job/1/.token" &&
		grep -q "job $job: the shares of 1 other node gathered" "$shared/ckptd-node0.log" &&
		nothing_staged node1
}
# node1's copy of snapshot $1: whole (its MAC and every image checked by
# ckpt inspect there), "latest" there, the coordinator's output names it.
copied_1() {
	grep -q '^copies on *node1$' "$shared/c1.out" && ! grep -q '^no copy' "$shared/c1.out" &&
		grep -q "job $job: snapshot 1 copied to node node1" "$shared/ckptd-node0.log" &&
		ssh node1 "'$bin/ckpt' inspect '$own/$job/1'" > "$shared/i1.out" &&
		grep -q '^checked' "$shared/i1.out" &&
		test "$(ssh node1 "readlink '$own/$job/latest'")" = 1 &&
		ktap_poll 30 grep -q "job $job: a copy of snapshot 1 from its coordinator, in $own/$job/1" \
			"$shared/ckptd-node1.log" &&
		nothing_staged node1 && ssh node1 "! ls -d '$own/$job/'*.tmp 2> /dev/null"
}

(cd /tmp && "$bin/ckpt-run" --name own sh -c "$launcher" > "$shared/run.out" 2> "$shared/run.err") &
runner=$!
ktap_poll 90 sh -c "test -e '$shared/ready-a' && test -e '$shared/ready-b'" || true
job=$(job_of "$shared/run.err")
ktap_check "a job over both nodes, node1's share joined through ckpt-ssh" sh -c \
	"'$bin/ckpt' status '$job' --json | grep -q '\"nodes\":\\[\"node1\"\\]'"
ktap_check "ckpt job: node1's share gathered into node0's snapshot 1, its stopped and commit times told; node1's stage gone" \
	gathered_1
ktap_check "copies = 1: snapshot 1 copied whole to node1, its latest there" copied_1
ktap_check "both shares run on after it, none stopped" both_running "$job"
ktap_check "--kill: snapshot 2, the job ends on both nodes" sh -c \
	"'$bin/ckpt' job '$job' --kill | grep -q '^snapshot *$own/$job/2\$' &&
	 for i in \$(seq 50); do ssh node1 \"! '$bin/ckpt' status '$job'\" 2> /dev/null && exit 0; sleep 0.2; done; exit 1"
wait_for "$runner" || true

# Restarted on the same nodes, from node0: node1 has its share in its own
# copy of snapshot 2 (the same meta.mac): nothing is shipped.
"$bin/ckpt" restart "$own/$job/2" > "$shared/r1.out" 2> "$shared/r1.err" &
runner=$!
restarted_here() {
	ktap_poll 180 grep -q "job $job restarted" "$shared/r1.err" &&
		ssh node1 "'$bin/ckpt' status '$job' --json" | grep -q '"coordinator":"node0"' &&
		! grep -q "job $job: its share of $own/$job/2, shipped" "$shared/ckptd-node1.log" &&
		nothing_staged node1 && ssh node1 "test -f '$own/$job/2/meta.json'"
}
ktap_check "ckpt restart: node1 runs its share from its own copy, nothing shipped" \
	restarted_here
ktap_check "the restarted job: checkpointed over both nodes and killed, snapshot 3" sh -c \
	"'$bin/ckpt' job '$job' --kill | grep -q '^snapshot *$own/$job/3\$'"
wait_for "$runner" || true

# node0's disk lost: its snapshots gone. node1's copy of snapshot 3 is
# restarted there with the nodes swapped: node0, which has nothing of it
# now, is shipped the share it runs.
# (Checked whole by node1 as it took it; ckpt inspect above showed once
# that a copy checks whole on its own.)
ktap_check "the restarted job's snapshot 3 copied to node1 too, the same metadata" sh -c \
	"ssh node1 \"cat '$own/$job/3/meta.mac'\" | cmp -s - '$own/$job/3/meta.mac' &&
	 for i in \$(seq 150); do grep -q 'job $job: a copy of snapshot 3 from its coordinator' '$shared/ckptd-node1.log' && exit 0; sleep 0.2; done; exit 1"
rm -rf "${own:?}/$job"

# A share shipped damaged: a byte of the image of node1's copy that node0
# is to be shipped flipped. node0 checks its share as it checks one of its
# own, before it says ready: the restart is refused, naming node0 and the
# image; none of the job runs and node0 keeps no stage. Flipped back, the
# restart below goes through.
bad=$(ssh node1 "ls '$own/$job/3/node1/0/'*.img | head -n 1")
shipped_damaged() {
	local rc=0
	ssh node1 "$(declare -f flip_middle); flip_middle '$bad'" || return 1
	ssh node1 "cd /tmp && timeout 300 '$bin/ckpt' restart --hosts node0=node1,node1=node0 '$own/$job/3'" \
		> /dev/null 2> "$shared/bad.err" || rc=$?
	ssh node1 "$(declare -f flip_middle); flip_middle '$bad'" || return 1
	cat "$shared/bad.err"
	test "$rc" = 1 &&
	grep -q "job $job: node node0: .*/node1/0/${bad##*/} is not the image the snapshot's metadata names" \
		"$shared/bad.err" &&
	ktap_poll 60 sh -c "ssh node1 \"! grep -qs . /sys/fs/cgroup/ckpt/$job/cgroup.procs\" &&
		! grep -qs . /sys/fs/cgroup/ckpt/$job/cgroup.procs" &&
	ktap_poll 30 nothing_staged node0
}
ktap_check "a byte of the share node0 is shipped changed: node0 refuses it, named, before any share starts; no stage left" \
	shipped_damaged

ssh node1 "cd /tmp && '$bin/ckpt' restart --hosts node0=node1,node1=node0 '$own/$job/3' \
	> '$shared/r2.out' 2> '$shared/r2.err'" &
runner=$!
restarted_swapped() {
	started_from "$shared/r2.err" node0 "$own/$job/3" &&
		"$bin/ckpt" status "$job" --json | grep -q '"coordinator":"node1"'
}
ktap_check "node0's snapshots lost: node1's copy restarted there, the nodes swapped; node0 is shipped its share" \
	restarted_swapped

# node0's stage on a tmpfs too small for its share: the checkpoint from
# node1 fails, naming node0 and the full disk; both shares run on, node1
# keeps no part of it and its snapshot 3 is still whole.
ssh node0 "mkdir -p '$own/.ship' && mount -t tmpfs -o size=64k ckpt-full '$own/.ship'"
rc=0
ssh node1 "'$bin/ckpt' job '$job'" > /dev/null 2> "$shared/full.err" || rc=$?
ktap_note "$(cat "$shared/full.err")"
ktap_check "node0's stage full: the checkpoint fails, naming node0 and the full disk" sh -c \
	"test $rc = 1 && grep -q 'node0' '$shared/full.err' && grep -q 'No space left on device' '$shared/full.err'"
untouched() {
	both_running "$job" &&
		ssh node1 "! ls -d '$own/$job/'*.tmp 2> /dev/null && '$bin/ckpt' inspect '$own/$job/3' > /dev/null"
}
ktap_check "the job runs on, on both nodes; no part of the snapshot stays; snapshot 3 is intact" \
	untouched
ssh node0 "umount '$own/.ship'"
gathered_again() {
	ssh node1 "'$bin/ckpt' job '$job'" > "$shared/c4.out" &&
		grep -q "^snapshot *$own/$job/4\$" "$shared/c4.out" &&
		grep -q '^copies on *node0$' "$shared/c4.out" &&
		ssh node1 "test -f '$own/$job/4/node0/0/manifest'" && nothing_staged node0 &&
		test -f "$own/$job/4/node1/0/manifest" && test "$(readlink "$own/$job/latest")" = 4
}
ktap_check "room again: the next checkpoint gathers node0's share into node1's snapshot 4, and copies it to node0" \
	gathered_again
# Into a --dir each node has of its own: gathered there on node1, and
# copied into the same --dir on node0.
for n in node0 node1; do
	ssh "$n" "rm -rf '$own.dir'; mkdir -p -m 0700 '$own.dir'"
done
dir_copied() {
	ssh node1 "'$bin/ckpt' job '$job' --dir '$own.dir'" > "$shared/c5.out" &&
		grep -q "^snapshot *$own.dir/$job/5\$" "$shared/c5.out" &&
		grep -q '^copies on *node0$' "$shared/c5.out" &&
		"$bin/ckpt" inspect "$own.dir/$job/5" > /dev/null &&
		test "$(readlink "$own.dir/$job/latest")" = 5 &&
		! ls -d "$own.dir/$job/"*.tmp 2> /dev/null &&
		! test -e "$own/$job/5" && nothing_staged node0
}
ktap_check "a checkpoint into a --dir of each node's own: gathered on node1, copied into node0's" \
	dir_copied

go node0
go node1
rc=0
wait_for "$runner" || rc=$?
ktap_check "the job ends: ckpt restart exits 0" test "$rc" = 0
ktap_check "both shares printed the uninterrupted run's digest" sh -c \
	"for i in \$(seq 150); do cmp -s '$shared/reference' '$shared/out-a' &&
	 cmp -s '$shared/reference' '$shared/out-b' && exit 0; sleep 0.2; done; exit 1"

# --kill into a --dir of each node's own: node1's share ends with the
# checkpoint, and its record there within seconds, before or after the
# copy comes (in one run here, after); the copy has its owner from the
# coordinator either way.
job_on_both kd "sleep 600" "sleep 600"
kdjob=$both_job
kdrunner=$both_runner
kill_dir_copied() {
	"$bin/ckpt" job "$kdjob" --kill --dir "$own.dir" > "$shared/kd.out" &&
		grep -q "^snapshot *$own.dir/$kdjob/1\$" "$shared/kd.out" &&
		grep -q '^copies on *node1$' "$shared/kd.out" &&
		ssh node1 "'$bin/ckpt' inspect '$own.dir/$kdjob/1' > /dev/null &&
			test \"\$(readlink '$own.dir/$kdjob/latest')\" = 1"
}
ktap_check "--kill into a --dir of each node's own: copied into node1's, its share gone there" \
	kill_dir_copied
wait_for "$kdrunner" || true

# An ordinary user's job over both nodes (ckptu, uid 4242 on each; its
# ssh by the test's key, a password of '*': sshd without PAM refuses a
# locked account): the user's own checkpoint into a --dir of the
# user's on each node's own disk is gathered on node0 and copied into
# node1's, where the user inspects it through ckptd.
as_user() {
	setpriv --reuid 4242 --regid 4242 --clear-groups env HOME=/home/ckptu "$@"
}
for n in node0 node1; do
	ssh "$n" "groupadd -g 4242 ckptu && useradd -u 4242 -g 4242 -p '*' -m -d /home/ckptu -s /bin/sh ckptu &&
		install -d -m 700 -o ckptu -g ckptu /home/ckptu/.ssh &&
		install -m 600 -o ckptu -g ckptu '$ckptvm_out/ssh/id_ed25519' /home/ckptu/.ssh/id_ed25519 &&
		printf 'Host *\n\tStrictHostKeyChecking no\n\tUserKnownHostsFile /dev/null\n\tLogLevel ERROR\n\tConnectTimeout 5\n' \
			> /home/ckptu/.ssh/config && chown ckptu:ckptu /home/ckptu/.ssh/config &&
		rm -rf '$own.u' && install -d -m 700 -o ckptu -g ckptu '$own.u'" ||
		ktap_note "$n: the user ckptu could not be made"
done
(cd /tmp && as_user "$bin/ckpt-run" --name ud --dir "$own.u" sh -c \
	"'$bin/ckpt-ssh' node1 \"nohup sleep 600 > /dev/null 2>&1 < /dev/null &\"; exec sleep 600" \
	2> "$shared/ud.err") &
udrunner=$!
ktap_poll 60 grep -q "^ckpt-run: job " "$shared/ud.err" || true
udjob=$(job_of "$shared/ud.err")
ktap_poll 120 sh -c "ssh node1 \"'$bin/ckpt' status '$udjob' --json\" | grep -q '\"processes\":1'" || true
ktap_check "an ordinary user's job over both nodes, node1's share the user's too" sh -c \
	"test -n '$udjob' && ssh node1 \"'$bin/ckpt' status '$udjob' --json\" |
	 grep -q '\"uid\":4242'"
user_copied() {
	as_user "$bin/ckpt" job "$udjob" > "$shared/ud.out" 2>&1
	cat "$shared/ud.out"
	grep -q "^snapshot *$own.u/$udjob/1\$" "$shared/ud.out" &&
		grep -q '^copies on *node1$' "$shared/ud.out" &&
		ssh node1 "setpriv --reuid 4242 --regid 4242 --clear-groups \
			'$bin/ckpt' inspect '$own.u/$udjob/1' > /dev/null &&
			test \"\$(readlink '$own.u/$udjob/latest')\" = 1 &&
			! ls -d '$own.u/$udjob/'*.tmp 2> /dev/null"
}
ktap_check "the user's checkpoint into a --dir of theirs on each node: copied into node1's, inspected there by the user" \
	user_copied
as_user "$bin/ckpt" job "$udjob" --kill > /dev/null 2>&1 || true
wait_for "$udrunner" || true
