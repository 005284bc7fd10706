#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# A process outside a job and the job's client of it, for the tests of
# connections to outside the job (ckptd_outside.sh, ckptd_nodes.sh).
#
# outside.py server ADDR: listens on ADDR (any port), prints the port,
# reads what each connection sends and never closes one, not even one
# whose client has closed its end: a client's write fails after a restart
# only because its connection came back closed, not because this end is
# gone.
#
# outside.py client HOST PORT [OUT [WAIT]]: one process (no child comes
# and goes while it is captured) that connects, says "connected", writes
# a byte every 0.2 s, and says "closed" when a write fails. Its words go
# to stdout, or to file OUT, opened for each (no descriptor of it to
# restore: a job's share on another node gets /dev/null as its standard
# files at a restart). With WAIT, once closed it waits up to 60 s for file
# WAIT to say "closed" too, and ends 1 if it does not; else it ends 0.
import socket
import sys
import threading
import time


def server(addr):
    s = socket.socket()
    s.bind((addr, 0))
    s.listen(8)
    print(s.getsockname()[1], flush=True)
    keep = []

    def drain(c):
        while c.recv(4096):
            pass

    while True:
        c, _ = s.accept()
        keep.append(c)
        threading.Thread(target=drain, args=(c,), daemon=True).start()


def client(host, port, out=None, wait=None):
    def say(word):
        if out is None:
            print(word, flush=True)
            return
        with open(out, "a") as f:
            f.write(word + "\n")

    c = socket.create_connection((host, int(port)))
    say("connected")
    while True:
        time.sleep(0.2)
        try:
            c.sendall(b"x")
        except OSError as e:
            print(e, file=sys.stderr)
            break
    say("closed")
    for _ in range(300 if wait else 0):
        if "closed\n" in open(wait).read():
            return 0
        time.sleep(0.2)
    return 1 if wait else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["server"] and len(sys.argv) == 3:
        server(sys.argv[2])
    elif sys.argv[1:2] == ["client"] and 4 <= len(sys.argv) <= 6:
        sys.exit(client(*sys.argv[2:]))
    else:
        sys.exit("usage: outside.py server ADDR | client HOST PORT [OUT [WAIT]]")
