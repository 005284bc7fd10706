#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory a process tree's members share, restored shared: tests/workloads/
# shmtree (a root, two children, a grandchild) takes turns through
# MAP_SHARED anonymous memory, a memfd and an unlinked POSIX shared memory
# object, all mapped before the forks, and writes its values to a log
# through one open file all four share (one position), and to a FIFO
# all four hold, which the root drains, and to an eventfd all four share;
# one child sends to the root through a connection it made to a socket the
# root listens on (open in all four), always ahead, and half way through the
# grandchild connects to that listening socket anew (after the restart: it
# must listen at its path again);
# a region restored
# as one copy per process would leave them waiting for ever (the workload
# gives up after 60 s), an open file restored as one per process would
# have them overwrite each other's records, a FIFO's bytes restored once
# per process would be read twice. Checkpointed mid-run with continue and with --kill, restarted,
# and checkpointed again once restarted: each restart prints the line of
# an uninterrupted run. A memfd that a process outside the tree holds too
# is refused by name, and the tree runs on.
#
# Topology: one node, no network.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
. "$CKPT_TOP/vm-tests/lib/tree.sh"

shmtree=$CKPT_TOP/build/tests/workloads/shmtree
steps=300
tmp=$(mktemp -d)

cleanup() {
	pkill -KILL -x shmtree 2> /dev/null || true
	pkill -KILL -f "sleep 3143" 2> /dev/null || true
	wait 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# start NAME [GOFILE]: the tree in the background, output to NAME.out;
# waits until all four have had a turn, sets $root.
start() {
	rm -f "$tmp/$1.ready"
	setsid "$shmtree" "$steps" "$tmp/$1.ready" 20 ${2:-} > "$tmp/$1.out" 2> "$tmp/$1.err" &
	root=$!
	ktap_poll 60 test -e "$tmp/$1.ready"
}

ktap_plan 12
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"

"$shmtree" "$steps" "$tmp/plain.ready" 1 > "$tmp/expected" && rc=0 || rc=$?
sed 's/^/# uninterrupted: /' "$tmp/expected"
[ "$rc" = 3 ] && ktap_ok "an uninterrupted run ends with 3" ||
	ktap_fail "an uninterrupted run ends with 3 (got $rc)"

# Continue: the original is stopped once captured and killed before the
# restart (they would share nothing, but a stopped original is certain
# not to finish first).
start cont
pids=$(members "$root")
ktap_check "--tree, continue: the shared regions and the FIFO are objects of the root's image, the others store none; the log is shared" sh -c "
	ckpt checkpoint --tree $root -o '$tmp/cont' && kill -STOP $pids &&
	ckpt inspect '$tmp/cont' > /dev/null &&
	ckpt inspect -v '$tmp/cont/$root.img' > '$tmp/root.txt' && grep -E '^  [0-9]+ (shmem|memfd|deleted) ' '$tmp/root.txt' &&
	test \$(grep -cE '^  [0-9]+ (shmem|memfd|deleted) ' '$tmp/root.txt') = 3 &&
	grep ' tree-shared .*/cont.ready.log' '$tmp/root.txt' &&
	grep -q ' socket:\[' '$tmp/root.txt' &&
	for p in $pids; do
		test \$p = $root && continue
		ckpt inspect -v '$tmp/cont/'\$p.img > '$tmp/m.txt' &&
		test \$(grep -cE '^  [0-9]+ (shmem|memfd|deleted) size 65536 stored 0 ' '$tmp/m.txt') = 3 &&
		grep -q ' tree-shared .*/cont.ready.log' '$tmp/m.txt' &&
		grep -q ' tree-shared anon_inode:\[eventfd\]' '$tmp/m.txt' &&
		grep -qE '^  [0-9]+ fifo size [0-9]+ stored 0 .*/cont.ready.fifo' '$tmp/m.txt' || exit 1
	done"
kill -KILL $pids 2> /dev/null || true
wait "$root" 2> /dev/null || true
ktap_check "restarted: the four take turns through the shared memory again, the same line, exit 3" sh -c "
	timeout 120 ckpt restart '$tmp/cont' > '$tmp/cont-r.out'; rc=\$?;
	cat '$tmp/cont-r.out'; test \$rc = 3 && cmp '$tmp/expected' '$tmp/cont-r.out'"

# --kill, then a second cycle of the restarted tree.
start kill "$tmp/kill.go"
ktap_check "--kill, restarted, checkpointed again (--kill) and restarted: the same line" sh -c "
	ckpt checkpoint --tree $root --kill -o '$tmp/kill' > /dev/null && sleep 0.5 &&
	{ timeout 180 ckpt restart '$tmp/kill' > '$tmp/kill-r.out' 2> '$tmp/kill-r.err' & r=\$!; } &&
	for i in \$(seq 600); do
		init=\$(cat /proc/\$r/task/*/children 2> /dev/null | tr -d ' ')
		top=\$([ -n \"\$init\" ] && cat /proc/\$init/task/*/children 2> /dev/null | tr -d ' ')
		[ -n \"\$top\" ] && [ \$(pgrep -x shmtree | wc -l) = 4 ] && break
		sleep 0.1
	done &&
	top=\$(pgrep -x shmtree | head -1) && cat /proc/\$top/status | grep -E '^NSpid' &&
	top=\$(for p in \$(pgrep -x shmtree); do pp=\$(awk '/^PPid:/ { print \$2 }' /proc/\$p/status); [ \"\$(cat /proc/\$pp/comm)\" = shmtree ] || echo \$p; done) &&
	ckpt checkpoint --tree \$top --kill -o '$tmp/kill2' && wait \$r;
	cat '$tmp/kill-r.err'; touch '$tmp/kill.go' &&
	timeout 120 ckpt restart '$tmp/kill2' > '$tmp/kill2-r.out'; rc=\$?;
	cat '$tmp/kill2-r.out'; test \$rc = 3 && cmp '$tmp/expected' '$tmp/kill2-r.out'"

# A memfd the tree shares with a process outside it: the outsider is a
# sibling of the root that inherited the descriptor.
ktap_check "a memfd held by a process outside the tree is refused by name; the tree runs on" sh -c "
	python3 -c '
import os, subprocess, sys, time
fd = os.memfd_create(\"outside\", 0)
os.ftruncate(fd, 4096)
out = subprocess.Popen([\"sleep\", \"3143\"], pass_fds=[fd])
tree = subprocess.Popen([\"sleep\", \"3143\"], pass_fds=[fd])
time.sleep(0.5)
r = subprocess.run([\"ckpt\", \"checkpoint\", \"--tree\", str(tree.pid), \"-o\", sys.argv[1]],
                   capture_output=True, text=True)
print(r.stderr, end=\"\")
ok = (r.returncode != 0 and f\"pid {tree.pid} fd {fd} (memfd outside)\" in r.stderr and
      \"outside the tree\" in r.stderr and not os.path.exists(sys.argv[1]) and tree.poll() is None)
out.kill(); tree.kill()
sys.exit(0 if ok else 1)
' '$tmp/outside'"

# A connection waiting to be accepted: a child connects to its parent's
# listening socket and sends; the parent accepts only after the restart.
cat > "$tmp/waiting.py" <<'EOF'
import os, socket, sys, time
path, ready, go = sys.argv[1:4]
l = socket.socket(socket.AF_UNIX)
l.bind(path)
l.listen(4)
pid = os.fork()
if pid == 0:
    c = socket.socket(socket.AF_UNIX)
    c.connect(path)
    c.sendall(b"from the child")
    open(ready, "w").close()
    print(c.recv(100).decode(), flush=True)
    os._exit(5)
while not os.path.exists(go):
    time.sleep(0.05)
a, _ = l.accept()
msg = a.recv(100)
a.sendall(b"back " + msg)
_, st = os.waitpid(pid, 0)
print(msg.decode(), os.WEXITSTATUS(st), flush=True)
EOF
ktap_check "a connection waiting on a member's listening socket, checkpointed (--kill) and restarted, is accepted after: its bytes there, the reply back" sh -c "
	setsid python3 '$tmp/waiting.py' '$tmp/w.sock' '$tmp/w.ready' '$tmp/w.go' > /dev/null &
	w=\$! &&
	for i in \$(seq 300); do test -e '$tmp/w.ready' && break; sleep 0.1; done &&
	ckpt checkpoint --tree \$w --kill -o '$tmp/w' > /dev/null &&
	ckpt inspect -v '$tmp/w/'\$w.img > '$tmp/w.txt' && grep -E ' (UPEND|ULISTEN) ' '$tmp/w.txt' &&
	grep -q ' UPEND ' '$tmp/w.txt' &&
	{ timeout 120 ckpt restart '$tmp/w' > '$tmp/w.out' & r=\$!; } &&
	sleep 1 && touch '$tmp/w.go' && wait \$r; rc=\$?;
	cat '$tmp/w.out'; test \$rc = 0 &&
	printf 'back from the child\\nfrom the child 5\\n' | cmp - '$tmp/w.out'"

# System V IPC: the tree in an IPC namespace of its own (unshare --ipc)
# takes turns through a removed segment, a keyed one, a semaphore set and
# a message queue too (tests/workloads/shmtree.c, SHMTREE_SYSV).
SHMTREE_SYSV=1 unshare --ipc "$shmtree" "$steps" "$tmp/sv-plain.ready" 1 > "$tmp/sv-expected" && rc=0 || rc=$?
sed 's/^/# uninterrupted, System V: /' "$tmp/sv-expected"
[ "$rc" = 3 ] && ktap_ok "System V: an uninterrupted run in its own IPC namespace ends with 3" ||
	ktap_fail "System V: an uninterrupted run in its own IPC namespace ends with 3 (got $rc)"

rm -f "$tmp/sv.ready"
SHMTREE_SYSV=1 setsid unshare --ipc "$shmtree" "$steps" "$tmp/sv.ready" 20 "$tmp/sv.go" > /dev/null 2>&1 &
root=$!
ktap_poll 60 test -e "$tmp/sv.ready"
ktap_check "System V: --kill, restarted in a new IPC namespace with the same ids, checkpointed again (--kill) and restarted: the same line" sh -c "
	ipcs > '$tmp/sv-ipcs.txt'; nsenter -t $root -i ipcs | tee '$tmp/sv-ids.txt' &&
	ckpt checkpoint --tree $root --kill -o '$tmp/sv' > /dev/null &&
	ckpt inspect -v '$tmp/sv/$root.img' > '$tmp/sv.txt' &&
	grep -E ' (SYSVSHM|SYSVSEM|SYSVMSG) ' '$tmp/sv.txt' &&
	test \$(grep -c ' SYSVSHM at ' '$tmp/sv.txt') = 2 && grep -q ' SYSVDATA at ' '$tmp/sv.txt' &&
	sleep 0.5 &&
	{ timeout 180 ckpt restart '$tmp/sv' > /dev/null 2> '$tmp/sv-r.err' & r=\$!; } &&
	for i in \$(seq 600); do
		[ \$(pgrep -x shmtree | wc -l) = 4 ] && break
		sleep 0.1
	done &&
	top=\$(for p in \$(pgrep -x shmtree); do pp=\$(awk '/^PPid:/ { print \$2 }' /proc/\$p/status); [ \"\$(cat /proc/\$pp/comm)\" = shmtree ] || echo \$p; done) &&
	nsenter -t \$top -i ipcs > '$tmp/sv-ids2.txt' &&
	grep -E '^0x' '$tmp/sv-ids.txt' | awk '{ print \$1, \$2 }' > '$tmp/a' &&
	grep -E '^0x' '$tmp/sv-ids2.txt' | awk '{ print \$1, \$2 }' > '$tmp/b' && cmp '$tmp/a' '$tmp/b' &&
	ipcs | cmp - '$tmp/sv-ipcs.txt' &&
	ckpt checkpoint --tree \$top --kill -o '$tmp/sv2' && wait \$r;
	cat '$tmp/sv-r.err'; touch '$tmp/sv.go' &&
	timeout 120 ckpt restart '$tmp/sv2' > '$tmp/sv2-r.out'; rc=\$?;
	cat '$tmp/sv2-r.out'; test \$rc = 3 && cmp '$tmp/sv-expected' '$tmp/sv2-r.out'"

# The same tree in the machine's IPC namespace: its segments are the
# namespace's, not the tree's.
rm -f "$tmp/svh.ready"
SHMTREE_SYSV=1 setsid "$shmtree" "$steps" "$tmp/svh.ready" 20 > /dev/null 2>&1 &
root=$!
ktap_poll 60 test -e "$tmp/svh.ready"
ktap_check "System V: a tree mapping a segment of the initial IPC namespace is refused by name; it runs on" sh -c "
	! ckpt checkpoint --tree $root -o '$tmp/svh' 2> '$tmp/svh.err'; cat '$tmp/svh.err';
	grep -q 'System V shared memory segment [0-9]* of the initial IPC namespace' '$tmp/svh.err' &&
	grep -q 'unshare --ipc' '$tmp/svh.err' && test ! -e '$tmp/svh' && kill -0 $root"
pkill -KILL -x shmtree 2> /dev/null || true
ipcrm --all 2> /dev/null || true

# A launcher left in the tree's IPC namespace (unshare --fork): outside.
rm -f "$tmp/svo.ready"
SHMTREE_SYSV=1 setsid unshare --ipc --fork "$shmtree" "$steps" "$tmp/svo.ready" 20 > /dev/null 2>&1 &
launcher=$!
ktap_poll 60 test -e "$tmp/svo.ready"
ktap_check "System V: an IPC namespace a process outside the tree shares is refused by name, naming it; the tree runs on" sh -c "
	top=\$(cat /proc/$launcher/task/*/children | tr -d ' ') &&
	! ckpt checkpoint --tree \$top -o '$tmp/svo' 2> '$tmp/svo.err'; cat '$tmp/svo.err';
	grep -q 'in an IPC namespace that pid $launcher, outside the tree, shares' '$tmp/svo.err' &&
	test ! -e '$tmp/svo' && kill -0 \$top"
pkill -KILL -x shmtree 2> /dev/null || true

ktap_check "no process of the tests is left" sh -c "! pgrep -x shmtree && ! pgrep -x ckpt"
