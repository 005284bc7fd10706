#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ckpt-ssh's link (Documentation/ckptd.md, "The job's own link") and a
# job's plain ssh ("Plain ssh"), without VMs or ckptd: an "ssh" of the
# test's own takes ckpt-ssh's place for ssh, sshd and ckpt-join (and for
# the system's ssh, behind the job's shim), a ckptd of its own answers the
# shim's question. The fake ssh reads the token from its standard input
# and speaks the link's frames back over TCP; before that, a connection
# with a wrong token, as any local user could make, is closed unanswered.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
tmp=$(mktemp -d)
fakeckptd=
trap '[ -z "$fakeckptd" ] || kill $fakeckptd 2> /dev/null; rm -rf "$tmp"' EXIT
export CKPT_JOBID=0123abcd PATH=$tmp:$PATH

# ssh -o ControlMaster=no [-x] HOST ...ckpt-join --coordinator N --link N:PORT JOB -- sh -c CMD:
# $FAKE says what the remote side does.
cat > "$tmp/ssh" <<'PY'
#!/usr/bin/env python3
import os, socket, struct, sys
a = sys.argv
if "--link" not in a:
    # Run as the system's ssh by a job's plain ssh: what it was given.
    open(os.environ["LOG"] + ".plain", "w").write(repr(a[1:]))
    sys.exit(7)
open(os.environ["LOG"] + ".argv", "w").write(repr(a[1:]))
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

ktap_plan 16
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

# A job's plain ssh (ckpt-run puts the shim's directory first on PATH),
# with a ckptd of the test's own that calls node9 one of the cluster's
# nodes and no other host.
cat > "$tmp/ckptd.py" <<'PY'
import json, os, socket, struct, sys
l = socket.socket(socket.AF_UNIX)
l.bind(sys.argv[1])
l.listen(8)
while True:
    c, _ = l.accept()
    n = struct.unpack("<I", c.recv(4, socket.MSG_WAITALL))[0]
    req = json.loads(c.recv(n, socket.MSG_WAITALL))
    with open(sys.argv[2], "a") as f:
        f.write(json.dumps(req) + "\n")
    res = {"ok": True, "cluster": req.get("node") == "node9"}
    b = json.dumps(res).encode()
    c.sendall(struct.pack("<I", len(b)) + b)
    c.close()
PY
python3 "$tmp/ckptd.py" "$tmp/ckptd.sock" "$tmp/asked" &
fakeckptd=$!
ktap_poll 10 test -S "$tmp/ckptd.sock" || true
shim=$CKPT_TOP/build/lib/ckpt/ssh
plain() {
	rm -f "$tmp/log.plain" "$tmp/log.argv" "$tmp/asked"
	rc=0
	LOG=$tmp/log FAKE=ok CKPTD_SOCKET=${SOCK-$tmp/ckptd.sock} PATH=$shim:$PATH \
		timeout 60 ssh "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null || rc=$?
}
me=$(id -un)
plain -nxl "$me" "$me@node9" -p 22 "echo hi"
ktap_check "plain ssh with a command, in a job, to a cluster's node: ckpt-ssh, the options before the host, -n its own" sh -c "
	cat '$tmp/out' '$tmp/err' '$tmp/asked' '$tmp/log.argv'; test $rc = 3 && grep -qx 'out line' '$tmp/out' &&
	test ! -e '$tmp/log.plain' && grep -qxF '{\"op\": \"node\", \"node\": \"node9\"}' '$tmp/asked' &&
	python3 -c 'import sys; a = eval(open(sys.argv[1]).read())
assert a[:8] == [\"-o\", \"ControlMaster=no\", \"-x\", \"-l\", \"$me\", \"-p\", \"22\", \"$me@node9\"], a' '$tmp/log.argv'"
plain -x other9 cmd arg
ktap_check "plain ssh to a host that is not the cluster's: the system's ssh, untouched" sh -c "
	cat '$tmp/log.plain' '$tmp/asked'; test $rc = 7 && grep -qxF \"['-x', 'other9', 'cmd', 'arg']\" '$tmp/log.plain'"
plain -V
ktap_check "plain ssh -V: the system's ssh, nothing asked" sh -c "
	cat '$tmp/log.plain'; test $rc = 7 && grep -qxF \"['-V']\" '$tmp/log.plain' && test ! -e '$tmp/asked'"
plain -N -oExitOnForwardFailure=yes -L 1:a:2 node9 cmd
ktap_check "plain ssh -N -L with a command: the system's ssh, untouched" sh -c "
	cat '$tmp/log.plain'; test $rc = 7 &&
	grep -qxF \"['-N', '-oExitOnForwardFailure=yes', '-L', '1:a:2', 'node9', 'cmd']\" '$tmp/log.plain'"
plain node9 -t top
ktap_check "plain ssh -t (a terminal, even after the host): the system's ssh" sh -c "
	cat '$tmp/log.plain'; test $rc = 7 && grep -qxF \"['node9', '-t', 'top']\" '$tmp/log.plain'"
CKPT_JOBID='' plain node9 cmd
ktap_check "plain ssh outside a job: the system's ssh, untouched" sh -c "
	cat '$tmp/log.plain'; test $rc = 7 && grep -qxF \"['node9', 'cmd']\" '$tmp/log.plain'"
SOCK=$tmp/none plain node9 cmd
ktap_check "plain ssh with no ckptd to ask: the system's ssh, untouched" sh -c "
	cat '$tmp/log.plain'; test $rc = 7 && grep -qxF \"['node9', 'cmd']\" '$tmp/log.plain'"
# What ssh would not take as a command for the job: a destination that
# looks like an option, a command of empty words (a login), a -o that
# asks for a terminal or forwarding, another remote user.
others() {
	local ok=0
	plain -- -x@node9 echo hi; [ $rc = 7 ] || { echo "-- -x@node9: $rc"; ok=1; }
	plain node9 ''; [ $rc = 7 ] || { echo "empty command: $rc"; ok=1; }
	plain -o RequestTTY=force node9 top; [ $rc = 7 ] || { echo "RequestTTY: $rc"; ok=1; }
	plain -oLocalForward=1:a:2 node9 cmd; [ $rc = 7 ] || { echo "LocalForward: $rc"; ok=1; }
	plain -o StdinNull=yes node9 cmd; [ $rc = 7 ] || { echo "StdinNull: $rc"; ok=1; }
	plain not-$(id -un)@node9 cmd; [ $rc = 7 ] || { echo "user@: $rc"; ok=1; }
	plain -l not-$(id -un) node9 cmd; [ $rc = 7 ] || { echo "-l: $rc"; ok=1; }
	plain -o User=not-$(id -un) node9 cmd; [ $rc = 7 ] || { echo "-o User: $rc"; ok=1; }
	return $ok
}
ktap_check "plain ssh -- -x@host, an empty command, -o RequestTTY, LocalForward or StdinNull, another user: the system's ssh" others
plain -2 -l "$(id -un)" node9 "echo hi"
ktap_check "plain ssh -2 -l (the caller): a command's carrier still, ckpt-ssh" sh -c "
	cat '$tmp/out' '$tmp/err'; test $rc = 3 && grep -qx 'out line' '$tmp/out'"
# Another installation's shim further on PATH would call this one back.
mkdir -p "$tmp/inst2/bin" "$tmp/inst2/lib/ckpt/ssh"
cp "$CKPT_TOP/build/bin/ckpt" "$tmp/inst2/bin/ckpt"
ln -s ../../../bin/ckpt "$tmp/inst2/lib/ckpt/ssh/ssh"
rm -f "$tmp/log.plain"
rc=0
LOG=$tmp/log CKPT_JOBID='' PATH=$shim:$tmp/inst2/lib/ckpt/ssh:$PATH \
	timeout 20 ssh node9 cmd > /dev/null 2>&1 < /dev/null || rc=$?
ktap_check "another installation's shim on PATH is passed over: the system's ssh" sh -c "
	test $rc = 7 && grep -qxF \"['node9', 'cmd']\" '$tmp/log.plain'"
ktap_finish
