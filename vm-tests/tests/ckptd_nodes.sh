#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A job over two nodes (Documentation/ckptd.md, "Several nodes"). Under
# ckpt-run on node0, a launcher starts a pipeline on node1 through ckpt-ssh
# (as mpirun would through its rsh agent: the remote command joins the job
# there) and one of its own; another job starts its node1 share with plain
# ssh, which joins it the same way, while plain ssh to a node whose ckptd
# does not answer is the system's; both write their digest to files. ckpt job
# on node0 checkpoints both nodes' shares as one snapshot on the snapshot
# root they share; --kill ends them on both nodes. ckpt restart on node0
# brings both shares back, each on its node; checkpointed and killed again,
# the job is restarted with the nodes swapped (--hosts, from node1). Every
# share's output is the uninterrupted run's. A restart whose node0 share
# fails to start after node1's was made ends node1's too, named, before
# it ran. A byte
# changed in one node's images: that node refuses its share, named, and
# none of the job starts on either node. A share
# that ended leaves the job at its next checkpoint, which says so. ckptd
# killed on node1 while it writes its share fails that checkpoint, named,
# and leaves nothing; started again, it lets its share run on. A continue
# lets a job go once both shares are staged, before node0's 128 MiB are
# written (held less long than node0's engine call took). Under
# ckpt-run --outside close, connections to a server outside the job (from
# node0 over ckpt0 and from node1 over 127.0.0.1) are listed in their own
# node's entry and come back closed. A connection waiting to be accepted
# on node1 from node0 comes back, the nodes swapped, with its bytes. A TLS
# client without the cluster key gets nothing from ckptd's port.
#
# Topology: node0 and node1 on the private link, each with ckptd, the
# snapshot root on the results share both mount.
# nodes: 2
# kernels: 6.12
# (One kernel line: user space, whose engine paths the tree tests cover
# on both; 6.12, to share its two-node boot with multinode.)
# 567 s in a whole make check here (stop 51): a limit of 25 minutes
# (testing.md, "Time limits").
# timeout: 1500
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

shared=${ckptvm_out:?}/ckptd-nodes
. "$CKPT_TOP/vm-tests/lib/twonodes.sh"
trap twonodes_cleanup EXIT

ktap_plan 38
start_nodes

reference_run

(cd /tmp && "$bin/ckpt-run" --name two sh -c "$launcher" > "$shared/run.out" 2> "$shared/run.err") &
runner=$!
ktap_poll 90 sh -c "test -e '$shared/ready-a' && test -e '$shared/ready-b'" || true
job=$(job_of "$shared/run.err")
ktap_check "node1's processes joined the job through ckpt-ssh" sh -c \
	"'$bin/ckpt' status '$job' --json | grep -q '\"nodes\":\\[\"node1\"\\]' &&
	 ssh node1 \"'$bin/ckpt' status '$job' --json\" | grep -q '\"coordinator\":\"node0\"'"
ktap_check "one checkpoint of both nodes: snapshot 1 holds both shares" sh -c \
	"'$bin/ckpt' job '$job' | grep -q '^snapshot *$snap/$job/1\$' &&
	 test -f '$snap/$job/1/node0/0/manifest' && test -f '$snap/$job/1/node1/0/manifest' &&
	 grep -q '\"node\": \"node1\"' '$snap/$job/1/meta.json'"
ktap_check "both shares run on after it, none stopped" both_running "$job"
ktap_check "--kill: snapshot 2, the job ends on both nodes" sh -c \
	"'$bin/ckpt' job '$job' --kill | grep -q '^snapshot *$snap/$job/2\$' &&
	 for i in \$(seq 50); do ssh node1 \"! '$bin/ckpt' status '$job'\" 2> /dev/null && exit 0; sleep 0.2; done; exit 1"
rc=0
wait_for "$runner" || rc=$?
ktap_check "ckpt-run exits as its killed job: 137" test "$rc" = 137

# A restart whose own share cannot start after node1's was made (the file
# its output goes to is gone): it fails, naming it, and node1's share,
# held by the engine once whole, ends unconfirmed without having run (its
# ckptd never logs it restarted); nothing of the job runs. The file back,
# it restarts.
mv "$shared/out-a" "$shared/out-a.away"
started1=$(grep -c "job $job restarted" "$shared/ckptd-node1.log" || true)
rc=0
timeout 300 "$bin/ckpt" restart "$snap/$job/2" > /dev/null 2> "$shared/r0.err" || rc=$?
ktap_check "node0's share cannot start: the restart fails, naming the file" sh -c \
	"cat '$shared/r0.err'; test $rc = 1 && grep -q 'cannot reopen $shared/out-a ' '$shared/r0.err' ||
	 { tail -n 8 '$shared/ckptd-node0.log' '$shared/ckptd-node1.log'; exit 1; }"
ktap_check "node1's share, started first, ended unconfirmed: none of the job runs" \
	ktap_poll 60 sh -c "ssh node1 \"! grep -qs . /sys/fs/cgroup/ckpt/$job/cgroup.procs\" &&
		! grep -qs . /sys/fs/cgroup/ckpt/$job/cgroup.procs &&
		grep -q 'job $job: the restart was not confirmed' '$shared/ckptd-node1.log'"
ktap_note "node1: $(grep -E 'confirm|share' "$shared/ckptd-node1.log" | tail -n 3 | tr '\n' ' ')"
ktap_check "node1's share was held and never ran: never released, never logged restarted" \
	test "$(grep -c "job $job restarted" "$shared/ckptd-node1.log" || true)" = "$started1"
mv "$shared/out-a.away" "$shared/out-a"

# A damaged share: a copy of snapshot 2 with a byte of one node's first
# image flipped. Each node checks its own share's images (the
# coordinator no longer hashes the others' too): node1 refuses its share
# before it is ready, naming itself and the image, so node0's never
# starts; node0's own damaged (checked while node1 checks its own),
# node0 refuses it, naming it, and node1, ready, never gets "go".
damaged_restart() {
	local img rc=0
	rm -rf "$shared/bad-$1"
	cp -a "$snap/$job/2" "$shared/bad-$1"
	img=$(ls "$shared/bad-$1/$1/0/"*.img | head -n 1)
	flip_middle "$img"
	timeout 300 "$bin/ckpt" restart "$shared/bad-$1" > /dev/null 2> "$shared/bad-$1.err" || rc=$?
	cat "$shared/bad-$1.err"
	test "$rc" = 1 &&
	grep -q "job $job: $2.*/$1/0/${img##*/} is not the image the snapshot's metadata names" \
		"$shared/bad-$1.err" &&
	ktap_poll 60 sh -c "ssh node1 \"! grep -qs . /sys/fs/cgroup/ckpt/$job/cgroup.procs\" &&
		! grep -qs . /sys/fs/cgroup/ckpt/$job/cgroup.procs"
}
# node1's share, ready, made the job's cgroup there and joined it; its
# worker gone, the empty cgroup of no record goes at ckptd's next tick.
node0_damaged() {
	damaged_restart node0 "" && ! grep -q 'node node1' "$shared/bad-node0.err" &&
	ktap_poll 30 ssh node1 "! test -e /sys/fs/cgroup/ckpt/$job"
}
ktap_check "a byte of node1's share changed: node1 refuses it, named, before node0's starts; none of the job runs" \
	damaged_restart node1 "node node1: "
ktap_check "a byte of node0's share changed: its coordinator refuses it, named; none of the job runs, no cgroup of it stays" \
	node0_damaged
ktap_note "node1: $(grep -E "job $job: its cgroup here" "$shared/ckptd-node1.log" | tail -n 1)"
rm -rf "$shared/bad-node0" "$shared/bad-node1"

# restarted_by R NODE COORD: restart R's stderr says the job restarted
# (within 180 s), and NODE's ckptd has COORD as its coordinator.
restarted_by() {
	local on=
	[ "$2" = node0 ] || on="ssh $2"
	ktap_poll 180 grep -q "job $job restarted" "$shared/$1.err" &&
	$on "$bin/ckpt" status "$job" --json | grep -q "\"coordinator\":\"$3\"" ||
	{ cat "$shared/$1.err"; tail -n 8 "$shared/ckptd-node0.log" "$shared/ckptd-node1.log"; return 1; }
}

# Restarted on the same nodes, from node0.
"$bin/ckpt" restart "$snap/$job/2" > "$shared/r1.out" 2> "$shared/r1.err" &
runner=$!
ktap_check "ckpt restart brings both shares back, each on its node" \
	restarted_by r1 node1 node0
ktap_check "the restarted job: checkpointed over both nodes and killed, snapshot 3" sh -c \
	"'$bin/ckpt' job '$job' --kill | grep -q '^snapshot *$snap/$job/3\$'"
wait_for "$runner" || true

# Restarted with the nodes swapped, from node1.
ssh node1 "cd /tmp && '$bin/ckpt' restart --hosts node0=node1,node1=node0 '$snap/$job/3' \
	> '$shared/r2.out' 2> '$shared/r2.err'" &
runner=$!
ktap_check "--hosts node0=node1,node1=node0: the shares swap nodes" \
	restarted_by r2 node0 node1
# MPIX_Checkpoint's request (a detached checkpoint, as libckpt-mpi sends
# it) made on node0, which no longer coordinates: its ckptd passes it to
# node1's (daemon/ask.c), which checkpoints both shares: snapshot 4. The
# MPI tests make it from a rank with CKPT_TEST_MPIX=1.
ktap_check "a detached checkpoint asked on node0: passed to node1, which coordinates; snapshot 4" sh -c \
	"python3 '$CKPT_TOP/vm-tests/lib/ckptd_raw.py' /run/ckpt/ckptd.sock \
		'{\"op\":\"checkpoint\",\"job\":\"$job\",\"detach\":true}' |
	   grep -Eq '\"detached\": ?true' &&
	 for i in \$(seq 300); do test -f '$snap/$job/4/meta.json' && break; sleep 0.5; done &&
	 grep -q '\"node\": \"node0\"' '$snap/$job/4/meta.json' &&
	 grep -q 'job $job: the detached checkpoint passed to its coordinator, node node1' '$shared/ckptd-node0.log'"
# node0's share (b, now) ends first; the job's next checkpoint, from
# node1, leaves it out and the job goes on without it.
go node0
ktap_check "a share that ended: the next checkpoint leaves its node out, says so" sh -c \
	"for i in \$(seq 150); do grep -qs . /sys/fs/cgroup/ckpt/$job/cgroup.procs || break; sleep 0.2; done &&
	 ssh node1 \"'$bin/ckpt' job '$job' --json\" > '$shared/c5.json' &&
	 grep -q '\"seq\":5' '$shared/c5.json' && grep -q '\"ended\":\\[\"node0\"\\]' '$shared/c5.json' &&
	 grep -q '\"node\": \"node1\"' '$snap/$job/5/meta.json' &&
	 ! grep -q '\"node\": \"node0\"' '$snap/$job/5/meta.json'"
ktap_check "node0 left the job: its next checkpoint is of node1 alone" sh -c \
	"ssh node1 \"'$bin/ckpt' job '$job' --json\" > '$shared/c6.json' &&
	 grep -q '\"seq\":6' '$shared/c6.json' && ! grep -q ended '$shared/c6.json' &&
	 ! grep -q '\"node\": \"node0\"' '$snap/$job/6/meta.json' &&
	 ! ssh node1 \"'$bin/ckpt' status '$job' --json\" | grep -q node0"
go node1
rc=0
wait_for "$runner" || rc=$?
ktap_check "the job ends: ckpt restart exits 0" test "$rc" = 0
ktap_check "node0's share printed the uninterrupted run's digest" \
	ktap_poll 30 cmp "$shared/reference" "$shared/out-a"
ktap_check "node1's share printed the uninterrupted run's digest" \
	ktap_poll 30 cmp "$shared/reference" "$shared/out-b"

# A job's plain ssh is ckpt-run's shim (ckptd.md, "Plain ssh"): ssh -V
# is the system's; to a host whose ckptd does not answer under the
# cluster key (node1's, stopped for it) the system's ssh runs the command
# there, outside any job.
ktap_check "a job's ssh is ckpt-run's shim; ssh -V is the system's" sh -c "
	cd /tmp && timeout 120 '$bin/ckpt-run' --name which sh -c 'readlink -f \"\$(command -v ssh)\"; ssh -V' > '$shared/w.out' 2>&1;
	cat '$shared/w.out';
	grep -qxF \"\$(readlink -f '$bin/ckpt')\" '$shared/w.out' && grep -q '^OpenSSH' '$shared/w.out'"
ssh node1 "pkill -x ckptd; for i in \$(seq 100); do pgrep -x ckptd > /dev/null || exit 0; sleep 0.2; done; exit 1" ||
	ktap_note "node1's ckptd did not stop"
ktap_check "plain ssh to a host whose ckptd does not answer: the system's ssh, its command in no job" sh -c "
	cd /tmp && timeout 120 '$bin/ckpt-run' --name plain ssh node1 cat /proc/self/cgroup > '$shared/p.out' 2> '$shared/p.err';
	cat '$shared/p.out' '$shared/p.err'; test -s '$shared/p.out' && ! grep -q /ckpt/ '$shared/p.out'"
start_ckptd node1 || ktap_note "node1's ckptd did not start again"

# ckptd killed on node1, with its workers, while it writes its share of
# a bigger job (a memhog each side, node1's started by plain ssh, which
# joins the job there, and a second one there the same way, another
# process tree of the job on node1): the checkpoint fails, naming node1; nothing of it
# stays and node0's share runs on; node1's ckptd, started again, finds
# its share (stopped when it died) and lets it run; the next checkpoint,
# into a --dir, holds both, node1's with its two trees.
memhog=$CKPT_TOP/build/tests/workloads/memhog
(cd /tmp && "$bin/ckpt-run" --name hogs sh -c \
	"ssh node1 \"nohup '$memhog' 1 192 192 > /dev/null 2>&1 < /dev/null &\"
	 ssh node1 \"nohup '$memhog' 1 8 8 > /dev/null 2>&1 < /dev/null &\"; exec '$memhog' 1 8 8 > /dev/null" \
	2> "$shared/h.err") &
hrunner=$!
ktap_poll 60 grep -q "^ckpt-run: job " "$shared/h.err" || true
hjob=$(job_of "$shared/h.err")
ktap_check "plain ssh in the job, twice to node1: its two memhogs joined the job there" \
	ktap_poll 120 sh -c "ssh node1 \"'$bin/ckpt' status '$hjob' --json\" | grep -q '\"processes\":2'"
sleep 3
# On node1 itself, watching before the checkpoint starts: ckptd killed
# within 0.1 s of its worker making the share's directory. Watched from
# node0, through a new ssh each time, the share was whole before the kill
# on a fast machine. The checkpoint starts once the watcher is looking:
# an ssh session can take longer to start under TCG than the whole
# checkpoint (since the engine hashes the images as it writes them).
rm -f "$shared/watching"
ssh node1 "touch '$shared/watching'; for i in \$(seq 1200); do
	ls -d '$snap/$hjob/'*.tmp/node1 > /dev/null 2>&1 && exec pkill -KILL -x ckptd
	sleep 0.1; done; exit 1" &
watcher=$!
ktap_poll 60 test -e "$shared/watching" || ktap_note "the watcher on node1 did not start"
"$bin/ckpt" job "$hjob" > /dev/null 2> "$shared/h1.err" &
hc=$!
wait "$watcher" || ktap_note "node1's ckptd was not killed"
rc=0
wait_for "$hc" || rc=$?
ktap_check "ckptd killed on node1 mid-checkpoint: the checkpoint fails, naming node1" sh -c \
	"test $rc = 1 && grep -q 'node1' '$shared/h1.err'"
ktap_note "$(cat "$shared/h1.err")"
hogs_untouched() {
	! ls -d "$snap/$hjob/"*.tmp 2> /dev/null &&
	! ls -d "$snap/$hjob/"[0-9]* 2> /dev/null && running node0 "$hjob"
}
node1_back() {
	start_ckptd node1 && ktap_poll 30 running node1 "$hjob"
}
ktap_check "nothing of it stays; node0's share runs on" hogs_untouched
ktap_check "node1's ckptd started again: its share runs on, not stopped" node1_back
# Into another directory both nodes see (--dir): each writes its share
# there, through the directory the coordinator made (snapdir.c).
mkdir -p "$shared/elsewhere"
ktap_check "the next checkpoint, into a --dir, holds both nodes' shares: snapshot 1 there" sh -c \
	"script -qec \"'$bin/ckpt' job '$hjob' --kill --dir '$shared/elsewhere'\" /dev/null > '$shared/h2.out' &&
	 grep -aq 'snapshot *$shared/elsewhere/$hjob/1' '$shared/h2.out' &&
	 grep -q '\"node\": \"node1\"' '$shared/elsewhere/$hjob/1/meta.json' &&
	 test -f '$shared/elsewhere/$hjob/1/node1/0/manifest' && ! ls -d '$snap/$hjob/'[0-9]* 2> /dev/null &&
	 test \$(grep -c '^member [0-9]* -\$' '$shared/elsewhere/$hjob/1/node1/0/manifest') = 2"
ktap_check "on a terminal it showed the images written so far, their size and rate" \
	grep -aq 'job: writing  *[0-9]* processes, [0-9.]* MB, [0-9.]* MB/s' "$shared/h2.out"
wait_for "$hrunner" || true

# A continue lets the job go once every share is captured and staged,
# before the images are written (CKPT_CHECKPOINT_STAGED): a job of 128 MiB
# on node0 and a small share on node1 is held for less time than node0's
# own engine call takes, which writes (and hashes) the 128 MiB after the
# release. Held until every image is written, as before, it could not be:
# the hold starts before that call and ends after it. (32 MiB, tried in
# stop 53 to spare the snapshot's inspect, left too small a margin: held
# 1.16 s, the engine call 1.01 s, in one run of three.)
job_on_both staged "'$memhog' 1 128 128 > /dev/null" "'$memhog' 1 2 2"
sjob=$both_job
srunner=$both_runner
released_staged() {
	"$bin/ckpt" job "$sjob" --json > "$shared/s1.json" &&
	python3 - "$shared/s1.json" <<-'PY'
	import json, sys
	r = json.load(open(sys.argv[1]))
	print("# held %d us, node0's engine call %d us" % (r["stopped_us"], r["total_us"]))
	sys.exit(0 if 0 < r["stopped_us"] < r["total_us"] else 1)
	PY
}
ktap_check "a continue lets both shares go once staged, before node0's images are written" \
	released_staged
staged_whole() {
	running node0 "$sjob" && running node1 "$sjob" &&
	test -f "$snap/$sjob/1/node1/0/manifest" &&
	"$bin/ckpt" inspect "$snap/$sjob/1" > /dev/null
}
ktap_check "both shares run on after it, the snapshot whole" staged_whole
for n in node0 node1; do
	ssh "$n" "cat /sys/fs/cgroup/ckpt/$sjob/cgroup.procs | xargs -r kill -KILL" || true
done
wait_for "$srunner" || true

# Connections to a process outside the job, over two nodes (ckpt-run
# --outside close): a server on node1, in no job, drains what it gets and
# never closes, not even an end its client closed (so a client's write
# fails after the restart because its connection came back closed, not
# because the server's end is gone); the job's client on node0 connects to it over ckpt0 (the
# coordinator finds no other end in any share), its client on node1 over
# 127.0.0.1 (the engine captures this end alone). Each writes every 0.2 s
# and says "closed" and ends, 0, when a write fails. Checkpointed with
# --kill, the snapshot lists each connection in its own node's entry;
# restarted, both clients find theirs closed and end, and the job ends 0
# once both have (node0's share waits for node1's word).
outside=$CKPT_TOP/vm-tests/lib/outside.py
ssh node1 "setsid python3 '$outside' server 0.0.0.0 > '$shared/oport' 2>&1 < /dev/null &"
ktap_poll 60 test -s "$shared/oport" || true
oport=$(cat "$shared/oport")
(cd /tmp && "$bin/ckpt-run" --name outside --outside close sh -c \
	"'$bin/ckpt-ssh' node1 \"nohup python3 '$outside' client 127.0.0.1 $oport '$shared/oc-b.out' > /dev/null 2>&1 < /dev/null &\";
	 exec python3 '$outside' client 192.0.2.11 $oport '$shared/oc-a.out' '$shared/oc-b.out'" \
	2> "$shared/o.err") &
orunner=$!
ktap_poll 90 sh -c "grep -q connected '$shared/oc-a.out' && grep -q connected '$shared/oc-b.out'" || true
ojob=$(job_of "$shared/o.err")
ktap_poll 60 sh -c "ssh node1 \"'$bin/ckpt' status '$ojob' --json\" | grep -q '\"processes\":1'" || true
ktap_check "--outside close over two nodes: checkpointed with --kill" sh -c \
	"! grep -q closed '$shared/oc-a.out' && ! grep -q closed '$shared/oc-b.out' &&
	 '$bin/ckpt' job '$ojob' --kill | grep -q '^snapshot *$snap/$ojob/1\$'"
wait_for "$orunner" || true
outside_listed() {
	python3 - "$snap/$ojob/1/meta.json" "$oport" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
port = sys.argv[2]
out = {n["node"]: json.dumps(n.get("outside", [])) for n in m["nodes"]}
print(m.get("outside"), out)
assert m.get("outside") == "close"
assert "192.0.2.11:" + port in out["node0"], out
assert "127.0.0.1:" + port in out["node1"], out
assert "127.0.0.1:" + port not in out["node0"], out
PY
}
ktap_check "the snapshot lists each connection to outside the job in its node's entry" outside_listed
rc=0
(cd /tmp && exec timeout 200 "$bin/ckpt" restart "$snap/$ojob/latest" > "$shared/or.out" 2>&1) &
orunner=$!
wait_for "$orunner" || rc=$?
ktap_check "restarted: both clients find their connection closed and end; the job ends, 0" sh -c \
	"cat '$shared/or.out' '$shared/oc-a.out' '$shared/oc-b.out'; test $rc = 0 &&
	 grep -qx closed '$shared/oc-a.out' && grep -qx closed '$shared/oc-b.out'"
ssh node1 "pkill -KILL -f '[o]utside.py server'" 2> /dev/null || true

# A connection waiting to be accepted on another node (ckptd.md, "TCP
# between nodes"): node1's server listens and accepts nothing until file
# wgo exists; node0's client connects to it and sends 1000 bytes, which
# wait with the connection in the listener's queue, and so does a client
# on node1, the server's child. Checkpointed with --kill: node0's entry of
# the metadata says to connect again, first sending those bytes, node1's
# that its listener awaits one connection (node1's own is within its
# share, as in a tree). Restarted with the nodes swapped: the client, now
# on node1, connects again to the server, now on node0, and sends the
# bytes again; told to go, the server accepts both, reads every byte and
# answers; the job ends 0.
wpy=$CKPT_TOP/vm-tests/lib/waiting.py
job_on_both waiting "python3 '$wpy' client '$shared/wport' 192.0.2.11 '$shared/w-c.out'" \
	"python3 '$wpy' server '$shared/wport' '$shared/wgo' '$shared/w-s.out' '$shared/w-l.out'" 2
wjob=$both_job
ktap_poll 90 sh -c "grep -q sent '$shared/w-c.out' && grep -q sent '$shared/w-l.out'" || true
ktap_check "a connection waiting to be accepted on node1, from node0: checkpointed with --kill" sh -c \
	"'$bin/ckpt' job '$wjob' --kill | grep -q '^snapshot *$snap/$wjob/1\$'"
wait_for "$both_runner" || true
waiting_listed() {
	python3 - "$snap/$wjob/1/meta.json" "$(cat "$shared/wport")" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
n = {e["node"]: e for e in m["nodes"]}
print([e[:3] + [len(e[3]) // 2] for e in n["node0"].get("reconnect", [])],
      n["node1"].get("awaited"))
(pid, fd, seq, data), = n["node0"]["reconnect"]
assert bytes.fromhex(data) == bytes((i * 131 + 7) & 0xff for i in range(1000))
assert len(n["node1"]["awaited"]) == 1 and "reconnect" not in n["node1"]
PY
}
ktap_check "node0's entry: connect again, with the 1000 bytes; node1's: its listener awaits one" \
	waiting_listed
ssh node1 "cd /tmp && '$bin/ckpt' restart --hosts node0=node1,node1=node0 '$snap/$wjob/1' \
	> '$shared/wr.out' 2> '$shared/wr.err'" &
wrunner=$!
ktap_poll 180 grep -q "job $wjob restarted" "$shared/wr.err" || true
touch "$shared/wgo"
rc=0
wait_for "$wrunner" || rc=$?
ktap_check "restarted with the nodes swapped: the server accepts both, reads every byte, the clients hear back; the job ends 0" sh -c \
	"cat '$shared/wr.err' '$shared/w-s.out' '$shared/w-c.out' '$shared/w-l.out'; test $rc = 0 &&
	 test \$(grep -cx 'server got 1000 ok' '$shared/w-s.out') = 2 &&
	 grep -qx 'client heard ack 1000' '$shared/w-c.out' &&
	 grep -qx 'client heard ack 1000' '$shared/w-l.out'"

ktap_check "a TLS client without the cluster key: refused" sh -c \
	"! echo '{}' | timeout 20 openssl s_client -connect node1:7201 -tls1_3 -quiet \
		-psk_identity ckptd -psk 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff > '$shared/tls.out' 2>&1 &&
	 for i in \$(seq 150); do grep -q 'failed its TLS handshake' '$shared/ckptd-node1.log' && exit 0; sleep 0.2; done; exit 1"
ktap_note "node0's ckptd:"
ktap_note "$(tail -n 30 "$shared/ckptd-node0.log")"
ktap_note "node1's ckptd:"
ktap_note "$(tail -n 30 "$shared/ckptd-node1.log")"
ktap_finish
