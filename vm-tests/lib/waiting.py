#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# A connection that waits to be accepted across a checkpoint, for
# ckptd_nodes.sh (Documentation/ckptd.md, "TCP between nodes").
#
# waiting.py server PORTFILE GOFILE OUT [LOCALOUT]: listens on every
# address (any port), writes the port to PORTFILE, and accepts nothing
# until file GOFILE exists (300 s at most, exit 2). With LOCALOUT, a child
# of its own is a client too (below, to 127.0.0.1, its words to
# LOCALOUT): two connections then. For each it accepts, it reads its N
# bytes, says "server got COUNT ok" (or WRONG) to OUT and answers "ack
# COUNT"; it ends, 0 if every byte was right and its child ended 0.
#
# waiting.py client PORTFILE HOST OUT: once PORTFILE names the port (60 s
# at most), connects to HOST there, sends the N bytes, says "sent", and
# waits for the answer: "client heard ANSWER", 0 if it is "ack N".
#
# Each word goes to file OUT, opened for each (no descriptor of it to
# restore: a share on another node gets /dev/null as its standard files
# at a restart).
import os
import socket
import sys
import time

N = 1000


def pattern(n):
    return bytes((i * 131 + 7) & 0xff for i in range(n))


def say(out, word):
    with open(out, "a") as f:
        f.write(word + "\n")


def server(portfile, gofile, out, localout=None):
    s = socket.socket()
    s.bind(("0.0.0.0", 0))
    s.listen(8)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(s.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    child = os.fork() if localout else None
    if child == 0:
        s.close()
        client(portfile, "127.0.0.1", localout)
    for _ in range(1500):
        if os.path.exists(gofile):
            break
        time.sleep(0.2)
    else:
        say(out, "server: no go")
        sys.exit(2)
    ok = True
    for _ in range(2 if child else 1):
        c, _ = s.accept()
        got = b""
        while len(got) < N:
            b = c.recv(N - len(got))
            if not b:
                break
            got += b
        ok = ok and got == pattern(N)
        say(out, "server got %d %s" % (len(got), "ok" if got == pattern(N) else "WRONG"))
        c.sendall(b"ack %d" % len(got))
        c.close()
    if child:
        ok = os.waitpid(child, 0)[1] == 0 and ok
    sys.exit(0 if ok else 1)


def client(portfile, host, out):
    for _ in range(300):
        if os.path.exists(portfile):
            break
        time.sleep(0.2)
    port = int(open(portfile).read())
    c = socket.create_connection((host, port), timeout=60)
    c.settimeout(None)
    c.sendall(pattern(N))
    say(out, "sent")
    reply = c.recv(64)
    say(out, "client heard " + reply.decode(errors="replace"))
    sys.exit(0 if reply == b"ack %d" % N else 1)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(*sys.argv[2:6])
    else:
        client(*sys.argv[2:5])
