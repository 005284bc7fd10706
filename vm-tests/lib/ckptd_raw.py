#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One raw frame to a ckptd socket, as a client or a hostile user sends it.

ckptd_raw.py SOCKET TEXT [LEN]: a 4-byte length (LEN, or TEXT's own), then
TEXT; prints the reply's JSON. Every wait is bounded (20 s). With
CKPTD_RAW_FDS=1 in the environment the frame carries descriptors 0, 1
and 2 (SCM_RIGHTS), as a restart's does.
"""
import os
import socket
import struct
import sys


def main():
    path, text = sys.argv[1], sys.argv[2].encode()
    n = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else len(text)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(path)
    frame = struct.pack("<I", n) + text
    if os.environ.get("CKPTD_RAW_FDS") == "1":
        sent = socket.send_fds(s, [frame], [0, 1, 2])
        frame = frame[sent:]
    s.sendall(frame)
    hdr = b""
    while len(hdr) < 4:
        got = s.recv(4 - len(hdr))
        if not got:
            sys.exit("ckptd_raw: the daemon closed without a reply")
        hdr += got
    n = struct.unpack("<I", hdr)[0]
    body = b""
    while len(body) < n:
        got = s.recv(n - len(body))
        if not got:
            sys.exit("ckptd_raw: the reply was cut short")
        body += got
    print(body.decode())


main()
