#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ckptd and one-node jobs, as a user runs them (Documentation/ckptd.md).
# An ordinary user (nobody) starts a pipeline ({ producer; sleep until the
# test ends it; producer; } | sort | uniq -c | sha256sum) under ckpt-run: a job of
# ckptd's, listed by ckpt ls and ckpt status, its id in CKPT_JOBID. It is
# checkpointed with continue, then --stop (the processes stop; SIGCONT
# goes on), then --kill (ckpt-run exits 137). ckpt restart of the killed
# snapshot through ckptd runs it as the same job, which is checkpointed
# and killed again and restarted again: three cycles, and the output of
# all the runs together is the uninterrupted run's. Snapshots are
# directories SEQ with meta.json, meta.mac and the node's tree; latest
# points at the newest; a failed checkpoint leaves no SEQ.tmp.
# ckpt inspect shows the snapshot's job, node and processes to its user,
# text and JSON, after checking its MAC and every image's checksum.
# Refused by name, with nothing started: another user's status, checkpoint,
# inspect and restart of the job; a snapshot whose metadata was edited
# (MAC); one whose image was changed (checksum; inspect names the image). Bad messages on the socket (too
# long, not JSON, an unknown op, a run for a process that is not the
# caller's child) get an error and ckptd serves on. ckptd stopped and
# started again finds the job and checkpoints it. A job run with
# --interval 1 --keep 2 is checkpointed every second, its two newest
# snapshots kept; a checkpoint onto a full file system is refused with
# the reason, leaves nothing, and the job runs on. A checkpoint cancelled,
# one whose ckptd is killed with its worker, one whose job loses a process
# midway: each leaves no half-made snapshot, the job runs on, and the next
# checkpoint works. On a terminal ckpt job shows its progress. A user's
# job run with --dir keeps its snapshots in that directory of theirs
# (retention too, and after a restart), ckpt job --dir puts one elsewhere;
# a directory not theirs, a relative one, and DIR/JOBID swapped by the user
# for a link or a directory of their own are refused by name, nothing
# written through them. A job of two process trees (a double fork's orphan
# next to the process ckpt-run started) is checkpointed and killed as one,
# restarted with both counting on, and checkpointed again; three trees in
# an IPC namespace of their own (one an orphan in the first one's session)
# come back in one new one, with its segment, each in its session.
# A process that joins the job (ckpt-join) while a checkpoint is under way
# waits for its end: joins after a continue, is refused after a --kill.
# A job on a terminal (script's), killed and restarted by its user on a
# terminal, has one: its controlling terminal with its group in the
# foreground, the window's size, a Ctrl-C typed there, its output out
# through ckpt restart; it checkpoints again; its root gets the hangup of
# that terminal when ckpt restart is killed. A restart's "tty" that is no boolean, a descriptor 0
# that is no terminal, or one open for writing only, or another session's
# terminal, is refused by name and nothing runs. A root's zombie child in
# ckpt-run's process group comes back through ckptd and is reaped with
# its status.
#
# Topology: one node, no network.
# kernels: 6.1
# 437 s in a whole make check here (stop 51), over 600 in CI's (stop 51,
# a machine half as fast that day): limits are 2.5 times a test's time
# here (Documentation/testing.md, "Time limits").
# timeout: 1200
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

bin=$CKPT_TOP/build/bin
producer=$CKPT_TOP/build/tests/workloads/producer
tmp=$(mktemp -d)
chmod 755 "$tmp"
mkdir -m 1777 "$tmp/u"
snap=$tmp/snap
sock=$tmp/ckptd.sock
export CKPTD_SOCKET=$sock

cleanup() {
	[ -n "${ckptd:-}" ] && kill "$ckptd" 2> /dev/null
	pkill -KILL -x producer 2> /dev/null || true
	pkill -KILL -f "sleep 3600" 2> /dev/null || true
	pkill -KILL -f "^sleep 30[012]$" 2> /dev/null || true
	wait 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp" /etc/ckpt/ckptd-test.conf
}
trap cleanup EXIT

# Runs "$@" as nobody, all three ids (as hostile_user.sh).
as_nobody() {
	python3 -c 'import os, sys
os.setgroups([]); os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534); os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

export -f as_nobody

start_ckptd() {
	"$bin/ckptd" --foreground --config /etc/ckpt/ckptd-test.conf \
		>> "$tmp/ckptd.log" 2>&1 &
	ckptd=$!
}

# A raw frame to ckptd: 4-byte length LEN (or the text's), then TEXT; the
# reply's JSON on stdout.
raw() {
	python3 "$CKPT_TOP/vm-tests/lib/ckptd_raw.py" "$CKPTD_SOCKET" "$1" "${2:-}"
}
export -f raw

inspect_raw() {
	raw "{\"op\":\"inspect\",\"dir\":\"$1\"}"
}
export -f inspect_raw
# Whether host $1 is a cluster's node (a job's plain ssh asks it).
node_raw() {
	raw "$(python3 -c 'import json, sys; print(json.dumps({"op": "node", "node": sys.argv[1]}))' "$1")"
}
export -f node_raw
# MPIX_Checkpoint's request: job $1, "detach" $2 (JSON).
detach_raw() {
	raw "{\"op\":\"checkpoint\",\"job\":\"$1\",\"detach\":$2}"
}
export -f detach_raw
# A checkpoint of job $1 into "dir" $2 (JSON).
dir_raw() {
	raw "{\"op\":\"checkpoint\",\"job\":\"$1\",\"dir\":$2}"
}
export -f dir_raw

# The pipeline: lines, a sleep of GATE seconds, more lines; one digest
# line at the end. Checkpointed during the sleep, sort holds the first
# lines; go() ends the job's sleep (nothing in the job forks meanwhile).
pipeline() {
	echo "{ '$producer' 5000 '$tmp/u/ready'; sleep $1; '$producer' 3000; } | sort | uniq -c | sha256sum"
}
go() {
	local p
	for p in $(cat "/sys/fs/cgroup/ckpt/$job/cgroup.procs"); do
		[ "$(cat "/proc/$p/comm" 2> /dev/null)" = sleep ] && kill "$p"
	done
	return 0
}

job_id() {
	sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/run.err"
}

procs_stopped() {
	local p
	for p in $(cat "/sys/fs/cgroup/ckpt/$job/cgroup.procs"); do
		grep -q '^State:.*T' "/proc/$p/status" || return 1
	done
}

# kill_cycle SEQ CMD: ckpt job --kill makes snapshot SEQ, and CMD, the job's
# foreground ($runner), exits as its killed job. Two test points.
kill_cycle() {
	local rc=0
	ktap_check "checkpoint --kill: snapshot $1" sh -c \
		"'$bin/ckpt' job '$job' --kill | grep -q '^snapshot *$snap/$job/$1\$'"
	wait "$runner" || rc=$?
	ktap_check "$2 exits as its killed job: 137" test "$rc" = 137
}

ktap_plan 68
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"
mkdir -p /etc/ckpt
head -c 32 /dev/urandom > "$tmp/key"
chmod 600 "$tmp/key"
cat > /etc/ckpt/ckptd-test.conf <<EOF
# ckptd's test configuration
snapshot_root = $snap
key_file = $tmp/key
socket = $sock
log_level = 2
EOF
"$bin/ckpt" key "$tmp/key"
start_ckptd
ktap_check "ckptd starts and answers" ktap_poll 30 "$bin/ckpt" ls

timeout 120 sh -c "$(pipeline 0)" > "$tmp/reference" || true
ktap_note "reference: $(cat "$tmp/reference")"
rm -f "$tmp/u/ready"

# The job, an ordinary user's.
(cd "$tmp/u" && as_nobody "$bin/ckpt-run" --name pipe sh -c \
	"echo \$CKPT_JOBID > '$tmp/u/jobid'; $(pipeline 3600)" > "$tmp/u/out" 2> "$tmp/run.err") &
runner=$!
ktap_poll 60 test -e "$tmp/u/ready" || true
job=$(job_id)
ktap_check "ckpt-run names the job on stderr and in CKPT_JOBID" \
	sh -c "test -n '$job' && test \"\$(cat '$tmp/u/jobid')\" = '$job'"
ktap_check "the user's ckpt ls and ckpt status show the job" bash -c \
	"as_nobody '$bin/ckpt' ls | grep -q '^$job .* running ' &&
	 as_nobody '$bin/ckpt' status '$job' --json | python3 -c 'import json, sys
j = json.load(sys.stdin); assert j[\"job\"] == \"$job\" and j[\"name\"] == \"pipe\" and j[\"processes\"] >= 5, j'"
ktap_check "another user sees no such job" sh -c \
	"! setpriv --reuid 1 --regid 1 --clear-groups '$bin/ckpt' status '$job' 2> '$tmp/e' &&
	 grep -q 'no job $job of yours' '$tmp/e' &&
	 ! setpriv --reuid 1 --regid 1 --clear-groups '$bin/ckpt' job '$job' 2> /dev/null &&
	 test -z \"\$(setpriv --reuid 1 --regid 1 --clear-groups '$bin/ckpt' ls | tail -n +2)\""

ktap_check "checkpoint, continuing: snapshot 1" bash -c \
	"as_nobody '$bin/ckpt' job '$job' | grep -q '^snapshot *$snap/$job/1\$'"
ktap_check "snapshot 1: metadata, MAC, the node's tree; latest points at it" sh -c \
	"test -f '$snap/$job/1/meta.json' && test -f '$snap/$job/1/meta.mac' &&
	 ls '$snap/$job/1/'*/0/manifest && test \"\$(readlink '$snap/$job/latest')\" = 1 &&
	 ! ls -d '$snap/$job/'*.tmp 2> /dev/null"
ktap_check "checkpoint --stop: snapshot 2, every process stopped" sh -c \
	"'$bin/ckpt' job '$job' --stop --json | grep -q '\"seq\":2'"
ktap_check "the processes are stopped" procs_stopped
kill -CONT $(cat "/sys/fs/cgroup/ckpt/$job/cgroup.procs") 2> /dev/null || true
kill_cycle 3 "ckpt-run"
ktap_check "the job ended" sh -c "! '$bin/ckpt' status '$job' 2> /dev/null"

# What the snapshot holds, checked: its user's, through ckptd.
ktap_check "ckpt inspect: its user sees the job, its node and processes, checked" bash -c \
	"as_nobody '$bin/ckpt' inspect '$snap/$job/3' > '$tmp/i' &&
	 grep -q '^job  *$job\$' '$tmp/i' && grep -q '^sequence  *3\$' '$tmp/i' &&
	 grep -q \"^node  *\$(hostname) \" '$tmp/i' &&
	 as_nobody '$bin/ckpt' inspect --json '$snap/$job/3' | python3 -c 'import json, sys
j = json.load(sys.stdin); n = j[\"nodes\"]
assert j[\"job\"] == \"$job\" and j[\"seq\"] == 3 and j[\"uid\"] == 65534, j
assert len(n) == 1 and n[0][\"processes\"] == j[\"processes\"] >= 5, j
assert len(n[0][\"pids\"]) == j[\"processes\"] and j[\"bytes\"] == n[0][\"bytes\"] > 0, j'"
ktap_check "another user cannot inspect it" sh -c \
	"! setpriv --reuid 1 --regid 1 --clear-groups '$bin/ckpt' inspect '$snap/$job/3' 2> '$tmp/e' &&
	 grep -q 'snapshot of another user' '$tmp/e'"

# Refusals, nothing started.
ktap_check "another user cannot restart the job's snapshot" sh -c \
	"! setpriv --reuid 1 --regid 1 --clear-groups '$bin/ckpt' restart '$snap/$job/3' 2> '$tmp/e' &&
	 grep -q 'snapshot of another user' '$tmp/e'"
cp -a "$snap/$job/3" "$tmp/edited"
sed -i 's/"pipe"/"PIPE"/' "$tmp/edited/meta.json"
ktap_check "an edited metadata is refused: its MAC" sh -c \
	"! '$bin/ckpt' restart '$tmp/edited' 2> '$tmp/e' && grep -q \"metadata's MAC does not match\" '$tmp/e' &&
	 ! '$bin/ckpt' inspect '$tmp/edited' 2> '$tmp/e' && grep -q \"metadata's MAC does not match\" '$tmp/e'"
rm -rf "$tmp/edited"
cp -a "$snap/$job/3" "$tmp/edited"
img=$(ls "$tmp/edited"/*/0/*.img | head -n 1)
printf 'X' | dd of="$img" bs=1 seek=200 conv=notrunc 2> /dev/null
ktap_check "a changed image is refused: its checksum" sh -c \
	"! '$bin/ckpt' restart '$tmp/edited' 2> '$tmp/e' && grep -q 'is not the image' '$tmp/e'"
ktap_check "ckpt inspect names the changed image" sh -c \
	"! '$bin/ckpt' inspect '$tmp/edited' > /dev/null 2> '$tmp/e' &&
	 grep -q \"inspect: .*\$(basename '$img') is not the image\" '$tmp/e'"
rm -rf "$tmp/edited"
ktap_check "no job was left by the refusals" sh -c \
	"test -z \"\$('$bin/ckpt' ls | tail -n +2)\""

# Cycle 2: restarted through ckptd by its user, checkpointed and killed.
(cd "$tmp/u" && as_nobody "$bin/ckpt" restart "$snap/$job/3" >> "$tmp/u/out" 2> "$tmp/r1.err") &
runner=$!
ktap_check "ckpt restart: the same job runs again" \
	ktap_poll 60 grep -q "job $job restarted" "$tmp/r1.err"
kill_cycle 4 "ckpt restart"

# Bad messages; then ckptd restarted, in the middle of cycle 3.
ktap_check "a message too long: refused" bash -c "raw '{}' 70000 | grep -q 'message of 70000 bytes'"
ktap_check "not JSON: refused" bash -c "raw '{\"op\":' | grep -q 'malformed message'"
ktap_check "an unknown op: refused" bash -c "raw '{\"op\":\"rm -rf\"}' | grep -q \"unknown op 'rm -rf'\""
ktap_check "a run for a process not the caller's child: refused" bash -c \
	"raw '{\"op\":\"run\",\"pid\":1,\"cmd\":[\"x\"],\"cwd\":\"/\"}' | grep -q 'process 1 is not a child of yours'"
ktap_check "inspect of a relative path or of no snapshot, by a user: refused" bash -c \
	"as_nobody bash -c 'inspect_raw x' | grep -q 'must be a snapshot directory' &&
	 as_nobody bash -c 'inspect_raw /etc' | grep -q '/etc/meta.json: No such file'"

ktap_check "node, asked by a user: what is no host name is refused" bash -c "
	as_nobody bash -c 'node_raw -oProxyCommand=x' | grep -q 'node: needs .*, a host name or address' &&
	as_nobody bash -c 'node_raw \"a b\"' | grep -q 'node: needs .*, a host name or address' &&
	as_nobody bash -c 'node_raw \"\"' | grep -q 'node: needs .*, a host name or address' &&
	as_nobody bash -c 'node_raw \$(printf %070d 0)' | grep -q 'node: needs .*, a host name or address' &&
	as_nobody bash -c \"raw '{\\\"op\\\":\\\"node\\\",\\\"node\\\":5}'\" | grep -q 'node: needs .*, a host name or address'"
ktap_check "node: this node is the cluster's; a host whose ckptd does not answer is not, and why" bash -c "
	as_nobody bash -c 'node_raw \$(hostname)' | grep -q '\"cluster\":true' &&
	as_nobody bash -c 'node_raw 192.0.2.99' > '$tmp/node.out'; cat '$tmp/node.out';
	grep -q '\"cluster\":false' '$tmp/node.out' && grep -q 'ckptd does not answer on port' '$tmp/node.out'"

(cd "$tmp/u" && as_nobody "$bin/ckpt" restart "$snap/$job/4" >> "$tmp/u/out" 2> "$tmp/r2.err") &
runner=$!
ktap_poll 60 grep -q "job $job restarted" "$tmp/r2.err" || true
ktap_check "a detached checkpoint of another user's job, or a detach no boolean: refused" bash -c \
	"setpriv --reuid 1 --regid 1 --clear-groups bash -c 'detach_raw $job true' | grep -q 'no job $job of yours' &&
	 detach_raw $job '\"yes\"' | grep -q 'detach.. a boolean'"
kill "$ckptd"
wait "$ckptd" 2> /dev/null || true
start_ckptd
ktap_check "ckptd stopped and started again finds the job" bash -c \
	"$(declare -f ktap_poll ktap_nap); ktap_poll 30 '$bin/ckpt' status '$job' &&
	 grep -q 'job $job (uid 65534) found again' '$tmp/ckptd.log'"
ktap_check "and checkpoints it: snapshot 5" sh -c \
	"'$bin/ckpt' status '$job' > /dev/null && '$bin/ckpt' job '$job' | grep -q '^snapshot *$snap/$job/5\$'"
go
rc=0
wait "$runner" || rc=$?
ktap_check "the job ends: ckpt restart exits 0" test "$rc" = 0
ktap_check "all the runs together printed the uninterrupted run's output" \
	cmp "$tmp/reference" "$tmp/u/out"
# Periodic checkpoints with retention, and a full snapshot file system.
"$bin/ckpt-run" --interval 1 --keep 2 sleep 120 2> "$tmp/p.err" &
prunner=$!
ktap_poll 30 grep -q "job " "$tmp/p.err" || true
pjob=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/p.err")
ktap_check "--interval 1: snapshots every second" ktap_poll 60 sh -c \
	"'$bin/ckpt' status '$pjob' --json | grep -q '\"seq\":[4-9]'"
# A snapshot just committed, the oldest not yet removed: three for a
# moment, every second here (failed so once in stop 48), so a look of two.
ktap_check "--keep 2: the newest two stay, latest the newest" ktap_poll 20 sh -c \
	"test \"\$(ls '$snap/$pjob' | grep -c '^[0-9]*\$')\" = 2 &&
	 test -d \"$snap/$pjob/\$(readlink '$snap/$pjob/latest')\""
kill "$prunner" 2> /dev/null || true
"$bin/ckpt-run" sleep 120 2> "$tmp/f.err" &
frunner=$!
ktap_poll 30 grep -q "job " "$tmp/f.err" || true
fjob=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/f.err")
mkdir -p "$snap/$fjob"
mount -t tmpfs -o size=64k tmpfs "$snap/$fjob"
ktap_check "a full snapshot file system: refused, named, nothing left" sh -c \
	"! '$bin/ckpt' job '$fjob' 2> '$tmp/e' && grep -q 'No space left' '$tmp/e' &&
	 test -z \"\$(ls -A '$snap/$fjob')\""
ktap_check "the job runs on" sh -c "'$bin/ckpt' status '$fjob' | grep -q 'running'"
umount "$snap/$fjob"
ktap_check "room again: the next checkpoint is snapshot 1" sh -c \
	"'$bin/ckpt' job '$fjob' | grep -q '^snapshot *$snap/$fjob/1\$'"
kill "$frunner" 2> /dev/null || true

# --dir (snapdir.c): a directory of the user's holds the job's snapshots,
# in DIR/JOBID, which ckptd makes its own (root's, 0700). Not the user's
# directory, or DIR/JOBID moved aside for a link or a directory of the
# user's: refused by name, nothing written through them.
mkdir "$tmp/d" "$tmp/d/mine" "$tmp/d/other" "$tmp/victim"
chown 65534:65534 "$tmp/d/mine" "$tmp/d/other"
chmod 700 "$tmp/victim"
(cd "$tmp/u" && exec bash -c "as_nobody '$bin/ckpt-run' --dir '$tmp/d/mine' --keep 2 sleep 3600" 2> "$tmp/d.err") &
drunner=$!
ktap_poll 30 grep -q "job " "$tmp/d.err" || true
djob=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/d.err")
ddir=$tmp/d/mine/$djob
ktap_check "--dir: the job's snapshot in DIR/JOBID, ckptd's own; none under the snapshot root" bash -c \
	"as_nobody '$bin/ckpt' job '$djob' | grep -q '^snapshot *$ddir/1\$' &&
	 test -f '$ddir/1/meta.json' && test \"\$(stat -c %u:%a '$ddir')\" = 0:700 &&
	 grep -q '\"dir\": \"$tmp/d/mine\"' '$ddir/1/meta.json' &&
	 as_nobody '$bin/ckpt' status '$djob' | grep -q '^snapshots in *$tmp/d/mine\$' &&
	 ! ls -d '$snap/$djob' 2> /dev/null"
ktap_check "--keep 2 there: the newest two stay, latest the newest" bash -c \
	"as_nobody '$bin/ckpt' job '$djob' > /dev/null && as_nobody '$bin/ckpt' job '$djob' > /dev/null &&
	 test \"\$(ls '$ddir' | grep -c '^[0-9]*\$')\" = 2 && test \"\$(readlink '$ddir/latest')\" = 3"
ktap_check "ckpt job --dir: one snapshot in another directory of the user's" bash -c \
	"as_nobody '$bin/ckpt' job '$djob' --dir '$tmp/d/other' | grep -q '^snapshot *$tmp/d/other/$djob/4\$' &&
	 test -f '$tmp/d/other/$djob/4/meta.json' &&
	 as_nobody '$bin/ckpt' status '$djob' | grep -q '^latest *$tmp/d/other/$djob/4\$'"
ktap_check "a directory not the user's, a relative one, no string: refused, named; nothing made" bash -c \
	"! as_nobody '$bin/ckpt' job '$djob' --dir /etc 2> '$tmp/e' &&
	 grep -q -- '--dir /etc is not a directory of yours' '$tmp/e' && test ! -e '/etc/$djob' &&
	 ! (cd '$tmp/u' && as_nobody '$bin/ckpt-run' --dir '$tmp/victim' true) 2> '$tmp/e' &&
	 grep -q -- '--dir $tmp/victim is not a directory of yours' '$tmp/e' &&
	 test -z \"\$(ls -A '$tmp/victim')\" &&
	 as_nobody bash -c \"dir_raw $djob '\\\"rel\\\"'\" | grep -q 'must be an absolute path' &&
	 as_nobody bash -c \"dir_raw $djob 5\" | grep -q 'a string (not detached)'"
ktap_check "DIR/JOBID swapped for a link by the user: refused, nothing written through it" bash -c \
	"as_nobody mv '$ddir' '$tmp/d/mine/moved' && as_nobody ln -s '$tmp/victim' '$ddir' &&
	 ! as_nobody '$bin/ckpt' job '$djob' 2> '$tmp/e' && grep -q '$ddir' '$tmp/e' &&
	 test -z \"\$(ls -A '$tmp/victim')\" && as_nobody rm '$ddir' &&
	 as_nobody mkdir '$ddir' && ! as_nobody '$bin/ckpt' job '$djob' 2> '$tmp/e' &&
	 grep -q \"$ddir is not ckptd's\" '$tmp/e' && test -z \"\$(ls -A '$ddir')\" &&
	 as_nobody rmdir '$ddir' && as_nobody mv '$tmp/d/mine/moved' '$ddir' &&
	 as_nobody '$bin/ckpt' job '$djob' --kill | grep -q '^snapshot *$ddir/5\$'"
wait "$drunner" 2> /dev/null || true
(cd "$tmp/u" && exec bash -c "as_nobody '$bin/ckpt' restart '$ddir/latest'" > /dev/null 2> "$tmp/dr.err") &
drunner=$!
ktap_poll 60 sh -c "'$bin/ckpt' status '$djob' 2> /dev/null | grep -q running" || cat "$tmp/dr.err"
ktap_check "restarted, the job keeps its --dir: its next snapshot is there" bash -c \
	"as_nobody '$bin/ckpt' job '$djob' --kill | grep -q '^snapshot *$ddir/6\$'"
wait "$drunner" 2> /dev/null || true

# A job of two process trees on its node: a process a double fork left
# (setsid -f), whose parent is no process of the job, is checkpointed with
# the process ckpt-run started (ckpt inspect shows both roots of the
# node's tree directory), killed with it, and both come back under
# ckpt restart, which keeps the first one's output and status; restarted,
# the two trees are checkpointed again. Each counts to 30, a line at a
# time: no line lost or twice; each holds at 15 until the test removes
# the file hold (a slow machine's trees must not end before the second
# checkpoint).
count='i=0; while [ $i -lt 30 ]; do echo $i; i=$((i+1)); while [ $i = 15 ] && [ -e hold ]; do sleep 0.3; done; sleep 0.3; done'
touch "$tmp/u/hold"
(cd "$tmp/u" && as_nobody "$bin/ckpt-run" --name forest sh -c "setsid -f sh -c '$count >> forest.d'; $count" \
	> "$tmp/u/forest.out" 2> "$tmp/fo.err") &
forunner=$!
ktap_poll 30 grep -q "job " "$tmp/fo.err" || true
fojob=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/fo.err")
ktap_poll 60 sh -c "test \$(wc -l < '$tmp/u/forest.d') -ge 3" 2> /dev/null || true
ktap_check "a job of two trees (a double fork's orphan): --kill takes both, one snapshot" bash -c \
	"as_nobody '$bin/ckpt' job '$fojob' --kill | grep -q '^snapshot *$snap/$fojob/1\$' &&
	 m=\$(ls '$snap/$fojob/1/'*/0/manifest) && cat \$m &&
	 test \"\$(grep -c '^member [0-9]* -\$' \$m)\" = 2 &&
	 '$bin/ckpt' inspect \$(dirname \$m) > '$tmp/fi' && cat '$tmp/fi' &&
	 grep -q '^  pid [0-9]* (root): sh' '$tmp/fi' && grep -q '^  pid [0-9]* (another root): sh' '$tmp/fi'"
wait "$forunner" 2> /dev/null || true
ktap_check "both trees gone with it: the job ended" ktap_poll 30 sh -c \
	"! '$bin/ckpt' status '$fojob' 2> /dev/null"
(cd "$tmp/u" && as_nobody "$bin/ckpt" restart "$snap/$fojob/1" \
	>> "$tmp/u/forest.out" 2> "$tmp/for.err") &
forunner=$!
ktap_poll 60 grep -q "job $fojob restarted" "$tmp/for.err" || cat "$tmp/for.err"
ktap_check "restarted, the two trees are checkpointed again, continuing" bash -c \
	"as_nobody '$bin/ckpt' job '$fojob' | grep -q '^snapshot *$snap/$fojob/2\$' &&
	 test \"\$(grep -c '^member [0-9]* -\$' '$snap/$fojob/2/'*/0/manifest)\" = 2"
rm -f "$tmp/u/hold"
rc=0
ktap_poll 120 sh -c "! kill -0 $forunner" || kill -KILL "$forunner" 2> /dev/null || true
wait "$forunner" || rc=$?
ktap_poll 60 sh -c "test \$(wc -l < '$tmp/u/forest.d') -ge 30" 2> /dev/null || true
ktap_check "ckpt restart exits with the first tree's status; each tree counted every line once" sh -c \
	"cat '$tmp/for.err'; test $rc = 0 && seq 0 29 | cmp - '$tmp/u/forest.out' &&
	 seq 0 29 | cmp - '$tmp/u/forest.d'"

# Three trees in an IPC namespace of their own (root's job: unshare --ipc)
# with a System V segment: the process ckpt-run started, leading a session
# (sleep 301), an orphan in that session (sleep 300) and one in a session
# of its own (sleep 302). Restarted, all three are in one new IPC
# namespace, which has the segment, each in its session again.
"$bin/ckpt-run" --name ipc setsid unshare --ipc sh -c \
	"ipcmk -M 4096 > /dev/null && setsid -f sleep 302 && (sleep 300 &) && exec sleep 301" 2> "$tmp/ipc.err" &
ipcrunner=$!
ktap_poll 30 grep -q "job " "$tmp/ipc.err" || true
ipcjob=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/ipc.err")
ktap_poll 60 sh -c "'$bin/ckpt' status '$ipcjob' --json | grep -q '\"processes\":3'" || true
# sleeps_ipc: the IPC namespaces of the job's three sleeps, one line each.
sleeps_ipc() {
	for p in $(cat "/sys/fs/cgroup/ckpt/$ipcjob/cgroup.procs"); do
		[ "$(cat "/proc/$p/comm" 2> /dev/null)" = sleep ] && readlink "/proc/$p/ns/ipc"
	done
}
"$bin/ckpt" job "$ipcjob" --kill > "$tmp/ipck.out" 2>&1 || ktap_note "$(cat "$tmp/ipck.out")"
ktap_poll 60 sh -c "! kill -0 $ipcrunner" || kill -KILL "$ipcrunner" 2> /dev/null || true
wait "$ipcrunner" 2> /dev/null || true
"$bin/ckpt" restart "$snap/$ipcjob/1" > /dev/null 2> "$tmp/ipcr.err" &
ipcrunner=$!
ktap_poll 60 grep -q "job $ipcjob restarted" "$tmp/ipcr.err" || cat "$tmp/ipcr.err"
ktap_check "three trees in an IPC namespace of their own: restarted, all in one new one, which has the segment, in their sessions" bash -c "
	$(declare -f sleeps_ipc); ipcjob=$ipcjob
	sleeps_ipc; test \$(sleeps_ipc | wc -l) = 3 && test \$(sleeps_ipc | sort -u | wc -l) = 1 &&
	test \"\$(sleeps_ipc | head -n 1)\" != \"\$(readlink /proc/self/ns/ipc)\" &&
	p=\$(pgrep -x -f 'sleep 300') && q=\$(pgrep -x -f 'sleep 301') && r=\$(pgrep -x -f 'sleep 302') &&
	nsenter -t \$p -i ipcs -m | grep -q ' 4096 ' &&
	test \$(ps -o sid= -p \$p) = \$q && test \$(ps -o sid= -p \$q) = \$q &&
	test \$(ps -o sid= -p \$r) = \$r &&
	test \$(ps -o ppid= -p \$p) = \$(ps -o ppid= -p \$q) && test \$(ps -o ppid= -p \$r) = \$(ps -o ppid= -p \$q)"
"$bin/ckpt" job "$ipcjob" --kill > /dev/null 2>&1 || true
ktap_poll 60 sh -c "! kill -0 $ipcrunner" || kill -KILL "$ipcrunner" 2> /dev/null || true
wait "$ipcrunner" 2> /dev/null || true

# Faults in the middle of a checkpoint of a bigger job (two memhogs):
# cancelled, ckptd killed with its worker, a process of the job killed.
memhog=$CKPT_TOP/build/tests/workloads/memhog
"$bin/ckpt-run" sh -c "'$memhog' 1 60 60 > /dev/null & exec '$memhog' 1 60 60 > /dev/null" \
	2> "$tmp/m.err" &
mrunner=$!
ktap_poll 30 grep -q "job " "$tmp/m.err" || true
mjob=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/m.err")
ktap_poll 60 sh -c "'$bin/ckpt' status '$mjob' --json | grep -q '\"processes\":2'" || true
sleep 2
# mid_checkpoint: starts ckpt job in the background, back once its .tmp
# exists: looked for every 0.1 s (not ktap_poll's growing nap), since it
# is there only while the checkpoint runs.
mid_checkpoint() {
	local i
	"$bin/ckpt" job "$mjob" > "$tmp/mid.out" 2> "$tmp/mid.err" &
	mid=$!
	for i in $(seq 600); do
		ls -d "$snap/$mjob/"*.tmp > /dev/null 2>&1 && return 0
		ktap_nap 0.1
	done
	return 1
}
# whole_after: nothing half-made, both memhogs (or the one left) run on,
# and the next checkpoint makes a snapshot.
whole_after() {
	! ls -d "$snap/$mjob/"*.tmp 2> /dev/null &&
	"$bin/ckpt" status "$mjob" | grep -q running &&
	"$bin/ckpt" job "$mjob" | grep -q '^snapshot'
}
mid_checkpoint
ktap_check "ckpt cancel ends a checkpoint under way" sh -c \
	"'$bin/ckpt' cancel '$mjob' | grep -q 'cancelled *$mjob'"
wait "$mid" 2> /dev/null || true
ktap_check "cancelled: nothing left of it, the job runs on, the next one works" whole_after
mid_checkpoint
pkill -KILL -x ckptd
wait "$ckptd" 2> /dev/null || true
start_ckptd
ktap_check "ckptd killed mid-checkpoint: started again, it sweeps the .tmp; the job runs on" \
	ktap_poll 30 whole_after
# ckptd alone killed mid-checkpoint, its worker living on: the worker
# finishes the snapshot and answers its client itself; ckptd started
# again leaves the .tmp the worker still writes alone (it holds a lock
# on it), and once the worker has ended (its status within 10 s) says
# the snapshot is the job's newest.
mid_checkpoint
kill -KILL "$ckptd"
wait "$ckptd" 2> /dev/null || true
start_ckptd
ktap_poll 180 sh -c "! kill -0 $mid" || kill -KILL "$mid" 2> /dev/null || true
rc=0
wait "$mid" || rc=$?
ktap_poll 30 "$bin/ckpt" ls > /dev/null || true
if grep -q "is a live worker's" "$tmp/ckptd.log"; then
	ktap_note "the new ckptd found the worker's .tmp still being written: left alone"
else
	ktap_note "the worker had committed before the new ckptd looked (the lock was not needed this time)"
fi
ktap_check "ckptd alone killed mid-checkpoint: its worker commits the snapshot; ckptd started again has it as the newest" sh -c "
	cat '$tmp/mid.out' '$tmp/mid.err'; test $rc = 0 &&
	seq=\$(sed -n 's/^sequence  *//p' '$tmp/mid.out') && test -n \"\$seq\" &&
	test -d '$snap/$mjob/'\$seq && test \"\$(readlink '$snap/$mjob/latest')\" = \$seq &&
	for i in \$(seq 50); do
		'$bin/ckpt' status '$mjob' --json > '$tmp/st.json' &&
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d[\"seq\"] == int(sys.argv[2]) and d[\"latest\"] == sys.argv[3], d' '$tmp/st.json' \$seq '$snap/$mjob/'\$seq 2> /dev/null && exit 0
		sleep 0.2
	done
	cat '$tmp/st.json'; exit 1"
ktap_check "and the job runs on; the next checkpoint works" whole_after
mid_checkpoint
# The job's second memhog: the one whose parent is in the job too.
procs=/sys/fs/cgroup/ckpt/$mjob/cgroup.procs
for p in $(cat "$procs"); do
	grep -qx "$(awk '{ print $4 }' "/proc/$p/stat")" "$procs" && kill -KILL "$p"
done
wait "$mid" 2> /dev/null || true
ktap_check "a process killed mid-checkpoint: no snapshot half-made, the rest runs on" whole_after
# On a terminal (script gives it one), ckpt job shows its progress on one
# line of stderr, then its result; --json prints the result alone. (The
# images written so far, every half second, show in ckptd_nodes, whose
# writes last that long.)
ktap_check "on a terminal ckpt job shows its phases, bytes and rate, then the result" sh -c \
	"script -qec \"'$bin/ckpt' job '$mjob'\" /dev/null > '$tmp/p' &&
	 grep -aq 'job: committing  *[0-9]* processes, [0-9.]* MB, [0-9.]* MB/s' '$tmp/p' &&
	 grep -aq 'job: verifying ' '$tmp/p' && grep -aq 'snapshot  *$snap/$mjob/' '$tmp/p' &&
	 script -qec \"'$bin/ckpt' job '$mjob' --json\" /dev/null > '$tmp/p' &&
	 ! grep -aq 'MB/s' '$tmp/p' && grep -aq '\"verify_us\"' '$tmp/p'"
kill "$mrunner" 2> /dev/null || true
pkill -KILL -f "$memhog" 2> /dev/null || true

# Joins during a checkpoint (ckptd.md): a process joining the job while a
# checkpoint looks at its processes waits until their fate is applied.
# holdcb holds each checkpoint in its libckpt callback until the test says
# go; a ckpt-join started meanwhile has still not run its command 2 s on
# (unheld, it would at once). After a continue it joins: in no process of
# that snapshot, in the next one's. After a --kill it is refused, its
# command never run.
holdcb=$CKPT_TOP/build/tests/workloads/holdcb
hd=$tmp/hold
mkdir -p "$hd"
"$bin/ckpt-run" "$holdcb" "$hd" > "$hd/out" 2> "$hd/err" &
hrunner=$!
ktap_poll 30 grep -q ready "$hd/out" || true
hjob=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$hd/err")
# held_checkpoint ARGS: ckpt job ARGS in the background ($hck), held in
# the callback until go() (within --timeout 120: the engine's 10 s
# default covers the hold, which a slow machine's steps could outlast).
held_checkpoint() {
	rm -f "$hd/asked" "$hd/go"
	"$bin/ckpt" job "$hjob" --timeout 120 "$@" > "$hd/job.out" 2> "$hd/job.err" &
	hck=$!
	ktap_poll 30 test -e "$hd/asked" || true
}
# let_go: the callback returns; the checkpoint's status in $hrc.
let_go() {
	hrc=0
	touch "$hd/go"
	wait "$hck" || hrc=$?
}
# join_meanwhile: a ckpt-join of a sleep ($joiner), given 2 s.
join_meanwhile() {
	"$bin/ckpt-join" "$hjob" -- sleep 302 > "$hd/join.out" 2> "$hd/join.err" &
	joiner=$!
	sleep 2
}
# waiting: ckptd has the join and holds it back; the joiner is ckpt-join
# still, not in the job.
waiting() {
	ktap_poll 30 grep -q "job $hjob: the join of pid $joiner waits for the checkpoint under way" \
		"$tmp/ckptd.log" &&
	test "$(cat "/proc/$joiner/comm")" = ckpt-join &&
	! grep -qx "$joiner" "/sys/fs/cgroup/ckpt/$hjob/cgroup.procs"
}
# ended PID: PID has ended (60 s at most; killed then), and its status.
ended() {
	ktap_poll 60 sh -c "! kill -0 $1 2> /dev/null" || kill -KILL "$1" 2> /dev/null
	wait "$1"
}
# in_latest PID: whether the job's newest snapshot has process PID.
in_latest() {
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
pids = [p["pid"] for n in m["nodes"] for t in n["trees"] for p in t["members"]]
sys.exit(0 if int(sys.argv[2]) in pids else 1)' "$snap/$hjob/latest/meta.json" "$1"
}
# joined_after: the checkpoint made its snapshot without the joiner, which
# then joined; the next snapshot has it.
joined_after() {
	test "$hrc" = 0 && ! in_latest "$joiner" &&
	ktap_poll 30 sh -c "test \"\$(cat /proc/$joiner/comm)\" = sleep" &&
	grep -qx "$joiner" "/sys/fs/cgroup/ckpt/$hjob/cgroup.procs" &&
	held_checkpoint && let_go && test "$hrc" = 0 && in_latest "$joiner"
}
# refused_after: the --kill made its snapshot; the joiner was refused by
# name and its sleep never ran; ckpt-run ended as its killed job.
refused_after() {
	local rc=0 rrc=0
	ended "$joiner" || rc=$?
	ended "$hrunner" || rrc=$?
	cat "$hd/join.err"
	test "$hrc" = 0 && test "$rc" != 0 && test "$rrc" = 137 &&
	grep -q "job $hjob ended with the checkpoint this join waited for" "$hd/join.err" &&
	! pgrep -x -f "sleep 302"
}
held_checkpoint
join_meanwhile
ktap_check "a join during a checkpoint waits for it (2 s on, its command has not run)" waiting
let_go
ktap_check "the checkpoint over, it joins the job: in no process of that snapshot, in the next one's" \
	joined_after
kill "$joiner" 2> /dev/null || true
wait "$joiner" 2> /dev/null || true
held_checkpoint --kill
join_meanwhile
ktap_check "a join during a checkpoint --kill waits for it too" waiting
let_go
ktap_check "the job killed, the join is refused by name and its command never runs" refused_after

# A job restarted on a terminal (cli/tty.c): ckpt restart gives it a
# pseudo-terminal of its own, ckptd's restarter makes it the job's
# controlling terminal, and the job's group has its foreground, the
# window's size, what is typed (a Ctrl-C, ending its sleep), and its
# output on ckpt restart's terminal. The program (nobody's, under
# script's terminal) prints what its terminal is once interrupted.
cat > "$tmp/u/ttyjob.sh" <<'EOF'
trap 'python3 -c "import os
fd = os.open(\"/dev/tty\", os.O_RDWR)
print(\"ctty\", os.tcgetpgrp(fd) == os.getpgrp(), os.get_terminal_size(fd).columns,
      os.isatty(0) and os.isatty(1))"; exit 5' INT
echo "$CKPT_JOBID" > "$1/tjob"
sleep 3600
exit 9
EOF
# on_tty OUT CMD: CMD on a terminal of script's, as bash (as_nobody, raw),
# what script reads from its standard input typed there.
on_tty() {
	local out=$1
	shift
	SHELL=/bin/bash timeout 300 script -qec "$*" /dev/null > "$out" 2>&1
}
export -f on_tty
# tty_asleep: the terminal job is in its sleep.
tty_asleep() {
	local p
	for p in $(cat "/sys/fs/cgroup/ckpt/$tjob/cgroup.procs"); do
		[ "$(cat "/proc/$p/comm" 2> /dev/null)" = sleep ] && return 0
	done
	return 1
}
(cd "$tmp/u" && on_tty "$tmp/t1.out" "as_nobody '$bin/ckpt-run' --name tty sh '$tmp/u/ttyjob.sh' '$tmp/u'" < /dev/null) &
trunner=$!
ktap_poll 60 test -s "$tmp/u/tjob" || true
tjob=$(cat "$tmp/u/tjob" 2> /dev/null)
ktap_poll 30 tty_asleep || true
trc=0
ktap_check "a job on a terminal: checkpointed with --kill" sh -c \
	"test -n '$tjob' && '$bin/ckpt' job '$tjob' --kill > /dev/null"
wait "$trunner" || trc=$?
# The keys: a FIFO script holds open both ways (it never reads its end).
mkfifo "$tmp/keys"
(cd "$tmp/u" && on_tty "$tmp/t2.out" "stty cols 91; as_nobody '$bin/ckpt' restart '$snap/$tjob/latest'" 0<> "$tmp/keys") &
trunner=$!
ktap_poll 60 grep -q "job $tjob restarted" "$tmp/t2.out" || true
ktap_check "restarted by its user on a terminal, it checkpoints again" sh -c \
	"grep -q 'job $tjob restarted' '$tmp/t2.out' && '$bin/ckpt' job '$tjob' > /dev/null"
printf '\003' > "$tmp/keys"
wait "$trunner" || trc=$?
cat -v "$tmp/t2.out" | sed 's/^/# /'
ktap_check "the restarted job's controlling terminal: foreground, size, a Ctrl-C, output" \
	sh -c "test '$trc' = 5 && grep -q 'ctty True 91 True' '$tmp/t2.out'"
ktap_poll 30 sh -c "! '$bin/ckpt' ls | grep -q '^$tjob '" || true
# What a client sends as the job's terminal, refused by name, nothing
# started: "tty" not a boolean, a descriptor 0 that is no terminal, one
# open for writing only, the client's own controlling terminal.
tty_raw() {
	CKPTD_RAW_FDS=1 raw "{\"op\":\"restart\",\"dir\":\"$snap/$tjob/latest\",\"tty\":$1}"
}
export -f tty_raw
export snap tjob
ktap_check "a restart's tty that is no boolean, or no terminal, or write-only: refused" bash -c \
	"tty_raw '\"yes\"' < /dev/null > '$tmp/t3.out';
	 tty_raw true < /dev/null >> '$tmp/t3.out';
	 on_tty '$tmp/t3.tty' 'exec 0> /dev/tty; tty_raw true' < /dev/null;
	 cat '$tmp/t3.tty' >> '$tmp/t3.out'; cat '$tmp/t3.out';
	 grep -q 'restart: .*tty.* is true or false' '$tmp/t3.out' &&
	 grep -q 'descriptor 0 as the job.s terminal, and it is no terminal' '$tmp/t3.out' &&
	 grep -q 'is not open for reading and writing' '$tmp/t3.out'"
ktap_check "another session's terminal as the job's: refused, nothing runs" bash -c \
	"on_tty '$tmp/t4.out' 'as_nobody bash -c \"tty_raw true\"' < /dev/null;
	 cat '$tmp/t4.out';
	 grep -q 'cannot be the job.s controlling terminal: it is another session.s' '$tmp/t4.out' &&
	 ! '$bin/ckpt' ls | grep -q '^$tjob '"

# ckpt restart killed: the job's terminal hangs up, and its root (the
# shell, deaf to nothing but INT) gets the SIGHUP and ends.
tty_shell() {
	grep -l ttyjob.sh $(sed 's|.*|/proc/&/cmdline|' "/sys/fs/cgroup/ckpt/$tjob/cgroup.procs") 2> /dev/null
}
(cd "$tmp/u" && on_tty "$tmp/t5.out" "as_nobody '$bin/ckpt' restart '$snap/$tjob/latest'" 0<> "$tmp/keys") &
trunner=$!
ktap_poll 60 grep -q "job $tjob restarted" "$tmp/t5.out" || true
tty_no_shell() {
	test -z "$(tty_shell)"
}
tty_hup() {
	test -n "$(tty_shell)" && pkill -KILL -f "restart $snap/$tjob/latest" &&
	ktap_poll 30 tty_no_shell
}
ktap_check "ckpt restart killed: the job's root gets its terminal's hangup" tty_hup
echo 1 > "/sys/fs/cgroup/ckpt/$tjob/cgroup.kill" 2> /dev/null || true
wait "$trunner" || true

# A root whose zombie child is in ckpt-run's process group, which no
# member leads: killed, restarted through ckptd (a session of its own,
# where that group cannot be joined), the zombie is in its maker's group
# and the root reaps it with its status.
cat > "$tmp/u/zg.py" <<'EOF'
import os, time
c = os.fork()
if c == 0:
    os._exit(5)
os.waitid(os.P_PID, c, os.WEXITED | os.WNOWAIT)
open("zg.ready", "w").close()
while not os.path.exists("zg.go"):
    time.sleep(0.1)
pid, st = os.waitpid(c, 0)
print("reaped", os.waitstatus_to_exitcode(st), flush=True)
EOF
(cd "$tmp/u" && as_nobody "$bin/ckpt-run" --name zg python3 zg.py 2> "$tmp/zg.err") &
zrunner=$!
ktap_poll 60 test -e "$tmp/u/zg.ready" || true
zjob=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/zg.err")
as_nobody "$bin/ckpt" job "$zjob" --kill > "$tmp/zg.k" 2>&1 || cat "$tmp/zg.k"
wait "$zrunner" 2> /dev/null || true
touch "$tmp/u/zg.go"
rc=0
(cd "$tmp/u" && timeout 120 bash -c "as_nobody '$bin/ckpt' restart '$snap/$zjob/latest'" \
	> "$tmp/zg.out" 2> "$tmp/zg.r.err") || rc=$?
ktap_check "a root's zombie child in ckpt-run's group: --kill, restarted through ckptd, reaped with its status" \
	sh -c "cat '$tmp/zg.k' '$tmp/zg.r.err' '$tmp/zg.out'; test -n '$zjob' && test $rc = 0 &&
	 grep -qx 'reaped 5' '$tmp/zg.out'"

ktap_note "ckptd's log:"
ktap_note "$(tail -n 40 "$tmp/ckptd.log")"
ktap_finish
