#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ckpt-run --ns: a job started by ckptd in a pid and an IPC namespace of
# its own (Documentation/ckptd.md, "Jobs in namespaces of their own").
# The program is pid 2 of its namespace, in an IPC namespace of its own
# and a mount namespace whose /proc is its pid namespace's,
# with the caller's uid, groups, umask, limits, working directory and
# environment, CKPT_JOBID added; its exit status is ckpt-run's, a program
# not found is 127 and named, a SIGTERM to ckpt-run reaches it, and a
# process it leaves behind ends with it. An ordinary user's job holding a
# System V segment and semaphore (refused in the node's shared IPC
# namespace, where the semaphore would be lost with the segment taken) is checkpointed continuing and with --kill, restarted by its
# user with both objects in a new IPC namespace, and counts every line
# once. ckptd stopped and started again meanwhile finds the job, and
# ckpt-run still gets its status; a SIGUSR1 sent to ckpt-run then, and to
# ckpt restart after ckptd was stopped and started again once more, still
# reaches the program. Its caller's I/O priority (idle) and personality
# (no address randomization) are the program's. Requests of the wrong
# shape, and a
# caller with no_new_privs (its program would escape it), are refused by
# name and start nothing, as does one with a capability dropped from its
# bounding set. On a terminal, the program has one of its own
# as its controlling terminal, its group in the foreground, and a Ctrl-C
# reaches it once. The program has its caller's nice value and ignored
# signals, and none of ckptd's descriptors. A join with "ns" of the
# wrong shape is refused by name; one into the running restarted job is
# started in its namespaces; one into a job whose process made its own
# mount namespace is a plain join, never started in it.
#
# Topology: one node, no network.
# kernels: 6.1 6.12
# timeout: 600
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

bin=$CKPT_TOP/build/bin
tmp=$(mktemp -d)
chmod 755 "$tmp"
mkdir -m 1777 "$tmp/u"
snap=$tmp/snap
sock=$tmp/ckptd.sock
export CKPTD_SOCKET=$sock

cleanup() {
	[ -n "${ckptd:-}" ] && kill "$ckptd" 2> /dev/null
	pkill -KILL -f "sleep 30[0-9][0-9]" 2> /dev/null || true
	wait 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp" /etc/ckpt/ckptd-ns.conf
}
trap cleanup EXIT

as_nobody() {
	python3 -c 'import os, sys
os.setgroups([]); os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534); os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}
export -f as_nobody
start_ckptd() {
	"$bin/ckptd" --foreground --config /etc/ckpt/ckptd-ns.conf \
		>> "$tmp/ckptd.log" 2>&1 &
	ckptd=$!
}
raw() {
	CKPTD_RAW_FDS=${CKPTD_RAW_FDS:-1} python3 "$CKPT_TOP/vm-tests/lib/ckptd_raw.py" "$CKPTD_SOCKET" "$1"
}
export -f raw
job_of() {
	sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$1"
}

ktap_plan 19
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"
mkdir -p /etc/ckpt
head -c 32 /dev/urandom > "$tmp/key"
chmod 600 "$tmp/key"
cat > /etc/ckpt/ckptd-ns.conf <<EOF
snapshot_root = $snap
key_file = $tmp/key
socket = $sock
log_level = 2
EOF
"$bin/ckpt" key "$tmp/key"
start_ckptd
ktap_poll 30 "$bin/ckpt" ls > /dev/null || true

# What the program is given, printed by it: pid, ids, umask, limit,
# directory, a variable of the caller's, the job's id; its namespaces.
# The nice value, an ignored SIGUSR1 (a kill of itself it survives) and
# its descriptors (ls's own and libckpt's: nothing of ckptd's) too.
rc=0
(cd "$tmp/u" && umask 027 && ulimit -n 512 && trap '' USR1 &&
	FOO=bar nice -n 5 ionice -c 3 setarch "$(uname -m)" -R \
	setpriv --reuid 1 --regid 1 --groups 1,4,24 "$bin/ckpt-run" --ns sh -c \
	'echo $$ $(id -u) $(id -G) $(umask) $(ulimit -n) $PWD $FOO $CKPT_JOBID
	 readlink /proc/self/ns/pid /proc/self/ns/ipc; nice; kill -USR1 $$; echo alive
	 echo $(ls /proc/self/fd); readlink /proc/self/ns/mnt; cat /proc/$$/comm
	 ionice -p $$; cat /proc/$$/personality; exit 3' > "$tmp/p.out" 2> "$tmp/p.err") || rc=$?
cat "$tmp/p.out" "$tmp/p.err" | sed 's/^/# /'
pjob=$(job_of "$tmp/p.err")
# ls's descriptors with libckpt and no job: the same as in the job's.
fds=$(cd "$tmp/u" && as_nobody "$bin/ckpt-run" --no-job sh -c 'echo $(ls /proc/self/fd)')
ktap_note "descriptors without --ns: $fds"
ktap_check "--ns: pid 2 of new pid, IPC and mount namespaces, /proc its namespace's, the caller's ids, umask, limit, directory, environment, nice, I/O priority, personality, ignored signals; its status" \
	sh -c "test $rc = 3 && test -n '$pjob' &&
	 test \"\$(head -n 1 '$tmp/p.out')\" = '2 1 1 4 24 0027 512 $tmp/u bar $pjob' &&
	 test \"\$(sed -n 2p '$tmp/p.out')\" != \"\$(readlink /proc/self/ns/pid)\" &&
	 test \"\$(sed -n 3p '$tmp/p.out')\" != \"\$(readlink /proc/self/ns/ipc)\" &&
	 test \"\$(sed -n 4,6p '$tmp/p.out' | tr '\n' ' ')\" = '5 alive $fds ' &&
	 test \"\$(sed -n 7p '$tmp/p.out')\" != \"\$(readlink /proc/self/ns/mnt)\" &&
	 test \"\$(sed -n 8,10p '$tmp/p.out' | tr '\n' ' ')\" = 'sh idle 00040000 '"
# Each job's session keyring: its own (ckptd's would be every job's).
keyring='import ctypes; print(ctypes.CDLL(None).syscall(250, 0, -3, 0))'
(cd "$tmp/u" && as_nobody "$bin/ckpt-run" --ns python3 -c "$keyring" > "$tmp/k1" 2> /dev/null &&
	as_nobody "$bin/ckpt-run" --ns python3 -c "$keyring" > "$tmp/k2" 2> /dev/null) || true
ktap_check "--ns: each job a session keyring of its own" sh -c \
	"cat '$tmp/k1' '$tmp/k2'; test \"\$(cat '$tmp/k1')\" -gt 0 && test \"\$(cat '$tmp/k2')\" -gt 0 &&
	 test \"\$(cat '$tmp/k1')\" != \"\$(cat '$tmp/k2')\""
ktap_check "--ns from a process with no_new_privs, or a capability dropped: refused, named, nothing run" sh -c \
	"cd '$tmp/u' && ! setpriv --no-new-privs --reuid 65534 --regid 65534 --clear-groups \
	 '$bin/ckpt-run' --ns touch '$tmp/u/nnp' 2> '$tmp/nnp.err' && cat '$tmp/nnp.err' &&
	 grep -q 'runs with no_new_privs or a seccomp filter' '$tmp/nnp.err' && ! test -e '$tmp/u/nnp' &&
	 ! setpriv --bounding-set -net_raw --reuid 65534 --regid 65534 --clear-groups \
	 '$bin/ckpt-run' --ns touch '$tmp/u/nnp' 2> '$tmp/nnp.err' && cat '$tmp/nnp.err' &&
	 grep -q 'has fewer capabilities than ckptd' '$tmp/nnp.err' && ! test -e '$tmp/u/nnp'"
rc=0
(cd "$tmp/u" && as_nobody "$bin/ckpt-run" --ns no-such-program 2> "$tmp/n.err") || rc=$?
ktap_check "--ns: a program not found: 127, named" sh -c \
	"cat '$tmp/n.err'; test $rc = 127 && grep -q 'cannot run no-such-program: No such file' '$tmp/n.err'"
# setpriv executes ckpt-run: $! is its pid (as_nobody is a function).
cd "$tmp/u"
setpriv --reuid 65534 --regid 65534 --clear-groups "$bin/ckpt-run" --ns sh -c \
	'setsid -f sleep 3001; exec sleep 3002' 2> "$tmp/t.err" &
runner=$!
cd /
ktap_poll 60 pgrep -x -f "sleep 3001" > /dev/null || true
ktap_poll 60 pgrep -x -f "sleep 3002" > /dev/null || true
kill -TERM "$runner"
ktap_poll 60 sh -c "! kill -0 $runner 2> /dev/null" || kill -KILL "$runner" 2> /dev/null || true
rc=0
wait "$runner" || rc=$?
ktap_check "--ns: a SIGTERM to ckpt-run ends the program (143); what it left behind ends with it" \
	bash -c "$(declare -f ktap_poll ktap_nap); test $rc = 143 && ktap_poll 30 sh -c '! pgrep -x -f \"sleep 300[12]\"'"

# An ordinary user's job with a System V segment and a semaphore: one
# line every 0.3 s, held at 15 until the test removes the file hold,
# looking every second (each look a sleep forked: a child new since the
# checkpoint's look at the tree makes it look again, and a loaded make
# check saw all eight looks of a --kill fail so with 0.3 s).
count='trap "echo usr1 >> sig" USR1
ipcmk -M 4096 > /dev/null && ipcmk -S 1 > /dev/null || exit 9
i=0; while [ $i -lt 30 ]; do echo $i; i=$((i+1)); while [ $i = 15 ] && [ -e hold ]; do sleep 1; done; sleep 0.3; done'
touch "$tmp/u/hold"
(cd "$tmp/u" && as_nobody "$bin/ckpt-run" --ns --name sysv sh -c "$count" \
	> "$tmp/u/out" 2> "$tmp/s.err") &
runner=$!
ktap_poll 60 grep -q "job " "$tmp/s.err" || true
job=$(job_of "$tmp/s.err")
ktap_poll 60 sh -c "test \$(wc -l < '$tmp/u/out') -ge 3" || true
ktap_check "--ns: a job's System V segment and semaphore: checkpointed continuing, snapshot 1" bash -c \
	"as_nobody '$bin/ckpt' job '$job' > '$tmp/c1.out' 2>&1 || { cat '$tmp/c1.out'; false; } &&
	 grep -q '^snapshot *$snap/$job/1\$' '$tmp/c1.out'"
kill "$ckptd"
wait "$ckptd" 2> /dev/null || true
start_ckptd
ktap_check "ckptd stopped and started again finds the job and checkpoints it: snapshot 2" bash -c \
	"$(declare -f ktap_poll ktap_nap); ktap_poll 30 '$bin/ckpt' status '$job' > /dev/null &&
	 as_nobody '$bin/ckpt' job '$job' | grep -q '^snapshot *$snap/$job/2\$'"
# The foreground's signals go through ckptd: the one started again has
# no word of this client, and the job's worker reads them itself.
pkill -USR1 -f "^[^ ]*/ckpt-run --ns --name sysv " || true
ktap_check "a SIGUSR1 to ckpt-run after ckptd was started again reaches the program" \
	bash -c "$(declare -f ktap_poll ktap_nap); ktap_poll 30 test -s '$tmp/u/sig'"
ktap_check "--kill: snapshot 3" bash -c \
	"as_nobody '$bin/ckpt' job '$job' --kill | grep -q '^snapshot *$snap/$job/3\$'"
ktap_poll 60 sh -c "! kill -0 $runner 2> /dev/null" || kill -KILL "$runner" 2> /dev/null || true
rc=0
wait "$runner" || rc=$?
ktap_check "ckpt-run exits as its killed job: 137" test "$rc" = 137
(cd "$tmp/u" && as_nobody "$bin/ckpt" restart "$snap/$job/3" >> "$tmp/u/out" 2> "$tmp/r.err") &
runner=$!
ktap_poll 60 grep -q "job $job restarted" "$tmp/r.err" || cat "$tmp/r.err"
# The restarted sh's IPC namespace: not the node's, with both objects.
sh_pid() {
	local p
	for p in $(cat "/sys/fs/cgroup/ckpt/$job/cgroup.procs"); do
		[ "$(cat "/proc/$p/comm" 2> /dev/null)" = sh ] && echo "$p" && return 0
	done
	return 1
}
ktap_check "restarted by its user: the segment and the semaphore, in a new IPC namespace" bash -c \
	"$(declare -f sh_pid); job=$job; p=\$(sh_pid) &&
	 test \"\$(readlink /proc/\$p/ns/ipc)\" != \"\$(readlink /proc/self/ns/ipc)\" &&
	 nsenter -t \$p -i ipcs -m | grep -q ' 4096 ' && nsenter -t \$p -i ipcs -s | grep -q 'nobody .* 1 *\$'"
# A join with "ns" (ckpt-join --ns) of the wrong shape, into this running
# job of the caller's: refused by name, nothing started.
ktap_check "join with ns: no descriptors, a terminal, a relative cwd: refused" bash -c "
	as_nobody bash -c 'CKPTD_RAW_FDS=0 raw \"{\\\"op\\\":\\\"join\\\",\\\"job\\\":\\\"$job\\\",\\\"ns\\\":true,\\\"cmd\\\":[\\\"touch\\\",\\\"$tmp/u/ran\\\"],\\\"env\\\":[],\\\"cwd\\\":\\\"/\\\"}\"' > '$tmp/j.out'
	as_nobody bash -c 'CKPTD_RAW_FDS=1 raw \"{\\\"op\\\":\\\"join\\\",\\\"job\\\":\\\"$job\\\",\\\"ns\\\":true,\\\"tty\\\":true,\\\"cmd\\\":[\\\"touch\\\",\\\"$tmp/u/ran\\\"],\\\"env\\\":[],\\\"cwd\\\":\\\"/\\\"}\"' >> '$tmp/j.out'
	as_nobody bash -c 'CKPTD_RAW_FDS=1 raw \"{\\\"op\\\":\\\"join\\\",\\\"job\\\":\\\"$job\\\",\\\"ns\\\":true,\\\"cmd\\\":[\\\"touch\\\",\\\"$tmp/u/ran\\\"],\\\"env\\\":[],\\\"cwd\\\":\\\"u\\\"}\"' >> '$tmp/j.out'
	cat '$tmp/j.out'
	grep -q 'join: ..ns..: send three descriptors' '$tmp/j.out' &&
	grep -q 'join: ..ns..: no ..tty..' '$tmp/j.out' &&
	grep -q 'join: ..cwd.. is to be an absolute path' '$tmp/j.out' && ! test -e '$tmp/u/ran'"
# A join with "ns" into the running (restarted) job: ckptd starts its
# command in the namespaces the job's processes are in here, the restart's
# (ckptd.md, "Other nodes": here, as on every node, the same).
echo 'readlink /proc/self/ns/ipc /proc/self/ns/pid > "$1.new"; mv "$1.new" "$1"' > "$tmp/u/ns.sh"
ktap_check "join with ns into the restarted job: its command in the job's pid and IPC namespaces" bash -c "
	$(declare -f sh_pid ktap_poll ktap_nap); job=$job
	as_nobody bash -c 'raw \"{\\\"op\\\":\\\"join\\\",\\\"job\\\":\\\"$job\\\",\\\"ns\\\":true,\\\"cmd\\\":[\\\"sh\\\",\\\"$tmp/u/ns.sh\\\",\\\"$tmp/u/entered\\\"],\\\"env\\\":[],\\\"cwd\\\":\\\"/\\\"}\"' > '$tmp/e.out'
	cat '$tmp/e.out'; grep -q '\"started\"' '$tmp/e.out' && ktap_poll 30 test -s '$tmp/u/entered' &&
	p=\$(sh_pid) && readlink /proc/\$p/ns/ipc /proc/\$p/ns/pid | cmp - '$tmp/u/entered' &&
	test \"\$(readlink /proc/\$p/ns/ipc)\" != \"\$(readlink /proc/self/ns/ipc)\""
# A job whose one process is in a mount namespace other than the one
# its init made (as a set-uid sandbox's would be, laid out by its user;
# these VMs make no user namespace, whose ones ckptd refuses too): a join
# with "ns" is not started in it, but answered as a plain join.
(cd "$tmp/u" && "$bin/ckpt-run" --ns --name mntns unshare -m \
	sh -c 'touch mntns-ready; sleep 3004' > /dev/null 2> "$tmp/un.err") &
ktap_poll 60 test -e "$tmp/u/mntns-ready" || cat "$tmp/un.err"
ujob=$(job_of "$tmp/un.err")
ktap_check "join with ns into a job whose process made its own mount namespace: a plain join" bash -c "
	bash -c 'raw \"{\\\"op\\\":\\\"join\\\",\\\"job\\\":\\\"$ujob\\\",\\\"ns\\\":true,\\\"cmd\\\":[\\\"sh\\\",\\\"$tmp/u/ns.sh\\\",\\\"$tmp/u/entered2\\\"],\\\"env\\\":[],\\\"cwd\\\":\\\"/\\\"}\"' > '$tmp/e2.out'
	cat '$tmp/e2.out'; grep -q '\"ok\": *true' '$tmp/e2.out' && ! grep -q started '$tmp/e2.out' &&
	sleep 2 && ! test -e '$tmp/u/entered2'"
pkill -KILL -f "^sleep 3004" || true
kill "$ckptd"
wait "$ckptd" 2> /dev/null || true
start_ckptd
ktap_poll 30 "$bin/ckpt" ls > /dev/null || true
pkill -USR1 -f "^[^ ]*/ckpt restart $snap/$job/3\$" || ktap_note "no ckpt restart to signal"
ktap_check "a SIGUSR1 to ckpt restart after ckptd was started again reaches the program" \
	bash -c "$(declare -f ktap_poll ktap_nap); ktap_poll 30 sh -c 'test \$(grep -c . $tmp/u/sig) = 2' ||
	 { cat '$tmp/u/sig'; false; }"
rm -f "$tmp/u/hold"
rc=0
ktap_poll 120 sh -c "! kill -0 $runner" || kill -KILL "$runner" 2> /dev/null || true
wait "$runner" || rc=$?
ktap_check "the job ends (0); every line once" sh -c \
	"cat '$tmp/r.err'; test $rc = 0 && seq 0 29 | cmp - '$tmp/u/out'"

# Requests of the wrong shape: refused by name, nothing started.
ktap_check "run with ns: a pid, env not NAME=VALUE, no descriptors, a relative cwd: refused" bash -c "
	as_nobody bash -c 'raw \"{\\\"op\\\":\\\"run\\\",\\\"ns\\\":true,\\\"pid\\\":1,\\\"cmd\\\":[\\\"true\\\"],\\\"env\\\":[],\\\"cwd\\\":\\\"/\\\"}\"' > '$tmp/b.out'
	as_nobody bash -c 'raw \"{\\\"op\\\":\\\"run\\\",\\\"ns\\\":true,\\\"cmd\\\":[\\\"true\\\"],\\\"env\\\":[\\\"=x\\\"],\\\"cwd\\\":\\\"/\\\"}\"' >> '$tmp/b.out'
	as_nobody bash -c 'CKPTD_RAW_FDS=0 raw \"{\\\"op\\\":\\\"run\\\",\\\"ns\\\":true,\\\"cmd\\\":[\\\"true\\\"],\\\"env\\\":[],\\\"cwd\\\":\\\"/\\\"}\"' >> '$tmp/b.out'
	as_nobody bash -c 'raw \"{\\\"op\\\":\\\"run\\\",\\\"ns\\\":true,\\\"cmd\\\":[\\\"touch\\\",\\\"$tmp/u/ran\\\"],\\\"env\\\":[],\\\"cwd\\\":\\\"u\\\"}\"' >> '$tmp/b.out'
	cat '$tmp/b.out'
	grep -q 'ns.. starts the program here: no ..pid' '$tmp/b.out' &&
	grep -q 'ns.. needs ..cmd.. (strings), ..env.. (at most' '$tmp/b.out' &&
	grep -q 'send the standard descriptors (0, 1, 2) with the request' '$tmp/b.out' &&
	grep -q 'cwd.. is to be an absolute path' '$tmp/b.out' && ! test -e '$tmp/u/ran'"

# On a terminal (script's): the program's own, relayed by ckpt-run, its
# controlling terminal, its own group (pid 2's) in the foreground; a
# Ctrl-C typed there reaches it once. The keys: a FIFO script holds open
# both ways (it never reads its end).
cat > "$tmp/u/tty.py" <<'EOF'
import os, signal, sys, time
n = 0
def count(sig, frame):
    global n
    n += 1
signal.signal(signal.SIGINT, count)
fd = os.open("/dev/tty", os.O_RDWR)
open(sys.argv[1], "w").close()
end = time.time() + 60
while not n and time.time() < end:
    time.sleep(0.1)
time.sleep(2)
print("ctty", os.getpgrp() == os.getpid() == 2, os.tcgetpgrp(fd) == 2,
      os.isatty(0) and os.isatty(1), "sigint", n)
EOF
mkfifo "$tmp/keys"
(cd "$tmp/u" && SHELL=/bin/bash timeout 120 script -qec \
	"as_nobody '$bin/ckpt-run' --ns python3 '$tmp/u/tty.py' '$tmp/u/tty.ready'" /dev/null \
	0<> "$tmp/keys" > "$tmp/tty.out" 2>&1) &
trunner=$!
ktap_poll 60 test -e "$tmp/u/tty.ready" || true
printf '\003' > "$tmp/keys"
ktap_poll 60 sh -c "! kill -0 $trunner 2> /dev/null" || kill -KILL "$trunner" 2> /dev/null || true
wait "$trunner" 2> /dev/null || true
cat -v "$tmp/tty.out" | sed 's/^/# /'
ktap_check "--ns on a terminal: its controlling terminal, its group in the foreground; a Ctrl-C once" \
	grep -q 'ctty True True True sigint 1' "$tmp/tty.out"

ktap_note "ckptd's log:"
ktap_note "$(tail -n 30 "$tmp/ckptd.log")"
ktap_finish
