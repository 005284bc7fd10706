#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Process trees as a user runs them: ckpt checkpoint --tree and ckpt
# restart DIR on tests/workloads/tree (a root, two children, a grandchild,
# one of them with two threads; the root reaps its children and prints
# their wait statuses). Checkpointed mid-run with continue, --stop and
# --kill, restarted while the original still holds its pids, and twice in
# a row; each restart prints the line of an uninterrupted run and exits
# with the root's status; a root that led its session leads it again.
# Restarted with --lazy: every member runs before its memory is in, a page
# server each bringing it in; a page server killed early ends the whole
# tree, named.
# Refused by name, leaving nothing behind: a
# directory that exists, a damaged image of one member, an image from
# another checkpoint, a member's image restarted alone, a pipe to a
# process outside the tree. A shell
# pipeline (producer | sort | uniq -c | sha256sum) checkpointed
# mid-stream and killed prints the same digest once restarted. Zombie
# children (exited, killed by a signal in a process group of their own)
# come back unreaped, and their parent reaps them after the restart with
# their statuses. A shell loop of 0.05 s commands beside 256 MiB is
# checkpointed although each look's command ends before the freeze. A
# root that is a child subreaper is one again: a process orphaned after
# the restart comes to it. A restarted tree has a /proc of its own pid
# namespace (in a mount namespace of its own): /proc/<getpid()> is the
# member's, and only the tree's processes are listed; checkpointed again
# from outside that mount namespace, a member confined below a directory
# (chroot) too, it restarts the same way. A process in another mount
# namespace with a /tmp of its own is refused by name. Two trees run by
# a shell from one binary, rebuilt (replaced, the old file deleted) while
# they run, as a job's ranks are: their executable travels in the images
# and the restarted shell prints both lines. A Python driver with a
# multiprocessing Pool of four and a shared Value, started by fork and by
# a forkserver, killed mid-run and restarted, prints the line of an
# uninterrupted run. vmstat, its /proc files open, killed mid-run and
# restarted, prints on to its last line; so does tail -f (inotify)
# following a member's appends, every line once.
#
# Topology: one node, no network.
#
# The CLI on trees: on the 6.1 line only, for CI's hour; the engine's
# side of trees (cr_tree) runs on both lines.
# kernels: 6.1
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
. "$CKPT_TOP/vm-tests/lib/tree.sh"

tree=$CKPT_TOP/build/tests/workloads/tree
producer=$CKPT_TOP/build/tests/workloads/producer
# 8 s a run: long enough to be checkpointed mid-run on a slow (debug) kernel.
steps=400
tmp=$(mktemp -d)

cleanup() {
	pkill -KILL -x tree 2> /dev/null || true
	pkill -KILL -x producer 2> /dev/null || true
	pkill -KILL -x app 2> /dev/null || true
	pkill -KILL -f "sleep 314[123]" 2> /dev/null || true
	wait 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# start NAME [PACE_MS [setsid [GOFILE]]]: the tree in the background,
# PACE_MS a step (default 20; its output does not depend on it), in a
# session of its own with setsid, its processes waiting at their end
# until GOFILE exists, output to $tmp/NAME.out; waits until all four run,
# sets $root.
start() {
	rm -f "$tmp/$1.ready"
	${3:-} "$tree" "$steps" "$tmp/$1.ready" "${2:-20}" ${4:-} > "$tmp/$1.out" &
	root=$!
	ktap_poll 120 test -e "$tmp/$1.ready" || ktap_note "$1: not all four run after 120 s"
}

# same NAME: NAME.out holds the uninterrupted run's line.
same() {
	cat "$tmp/$1.out"
	cmp "$tmp/expected" "$tmp/$1.out"
}

ktap_plan 33
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"

"$tree" "$steps" "$tmp/plain.ready" 1 > "$tmp/expected" && rc=0 || rc=$?
cat "$tmp/expected" | sed 's/^/# uninterrupted: /'
[ "$rc" = 3 ] && ktap_ok "an uninterrupted run ends with 3" ||
	ktap_fail "an uninterrupted run ends with 3 (got $rc)"

start cont
pids=$(members "$root")
# The original is stopped once captured, so that it certainly still holds
# its pids while the restart runs (a slow kernel takes long to get there),
# and let go afterwards.
ktap_check "--tree, continue: four processes in a new directory of 0600 images and a manifest" sh -c "
	ckpt checkpoint --tree $root -o '$tmp/cont' > '$tmp/report' && kill -STOP $pids && cat '$tmp/report' &&
	grep -Eq '^tree of pid $root: 4 processes, 5 threads, ' '$tmp/report' &&
	test \$(ls '$tmp/cont' | grep -c '\.img\$') = 4 &&
	test \"\$(stat -c %a '$tmp/cont/$root.img')\" = 600 &&
	head -1 '$tmp/cont/manifest' | grep -qx 'ckpt-tree 1' &&
	test -z \"\$(ls '$tmp' | grep '\.tmp\.')\""
ktap_check "the restart, while the original still holds the pids, prints the same and exits 3" sh -c "
	kill -0 $root && { timeout 300 ckpt restart '$tmp/cont' > '$tmp/cont-r.out'; rc=\$?; } &&
	cat '$tmp/cont-r.out' && test \$rc = 3 && cmp '$tmp/expected' '$tmp/cont-r.out'"
kill -CONT $pids 2> /dev/null || true
reap "$root" 150 && rc=0 || rc=$?
ktap_check "the original ran on to the same end" sh -c "test $rc = 3 && cmp '$tmp/expected' '$tmp/cont.out'"

# Its processes wait for kill.go at their end: the second cycle restarts
# it and must find it still running, however slow the kernel.
start kill 20 setsid "$tmp/kill.go"
pids=$(members "$root")
ktap_check "--kill --json: the whole tree is captured, then gone" sh -c "
	ckpt checkpoint --tree $root --kill --json -o '$tmp/kill' > '$tmp/json' && cat '$tmp/json' &&
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d[\"root\"] == $root and d[\"processes\"] == 4 and len(d[\"members\"]) == 4, d
assert [m[\"pid\"] for m in d[\"members\"]] == [int(p) for p in sys.argv[2].split()], d
assert 0 < d[\"frozen_ns\"] <= d[\"total_ns\"], d
' '$tmp/json' '$pids' &&
	for p in $pids; do ! kill -0 \$p 2> /dev/null || exit 1; done"
reap "$root" 60 2> /dev/null || true
touch "$tmp/kill.go"
ktap_check "restarted after --kill: the same line, exit 3" sh -c "
	timeout 300 ckpt restart '$tmp/kill' > '$tmp/kill-r.out'; rc=\$?; test \$rc = 3 && cmp '$tmp/expected' '$tmp/kill-r.out'"
# --lazy: each member runs before its memory is in; a page server per
# member brings it in, when touched and behind, and says so (--verbose).
ktap_check "restarted after --kill with --lazy: the same line, exit 3; each of the four's memory brought in by a server of its own" sh -c "
	timeout 300 ckpt restart --lazy --verbose '$tmp/kill' > '$tmp/lazy-r.out' 2> '$tmp/lazy-r.err'; rc=\$?;
	cat '$tmp/lazy-r.err'; test \$rc = 3 && cmp '$tmp/expected' '$tmp/lazy-r.out' &&
	grep -o 'lazy: [0-9]* pages brought in when touched, [0-9]* behind, [0-9]* zero pages, in [0-9]* ms (pid [0-9]*)' '$tmp/lazy-r.err' |
		awk '{ n++; if (\$2 + \$8 > 0) seen[\$NF] = 1 } END { exit !(n == 4 && length(seen) == 4) }'"
# A page server that ends before its member's memory is all in ends the
# tree's init, and with it the whole tree: no member runs on reading zeros.
# Servers bring in only what is touched (CKPT_LAZY_BACKGROUND=0), and the
# tree waits at its end (no go file), so both are still there to kill.
rm -f "$tmp/kill.go"
ktap_check "--lazy: a page server killed before its member's memory is in ends the whole tree, named; nothing of it runs on" sh -c "
	{ CKPT_LAZY_BACKGROUND=0 timeout 120 ckpt restart --lazy '$tmp/kill' > /dev/null 2> '$tmp/lzk.err'; echo \$? > '$tmp/lzk.rc'; } &
	r=\$!; srv=
	for i in \$(seq 600); do
		rs=\$(pgrep -o -xf 'ckpt restart --lazy $tmp/kill') &&
		init=\$(pgrep -P \$rs | head -1)
		[ -n \"\$init\" ] && kids=\$(pgrep -P \$init | tr '\\n' ' ') &&
		[ \$(echo \$kids | wc -w) = 5 ] && [ \$(pgrep -x tree | wc -l) = 4 ] &&
		srv=\$(for p in \$kids; do [ \"\$(cat /proc/\$p/comm)\" = ckpt ] && echo \$p; done | tail -1) &&
		[ -n \"\$srv\" ] && break
		sleep 0.1
	done
	echo \"# init \$init, its children \$kids, killing server \$srv\"
	kill -KILL \$srv; wait \$r; cat '$tmp/lzk.err';
	test \"\$(cat '$tmp/lzk.rc')\" != 0 && grep -q 'a page server ended before its member' '$tmp/lzk.err' &&
	sleep 0.5 && ! pgrep -x tree"

start stop
pids=$(members "$root")
ktap_check "--stop: all four stopped, then killed; the restart prints the same" sh -c "
	ckpt checkpoint --tree $root --stop -o '$tmp/stop' &&
	for p in $pids; do test \$(awk '/^State:/ { print \$2 }' /proc/\$p/status) = T || exit 1; done &&
	kill -KILL $pids && sleep 0.5 &&
	timeout 300 ckpt restart '$tmp/stop' > '$tmp/stop-r.out'; rc=\$?; test \$rc = 3 && cmp '$tmp/expected' '$tmp/stop-r.out'"
reap "$root" 60 2> /dev/null || true

# all_tree PIDS: every one of PIDS runs the tree program (a restart is done).
all_tree() {
	local p
	[ $# = 4 ] || return 1
	for p in "$@"; do
		[ "$(cat /proc/$p/comm 2> /dev/null)" = tree ] || return 1
	done
}

# The second cycle: the restarted tree, found under the restarter and its
# namespace's init once all four run the program again, checkpointed and
# killed, then restarted again.
# Bounded (150 s, a busy machine's TCG); if the four never run, what the
# restarter said and the processes there are go to the log, and the
# points below fail rather than end the test.
rm -f "$tmp/kill.go"
timeout 300 ckpt restart "$tmp/kill" > "$tmp/cycle.out" 2> "$tmp/cycle.err" &
restarter=$!
init= cycle_root=
# cycle_found: the restarter's child (the namespace's init) has one child,
# and it and its descendants are the four, running the program again.
cycle_found() {
	local r
	r=$(pgrep -P "$restarter" -x ckpt | head -1) || return 1
	init=$(cat /proc/$r/task/*/children 2> /dev/null | tr -d ' ')
	[ -n "$init" ] || return 1
	cycle_root=$(cat /proc/$init/task/*/children 2> /dev/null | tr -d ' ')
	[ -n "$cycle_root" ] && all_tree $(members "$cycle_root")
}
t0=$SECONDS
if ktap_poll 150 cycle_found; then
	ktap_note "the restart's four run again after $((SECONDS - t0)) s"
else
	ktap_note "the restart's four never ran: init '$init', root '$cycle_root'"
	sed 's/^/# restarter: /' "$tmp/cycle.err"
	ps -eo pid,ppid,stat,comm | sed 's/^/# /'
fi
# ns_field PID FIELD: the innermost number of /proc/PID/status's NSpid,
# NSpgid or NSsid line: as the tree's own pid namespace numbers it.
ns_field() { awk -v f="$2:" '$1 == f { print $NF }' /proc/$1/status 2> /dev/null || true; }
sess_ok=1
r_pid=$([ -n "$cycle_root" ] && ns_field "$cycle_root" NSpid || true)
[ -n "$r_pid" ] && [ "$(ns_field "$cycle_root" NSsid)" = "$r_pid" ] || sess_ok=0
for p in $(members "$cycle_root"); do
	ktap_note "pid $p: $(grep -E '^NS(pid|pgid|sid):' /proc/$p/status | tr '\n\t' '  ')"
	[ "$(ns_field "$p" NSsid)" = "$r_pid" ] && [ "$(ns_field "$p" NSpgid)" = "$r_pid" ] || sess_ok=0
done
[ "$sess_ok" = 1 ] && ktap_ok "the restarted root leads its session and group again, its descendants in them" ||
	ktap_fail "the restarted root leads its session and group again, its descendants in them"
ktap_check "a restarted tree checkpointed (--kill) and restarted again: the same line" sh -c "
	echo restarter $restarter init $init root $cycle_root; cat '$tmp/cycle.err';
	ckpt checkpoint --tree $cycle_root --kill -o '$tmp/cycle2' && touch '$tmp/kill.go' &&
	timeout 300 ckpt restart '$tmp/cycle2' > '$tmp/cycle2-r.out'; rc=\$?; test \$rc = 3 && cmp '$tmp/expected' '$tmp/cycle2-r.out'"
touch "$tmp/kill.go"
reap "$restarter" 60 || true

# Held at its end (bad.go never exists): the count of its processes
# below must not change because it finished meanwhile.
start bad 20 "" "$tmp/bad.go"
ckpt checkpoint --tree "$root" --timeout 60 -o "$tmp/bad1" > /dev/null || ktap_note "bad1: the checkpoint failed"
ckpt checkpoint --tree "$root" --timeout 60 -o "$tmp/bad2" > /dev/null || ktap_note "bad2: the checkpoint failed"
last=$(tail -1 "$tmp/bad1/manifest" | cut -d' ' -f2)
cp -a "$tmp/bad1" "$tmp/damaged"
printf 'XXXX' | dd of="$tmp/damaged/$last.img" bs=1 seek=300 conv=notrunc 2> /dev/null
cp -a "$tmp/bad1" "$tmp/mixed"
cp "$tmp/bad2/$root.img" "$tmp/mixed/$root.img"
ktap_check "refused: a directory that exists (kept whole), a damaged member, another checkpoint's member; nothing runs" sh -c "
	cp -a '$tmp/bad1' '$tmp/bad1.copy'; before=\$(pgrep -x tree | wc -l);
	! ckpt checkpoint --tree $root -o '$tmp/bad1' 2> '$tmp/err1'; cat '$tmp/err1';
	! timeout 120 ckpt restart '$tmp/damaged' 2> '$tmp/err2'; cat '$tmp/err2';
	! timeout 120 ckpt restart '$tmp/mixed' 2> '$tmp/err3'; cat '$tmp/err3';
	grep -q 'bad1 exists' '$tmp/err1' && diff -r '$tmp/bad1' '$tmp/bad1.copy' &&
	grep -q 'damaged/$last.img' '$tmp/err2' &&
	grep -q 'mixed/$root.img: from another checkpoint' '$tmp/err3' &&
	test \$(pgrep -x tree | wc -l) = \$before && ! pgrep -x ckpt"
# A member's image alone: what it shares with the others would come back
# half; the tree comes back from its directory.
ktap_check "refused: a member's image restarted alone, named; nothing runs" sh -c "
	before=\$(pgrep -x tree | wc -l);
	! timeout 120 ckpt restart '$tmp/bad1/$last.img' 2> '$tmp/err4'; cat '$tmp/err4';
	grep -q 'bad1/$last.img: pid $last.s image is member [2-4] of a process tree of 4: restart the tree.s directory' '$tmp/err4' &&
	test \$(pgrep -x tree | wc -l) = \$before && ! pgrep -x ckpt"
kill -KILL $(members "$root") 2> /dev/null || true
reap "$root" 60 2> /dev/null || true

# A shell pipeline: its members' stdin and stdout are pipes between them,
# the last one's stdout the root's; bytes in flight in the pipes and in
# sort's memory come back.
pipeline="'$producer' 10000 '$tmp/p.ready' | sort | uniq -c | sha256sum"
bash -c "$pipeline" > "$tmp/pipe.expected"
rm -f "$tmp/p.ready"
bash -c "$pipeline" > "$tmp/pipe.out" &
root=$!
ktap_poll 120 test -e "$tmp/p.ready" || ktap_note "p.ready not there after 120 s"
ktap_check "a pipeline checkpointed mid-stream (--kill): five processes, all gone" sh -c "
	ckpt checkpoint --tree $root --kill -o '$tmp/pipe' > '$tmp/report'; rc=\$?; cat '$tmp/report';
	test \$rc = 0 && grep -q '^tree of pid $root: 5 processes' '$tmp/report' && sleep 0.5 &&
	! kill -0 $root 2> /dev/null"
reap "$root" 60 2> /dev/null || true
ktap_check "the restarted pipeline prints the digest of an uninterrupted one" sh -c "
	cat '$tmp/pipe.expected'; timeout 300 ckpt restart '$tmp/pipe' > '$tmp/pipe-r.out' && cat '$tmp/pipe-r.out' &&
	cmp '$tmp/pipe.expected' '$tmp/pipe-r.out'"

# A pipe whose other end is outside the tree: refused, named, the tree
# left running.
exec 9> >(exec sleep 3142)
sleep 3141 &
root=$!
exec 9>&-
ktap_check "refused: a pipe to a process outside the tree, named; the tree runs on" sh -c "
	! ckpt checkpoint --tree $root -o '$tmp/out' 2> '$tmp/err'; cat '$tmp/err';
	grep -q 'fd 9' '$tmp/err' && test ! -e '$tmp/out' && kill -0 $root &&
	test \$(awk '/^State:/ { print \$2 }' /proc/$root/status) = S"
pkill -KILL -f "sleep 314[12]" 2> /dev/null || true

# Zombies: a parent whose children A (exit 5) and B (SIGTERM, in a group
# of its own) have ended unreaped, and C still runs; it reaps all three
# after GO exists, in order, and prints what wait() said.
cat > "$tmp/zombies.py" <<'EOF'
import os, signal, sys, time
ready, go = sys.argv[1:3]
a = os.fork()
if a == 0:
    os._exit(5)
b = os.fork()
if b == 0:
    os.setpgid(0, 0)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    time.sleep(100)
    os._exit(1)
os.setpgid(b, b)	# as B does: whichever comes first
c = os.fork()
if c == 0:
    while not os.path.exists(go):
        time.sleep(0.05)
    os._exit(9)
os.kill(b, signal.SIGTERM)
for p in (a, b):
    while open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.05)
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.05)
out = []
for p in (a, b, c):
    _, st = os.waitpid(p, 0)
    out.append(f"exit {os.WEXITSTATUS(st)}" if os.WIFEXITED(st) else f"signal {os.WTERMSIG(st)}")
print(" ".join(out), flush=True)
EOF
printf 'exit 5 signal 15 exit 9\n' > "$tmp/z-expected"
rm -f "$tmp/z.ready" "$tmp/z.go"
setsid python3 "$tmp/zombies.py" "$tmp/z.ready" "$tmp/z.go" > /dev/null &
z=$!
ktap_poll 120 test -e "$tmp/z.ready" || ktap_note "z.ready not there after 120 s"
ktap_check "zombie children: recorded in their parent's image, not members; --kill" sh -c "
	ckpt checkpoint --tree $z --kill -o '$tmp/z' > '$tmp/z.txt' && cat '$tmp/z.txt' &&
	grep -q 'tree of pid $z: 2 processes' '$tmp/z.txt' &&
	ckpt inspect '$tmp/z/$z.img' > '$tmp/zi.txt' &&
	grep -A2 -x 'zombie children: 2' '$tmp/zi.txt' &&
	grep -qE '^  pid [0-9]+ exit 5 exit_signal 17 ' '$tmp/zi.txt' &&
	grep -qE '^  pid ([0-9]+) signal 15 exit_signal 17 pgid \1 ' '$tmp/zi.txt'"
ktap_check "restarted: the parent reaps the zombies with their statuses, and its running child's" sh -c "
	{ timeout 120 ckpt restart '$tmp/z' > '$tmp/z.out' & r=\$!; } &&
	sleep 1 && touch '$tmp/z.go' && wait \$r; rc=\$?;
	cat '$tmp/z.out'; test \$rc = 0 && cmp '$tmp/z-expected' '$tmp/z.out'"

# A shell loop of short commands beside 256 MiB, whose staging makes the
# moment between the look at the tree and the freeze long: the command
# listed is gone or a zombie by the freeze, and the next is no member. The
# looks after such a try leave out children that young, which the engine
# waits for and records as zombies.
hog=$CKPT_TOP/build/tests/workloads/memhog
cat > "$tmp/loop.sh" <<EOF
$hog 1 256 256 > /dev/null & h=\$!
touch "$tmp/loop.ready"
i=0; while [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done
kill \$h; wait \$h; echo loop \$i
EOF
rm -f "$tmp/loop.ready"
sh "$tmp/loop.sh" > "$tmp/loop.out" &
lp=$!
ktap_poll 60 test -e "$tmp/loop.ready" || true
sleep 2
ktap_check "a shell loop of 0.05 s commands beside 256 MiB: --tree continue, then --kill; restarted, it runs to its end" sh -c "
	ckpt checkpoint --tree $lp -o '$tmp/loop1' && ckpt checkpoint --tree $lp --kill -o '$tmp/loop2' &&
	timeout 300 ckpt restart '$tmp/loop2' > '$tmp/loop-r.out'; rc=\$?; cat '$tmp/loop-r.out';
	test \$rc = 0 && grep -qx 'loop 400' '$tmp/loop-r.out'"
wait "$lp" 2> /dev/null || true

# A child subreaper: its child A left B to it before the checkpoint; after
# the restart B leaves C to it, and it reaps both.
cat > "$tmp/subreaper.py" <<'EOF'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
ready, go = sys.argv[1:3]
libc.prctl(36, 1, 0, 0, 0)	# PR_SET_CHILD_SUBREAPER
def wait_go():
    while not os.path.exists(go):
        time.sleep(0.05)
a = os.fork()
if a == 0:
    if os.fork() == 0:	# B
        wait_go()
        if os.fork() == 0:	# C
            time.sleep(0.5)
            os._exit(4)
        os._exit(3)
    os._exit(2)
os.waitpid(a, 0)
open(ready, "w").close()
wait_go()
v = ctypes.c_int()
libc.prctl(37, ctypes.byref(v), 0, 0, 0)	# PR_GET_CHILD_SUBREAPER
print("subreaper", v.value, "reaped", sorted(os.WEXITSTATUS(os.wait()[1]) for _ in range(2)), flush=True)
EOF
rm -f "$tmp/s.ready" "$tmp/s.go"
setsid python3 "$tmp/subreaper.py" "$tmp/s.ready" "$tmp/s.go" > /dev/null &
s=$!
ktap_poll 120 test -e "$tmp/s.ready" || ktap_note "s.ready not there after 120 s"
ktap_check "a child subreaper root with an orphan it took: --kill, the image says so" sh -c "
	ckpt checkpoint --tree $s --kill -o '$tmp/s' > '$tmp/s.txt' && cat '$tmp/s.txt' &&
	grep -q 'tree of pid $s: 2 processes' '$tmp/s.txt' &&
	ckpt inspect '$tmp/s/$s.img' | grep -q '^tree: member 0 of 2, the root, .*, child subreaper$'"
ktap_check "restarted: a subreaper again, it reaps the orphan it had and the one made after" sh -c "
	{ timeout 120 ckpt restart '$tmp/s' > '$tmp/s.out' & r=\$!; } &&
	sleep 1 && touch '$tmp/s.go' && wait \$r; rc=\$?;
	cat '$tmp/s.out'; test \$rc = 0 && echo 'subreaper 1 reaped [3, 4]' | cmp - '$tmp/s.out'"

# A parent and its child, waiting for GO; the parent says on SIGUSR1, and
# at the end, what its namespace's /proc shows: its own pid under
# /proc/<getpid()>, its child's parent there, how many processes it lists.
# The child is confined to JAIL (chroot), and waits for the parent's end
# of a pipe to close.
cat > "$tmp/procself.py" <<'EOF'
import os, signal, sys, time
ready, go, jail = sys.argv[1:4]
def report():
    me = os.getpid()
    try:
        pid = int(open(f"/proc/{me}/stat").read().split()[0])
        ppid = int(open(f"/proc/{c}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError) as e:
        pid = ppid = str(e)
    n = sum(d.isdigit() for d in os.listdir("/proc"))
    print(f"pid {'ok' if pid == me else pid}, child's parent {'ok' if ppid == me else ppid}, {n} processes", flush=True)
asked = False
def ask(sig, frame):
    global asked
    asked = True
r, w = os.pipe()
c = os.fork()
if c == 0:
    os.close(w)
    os.chroot(jail)
    os.chdir("/")
    os.read(r, 1)
    os._exit(0)
os.close(r)
signal.signal(signal.SIGUSR1, ask)
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.05)
    if asked:
        asked = False
        report()
report()
os.close(w)
os.waitpid(c, 0)
EOF
# Its processes and the namespace's init.
echo "pid ok, child's parent ok, 3 processes" > "$tmp/ps-expected"
rm -f "$tmp/ps.ready" "$tmp/ps.go"
mkdir -p "$tmp/jail"
setsid python3 "$tmp/procself.py" "$tmp/ps.ready" "$tmp/ps.go" "$tmp/jail" > /dev/null &
ps=$!
ktap_poll 120 test -e "$tmp/ps.ready" || ktap_note "ps.ready not there after 120 s"
ckpt checkpoint --tree "$ps" --kill -o "$tmp/ps1" > /dev/null || ktap_note "ps1: the checkpoint failed"
reap "$ps" 30 2> /dev/null || true
ckpt restart "$tmp/ps1" > "$tmp/ps1.out" 2> "$tmp/ps1.err" &
restarter=$!
ps_found() { ps_root=$(restarted_root "$restarter" 2 python3); }
ps_root=
ktap_poll 150 ps_found || ktap_note "the restart's two never ran: $(cat "$tmp/ps1.err")"
ktap_check "restarted: /proc/<getpid()> is the member's own, its child's parent is right, the tree alone is listed" sh -c "
	kill -USR1 $ps_root && for i in \$(seq 100); do grep -q processes '$tmp/ps1.out' && break; sleep 0.3; done;
	cat '$tmp/ps1.out';
	cmp '$tmp/ps-expected' '$tmp/ps1.out'"
ktap_check "that tree, a member confined below a directory, checkpointed again (--kill) from the node's mount namespace, restarted: the same" sh -c "
	ckpt checkpoint --tree $ps_root --kill -o '$tmp/ps2' && touch '$tmp/ps.go' &&
	timeout 120 ckpt restart '$tmp/ps2' > '$tmp/ps2.out'; rc=\$?; cat '$tmp/ps2.out';
	test \$rc = 0 && cmp '$tmp/ps-expected' '$tmp/ps2.out'"
reap "$restarter" 30 2> /dev/null || true

# Another mount namespace, whose /tmp is a file system of its own (as a
# sandbox's private /tmp): its names are not the node's, and its files
# would be made again in the node's /tmp. Refused, named.
unshare -m --propagation private sh -c 'mount -t tmpfs none /tmp && exec sleep 3143' &
priv=$!
ktap_poll 30 sh -c "test \"\$(cat /proc/$priv/comm)\" = sleep" || true
ktap_check "refused: a process in a mount namespace whose /tmp is its own, named; it runs on" sh -c "
	! ckpt checkpoint --tree $priv -o '$tmp/priv' 2> '$tmp/priv.err'; cat '$tmp/priv.err';
	grep -q 'root directory of pid $priv is outside the checkpointer.s: in another mount namespace, whose root directory, /tmp, /var/tmp or /dev/shm is not' '$tmp/priv.err' &&
	test ! -e '$tmp/priv' && kill -0 $priv"
kill -KILL "$priv" 2> /dev/null || true

# One binary run twice by a shell of user 1000's, as a launcher runs its
# ranks, then rebuilt under them: a new file renamed over the old, which
# lives on deleted, each process with its own open file of it. Restarted
# by root, the file made again is the user's, not root's.
appdir=$(mktemp -d)
chown 1000:1000 "$appdir"
cp "$tree" "$appdir/app"
chown 1000:1000 "$appdir/app"
setpriv --reuid=1000 --regid=1000 --clear-groups sh -c "'$appdir/app' $steps '$appdir/1.ready' 20 '$appdir/go' & '$appdir/app' $steps '$appdir/2.ready' 20 '$appdir/go'; rc=\$?; wait; exit \$rc" > "$tmp/app.out" &
app=$!
ktap_poll 120 sh -c "test -e '$appdir/1.ready' && test -e '$appdir/2.ready'" || ktap_note "app: not all run after 120 s"
cp /bin/true "$appdir/app.new" && mv "$appdir/app.new" "$appdir/app"
app_pids=$(members "$app")
ktap_check "a tree whose executable was rebuilt while it ran: --kill, the images carry it" sh -c "
	ckpt checkpoint --tree $app --kill -o '$tmp/appimg' > '$tmp/app.txt' && cat '$tmp/app.txt' &&
	grep -q 'tree of pid $app: 9 processes' '$tmp/app.txt' &&
	for p in \$(echo $app_pids | cut -d' ' -f2-); do
		ckpt inspect '$tmp/appimg/'\$p.img | grep -q '^exe: $appdir/app (deleted, object [0-9]*)\$' || exit 1; done"
reap "$app" 60 2> /dev/null || true
cat "$tmp/expected" "$tmp/expected" > "$tmp/app-expected"
# The eight, running their executable again: user 1000's, mode 0755.
cat > "$tmp/app-exes.sh" <<'EOF'
n=0
for p in $(pgrep -x app); do
	[ "$(stat -L -c %u:%a /proc/$p/exe 2> /dev/null)" = 1000:755 ] || exit 1
	n=$((n + 1))
done
[ "$n" = 8 ]
EOF
ktap_check "restarted by root: the eight run a file of the user's again, and print both lines of an uninterrupted run, exit 3" sh -c "
	timeout 300 ckpt restart '$tmp/appimg' > '$tmp/app-r.out' & r=\$!;
	ok=1; for i in \$(seq 300); do sh '$tmp/app-exes.sh' && ok=0 && break; sleep 0.2; done;
	for p in \$(pgrep -x app); do echo \"# \$p: \$(stat -L -c %u:%a /proc/\$p/exe) \$(readlink /proc/\$p/exe)\"; done;
	touch '$appdir/go'; wait \$r; rc=\$?; cat '$tmp/app-r.out';
	test \$ok = 0 && test \$rc = 3 && cmp '$tmp/app-expected' '$tmp/app-r.out'"
rm -rf "$appdir"

# A Python driver with workers, as issue 13 names it: multiprocessing's
# Pool of four, fed through its queues (pipes and POSIX semaphores),
# counting in a shared Value (its heap: a file deleted at once, one open
# file all hold, refused until stop 67). Started by fork (its semaphores'
# files are mapped and gone), and by a forkserver (a server process forks
# the workers; the semaphores keep their names, their files mapped under
# names sem_open() unlinked, refused until stop 67 too; a resource tracker
# process). --kill mid-run; the restart prints the uninterrupted run's line.
cat > "$tmp/pool.py" <<'EOF'
import hashlib, multiprocessing as mp, os, sys, time

def init(c, g):
    global counter, go
    counter, go = c, g

# Tasks from 480 on (the 31st round) wait for GO: the checkpoint comes
# with four of them in the workers' hands, the rest queued, however slow
# the machine.
def work(i):
    while i >= 480 and not os.path.exists(go):
        time.sleep(0.05)
    time.sleep(0.004)
    h = hashlib.sha256(b"%d" % i)
    for _ in range(100):
        h.update(h.digest())
    with counter.get_lock():
        counter.value += 1
    return h.hexdigest()

# 40 rounds of 16 tasks; READY once the 31st is handed out.
if __name__ == "__main__":
    ready, g, method = sys.argv[1:4]
    ctx = mp.get_context(method)
    c = ctx.Value("i", 0)
    total = hashlib.sha256()
    with ctx.Pool(4, initializer=init, initargs=(c, g)) as pool:
        for r in range(40):
            res = pool.map_async(work, range(r * 16, r * 16 + 16), chunksize=2)
            if r == 30:
                time.sleep(0.5)
                open(ready, "w").close()
            for d in res.get():
                total.update(d.encode())
    print(method, total.hexdigest(), c.value, flush=True)
EOF
# pool_cycle METHOD PROCESSES WHAT: the two points for one start method.
pool_cycle() {
	local m=$1 n=$2 pool
	touch "$tmp/$m-plain.go"
	timeout 300 python3 "$tmp/pool.py" "$tmp/$m-plain.ready" "$tmp/$m-plain.go" "$m" > "$tmp/$m-expected" 2> /dev/null
	sed 's/^/# uninterrupted: /' "$tmp/$m-expected"
	setsid python3 "$tmp/pool.py" "$tmp/$m.ready" "$tmp/$m.go" "$m" > "$tmp/$m.out" 2> /dev/null &
	pool=$!
	ktap_poll 120 test -e "$tmp/$m.ready" || ktap_note "$m.ready not there after 120 s"
	ktap_check "a Python Pool of four ($m) with a shared Value, mid-run: --kill takes the $n, $3" sh -c "
		ckpt checkpoint --tree $pool --kill -o '$tmp/$m' > '$tmp/$m.txt'; rc=\$?; cat '$tmp/$m.txt';
		test \$rc = 0 && grep -q 'tree of pid $pool: $n processes' '$tmp/$m.txt' &&
		for i in '$tmp/$m/'*.img; do ckpt inspect -v \$i; done > '$tmp/$m.v' &&
		grep -m1 ' tree-shared .*/pym-.* (deleted)' '$tmp/$m.v' &&
		if [ $m = forkserver ]; then grep -m1 ' /dev/shm/sem\.mp-' '$tmp/$m.v'; fi"
	# Refused, the pool would wait for GO for ever: none of it left.
	pkill -KILL -f "$tmp/pool.py" 2> /dev/null || true
	reap "$pool" 60 2> /dev/null || true
	touch "$tmp/$m.go"
	ktap_check "restarted, the Pool ($m) finishes with the uninterrupted run's line" sh -c "
		timeout 300 ckpt restart '$tmp/$m' > '$tmp/$m-r.out' 2> '$tmp/$m-r.err'; rc=\$?;
		cat '$tmp/$m-r.out'; test \$rc = 0 || cat '$tmp/$m-r.err';
		test \$rc = 0 && grep -q '^$m ' '$tmp/$m-expected' &&
		cmp '$tmp/$m-expected' '$tmp/$m-r.out'"
	pkill -KILL -f "$tmp/pool.py" 2> /dev/null || true
}
pool_cycle fork 5 "its heap's open file shared"
pool_cycle forkserver 7 "its semaphores by name"

# A monitor as a job script starts one: vmstat keeps /proc/stat,
# /proc/meminfo and /proc/vmstat open and reads them again each second;
# here it also holds files of its own /proc/PID (status, net/dev). The
# restarted tree's /proc is a mount of its own, with other inode
# numbers: reopened by path (engine.md, "Files of /proc and /sys").
setsid sh -c 'exec 3< /proc/self/status 4< /proc/self/net/dev; exec vmstat 1 7' \
	> "$tmp/vmstat.out" 2> /dev/null &
vm=$!
ktap_poll 60 sh -c "test \$(wc -l < '$tmp/vmstat.out') -ge 4" ||
	ktap_note "vmstat printed less than 4 lines in 60 s"
ktap_check "vmstat 1, /proc files open (its own too), killed mid-run and restarted, prints its last lines" sh -c "
	ckpt checkpoint --tree $vm --kill -o '$tmp/vmstat' > /dev/null &&
	ckpt inspect '$tmp/vmstat/$vm.img' > '$tmp/vmstat.txt' &&
	grep -q ' procfs /proc/$vm/status\$' '$tmp/vmstat.txt' &&
	test \$(grep -c ' procfs /proc/' '$tmp/vmstat.txt') -ge 5 &&
	timeout 120 ckpt restart '$tmp/vmstat' >> '$tmp/vmstat.out' &&
	cat '$tmp/vmstat.out' && test \$(wc -l < '$tmp/vmstat.out') = 9"

# tail -f on a node-local file a member appends to: its inotify watch
# comes back at its path, and its poll() without a timeout goes on (it
# saw EINTR until stop 70): every line once (engine.md, "inotify").
mkdir "$tmp/tf"
cat > "$tmp/tf.sh" << 'EOF'
: > /tmp/ckpt-tail.log
tail -f /tmp/ckpt-tail.log & t=$!
for i in $(seq 1 30); do echo line $i >> /tmp/ckpt-tail.log; sleep 0.1; done
sleep 1; kill $t
EOF
setsid bash "$tmp/tf.sh" > "$tmp/tf.out" 2>&1 &
tf=$!
ktap_poll 60 sh -c "test \$(wc -l < '$tmp/tf.out') -ge 5" ||
	ktap_note "tail -f printed less than 5 lines in 60 s"
ktap_check "tail -f following a member's appends (inotify): killed mid-run and restarted, every line once" sh -c "
	ckpt checkpoint --tree $tf --kill -o '$tmp/tf/d' > /dev/null &&
	for i in '$tmp/tf/d/'*.img; do ckpt inspect \$i; done | grep -x '  fd [0-9]* wd 1 mask 0x2 /tmp/ckpt-tail.log' &&
	timeout 120 ckpt restart '$tmp/tf/d' >> '$tmp/tf.out' 2>&1;
	cat '$tmp/tf.out'; seq 1 30 | sed 's/^/line /' | cmp - '$tmp/tf.out'"
rm -f /tmp/ckpt-tail.log
ktap_finish
