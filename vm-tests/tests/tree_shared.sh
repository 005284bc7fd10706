#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory a process tree's members share, restored shared: tests/workloads/
# shmtree (a root, two children, a grandchild) takes turns through
# MAP_SHARED anonymous memory, a memfd and an unlinked POSIX shared memory
# object, all mapped before the forks, and writes its values to a log
# through one open file all four share (one position), and to a memfd and
# a deleted file through one open file each that all four share (until
# stop 67 refused: Python's multiprocessing heap is one), and to a FIFO
# all four hold, which the root drains, and to an eventfd all four share;
# each reads and re-arms a timerfd all four share, reads and sets the
# O_NONBLOCK flag of a signalfd all four share and polls, and now and
# then re-arms, a one-shot epoll all four share;
# one child sends to the root through a connection it made to a socket the
# root listens on (open in all four), always ahead, and half way through the
# grandchild connects to that listening socket anew (after the restart: it
# must listen at its path again); the other child sends to the root as
# datagrams, from a socket connected by name to a datagram socket the
# root bound to a path (open in all four), always ahead, and half way
# through the grandchild sends there with sendto() from a socket never
# bound or connected; and, run in an IPC namespace of its own
# (SHMTREE_SYSV), through a removed System V segment, a keyed one, a
# semaphore set (one of its semaphores each changes with SEM_UNDO: an
# adjustment lost in a restart changes the line) and a message queue. A
# region restored
# as one copy per process would leave them waiting for ever (the workload
# gives up after 60 s), an open file restored as one per process would
# have them overwrite each other's records, a FIFO's bytes restored once
# per process would be read twice. This is issue 13's three-level tree:
# checkpointed mid-run with continue (the original runs on to its end),
# with --stop (a restart while the stopped original holds the FIFO's bytes
# is refused by name; once it is killed, the restart goes through) and
# with --kill (its FIFO unlinked while all four hold it; restarted in a
# new IPC namespace with the same ids, then checkpointed and restarted
# again), each restart prints the line of an
# uninterrupted run, which depends on both wait statuses the root reaps.
# A tree holding file locks (a flock() on an open file shared by fork, a
# record lock, a member waiting for it) gets them back (stop 68), and one
# holding a file open twice, each open file shared, gets both back, each
# at its position (stop 68).
# A memfd that a process outside the tree holds too is refused by name,
# and the tree runs on; so is a tree of the machine's IPC namespace that
# uses its semaphores there. Its segments alone there are the tree's: a
# restart makes an IPC namespace for them.
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

# start NAME [GOFILE [PACE_MS]]: the tree, System V objects and all, in an
# IPC namespace of its own, in the background, a turn every PACE_MS
# (default 20), output to NAME.out; waits until all four have had a turn,
# sets $root.
start() {
	rm -f "$tmp/$1.ready"
	SHMTREE_SYSV=1 setsid unshare --ipc "$shmtree" "$steps" "$tmp/$1.ready" ${3:-20} ${2:-} \
		> "$tmp/$1.out" 2> "$tmp/$1.err" &
	root=$!
	ktap_poll 120 test -e "$tmp/$1.ready" || ktap_note "$1: not ready after 120 s"
}

# restart_then DIR GOFILE CMD: a command that restarts DIR in the
# background (output DIR.r.out, status DIR.r.rc), waits until the restarted
# tree's four run (held at their end until GOFILE exists), sets $top to its
# root (stopped processes are not it: an original left stopped), runs CMD
# (which may use $top), creates GOFILE and waits for the restart; its
# status is CMD's.
restart_then() {
	echo "(
	{ timeout 180 ckpt restart '$1' > '$1.r.out' 2> '$1.r.err'; echo \$? > '$1.r.rc'; } &
	r=\$!
	for i in \$(seq 600); do
		n=0; top=
		for p in \$(pgrep -x shmtree); do
			[ \"\$(awk '/^State:/ { print \$2 }' /proc/\$p/status)\" = T ] && continue
			n=\$((n + 1))
			pp=\$(awk '/^PPid:/ { print \$2 }' /proc/\$p/status)
			[ \"\$(cat /proc/\$pp/comm)\" = shmtree ] || top=\"\$top\$p\"
		done
		[ \$n = 4 ] && [ -n \"\$top\" ] && [ -d /proc/\$top ] && break
		kill -0 \$r 2> /dev/null || break
		sleep 0.1
	done
	$3; rc=\$?; touch '$2'; wait \$r; cat '$1.r.err'; test \$rc = 0)"
}

# same DIR: a command: DIR's restart printed the uninterrupted run's line,
# exit 3.
same() {
	echo "{ cat '$1.r.out'; test \"\$(cat '$1.r.rc')\" = 3 && cmp '$tmp/expected' '$1.r.out'; }"
}

ktap_plan 17
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"

SHMTREE_SYSV=1 unshare --ipc "$shmtree" "$steps" "$tmp/plain.ready" 1 > "$tmp/expected" && rc=0 || rc=$?
sed 's/^/# uninterrupted: /' "$tmp/expected"
[ "$rc" = 3 ] && ktap_ok "an uninterrupted run in an IPC namespace of its own ends with 3" ||
	ktap_fail "an uninterrupted run in an IPC namespace of its own ends with 3 (got $rc)"

# Continue: the original runs on to its end, then the image restarts.
# 60 ms a turn: the original must still run when the checkpoint comes,
# on a debug kernel beside other VMs too (at 20, 6 s in all, it had ended).
start cont "" 60
pids=$(members "$root")
ktap_check "--tree, continue: the shared regions, the FIFO and the System V objects are the root's, the others store none; the logs are shared" sh -c "
	ckpt checkpoint --tree $root -o '$tmp/cont' &&
	ckpt inspect '$tmp/cont' > /dev/null &&
	ckpt inspect -v '$tmp/cont/$root.img' > '$tmp/root.txt' && grep -E '^  [0-9]+ (shmem|memfd|deleted) ' '$tmp/root.txt' &&
	test \$(grep -cE '^  [0-9]+ (shmem|memfd|deleted) ' '$tmp/root.txt') = 5 &&
	grep ' tree-shared .*/cont.ready.log' '$tmp/root.txt' &&
	grep ' tree-shared .*/memfd:shmtree-log' '$tmp/root.txt' &&
	grep ' tree-shared .*/cont.ready.dlog' '$tmp/root.txt' &&
	grep -q ' socket:\[' '$tmp/root.txt' &&
	test \$(grep -c ' SYSVSHM at ' '$tmp/root.txt') = 2 && grep -q ' SYSVDATA at ' '$tmp/root.txt' &&
	grep -q ' SYSVSEM at ' '$tmp/root.txt' && grep -q ' SYSVMSG at ' '$tmp/root.txt' &&
	for p in $pids; do
		ckpt inspect '$tmp/cont/'\$p.img | grep -x 'semaphore adjustments: 1 sets' || exit 1
	done &&
	for p in $pids; do
		test \$p = $root && continue
		ckpt inspect -v '$tmp/cont/'\$p.img > '$tmp/m.txt' &&
		test \$(grep -cE '^  [0-9]+ (shmem|memfd|deleted) size 65536 stored 0 ' '$tmp/m.txt') = 3 &&
		grep -q ' tree-shared .*/cont.ready.log' '$tmp/m.txt' &&
		grep -q ' tree-shared .*/memfd:shmtree-log' '$tmp/m.txt' &&
		grep -q ' tree-shared .*/cont.ready.dlog' '$tmp/m.txt' &&
		grep -q ' tree-shared anon_inode:\[eventfd\]' '$tmp/m.txt' &&
		grep -q ' tree-shared anon_inode:\[timerfd\]' '$tmp/m.txt' &&
		grep -q ' tree-shared anon_inode:\[signalfd\]' '$tmp/m.txt' &&
		grep -q ' tree-shared anon_inode:\[eventpoll\]' '$tmp/m.txt' &&
		! grep -q ' SYSVSHM at ' '$tmp/m.txt' &&
		grep -qE '^  [0-9]+ fifo size [0-9]+ stored 0 .*/cont.ready.fifo' '$tmp/m.txt' || exit 1
	done"
wait "$root" && rc=0 || rc=$?
ktap_check "continue: the original runs on to the uninterrupted run's line, exit 3; then the image restarts to it too" sh -c "
	cat '$tmp/cont.out' '$tmp/cont.err'; test $rc = 3 && cmp '$tmp/expected' '$tmp/cont.out' &&
	timeout 120 ckpt restart '$tmp/cont' > '$tmp/cont.r.out'; echo \$? > '$tmp/cont.r.rc'
	$(same "$tmp/cont")"

# --stop: the stopped original still holds the FIFO; bytes in it (one the
# test adds, so that there surely are) are not the image's, and a restart
# would add the image's to them: refused, nothing runs. Once the original
# is killed, the FIFO is empty and the restart goes through.
start stop "$tmp/stop.go"
pids=$(members "$root")
ktap_check "--stop: all four stopped; a restart while the original's FIFO holds bytes is refused naming it, nothing runs" sh -c "
	ckpt checkpoint --tree $root --stop -o '$tmp/stop' > /dev/null &&
	for p in $pids; do grep -q '^State:.*T (stopped)' /proc/\$p/status || exit 1; done &&
	printf x > '$tmp/stop.ready.fifo' &&
	! timeout 120 ckpt restart '$tmp/stop' 2> '$tmp/stop.busy'; cat '$tmp/stop.busy';
	grep -q 'FIFO $tmp/stop.ready.fifo holds [0-9]* bytes already' '$tmp/stop.busy' &&
	test \$(pgrep -x shmtree | wc -l) = 4"
kill -KILL $pids 2> /dev/null || true
wait "$root" 2> /dev/null || true
ktap_check "--stop, the original killed: restarted, the same line; the restarted root's pid is the original's" sh -c "
	$(restart_then "$tmp/stop" "$tmp/stop.go" "grep -E '^NSpid:.*\\b$root\$' /proc/\$top/status") &&
	$(same "$tmp/stop")"

# --kill, then a second cycle of the restarted tree, which must have come
# back in a new IPC namespace with the same ids, the machine's unchanged.
# Its FIFO is unlinked (as mpirun's is when it removes its session
# directory): made anew, unlinked, once for all four.
SHMTREE_UNLINK=1 start kill "$tmp/kill.go"
ktap_check "--kill, its FIFO unlinked, restarted in a new IPC namespace with the same ids, checkpointed again (--kill) and restarted: the same line" sh -c "
	ipcs > '$tmp/ipcs.txt'; nsenter -t $root -i ipcs | tee '$tmp/ids.txt' &&
	ckpt checkpoint --tree $root --kill -o '$tmp/kill' > /dev/null && sleep 0.5 &&
	$(restart_then "$tmp/kill" "$tmp/kill.go" "
		nsenter -t \$top -i ipcs > '$tmp/ids2.txt' &&
		grep -E '^0x' '$tmp/ids.txt' | awk '{ print \$1, \$2 }' > '$tmp/a' &&
		grep -E '^0x' '$tmp/ids2.txt' | awk '{ print \$1, \$2 }' > '$tmp/b' && cmp '$tmp/a' '$tmp/b' &&
		ipcs | cmp - '$tmp/ipcs.txt' &&
		ls -l /proc/\$top/fd | grep '/tmp/ckpt-fifo\..*/fifo (deleted)' &&
		! ls -d /tmp/ckpt-fifo.* 2> /dev/null &&
		ckpt checkpoint --tree \$top --kill -o '$tmp/kill2'") &&
	timeout 120 ckpt restart '$tmp/kill2' > '$tmp/kill2.r.out'; echo \$? > '$tmp/kill2.r.rc'
	$(same "$tmp/kill2")"

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

# Its two segments alone, in the machine's IPC namespace: no process
# outside the tree attaches them, so they are the tree's; the restart makes
# an IPC namespace for it with them, and the line is an uninterrupted run's.
SHMTREE_SYSV=shm "$shmtree" "$steps" "$tmp/svp0.ready" 1 > "$tmp/expected.shm" || true
rm -f "$tmp/svp.ready"
SHMTREE_SYSV=shm setsid "$shmtree" "$steps" "$tmp/svp.ready" 20 "$tmp/svp.go" > /dev/null 2>&1 &
root=$!
ktap_poll 120 test -e "$tmp/svp.ready" || ktap_note "svp: not ready after 120 s"
ktap_check "System V: a tree whose segments in the initial IPC namespace only it attaches, --kill, restarts with them in an IPC namespace of its own: an uninterrupted run's line" sh -c "
	ckpt checkpoint --tree $root --kill -o '$tmp/svp' > /dev/null &&
	ckpt inspect -v '$tmp/svp/$root.img' > '$tmp/svp.txt' &&
	test \$(grep -c ' SYSVSHM at ' '$tmp/svp.txt') = 2 &&
	! grep -q ' SYSVSEM at ' '$tmp/svp.txt' &&
	$(restart_then "$tmp/svp" "$tmp/svp.go" \
		"test \"\$(readlink /proc/\$top/ns/ipc)\" != \"\$(readlink /proc/1/ns/ipc)\"") &&
	cat '$tmp/expected.shm' '$tmp/svp.r.out' && test \"\$(cat '$tmp/svp.r.rc')\" = 3 &&
	grep -q '^shmtree ' '$tmp/expected.shm' && cmp '$tmp/expected.shm' '$tmp/svp.r.out'"
pkill -KILL -x shmtree 2> /dev/null || true
ipcrm --all 2> /dev/null || true

# The whole tree in the machine's IPC namespace: it uses the namespace's
# semaphores, which a namespace with its segments would not have.
rm -f "$tmp/svh.ready"
SHMTREE_SYSV=1 setsid "$shmtree" "$steps" "$tmp/svh.ready" 20 > /dev/null 2>&1 &
root=$!
ktap_poll 120 test -e "$tmp/svh.ready" || ktap_note "svh: not ready after 120 s"
ktap_check "System V: a tree using semaphore undo in the initial IPC namespace is refused by name; it runs on" sh -c "
	! ckpt checkpoint --tree $root -o '$tmp/svh' 2> '$tmp/svh.err'; cat '$tmp/svh.err';
	grep -q 'pid [0-9]* uses System V semaphore undo (SEM_UNDO) in the initial IPC namespace' '$tmp/svh.err' &&
	grep -q 'unshare --ipc' '$tmp/svh.err' && test ! -e '$tmp/svh' && kill -0 $root"
pkill -KILL -x shmtree 2> /dev/null || true
ipcrm --all 2> /dev/null || true

# A launcher left in the tree's IPC namespace (unshare --fork): outside.
rm -f "$tmp/svo.ready"
SHMTREE_SYSV=1 setsid unshare --ipc --fork "$shmtree" "$steps" "$tmp/svo.ready" 20 > /dev/null 2>&1 &
launcher=$!
ktap_poll 120 test -e "$tmp/svo.ready" || ktap_note "svo: not ready after 120 s"
ktap_check "System V: an IPC namespace a process outside the tree shares is refused by name, naming it; the tree runs on" sh -c "
	top=\$(cat /proc/$launcher/task/*/children | tr -d ' ') &&
	! ckpt checkpoint --tree \$top -o '$tmp/svo' 2> '$tmp/svo.err'; cat '$tmp/svo.err';
	grep -q 'in an IPC namespace that pid $launcher, outside the tree, shares' '$tmp/svo.err' &&
	test ! -e '$tmp/svo' && kill -0 \$top"
pkill -KILL -x shmtree 2> /dev/null || true

# Python trees (lk.py, tw.py below), each run as PY PATH READY GO: it
# makes READY once it waits for GO, at the point to checkpoint, and ends
# with one line. py_tree NAME runs $tmp/NAME.py uninterrupted (its line in
# $tmp/NAME-expected), then again up to READY ($root its pid).
py_tree() {
	touch "$tmp/$1-plain.go"
	timeout 120 python3 "$tmp/$1.py" "$tmp/$1-plain" "$tmp/$1-plain.ready" \
		"$tmp/$1-plain.go" > "$tmp/$1-expected" 2>&1 || true
	sed 's/^/# uninterrupted: /' "$tmp/$1-expected"
	setsid python3 "$tmp/$1.py" "$tmp/$1" "$tmp/$1.ready" "$tmp/$1.go" > /dev/null 2>&1 &
	root=$!
	ktap_poll 120 test -e "$tmp/$1.ready" || ktap_note "$1.ready not there after 120 s"
}
# py_tree_taken NAME N: checkpoints it (--kill) into $tmp/NAME.d, N
# processes, each image described in $tmp/NAME.v.
py_tree_taken() {
	local rc=0 i
	ckpt checkpoint --tree "$root" --kill -o "$tmp/$1.d" > "$tmp/$1.txt" || rc=$?
	cat "$tmp/$1.txt"
	[ "$rc" = 0 ] && grep -q "tree of pid $root: $2 processes" "$tmp/$1.txt" || return 1
	for i in "$tmp/$1.d/"*.img; do ckpt inspect "$i" || return 1; done > "$tmp/$1.v"
}
# py_tree_restarts NAME LINE: the original gone, GO given, the restart
# prints the uninterrupted run's line, which is LINE (a grep -x pattern).
py_tree_restarts() {
	local rc=0
	grep -qx "$2" "$tmp/$1-expected" || { echo "uninterrupted: not $2"; return 1; }
	timeout 120 ckpt restart "$tmp/$1.d" > "$tmp/$1-r.out" 2> "$tmp/$1-r.err" || rc=$?
	cat "$tmp/$1-r.out"
	[ "$rc" = 0 ] || { cat "$tmp/$1-r.err"; return 1; }
	cmp "$tmp/$1-expected" "$tmp/$1-r.out"
}
py_tree_end() {
	pkill -KILL -f "$tmp/$1.py" 2> /dev/null || true
	reap "$root" 60 2> /dev/null || true
	touch "$tmp/$1.go"
}

# File locks in a tree: the root holds an exclusive flock() on an open
# file its two children share by fork, child A a record write lock on
# bytes 10-19 of the file through it, and child B, through an open file of
# its own, waits in F_SETLKW for those bytes when the checkpoint comes. After the
# restart the root finds its flock and A's lock held, B still waiting (a
# lock lost would let B through first), then lets A go: B gets the bytes.
# The line depends on each, and on both exit statuses.
cat > "$tmp/lk.py" <<'EOF'
import fcntl, os, struct, sys, time
path, ready, go = sys.argv[1:4]

def wait_for(p):
    while not os.path.exists(p):
        time.sleep(0.05)

def who(at):	# the lock on byte AT, as another open file sees it
    fd = os.open(path, os.O_RDWR)
    q = struct.pack("hhqqi", fcntl.F_WRLCK, 0, at, 1, 0)
    t, _, s, n, pid = struct.unpack("hhqqi", fcntl.fcntl(fd, 36, q))	# F_OFD_GETLK
    os.close(fd)
    return "-" if t == fcntl.F_UNLCK else "%s%d+%d/%d" % ("RW"[t == fcntl.F_WRLCK], s, n, pid)

fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
a = os.fork()
if a == 0:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 10)
    open(path + ".a", "w").close()
    wait_for(path + ".checked")
    fcntl.lockf(fd, fcntl.LOCK_UN, 10, 10)
    os._exit(3)
wait_for(path + ".a")
b = os.fork()
if b == 0:
    g = os.open(path, os.O_RDWR)
    fcntl.lockf(g, fcntl.LOCK_EX, 10, 10)
    os._exit(4 if os.path.exists(path + ".checked") else 5)
while " -> POSIX" not in open("/proc/locks").read():	# B waits
    time.sleep(0.05)
open(ready, "w").close()
wait_for(go)
f = os.open(path, os.O_RDONLY)
try:
    fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
    mine = "free"
except BlockingIOError:
    mine = "held"
os.close(f)
rec = who(12).replace("/%d" % a, "/A")
early = os.waitpid(b, os.WNOHANG)[0] != 0
open(path + ".checked", "w").close()
sa = os.waitpid(a, 0)[1] >> 8
sb = "early" if early else os.waitpid(b, 0)[1] >> 8
print("flock %s, bytes 12 %s, B %s, A %d" % (mine, rec, sb, sa), flush=True)
EOF
lk_taken() {
	py_tree_taken lk 3 &&
	[ "$(grep -c 'flock write bytes 0-eof' "$tmp/lk.v")" = 3 ] &&
	grep -qx '  fd [0-9]* posix write bytes 10-19' "$tmp/lk.v"
}
py_tree lk
ktap_check "file locks: a tree's flock (on an open file shared by fork) and record lock, with a member waiting for it, taken with --kill" \
	lk_taken
py_tree_end lk
ktap_check "file locks: restarted, the tree finds them held and its waiter waiting, and ends with the uninterrupted run's line" \
	py_tree_restarts lk 'flock held, bytes 12 W10+10/A, B 4, A 3'
pkill -KILL -f "$tmp/lk.py" 2> /dev/null || true

# One file open twice, each open file shared by fork (refused until stop
# 68, as a shell's `( a; b ) >> log &` twice makes): the root writes
# records through both, at their own positions, its two children hold
# them too. Restarted, each open file goes on from its own position; one
# open file for both would write the records over each other.
cat > "$tmp/tw.py" <<'EOF'
import hashlib, os, sys, time
path, ready, go = sys.argv[1:4]
a = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
b = os.open(path, os.O_RDWR)
os.lseek(b, 8192, 0)
kids = []
for k in (7, 8):
    pid = os.fork()
    if pid == 0:
        while not os.path.exists(go):
            time.sleep(0.05)
        os._exit(k)
    kids.append(pid)
for i in range(400):
    if i == 200:
        open(ready, "w").close()
        while not os.path.exists(go):
            time.sleep(0.05)
    os.write(a, b"A%04d\n" % i)
    os.write(b, b"B%04d\n" % i)
    time.sleep(0.002)
st = [os.waitpid(k, 0)[1] >> 8 for k in kids]
data = open(path, "rb").read()
print("a %d b %d kids %s %s" % (os.lseek(a, 0, 1), os.lseek(b, 0, 1), st,
      hashlib.sha256(data).hexdigest()), flush=True)
EOF
# Every holder's entry of each open file (at 1200 and at 9392) has one
# number, 0 for one and 1 for the other.
tw_taken() {
	local at
	py_tree_taken tw 3 && grep "$tmp/tw\$" "$tmp/tw.v" &&
	[ "$(grep -c " tree-shared $tmp/tw\$" "$tmp/tw.v")" = 3 ] &&
	[ "$(grep -c " tree-shared open 1 $tmp/tw\$" "$tmp/tw.v")" = 3 ] || return 1
	for at in 1200 9392; do
		[ "$(grep " at $at .*$tmp/tw\$" "$tmp/tw.v" | sed 's/.* tree-shared//' | sort -u | wc -l)" = 1 ] ||
			return 1
	done
}
py_tree tw
ktap_check "one file open twice, each open file held by all three of a tree, taken with --kill: each open file one number in all" \
	tw_taken
py_tree_end tw
ktap_check "restarted, each open file goes on from its own position: the uninterrupted run's line" \
	py_tree_restarts tw 'a 2400 b 10592 kids \[7, 8\] [0-9a-f]*'
pkill -KILL -f "$tmp/tw.py" 2> /dev/null || true

ktap_check "no process of the tests is left" sh -c "! pgrep -x shmtree && ! pgrep -x ckpt"
ktap_finish
