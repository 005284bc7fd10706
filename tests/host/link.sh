#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ckpt-ssh's link (Documentation/ckptd.md, "The job's own link"), without
# VMs or ckptd: an "ssh" of the test's own takes ckpt-ssh's place for
# ssh, sshd and ckpt-join. It reads the token from its standard input and
# speaks the link's frames back over TCP; before that, a connection with
# a wrong token, as any local user could make, is closed unanswered.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CKPT_JOBID=0123abcd PATH=$tmp:$PATH

# ssh -o ControlMaster=no [-x] HOST ...ckpt-join --coordinator N --link N:PORT JOB -- sh -c CMD:
# $FAKE says what the remote side does.
cat > "$tmp/ssh" <<'PY'
#!/usr/bin/env python3
import os, socket, struct, sys
a = sys.argv
node, port = a[a.index("--link") + 1].rsplit(":", 1)
cmd = a[a.index("--") + 1:]
open(os.environ["LOG"], "w").write(repr(cmd))
open(os.environ["LOG"] + ".opts", "w").write(repr(a[1:4]))
def frame(t, b):
    return struct.pack("<B3xI", t, len(b)) + b
mode = os.environ["FAKE"]
if mode == "fail":
    sys.stderr.write("ssh: connect to host nowhere: refused\n")
    sys.exit(255)
# A stranger first, with the wrong token: ckpt-ssh closes it.
s = socket.create_connection((node, int(port)), 10)
s.sendall(b"0" * 32)
s.settimeout(10)
stranger = s.recv(1)
open(os.environ["LOG"] + ".stranger", "w").write(repr(stranger))
token = sys.stdin.readline().strip().encode()
s = socket.create_connection((node, int(port)), 10)
s.sendall(token)
if os.fork():
    os._exit(0)        # as ckpt-join: ssh's session ends, the relay goes on
if mode == "ok":
    s.sendall(frame(1, b"out line\n") + frame(2, b"err line\n"))
    s.sendall(frame(4, struct.pack("<I", 3 << 8)))   # exited 3
elif mode == "bad":
    s.sendall(frame(9, b"x"))
s.shutdown(socket.SHUT_WR)     # as the relay: an orderly end
while s.recv(65536):
    pass
s.close()
PY
chmod +x "$tmp/ssh"
ckpt=$CKPT_TOP/build/bin/ckpt-ssh

ktap_plan 6
rc=0
LOG=$tmp/log FAKE=ok timeout 60 "$ckpt" -x node9 "echo 'it''s'" '>' /dev/null \
	> "$tmp/out" 2> "$tmp/err" < /dev/null || rc=$?
ktap_check "the remote command's output, error and exit status come over the link" sh -c \
	"cat '$tmp/out' '$tmp/err'; test $rc = 3 && grep -qx 'out line' '$tmp/out' && grep -qx 'err line' '$tmp/err'"
ktap_check "a connection with another token is closed unanswered" \
	grep -qx "b''" "$tmp/log.stranger"
# A connection shared by the caller's ssh config may be used, never made
# (its master would stay in the job): ckpt-ssh's option first, as ssh
# keeps an option's first value, then the caller's.
ktap_check "ssh gets ControlMaster=no before the caller's options" sh -c \
	"cat '$tmp/log.opts'; grep -qxF \"['-o', 'ControlMaster=no', '-x']\" '$tmp/log.opts'"
# ssh hands its words to a shell: sh -c and the command, one quoted word.
cat > "$tmp/check.py" <<'PY'
import sys
got = open(sys.argv[1]).read()
want = repr(['sh', '-c', "'echo '\\''it'\\'''\\''s'\\'' > /dev/null'"])
print(got)
sys.exit(got != want)
PY
ktap_check "the command reaches the remote side as one quoted word for sh -c" \
	python3 "$tmp/check.py" "$tmp/log"
rc=0
LOG=$tmp/log FAKE=bad timeout 60 "$ckpt" node9 true > /dev/null 2> "$tmp/err" < /dev/null || rc=$?
ktap_check "a frame of no known type ends the link: exit 255, said" sh -c \
	"cat '$tmp/err'; test $rc = 255 && grep -q 'link to the remote command ended' '$tmp/err'"
rc=0
LOG=$tmp/log FAKE=fail timeout 60 "$ckpt" node9 true > /dev/null 2> "$tmp/err" < /dev/null || rc=$?
ktap_check "ssh failing before any link: its status and its message" sh -c \
	"cat '$tmp/err'; test $rc = 255 && grep -q 'connect to host nowhere' '$tmp/err'"
ktap_finish
