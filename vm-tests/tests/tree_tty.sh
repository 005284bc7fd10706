#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A tree in a terminal's foreground, as a user runs a job from a shell:
# a program in a pseudo-terminal, in a process group of its own that is
# the terminal's foreground (as a job-control shell makes a job), with a
# child. Checkpointed (--kill) from outside, then restarted with `ckpt
# restart` in the foreground of another terminal: the restarted root's
# group is that terminal's foreground, so a Ctrl-C typed there reaches the
# tree (not the restarter), and the terminal is the restarter's again when
# the tree ends. Then the same with the foreground a job that the tree's
# root runs, as a shell in the tree would: the child's group has the
# terminal again after the restart, and the root reaps it.
#
# Topology: one node, no network.
#
# The CLI on trees: on the 6.1 line only, for CI's hour; the engine's
# side of trees (cr_tree) runs on both lines.
# kernels: 6.1
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

tmp=$(mktemp -d)

cleanup() {
	pkill -KILL -f "$tmp/job.py" 2> /dev/null || true
	wait 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# The job: leads its group, takes the terminal's foreground, forks a
# child; on SIGINT it says whether it is still the foreground, reaps the
# child and exits 7. READY once both run. "job.py READY shell": the root
# leads a group of its own in the background, as a shell does, and its
# child takes the foreground in a group it leads; on SIGINT the child
# says whether it is the foreground and exits 7, and the root exits with
# what it reaps.
cat > "$tmp/job.py" <<'EOF'
import os, signal, sys, time
ready = sys.argv[1]
shell = sys.argv[2:] == ["shell"]
def take_terminal():
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.tcsetpgrp(0, os.getpgrp())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
def interrupted(sig, frame):
    fg = os.tcgetpgrp(0) == os.getpgrp()
    if not shell:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    print("SIGINT in the foreground" if fg else "SIGINT, not in the foreground", flush=True)
    os._exit(7)
os.setpgid(0, 0)
if not shell:
    take_terminal()
child = os.fork()
if child == 0:
    if shell:
        os.setpgid(0, 0)
        take_terminal()
        signal.signal(signal.SIGINT, interrupted)
        open(ready, "w").close()
    else:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        time.sleep(0.1)
if shell:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _, st = os.waitpid(child, 0)
    os._exit(os.waitstatus_to_exitcode(st))
signal.signal(signal.SIGINT, interrupted)
open(ready, "w").close()
while True:
    time.sleep(0.1)
EOF

# term.py MODE ...: runs a command in a new pseudo-terminal, its output to
# stdout. "job READY [shell]": sh -c 'job.py READY [shell]; true' (sh
# leads the session, the job does not). "restart DIR": ckpt restart DIR leads the session;
# Ctrl-C is typed once the tree is restarted; then, after the restarter
# has ended, whether the terminal's foreground is the session's again.
cat > "$tmp/term.py" <<'EOF'
import os, pty, select, sys, time
mode, arg = sys.argv[1:3]
extra = " ".join(sys.argv[3:])
job = os.path.join(os.path.dirname(sys.argv[0]), "job.py")
pid, fd = pty.fork()
if pid == 0:
    if mode == "job":
        os.execvp("sh", ["sh", "-c", f"python3 {job} {arg} {extra}; true"])
    os.execvp("ckpt", ["ckpt", "restart", arg])
out = b""
def drain(secs):
    global out
    end = time.time() + secs
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                b = os.read(fd, 4096)
            except OSError:
                return False
            if not b:
                return False
            out += b
    return True
if mode == "job":
    # Stay until killed: the job's terminal must not go away.
    while drain(1):
        pass
    sys.exit(0)
# The restart, until the terminal's foreground is no longer the
# restarter's (60 s at most): then Ctrl-C, as typed.
def fg():
    try:
        return os.tcgetpgrp(fd)
    except OSError:
        return 0
end = time.time() + 60
while time.time() < end and fg() != pid:	# the child has the terminal
    drain(0.1)
while time.time() < end and fg() == pid:
    drain(0.2)
drain(0.5)
os.write(fd, b"\x03")
_, st = os.waitpid(pid, 0)
drain(0.5)
sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
print("restarter exit", os.waitstatus_to_exitcode(st))
EOF

# job_root READY: the job's root, once READY is there: the oldest job.py.
job_root() {
	ktap_poll 60 test -e "$1" > /dev/null
	pgrep -o -f "^python3 $tmp/job.py"
}

# restarted DIR: ckpt restart DIR in a new terminal's foreground; Ctrl-C
# typed there must reach the tree's foreground, and the restarter exit 7.
restarted() {
	timeout 120 python3 "$tmp/term.py" restart "$1" > "$1.out"
	cat "$1.out"
	grep -q 'SIGINT in the foreground$' "$1.out" &&
		grep -qx 'restarter exit 7' "$1.out"
}

ktap_plan 6
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"

python3 "$tmp/term.py" job "$tmp/ready" > /dev/null 2>&1 &
holder=$!
job=$(job_root "$tmp/ready")
ktap_check "a job in its terminal's foreground: --kill, the root's image says so" sh -c "
	ckpt checkpoint --tree $job --kill -o '$tmp/t' > '$tmp/t.txt' && cat '$tmp/t.txt' &&
	grep -q 'tree of pid $job: 2 processes' '$tmp/t.txt' &&
	ckpt inspect '$tmp/t/$job.img' | grep '^tree: ' | grep -q ', terminal foreground'"
kill "$holder" 2> /dev/null || true
wait "$holder" 2> /dev/null || true

ktap_check "restarted in another terminal's foreground: Ctrl-C reaches the tree, which is the foreground; the restarter exits with its status" \
	restarted "$tmp/t"

python3 "$tmp/term.py" job "$tmp/ready2" shell > /dev/null 2>&1 &
holder=$!
job=$(job_root "$tmp/ready2")
child=$(pgrep -P "$job" || true)
ktap_check "a shell's job in the foreground, the shell in the background: --kill, the job's image says so, the shell's does not" sh -c "
	ckpt checkpoint --tree $job --kill -o '$tmp/s' > '$tmp/s.txt' && cat '$tmp/s.txt' &&
	ckpt inspect '$tmp/s/$child.img' | grep '^tree: ' | grep -q ', terminal foreground' &&
	! ckpt inspect '$tmp/s/$job.img' | grep '^tree: ' | grep -q ', terminal foreground'"
kill "$holder" 2> /dev/null || true
wait "$holder" 2> /dev/null || true

ktap_check "restarted: Ctrl-C reaches the job in the foreground; the shell reaps it and the restarter exits with its status" \
	restarted "$tmp/s"
ktap_check "nothing of the jobs is left" sh -c "! pgrep -f '^python3 $tmp/job.py'"
ktap_finish
