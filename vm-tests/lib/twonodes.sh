# SPDX-License-Identifier: GPL-2.0
#
# A job over two nodes, for ckptd_nodes.sh and make demo's "nodes" step:
# source it on node0 with $shared set to a directory both nodes see (the
# results share) and CKPT_MODULE to the engine. It sets up, under
# $shared, the cluster key, a ckptd configuration whose snapshot root is
# $snap, and share.sh NAME SLEEP (lines, a sleep that go ends, more
# lines, one digest into out-NAME); $launcher is the job's command: node1's
# share through ckpt-ssh (it stays when ssh returns, as a rank does), then
# node0's.

bin=$CKPT_TOP/build/bin
producer=$CKPT_TOP/build/tests/workloads/producer
snap=$shared/snap
conf=$shared/ckptd.conf

twonodes_cleanup() {
	for n in node0 node1; do
		ssh "$n" "pkill -KILL -x ckptd; pkill -KILL -x producer; pkill -KILL -f '^sleep 3600'
			rmmod ckpt" > /dev/null 2>&1 || true
	done
	rm -rf "$shared"
}

rm -rf "$shared"
mkdir -p "$shared"
head -c 32 /dev/urandom > "$shared/key"
chmod 600 "$shared/key"
cat > "$conf" <<CONF
snapshot_root = $snap
key_file = $shared/key
listen = *
log_level = 2
CONF
cat > "$shared/share.sh" <<SHARE
{ '$producer' 3000 '$shared/ready-'\$1; sleep \$2; '$producer' 2000; } | sort | uniq -c | sha256sum > '$shared/out-'\$1
SHARE
launcher="'$bin/ckpt-ssh' node1 \"nohup sh '$shared/share.sh' b 3600 > /dev/null 2>&1 < /dev/null &\"; sh '$shared/share.sh' a 3600"

# start_ckptd NODE: ckptd (logging to ckptd-NODE.log), once it answers.
start_ckptd() {
	ssh "$1" "{ setsid '$bin/ckptd' --foreground --config '$conf' >> '$shared/ckptd-$1.log' 2>&1 < /dev/null & }
		for i in \$(seq 150); do '$bin/ckpt' ls > /dev/null 2>&1 && exit 0; sleep 0.2; done; exit 1"
}

# start_node NODE: the engine, the key and ckptd.
start_node() {
	ssh "$1" "insmod '$CKPT_MODULE' && '$bin/ckpt' key '$shared/key'" && start_ckptd "$1"
}

# start_nodes: start_node on both nodes at once (each takes about 17 s
# under TCG, most of it waiting on the guest), two points.
start_nodes() {
	local pid rc=0
	start_node node1 > "$shared/start-node1.log" 2>&1 &
	pid=$!
	ktap_check "node0: engine, key, ckptd" start_node node0
	wait "$pid" || rc=$?
	sed 's/^/# /' "$shared/start-node1.log"
	ktap_check "node1: engine, key, ckptd" test "$rc" = 0
}

# reference_run: share.sh run once outside any job, its digest kept in
# $shared/reference for the shares' outputs to match.
reference_run() {
	timeout 120 sh "$shared/share.sh" a 0 || ktap_note "the reference run failed"
	ktap_note "reference: $(cat "$shared/out-a")"
	cp "$shared/out-a" "$shared/reference"
	rm -f "$shared"/out-* "$shared"/ready-*
}

# running NODE JOB: JOB has processes on NODE, none of them stopped.
running() {
	ssh "$1" "grep -qs . /sys/fs/cgroup/ckpt/$2/cgroup.procs || exit 1
		for p in \$(cat /sys/fs/cgroup/ckpt/$2/cgroup.procs); do
		grep -q '^State:.*T' /proc/\$p/status && exit 1; done; exit 0"
}

# wait_for PID: its status, or 124 (and it killed) after 180 s: no hang.
wait_for() {
	local i
	for i in $(seq 900); do
		kill -0 "$1" 2> /dev/null || break
		sleep 0.2
	done
	kill -0 "$1" 2> /dev/null && { kill -KILL "$1"; wait "$1" 2> /dev/null; return 124; }
	wait "$1"
}

# go NODE: ends the sleep of job $job's share on NODE.
go() {
	ssh "$1" "for p in \$(cat /sys/fs/cgroup/ckpt/$job/cgroup.procs); do
		[ \"\$(cat /proc/\$p/comm)\" = sleep ] && kill \$p; done; true"
}

both_running() {
	running node0 "$1" && running node1 "$1"
}

# The job's id, from ckpt-run's stderr in FILE.
job_of() {
	sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$1"
}

# job_on_both NAME NODE0_COMMAND NODE1_COMMAND [N]: a job under ckpt-run
# from node0 (its stderr in $shared/NAME.err) whose share on node1 is
# NODE1_COMMAND, started through ckpt-ssh, and on node0 NODE0_COMMAND;
# back once node1's share has joined (N processes there, 1 by default),
# the job's id in $both_job, ckpt-run's pid in $both_runner.
job_on_both() {
	(cd /tmp && "$bin/ckpt-run" --name "$1" sh -c \
		"'$bin/ckpt-ssh' node1 \"nohup $3 > /dev/null 2>&1 < /dev/null &\"; exec $2" \
		2> "$shared/$1.err") &
	both_runner=$!
	ktap_poll 60 grep -q "^ckpt-run: job " "$shared/$1.err" || true
	both_job=$(job_of "$shared/$1.err")
	ktap_poll 120 sh -c "ssh node1 \"'$bin/ckpt' status '$both_job' --json\" |
		grep -q '\"processes\":${4:-1}'" || true
}

# flip_middle FILE: the byte in the middle of FILE inverted, in place (a
# second call puts it back). Run on another node with
# ssh NODE "$(declare -f flip_middle); flip_middle FILE".
flip_middle() {
	local off b
	off=$(($(stat -c %s "$1") / 2))
	b=$(od -An -tu1 -j "$off" -N1 "$1" | tr -d ' ')
	# shellcheck disable=SC2059
	printf "$(printf '\\%03o' $((b ^ 255)))" |
		dd of="$1" bs=1 seek="$off" conv=notrunc status=none
}
