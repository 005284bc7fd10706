#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The engine as a hostile local user meets it, through the CLI
# (Documentation/security.md): user nobody, with and without a user
# namespace of its own, tries to checkpoint what it may not, to restart at
# all, to set the key, to restart an edited image through root, to
# checkpoint a process tree of root's or one with a member of root's
# (CKPT_IOC_CHECKPOINT_TREE, through a small python3 caller: the CLI has
# no tree command yet), to carry a root-only tmpfs file, or one its
# process's Landlock sandbox may not read, in a --tmpfs tree checkpoint,
# to make the engine read more connections waiting on a listening socket
# than an image holds, to ask for TCP ends alone (ckptd's flags), to have
# its 20000 record locks on a file root's process holds walked into root's
# image, and races a target's death against its checkpoints. Every attempt is refused with a clear message and the
# targets run on; the kernel logs nothing (the harness scans the log).
#
# Topology: one node, no network. On the 6.12 line only: the engine's
# refusals it meets are the same code on both lines, where the kselftest
# programs (sec_*, cr_access, fuzz_engine) drive them; the CI hour does
# not hold this test a second time, and make check's two lanes are more
# even with it on this line (testing.md, "Time").
# kernels: 6.12
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

dir=$(mktemp -d /tmp/hostile.XXXXXX)
chmod 1777 "$dir"
pids=()

cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null || true; done
	wait 2> /dev/null || true
	[ -n "${old_scope:-}" ] && echo "$old_scope" > /proc/sys/kernel/yama/ptrace_scope
	rm -rf "$dir"
	rmmod ckpt 2> /dev/null || true
}
trap cleanup EXIT

# Runs "$@" as nobody (real, effective and saved ids: setpriv would keep
# the saved uid 0, which makes a process privileged); the second form
# inside a user namespace of its own, where it is root with every
# capability of that namespace.
as_nobody() {
	python3 -c 'import os, sys
os.setgroups([]); os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534); os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}
# The same in the background, with $! the pid of the command itself (a
# function in the background would be a subshell of root's).
nobody_bg() {
	python3 -c 'import os, sys
os.setgroups([]); os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534); os.execvp(sys.argv[1], sys.argv[1:])' "$@" &
}
as_nobody_ns() {
	as_nobody unshare -Ur -- "$@"
}

# "$1" refused: exit non-zero and stderr matching "$2" (shown).
refused() {
	local pattern=$1
	shift
	if "$@" > /dev/null 2> "$dir/err"; then
		echo "# not refused: $*"
		return 1
	fi
	cat "$dir/err" | sed 's/^/# /'
	grep -q -- "$pattern" "$dir/err"
}

# left_out NAME HOLDER FILE WORD: nobody's --tmpfs tree checkpoint of
# HOLDER, into $dir/NAME, names FILE by path but stores no tmpfs file and
# no WORD, and HOLDER runs on.
left_out() {
	as_nobody ckpt checkpoint --tree "$2" --tmpfs -o "$dir/$1" &&
	ckpt inspect -v "$dir/$1/$2.img" > "$dir/$1.txt" &&
	grep -q "$3" "$dir/$1.txt" &&
	! grep -E '^  [0-9]+ tmpfs ' "$dir/$1.txt" && ! grep -rq "$4" "$dir/$1" &&
	kill -0 "$2"
}

alive() {
	kill -0 "$1" 2> /dev/null
}

# tree_ckpt DIR PID...: CKPT_IOC_CHECKPOINT_TREE of the PIDs (the first the
# root), images DIR/tree.N.img, with $TREE_FLAGS (0 by default); the
# engine's message on stderr if refused.
cat > "$dir/tree_ckpt" << 'EOF'
#!/usr/bin/python3
import ctypes, fcntl, os, struct, sys
out, pids = sys.argv[1], [int(p) for p in sys.argv[2:]]
fds = [os.open("%s/tree.%d.img" % (out, i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
       for i in range(len(pids))]
mem = ctypes.create_string_buffer(b"".join(struct.pack("=IiIIQQ", p, f, 0, 0, 0, 0)
                                           for p, f in zip(pids, fds)))
msg = ctypes.create_string_buffer(256)
flags = int(os.environ.get("TREE_FLAGS", "0"))
arg = bytearray(struct.pack("=QIIIIQQQ16s4Q", ctypes.addressof(mem), len(pids), flags, 0,
                            256, ctypes.addressof(msg), 0, 0, bytes(16), 0, 0, 0, 0))
dev = os.open("/dev/ckpt", os.O_RDWR)
try:
    fcntl.ioctl(dev, (3 << 30) | (len(arg) << 16) | (0xC7 << 8) | 0x0A, arg)
except OSError as e:
    sys.stderr.write("%s: %s\n" % (os.strerror(e.errno), msg.value.decode()))
    sys.exit(1)
EOF
chmod 0755 "$dir/tree_ckpt"

# "$1" alive and not frozen: its threads are not parked in the engine.
runs() {
	kill -0 "$1" 2> /dev/null && ! grep -q ckpt "/proc/$1/wchan" 2> /dev/null
}

ktap_plan 19
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"
# Processes that sleep until killed: root's and nobody's.
sleep 1000 > /dev/null 2>&1 &
root_sleeper=$!
nobody_bg sleep 1000 > /dev/null 2>&1
user_sleeper=$!
pids=("$root_sleeper" "$user_sleeper")

ktap_check "nobody cannot checkpoint root's process; it runs on" bash -c "
	$(declare -f refused as_nobody); dir=$dir
	refused 'permission denied\|Operation not permitted' \
		as_nobody ckpt checkpoint $root_sleeper -o $dir/x.img &&
	kill -0 $root_sleeper && [ ! -s $dir/x.img ]"

ktap_check "nor with a user namespace of its own" bash -c "
	$(declare -f refused as_nobody as_nobody_ns); dir=$dir
	refused 'permission denied\|Operation not permitted' \
		as_nobody_ns ckpt checkpoint $root_sleeper -o $dir/y.img &&
	kill -0 $root_sleeper"

# A tree of root's: a shell waiting for its sleeping child.
sh -c 'sleep 1000 & wait' > /dev/null 2>&1 &
root_tree=$!
pids+=("$root_tree")
root_child=
for i in $(seq 300); do
	root_child=$(cat /proc/$root_tree/task/$root_tree/children 2> /dev/null || true)
	[ -n "$root_child" ] && break
	sleep 0.1
done
pids+=($root_child)
ktap_check "nobody cannot checkpoint root's process tree; nothing frozen, no image" bash -c "
	$(declare -f refused as_nobody runs); dir=$dir
	refused 'Operation not permitted' \
		as_nobody $dir/tree_ckpt $dir $root_tree $root_child &&
	runs $root_tree && runs $root_child &&
	[ ! -s $dir/tree.0.img ] && [ ! -s $dir/tree.1.img ]"

# A process of nobody's own is checkpointed fine (ptrace_scope 0).
old_scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2> /dev/null || true)
if [ -n "$old_scope" ]; then
	echo 0 > /proc/sys/kernel/yama/ptrace_scope
	ktap_check "nobody checkpoints its own process (Yama scope 0)" \
		as_nobody ckpt checkpoint "$user_sleeper" -o "$dir/own.img"
	ktap_check "nor a tree of its own with a member of root's: before any freeze" bash -c "
		$(declare -f refused as_nobody runs); dir=$dir
		refused 'Operation not permitted' \
			as_nobody $dir/tree_ckpt $dir $user_sleeper $root_sleeper &&
		runs $user_sleeper && runs $root_sleeper && [ ! -s $dir/tree.0.img ]"
	# The ends of connections to other nodes, and those waiting to be
	# accepted from there, are ckptd's to join: CAP_NET_ADMIN's.
	ktap_check "nor ask for connections' ends alone (PEERS_AWAY, WAITING_AWAY): CAP_NET_ADMIN's" bash -c "
		$(declare -f refused as_nobody runs); dir=$dir
		TREE_FLAGS=132 refused 'CAP_NET_ADMIN' \
			as_nobody $dir/tree_ckpt $dir $user_sleeper &&
		TREE_FLAGS=128 refused 'WAITING_AWAY needs CKPT_CHECKPOINT_PEERS_AWAY' \
			as_nobody $dir/tree_ckpt $dir $user_sleeper &&
		runs $user_sleeper && [ ! -s $dir/tree.0.img ]"
	# A root-only tmpfs file handed to nobody's process write-only: a
	# --tmpfs checkpoint stores only what the process may read.
	printf TOPSECRET > /dev/shm/hostile-secret
	chmod 0600 /dev/shm/hostile-secret
	python3 -c 'import os, sys
fd = os.open("/dev/shm/hostile-secret", os.O_WRONLY); os.set_inheritable(fd, True)
os.setgroups([]); os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534); os.execvp("sleep", ["sleep", "1000"])' > /dev/null 2>&1 &
	secret_holder=$!
	pids+=("$secret_holder")
	ktap_check "nobody's --tmpfs tree checkpoint leaves out a root-only file it holds write-only" bash -c "
		$(declare -f as_nobody left_out); dir=$dir
		# python3 has become nobody's sleep (30 s at most).
		for i in \$(seq 300); do
			[ \"\$(readlink /proc/$secret_holder/exe)\" = /usr/bin/sleep ] &&
			[ \"\$(stat -c %u /proc/$secret_holder)\" = 65534 ] && break
			sleep 0.1
		done
		left_out secret-tree $secret_holder /dev/shm/hostile-secret TOPSECRET"
	rm -f /dev/shm/hostile-secret
	# A file nobody owns and may read, but which its process, sandboxed
	# by Landlock after opening it write-only, may no longer open for
	# reading: a --tmpfs checkpoint leaves it out too (the engine's check
	# is open()'s, LSM hooks included: kmod/ckpt/fds.c, may_read()).
	as_nobody sh -c 'printf LLSECRET > /dev/shm/hostile-ll; chmod 0644 /dev/shm/hostile-ll'
	nobody_bg python3 -c 'import ctypes, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/dev/shm/hostile-ll", os.O_WRONLY)
# landlock_create_ruleset(): reading files handled, no rule allows it.
attr = ctypes.create_string_buffer(struct.pack("=Q", 1 << 2))
rs = libc.syscall(444, attr, 8, 0)
if rs < 0 or libc.prctl(38, 1, 0, 0, 0) or libc.syscall(446, rs, 0):
    sys.exit("landlock: error %d" % ctypes.get_errno())
os.close(rs); open(sys.argv[1], "w").close(); time.sleep(1000)' "$dir/ll-ready" > /dev/null 2>&1
	ll_holder=$!
	pids+=("$ll_holder")
	ktap_check "nor a file its process, sandboxed by Landlock, may not open for reading" bash -c "
		$(declare -f as_nobody left_out); dir=$dir
		for i in \$(seq 300); do
			[ -e $dir/ll-ready ] && break
			sleep 0.1
		done
		left_out ll-tree $ll_holder /dev/shm/hostile-ll LLSECRET"
	rm -f /dev/shm/hostile-ll
	# A listening socket with more connections waiting to be accepted
	# than an image holds (64 a listener: kmod/ckpt/tcp.c): 64 are
	# captured, 65 refused by name, and nothing is frozen or logged.
	for n in 64 65; do
		nobody_bg python3 -c 'import socket, sys, time
n, ready = int(sys.argv[1]), sys.argv[2]
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(128)
c = [socket.create_connection(l.getsockname(), 10) for i in range(n)]
open(ready, "w").close(); time.sleep(1000)' "$n" "$dir/waiting$n" > /dev/null 2>&1
		pids+=("$!")
		eval "waiting$n=$!"
	done
	ktap_check "nobody's listener with 65 connections waiting: refused by name, it runs on; 64 captured" bash -c "
		$(declare -f refused as_nobody runs); dir=$dir
		for i in \$(seq 300); do
			[ -e $dir/waiting64 ] && [ -e $dir/waiting65 ] && break
			sleep 0.1
		done
		as_nobody ckpt checkpoint $waiting64 -o $dir/w64.img &&
		[ \$(ckpt inspect $dir/w64.img | grep -c 'state waiting') = 64 ] &&
		refused 'more connections waiting to be accepted than an image holds' \
			as_nobody ckpt checkpoint $waiting65 -o $dir/w65.img &&
		runs $waiting64 && runs $waiting65 && [ ! -e $dir/w65.img ]"
	echo 1 > /proc/sys/kernel/yama/ptrace_scope
	ktap_check "Yama scope 1: not a process that is not its descendant" bash -c "
		$(declare -f refused as_nobody); dir=$dir
		refused 'permission denied\|Operation not permitted' \
			as_nobody ckpt checkpoint $user_sleeper -o $dir/z.img &&
		kill -0 $user_sleeper"
	echo "$old_scope" > /proc/sys/kernel/yama/ptrace_scope
else
	ktap_skip "nobody checkpoints its own process (no Yama in this kernel)"
	ktap_skip "a tree with a member of root's (no Yama in this kernel)"
	ktap_skip "connections' ends alone (no Yama in this kernel)"
	ktap_skip "a --tmpfs tree checkpoint of a root-only file (no Yama in this kernel)"
	ktap_skip "a listener with 65 connections waiting (no Yama in this kernel)"
	ktap_skip "a file a Landlock sandbox may not read (no Yama in this kernel)"
	ktap_skip "Yama scope 1 (no Yama in this kernel)"
	as_nobody ckpt checkpoint "$user_sleeper" -o "$dir/own.img" || true
fi

ktap_check "nobody cannot restart, not even its own image" bash -c "
	$(declare -f refused as_nobody); dir=$dir
	chmod 0644 $dir/own.img
	refused 'CAP_CHECKPOINT_RESTORE' as_nobody ckpt restart $dir/own.img"

ktap_check "nor with a user namespace of its own" bash -c "
	$(declare -f refused as_nobody as_nobody_ns); dir=$dir
	refused 'CAP_CHECKPOINT_RESTORE' as_nobody_ns ckpt restart $dir/own.img"

# A pipe, not the (world-readable) file: the key reaches the engine.
ktap_check "nobody cannot set the engine's key" bash -c "
	$(declare -f refused as_nobody); dir=$dir
	head -c 32 /dev/urandom > $dir/key
	refused 'Operation not permitted' as_nobody ckpt key - < <(cat $dir/key)"

# The original goes (and is reaped): its pid is free for the restarts.
kill -9 "$user_sleeper" 2> /dev/null || true
wait "$user_sleeper" 2> /dev/null || true

# Nobody's image, edited to claim root: root's restart refuses it. The
# edit makes CREDS root's and fixes the checksums (mkimage -R).
ktap_check "an image edited to claim root is refused when root restarts it" bash -c "
	$(declare -f refused); dir=$dir
	cp $dir/own.img $dir/edited.img
	$CKPT_TOP/build/tests/host/mkimage -R $dir/edited.img &&
	refused 'MAC does not match' ckpt restart $dir/edited.img"

ktap_check "the unedited image restarts, as nobody, with its pid" bash -c "
	ckpt restart $dir/own.img > /dev/null 2>&1 & r=\$!
	# The pid exists before the restart is done (the restarter's child,
	# still ckpt): wait for what it becomes, 30 s at most.
	for i in \$(seq 300); do
		[ \"\$(readlink /proc/$user_sleeper/exe)\" = /usr/bin/sleep ] &&
		[ \"\$(stat -c %u /proc/$user_sleeper)\" = 65534 ] && break
		sleep 0.1
	done
	[ \"\$(readlink /proc/$user_sleeper/exe)\" = /usr/bin/sleep ] &&
	[ \"\$(stat -c %u /proc/$user_sleeper)\" = 65534 ]; ok=\$?
	kill -9 $user_sleeper 2> /dev/null; wait \$r 2> /dev/null; exit \$ok"

# Kill, exit and exec racing checkpoints: each either completes or is
# refused by name; nothing else happens. Bounded: 30 rounds, 60 s.
race() {
	local end=$((SECONDS + 60)) i p k
	for i in $(seq 30); do
		[ $SECONDS -lt $end ] || break
		nobody_bg sleep 1000 > /dev/null 2>&1; p=$!
		( sleep "0.0$((RANDOM % 10))"; kill -9 $p 2> /dev/null ) \
			> /dev/null 2>&1 & k=$!
		as_nobody ckpt checkpoint "$p" -o "$dir/race.img" 2> "$dir/race" ||
			grep -q 'pid' "$dir/race" || { cat "$dir/race"; return 1; }
		kill -9 $p 2> /dev/null || true
		wait $p $k 2> /dev/null || true
	done
}
ktap_check "30 rounds of kill racing a checkpoint: refused by name or done" race

# File locks (engine.md, "File locks"): nobody lays 20000 record locks on
# a file root's process has open and mapped, flock()ed through the
# mapping only; the engine walks that lock list under its spinlock. Root's
# checkpoint is done in bounded time, and its image holds root's own locks
# alone: its record lock on byte 1 and the mapping's flock().
echo data > "$dir/locked"
chmod 0644 "$dir/locked"
# (Through libc: Python's mmap module keeps a dup() of the descriptor.)
python3 -c '
import ctypes, fcntl, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDONLY)
m = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(m, fcntl.LOCK_SH)
if libc.mmap(None, 4096, 1, 1, m, 0) in (None, 2**64 - 1):
    sys.exit(9)
os.close(m)
fcntl.lockf(fd, fcntl.LOCK_SH, 1, 1)
open(sys.argv[2], "w").close()
time.sleep(1000)' "$dir/locked" "$dir/locked.root" > /dev/null 2>&1 &
lock_root=$!
pids+=("$lock_root")
nobody_bg python3 -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(20000):
    fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, 2 * i + 4)
open(sys.argv[2], "w").close()
time.sleep(1000)' "$dir/locked" "$dir/locked.nobody" > /dev/null 2>&1
pids+=("$!")
ktap_poll 120 sh -c "test -e '$dir/locked.root' && test -e '$dir/locked.nobody'" ||
	ktap_note "the lock holders are not ready"
only_own_locks() {
	timeout 120 ckpt checkpoint "$lock_root" -o "$dir/locked.img" &&
	ckpt inspect "$dir/locked.img" > "$dir/locked.txt" &&
	grep -A3 '^file locks' "$dir/locked.txt" &&
	grep -qx 'file locks: 2' "$dir/locked.txt" &&
	grep -qxE '  fd [0-9]+ posix read bytes 1-1' "$dir/locked.txt" &&
	grep -qxE "  mapping [0-9a-f]+ flock read $dir/locked" "$dir/locked.txt" &&
	grep -E "file(,[a-z-]+)*,flock-read(,[a-z-]+)* $dir/locked\$" "$dir/locked.txt" &&
	test "$(grep -c 'flock-' "$dir/locked.txt")" = 1 && runs "$lock_root"
}
ktap_check "root's process on a file nobody laid 20000 locks on: checkpointed, its own locks alone" only_own_locks

ktap_check "the other processes ran through it all" alive "$root_sleeper"
ktap_finish
