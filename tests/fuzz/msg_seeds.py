#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# msg_seeds.py DIR: seeds for msg_fuzz (tests/fuzz/run -f msg): one frame
# of each op of ckptd's protocol, a stream of two, two nodes' TCP ends to
# join, the headers of a share's files shipped between nodes, a share's
# entry and its sums sent after a continue's release, the
# addresses and map of a restart, and a snapshot's metadata,
# bare and framed (Documentation/ckptd.md).
import json
import struct
import sys

d = sys.argv[1]


def frame(o):
    t = json.dumps(o).encode()
    return struct.pack("<I", len(t)) + t


ops = [{"op": "run", "pid": 12, "cmd": ["sh", "-c", "x"], "cwd": "/", "name": "n",
        "interval": 60, "keep": 3},
       {"op": "run", "ns": True, "cmd": ["sh", "-c", "x"], "env": ["A=b", "PATH=/bin"],
        "cwd": "/home/u", "tty": True, "name": "n"},
       {"op": "ls"}, {"op": "status", "job": "0123abcd"},
       {"op": "checkpoint", "job": "0123abcd", "mode": "kill", "timeout": 5},
       {"op": "checkpoint", "job": "0123abcd", "detach": True},
       {"op": "restart", "dir": "/var/lib/ckpt/0123abcd/1"},
       {"op": "restart", "dir": "/var/lib/ckpt/0123abcd/1", "tty": True},
       {"op": "signal", "sig": 2}, {"op": "cancel", "job": "0123abcd"},
       {"op": "join", "job": "0123abcd", "coordinator": "node0"},
       {"op": "peer-checkpoint", "job": "0123abcd", "seq": 2, "dir": "/x", "timeout": 0,
        "token": "00112233445566778899aabbccddeeff"},
       {"op": "peer-ask", "job": "0123abcd", "uid": 1000, "node": "node1", "mode": "continue",
        "timeout": 60},
       {"op": "inspect", "dir": "/var/lib/ckpt/0123abcd/1"},
       {"op": "node", "node": "node1"}, {"op": "peer-ping"},
       {"op": "peer-copy", "job": "0123abcd", "seq": 3, "keep": 2,
        "names": ["meta.json", "meta.mac", "node0", "node1"]},
       {"op": "peer-copy", "job": "0123abcd", "seq": 3, "keep": 0,
        "names": ["meta.json", "meta.mac", "node0"], "dir": "/home/u/ckpt"},
       {"ship": "dir", "path": "node1"}, {"ship": "file", "path": "node1/0/12.img", "bytes": 4096},
       {"ship": "end", "files": 2, "bytes": 4096}, {"ship": "error", "error": "disk full"}]
for i, o in enumerate(ops):
    open(f"{d}/op{i}", "wb").write(frame(o))
ends = {"shares": [
    {"node": "n0", "tcp": [[7, 5, "192.0.2.10:4000", "192.0.2.11:5000", 100, 300, 900, False]]},
    {"node": "n1", "tcp": [[8, 6, "192.0.2.11:5000", "192.0.2.10:4000", 880, 880, 200, True]]}]}
open(f"{d}/tcp-ends", "wb").write(frame(ends))
# A connection waiting to be accepted on n1, from n0's end.
waits = {"shares": [
    {"node": "n0", "tcp": [[7, 5, "192.0.2.10:4000", "192.0.2.11:5000", 100, 300, 880, False]]},
    {"node": "n1", "tcp": ["0.0.0.0:5000",
                           [8, 6, "192.0.2.11:5000", "192.0.2.10:4000", 880, 880, 200, False, "6869"]]}]}
open(f"{d}/tcp-waiting", "wb").write(frame(waits))
a0 = ["192.0.2.10/24", "2001:db8::10/64"]
a1 = ["192.0.2.11/24", "2001:db8::11/64"]
open(f"{d}/addrs", "wb").write(frame({"old": [a0, a1], "now": [a1, a0], "addrmap": [
    ["192.0.2.10", "192.0.2.11"], ["2001:db8::11", "2001:db8::10"]]}))
open(f"{d}/two", "wb").write(frame(ops[1]) + frame(ops[2]))
member = {"pid": 1, "image": "1.img", "bytes": 4096, "sha256": "ab" * 32}
meta = {"format": "ckpt-snapshot", "version": 1, "job": "0123abcd",
        "name": "n", "uid": 1000, "gid": 1000, "seq": 3, "time": 1700000000,
        "cmd": ["a", "b"], "cwd": "/home/u",
        "nodes": [{"node": "n0", "kernel": "6.1.0", "addrs": a0,
                   "reconnect": [[1, 5, 200, "6869"]], "awaited": [[2, 6]], "trees": [
            {"dir": "n0/0", "id": "00112233445566778899aabbccddeeff",
             "members": [member, dict(member, pid=2, image="2.img")]}]}]}
open(f"{d}/meta.json", "wb").write(json.dumps(meta).encode())
open(f"{d}/meta-frame", "wb").write(frame(meta))
# A continue's share: its entry, then its images' sums after the release.
entry = {"node": "n1", "trees": [{"dir": "n1/0", "members": [
    {"pid": 1, "image": "1.img", "bytes": 4096}, {"pid": 2, "image": "2.img", "bytes": 8}]}]}
open(f"{d}/sums", "wb").write(frame({"ok": True, "node": entry, "sums": ["ab" * 32, "cd" * 32]}))
