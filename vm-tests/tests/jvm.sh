#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A JVM, as a cluster's Java job runs (tests/workloads/JavaSteps: two
# worker threads beside the JVM's own twenty or so, a heap, and the
# hsperfdata file every JVM maps, flock()s exclusive and closes, so that
# only the lock's holder writes it: engine.md, "File locks"). Checkpointed
# with --kill mid-run, its image holds the lock on the file's mapping
# (ckpt inspect: flock-write); restarted while another process holds a
# lock on that file, the restart is refused, naming the file, and nothing
# runs; restarted once it is free, the JVM holds its lock again (another
# flock -n fails) and prints the line of an uninterrupted run. Checkpointed
# with continue and --local-files (what ckptd does for every job), the JVM
# runs to its end and removes its hsperfdata file; the restart makes the
# file again from the image and prints the same line. And as a user runs
# it: an ordinary user's JVM started with ckpt-run as a job of ckptd's,
# checkpointed with `ckpt job --kill` and restarted with `ckpt restart
# SNAPSHOT` by that user, holds its lock again and prints the same line.
#
# Topology: one node, no network.
# The engine's lock code runs on both lines in cr_locks; a JVM under TCG
# takes a minute, so this runs on the 6.12 line only, for CI's hour.
# kernels: 6.12
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

bin=$CKPT_TOP/build/bin
classes=$CKPT_TOP/build/tests/workloads
steps=300
tmp=$(mktemp -d)
chmod 755 "$tmp"
perf=/tmp/hsperfdata_$(id -un)
export CKPTD_SOCKET=$tmp/ckptd.sock

cleanup() {
	[ -n "${ckptd:-}" ] && kill "$ckptd" 2> /dev/null
	pkill -KILL -f 'JavaSteps' 2> /dev/null || true
	pkill -KILL -f 'sleep 3141' 2> /dev/null || true
	wait 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp" /etc/ckpt/ckptd-jvm.conf
}
trap cleanup EXIT

# start NAME: the JVM in a session of its own, its output in NAME.out;
# sets $jvm once both workers run.
start() {
	rm -f "$tmp/$1.ready"
	setsid java -Xmx256m -cp "$classes" JavaSteps "$steps" "$tmp/$1.ready" 20 \
		> "$tmp/$1.out" 2> "$tmp/$1.err" < /dev/null &
	jvm=$!
	ktap_poll 120 test -e "$tmp/$1.ready" || ktap_note "$1: not running after 120 s"
}

# same NAME: NAME.out holds the uninterrupted run's line.
same() {
	cat "$tmp/$1.out"
	cmp "$tmp/expected.out" "$tmp/$1.out"
}

# locked PID: the hsperfdata file of JVM PID exists and someone holds an
# exclusive flock() on it.
locked() {
	test -e "$perf/$1" && ! flock -n -s "$perf/$1" true
}

ktap_plan 13
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"

start expected
wait "$jvm" || true
ktap_check "an uninterrupted run" sh -c "cat '$tmp/expected.out' '$tmp/expected.err' && grep -qx 'steps $steps sum [0-9a-f]*' '$tmp/expected.out'"

# --kill mid-run; its hsperfdata file stays, locked by nobody.
start killed
pid=$jvm
ktap_check "a running JVM holds its hsperfdata file's lock" locked "$pid"
ktap_check "checkpoint --tree --kill: the lock on its file's mapping" sh -c "
	ckpt checkpoint --tree '$pid' --kill --timeout 60 -o '$tmp/killed' &&
	ckpt inspect '$tmp/killed/$pid.img' > '$tmp/killed.txt' &&
	grep -E '^  [0-9a-f]+-[0-9a-f]+ rw-s .* file(,[a-z-]+)*,flock-write(,[a-z-]+)* $perf/$pid\$' '$tmp/killed.txt'"
wait "$jvm" 2> /dev/null || true

# Another process holds a lock on the file now: refused, nothing runs.
flock -s "$perf/$pid" sleep 3141 &
holder=$!
ktap_poll 30 sh -c "! flock -n -x '$perf/$pid' true" || ktap_note "the holder has no lock"
refused() {
	local rc=0
	timeout 120 ckpt restart "$tmp/killed" > "$tmp/refused.out" 2> "$tmp/refused.err" || rc=$?
	cat "$tmp/refused.err"
	[ "$rc" != 0 ] && [ ! -s "$tmp/refused.out" ] &&
		grep -q "cannot take its flock() write lock on $perf/$pid (mapped at [0-9a-f]*) again: another process holds a lock on it now" "$tmp/refused.err" &&
		! pgrep -f JavaSteps
}
ktap_check "restarted while another holds a lock on its file: refused by name, nothing runs" refused
# flock(1)'s command holds the lock too.
kill "$holder"
pkill -KILL -f 'sleep 3141' || true
wait "$holder" 2> /dev/null || true

# Free again: the restart takes the lock and ends as an uninterrupted run.
timeout 300 ckpt restart "$tmp/killed" > "$tmp/restarted.out" 2> "$tmp/restarted.err" &
restarter=$!
ktap_check "restarted: the JVM holds its lock again" ktap_poll 60 locked "$pid"
wait "$restarter" || ktap_note "ckpt restart: status $?: $(cat "$tmp/restarted.err")"
ktap_check "restarted: the uninterrupted run's line" same restarted

# Continue, with the files ckptd carries for a job: the original ends and
# removes its file, which the restart makes again.
start cont
pid=$jvm
ckpt checkpoint --tree "$pid" --local-files --timeout 60 -o "$tmp/cont" > /dev/null ||
	ktap_note "checkpoint with --local-files failed"
wait "$jvm" || true
ktap_poll 30 sh -c "! test -e '$perf/$pid'" || ktap_note "$perf/$pid still there"
ktap_check "--local-files: the original ran on to the same line and removed its file" sh -c "
	cmp '$tmp/expected.out' '$tmp/cont.out' && ! test -e '$perf/$pid'"
timeout 300 ckpt restart "$tmp/cont" > "$tmp/cont2.out" 2> "$tmp/cont2.err" &
restarter=$!
ktap_check "--local-files: the restart makes the file again, locked" ktap_poll 60 locked "$pid"
wait "$restarter" || ktap_note "ckpt restart: status $?: $(cat "$tmp/cont2.err")"
ktap_check "--local-files: the restart ends as the uninterrupted run" same cont2

# A job of user nobody's, through ckptd, as a user runs one.
as_nobody() {
	python3 -c 'import os, sys
os.setgroups([]); os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534); os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}
mkdir -p /etc/ckpt "$tmp/snap"
mkdir -m 1777 "$tmp/u"
head -c 32 /dev/urandom > "$tmp/key"
chmod 600 "$tmp/key"
cat > /etc/ckpt/ckptd-jvm.conf << EOF
snapshot_root = $tmp/snap
key_file = $tmp/key
socket = $CKPTD_SOCKET
log_level = 2
EOF
"$bin/ckpt" key "$tmp/key"
"$bin/ckptd" --foreground --config /etc/ckpt/ckptd-jvm.conf >> "$tmp/ckptd.log" 2>&1 &
ckptd=$!
ktap_poll 30 "$bin/ckpt" ls > /dev/null || ktap_note "ckptd does not answer"
(cd "$tmp/u" && HOME=$tmp/u as_nobody "$bin/ckpt-run" --name jvm java -Xmx256m \
	-cp "$classes" JavaSteps "$steps" "$tmp/u/ready" 20 > "$tmp/u/job.out" 2> "$tmp/u/run.err") &
runner=$!
ktap_poll 120 test -e "$tmp/u/ready" || ktap_note "the job's JVM is not running after 120 s"
job=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/u/run.err")
jpid=$(ls /tmp/hsperfdata_nobody 2> /dev/null | head -1)
job_killed() {
	test -n "$job" && test -n "$jpid" &&
	as_nobody "$bin/ckpt" job "$job" --kill > "$tmp/job.out" &&
	cat "$tmp/job.out" && grep -q "^snapshot *$tmp/snap/$job/1\$" "$tmp/job.out"
}
ktap_check "ckpt job --kill of a user's JVM job" job_killed
wait "$runner" 2> /dev/null || true
(cd "$tmp/u" && HOME=$tmp/u as_nobody "$bin/ckpt" restart "$tmp/snap/$job/1" \
	> "$tmp/u/restarted.out" 2> "$tmp/u/restarted.err") &
runner=$!
ktap_check "ckpt restart SNAPSHOT by its user: the JVM holds its lock again" \
	ktap_poll 120 sh -c "test -e '/tmp/hsperfdata_nobody/$jpid' && ! flock -n -s '/tmp/hsperfdata_nobody/$jpid' true"
wait "$runner" || ktap_note "ckpt restart: status $?: $(cat "$tmp/u/restarted.err")"
ktap_check "and the job ends with the uninterrupted run's line" \
	sh -c "cat '$tmp/u/restarted.out'; cmp '$tmp/expected.out' '$tmp/u/restarted.out'"
ktap_finish
