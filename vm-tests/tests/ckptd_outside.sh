#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A job's TCP connection to a process outside the job (Documentation/
# decisions.md, "Connections to processes outside the job"). A server,
# not in the job, listens on 127.0.0.1; the job, an ordinary user's
# (nobody), connects to it, says "connected" and writes to it every 0.2 s,
# saying "closed" and ending when a write fails (a Python program: one
# process, no child that comes and goes while it is captured). Under plain ckpt-run
# the checkpoint is refused, naming the connection, and the job runs on;
# under ckpt-run --outside close it is checkpointed and killed, the
# snapshot's metadata lists the connection, and restarted the job finds
# its connection closed (the write fails) and ends on its own, 0. ckpt
# status shows the policy.
#
# Topology: one node, no network.
# kernels: 6.1
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

bin=$CKPT_TOP/build/bin
tmp=$(mktemp -d)
chmod 755 "$tmp"
mkdir -m 1777 "$tmp/u"
snap=$tmp/snap
export CKPTD_SOCKET=$tmp/ckptd.sock

cleanup() {
	[ -n "${ckptd:-}" ] && kill "$ckptd" 2> /dev/null
	[ -n "${server:-}" ] && kill "$server" 2> /dev/null
	pkill -KILL -f 'outside.py client' 2> /dev/null || true
	wait 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp" /etc/ckpt/ckptd-outside.conf
}
trap cleanup EXIT

# as_nobody COMMAND...: COMMAND as nobody (a program, so exec and timeout take it).
cat > "$tmp/as_nobody" <<'NOBODY'
#!/usr/bin/python3
import os, sys
os.setgroups([]); os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534); os.execvp(sys.argv[1], sys.argv[1:])
NOBODY
chmod 755 "$tmp/as_nobody"
as_nobody=$tmp/as_nobody

outside=$CKPT_TOP/vm-tests/lib/outside.py

# start_job NAME [OPTIONS]: the client under ckpt-run as nobody; sets job, runner.
start_job() {
	local name=$1
	shift
	(cd "$tmp/u" && exec timeout 300 "$as_nobody" "$bin/ckpt-run" --name "$name" "$@" \
		python3 "$outside" client 127.0.0.1 "$port" \
		> "$tmp/$name.out" 2> "$tmp/$name.err") &
	runner=$!
	ktap_poll 60 grep -q connected "$tmp/$name.out" || true
	job=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/$name.err")
}

ktap_plan 8
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"
mkdir -p /etc/ckpt
head -c 32 /dev/urandom > "$tmp/key"
chmod 600 "$tmp/key"
cat > /etc/ckpt/ckptd-outside.conf <<CONF
snapshot_root = $snap
key_file = $tmp/key
socket = $CKPTD_SOCKET
log_level = 2
CONF
"$bin/ckpt" key "$tmp/key"
"$bin/ckptd" --foreground --config /etc/ckpt/ckptd-outside.conf >> "$tmp/ckptd.log" 2>&1 &
ckptd=$!
ktap_check "ckptd starts and answers" ktap_poll 30 "$bin/ckpt" ls

# The server, outside every job: accepts and reads, never closes.
python3 "$outside" server 127.0.0.1 > "$tmp/port" &
server=$!
ktap_poll 30 test -s "$tmp/port" || true
port=$(cat "$tmp/port")

start_job refuse
ktap_check "without --outside: the checkpoint is refused, naming the connection" sh -c \
	"! '$as_nobody' '$bin/ckpt' job '$job' > /dev/null 2> '$tmp/e'; cat '$tmp/e' >&2
	 grep -q '127.0.0.1:$port' '$tmp/e'"
ktap_check "and the job runs on, writing to its server" sh -c \
	"sleep 1; kill -0 $runner && ! grep -q closed '$tmp/refuse.out'"
kill -KILL $(cat "/sys/fs/cgroup/ckpt/$job/cgroup.procs") 2> /dev/null || true
wait "$runner" 2> /dev/null || true

start_job close --outside close
ktap_check "--outside close: ckpt status says so" sh -c \
	"'$as_nobody' '$bin/ckpt' status '$job' --json | grep -q '\"outside\": *\"close\"'"
ktap_check "--outside close: checkpointed with --kill" sh -c \
	"'$as_nobody' '$bin/ckpt' job '$job' --kill | grep -q '^snapshot *$snap/$job/1\$'"
wait "$runner" 2> /dev/null || true
ktap_check "the snapshot lists the connection to outside the job" \
	grep -q "127.0.0.1:$port" "$snap/$job/1/meta.json"
(cd "$tmp/u" && "$as_nobody" "$bin/ckpt" restart "$snap/$job/latest" \
	> "$tmp/restart.out" 2> "$tmp/restart.err") &
runner=$!
ktap_poll 60 grep -q closed "$tmp/restart.out" || cat "$tmp/restart.err" >&2
rc=0
wait "$runner" || rc=$?
ktap_check "restarted, the job finds its connection closed and ends on its own: 0" \
	sh -c "grep -qx closed '$tmp/restart.out' && test $rc = 0"
ktap_finish
