#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ckpt inspect on images made by mkimage: valid ones are described (text,
# JSON, from a file and from stdin), and every kind of damage is refused
# with exit status 1 (never a crash) and a message naming the problem, the
# section and its offset. Images are damaged by a small python3 helper that
# can also make the checksums (XXH64, computed in Python) right again, so that the checks behind them
# are reached.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
ckpt=$CKPT_TOP/build/bin/ckpt
mkimage=$CKPT_TOP/build/tests/host/mkimage
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# img.py COMMAND IMAGE [ARGS]: list, check or damage an image (to stdout);
# img.py serve: the same commands, one a line (img_py below).
cat > "$tmp/img.py" <<'EOF'
import struct, sys
names = {1: "HEADER", 2: "PROCESS", 3: "THREAD", 4: "VMAS", 5: "PAGES", 6: "END",
         7: "FILES", 8: "FS", 9: "SIGNALS", 10: "EPOLL", 11: "PIPE", 12: "TIMERFD", 13: "FILEOBJ", 14: "FILEDATA", 15: "VDSO",
         16: "TIMERS", 17: "CREDS", 18: "MAC", 19: "TREE", 20: "USOCK", 21: "ULISTEN", 22: "UPEND",
         23: "SYSVSHM", 24: "SYSVDATA", 25: "SYSVSEM", 26: "SYSVMSG", 27: "ZOMBIE", 28: "TCP", 29: "PTY",
         30: "UNAME", 31: "SEMUNDO", 32: "SCHED", 33: "LOCKS", 34: "INOTIFY"}

M = 2**64 - 1	# XXH64 as its specification reads, independently of the C code
P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
P4, P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M
def rnd(acc, v):
    return rotl((acc + v * P2) & M, 31) * P1 & M
def xxh64(data):
    n, i = len(data), 0
    if n >= 32:
        v = [(P1 + P2) & M, P2, 0, (-P1) & M]
        while n - i >= 32:
            for k in range(4):
                v[k] = rnd(v[k], int.from_bytes(data[i + 8 * k:i + 8 * k + 8], "little"))
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M
        for x in v:
            h = ((h ^ rnd(0, x)) * P1 + P4) & M
    else:
        h = P5
    h = (h + n) & M
    while n - i >= 8:
        h = (rotl(h ^ rnd(0, int.from_bytes(data[i:i + 8], "little")), 27) * P1 + P4) & M
        i += 8
    if n - i >= 4:
        h = (rotl(h ^ (int.from_bytes(data[i:i + 4], "little") * P1 & M), 23) * P2 + P3) & M
        i += 4
    while i < n:
        h = rotl(h ^ (data[i] * P5 & M), 11) * P1 & M
        i += 1
    h ^= h >> 33; h = h * P2 & M; h ^= h >> 29; h = h * P3 & M; h ^= h >> 32
    return h
def csum(data):	# the image's checksum
    return xxh64(bytes(data)) & 0xffffffff

def sections():
    off, out = 0, []
    while off + 24 <= len(img):
        typ, flags, ln, crc, hcrc = struct.unpack_from("<IIQII", img, off)
        out.append((off, typ, ln))
        off += 24 + ln + (-ln & 7)
    return out

def fix_header(off, crc=None):
    typ, flags, ln, old, _ = struct.unpack_from("<IIQII", img, off)
    if crc is None:
        crc = old
    struct.pack_into("<IIQII", img, off, typ, flags, ln, crc, 0)
    struct.pack_into("<I", img, off + 20, csum(img[off:off + 24]))

def main(argv, out):	# the command's output to binary file out; its exit status
    global img
    cmd, img = argv[0], bytearray(open(argv[1], "rb").read())
    args = argv[2:]
    if cmd == "list":	# index type offset length
        for i, (off, typ, ln) in enumerate(sections()):
            out.write(b"%d %s %d %d\n" % (i, names.get(typ, "?").encode(), off, ln))
        return 0
    if cmd == "check":	# every checksum as Python computes it
        for off, typ, ln in sections():
            h = bytearray(img[off:off + 24])
            crc, hcrc = struct.unpack_from("<II", h, 16)
            h[20:24] = b"\0\0\0\0"
            assert csum(h) == hcrc, "header crc at %d" % off
            assert csum(img[off + 24:off + 24 + ln]) == crc, "crc at %d" % off
        return 0
    if cmd == "flip":	# OFFSET: one byte inverted
        img[int(args[0])] ^= 0xff
    elif cmd == "drop":	# SECTION: left out, nothing else changed
        off, typ, ln = sections()[int(args[0])]
        del img[off:off + 24 + ln + (-ln & 7)]
    elif cmd == "cut":	# LENGTH
        del img[int(args[0]):]
    elif cmd == "append":	# COUNT: bytes of 0x5a after the end
        img += b"\x5a" * int(args[0])
    elif cmd == "len":	# SECTION DELTA: its length changed, header crc made right
        off = sections()[int(args[0])][0]
        ln = struct.unpack_from("<Q", img, off + 8)[0]
        struct.pack_into("<Q", img, off + 8, (ln + int(args[1], 0)) % 2**64)
        fix_header(off)
    elif cmd == "set":	# SECTION OFFSET FORMAT VALUE: payload field, crcs made right
        off, typ, ln = sections()[int(args[0])]
        struct.pack_into("<" + args[2], img, off + 24 + int(args[1]), int(args[3], 0))
        fix_header(off, csum(img[off + 24:off + 24 + ln]))
    elif cmd == "bytes":	# SECTION OFFSET HEX: payload bytes, crcs made right
        off, typ, ln = sections()[int(args[0])]
        data = bytes.fromhex(args[2])
        p = off + 24 + int(args[1])
        img[p:p + len(data)] = data
        fix_header(off, csum(img[off + 24:off + 24 + ln]))
    elif cmd == "shorten":	# SECTION BYTES: payload shortened, the rest now padding
        off, typ, ln = sections()[int(args[0])]
        ln -= int(args[1])
        struct.pack_into("<Q", img, off + 8, ln)
        fix_header(off, csum(img[off + 24:off + 24 + ln]))
    out.write(img)
    return 0

# serve: one command a line on stdin, its fields split by \x1f, the first
# the output file; answers its exit status a line. One interpreter for the
# whole test: starting python3 costs about 0.4 s here, and the test damages
# a hundred images.
if sys.argv[1] != "serve":
    sys.exit(main(sys.argv[1:], sys.stdout.buffer))
for line in sys.stdin:
    f = line.rstrip("\n").split("\x1f")
    with open(f[0], "wb") as out:
        try:
            rc = main(f[1:], out)
        except Exception as e:
            print("img.py %s: %r" % (" ".join(f[1:]), e), file=sys.stderr)
            rc = 1
    print(rc, flush=True)
EOF

# img_py OUT COMMAND IMAGE [ARGS]: img.py's command, its output to file OUT,
# through the one img.py serving the whole test (fds 7 and 8).
mkfifo "$tmp/img.req" "$tmp/img.rep"
python3 "$tmp/img.py" serve < "$tmp/img.req" > "$tmp/img.rep" &
exec 7> "$tmp/img.req" 8< "$tmp/img.rep"
trap 'exec 7>&-; rm -rf "$tmp"' EXIT
img_py() {
	local IFS=$'\x1f' rc
	printf '%s\n' "$*" >&7
	read -r rc <&8 && [ "$rc" = 0 ]
}

img=$tmp/one.img
"$mkimage" > "$img"
img_py "$tmp/sections" list "$img"
mapfile -t sects < "$tmp/sections"
nsect=${#sects[@]}
# off N / type N: offset and type of section N
off() { awk -v i="$1" '$1 == i { print $3 }' "$tmp/sections"; }
type() { awk -v i="$1" '$1 == i { print $2 }' "$tmp/sections"; }
size=$(stat -c %s "$img")

# damage NAME COMMAND ARGS...: a damaged copy of the image in $tmp/NAME
damage() { damage_of "$img" "$@"; }

# damage_of BASE NAME COMMAND ARGS...: a damaged copy of image BASE in
# $tmp/NAME; at_of BASE N: " (section N TYPE at offset O)" of that image.
damage_of() {
	local base=$1 name=$2
	shift 2
	img_py "$tmp/$name" "$1" "$base" "${@:2}"
}
at_of() {
	img_py "$tmp/at-list" list "$1" &&
		awk -v i="$2" '$1 == i { printf "(section %d %s at offset %d)", i, $2, $3 }' "$tmp/at-list"
}

# refuse FILE MESSAGE: inspect exits 1 with exactly this message, no output
refuse() {
	local rc=0
	"$ckpt" inspect "$1" > "$tmp/out" 2> "$tmp/err" || rc=$?
	cat "$tmp/err"
	[ "$rc" = 1 ] || { echo "exit status $rc, wanted 1"; return 1; }
	[ ! -s "$tmp/out" ] || { echo "output on stdout:"; cat "$tmp/out"; return 1; }
	grep -qxF "ckpt inspect: $1: $2" "$tmp/err" ||
		{ echo "wanted: ckpt inspect: $1: $2"; return 1; }
}

# refuse_all IMAGE MESSAGE [IMAGE MESSAGE]...: refuse for every pair, each
# one run and told; the check fails if one of them does.
refuse_all() {
	local rc=0
	while [ $# -ge 2 ]; do
		refuse "$1" "$2" || rc=1
		shift 2
	done
	return $rc
}

# at N: " (section N TYPE at offset O)"
at() { echo "(section $1 $(type "$1") at offset $(off "$1"))"; }

# valid-json.py SIZE SECTIONS < JSON: the report of mkimage's default image
cat > "$tmp/valid-json.py" <<'EOF'
import json, sys
d = json.load(sys.stdin)
assert d["valid"] is True and d["checksums"] == "ok", d
assert d["version"] == 4 and d["arch"] == "x86_64", d
c = d["creds"]
assert [c[k] for k in ("uid", "euid", "suid", "fsuid", "gid", "egid", "sgid", "fsgid")] == [1000] * 8, c
assert c["groups"] == [4, 27, 1000] and c["cap_bset"] == "0x1ffffffffff", c
assert c["cap_effective"] == c["cap_permitted"] == c["cap_ambient"] == "0x0" and c["dumpable"] == 1, c
assert c["no_new_privs"] is True, c
assert d["process"]["pid"] == 4242 and d["process"]["exe"] == "/bin/sh"
assert [t["tid"] for t in d["threads"]] == [4242]
assert d["threads"][0]["ip"] == "0x555555554123"
assert d["threads"][0]["nice"] == 7 and d["threads"][0]["flags"] == ["nice"], d["threads"]
v = d["vmas"]
assert len(v) == 6 and v[0]["path"] == "/bin/sh" and v[0]["prot"] == "r-x"
assert v[0]["flags"] == ["file"] and v[5]["flags"] == ["growsdown", "stack"]
assert [x["pages"] for x in v] == [0, 2, 3, 0, 0, 1]
assert d["pages"] == {"sections": 4, "pages": 6, "bytes": 6 * 4096}, d["pages"]
assert d["size"] == int(sys.argv[1]) and d["nr_sections"] == int(sys.argv[2])
EOF

truncations() {
	local n rc
	for n in $(seq 1 997 "$size") $(awk '{ print $3 - 1, $3, $3 + 1, $3 + 23, $3 + 24, $3 + 25 }' "$tmp/sections") $((size - 1)); do
		[ "$n" -gt 0 ] && [ "$n" -lt "$size" ] || continue
		head -c "$n" "$img" > "$tmp/cut"
		rc=0
		"$ckpt" inspect "$tmp/cut" > /dev/null 2> "$tmp/err" || rc=$?
		if [ "$rc" != 1 ] || ! grep -q ': truncated image (section' "$tmp/err"; then
			echo "cut at $n: exit $rc"
			cat "$tmp/err"
			return 1
		fi
	done
}

ktap_plan $((138 + nsect))

ktap_check "mkimage: $nsect sections, checksums as an independent XXH64 computes them" \
	python3 "$tmp/img.py" check "$img"
ktap_check "a valid image: described, checksums ok, valid, exit 0" sh -c "
	'$ckpt' inspect '$img' > '$tmp/text' && cat '$tmp/text' &&
	grep -qx 'process: pid 4242, ppid 1, comm \"sh\"' '$tmp/text' &&
	grep -qx 'exe: /bin/sh' '$tmp/text' &&
	grep -qx 'credentials: uid 1000 euid 1000 suid 1000 fsuid 1000, gid 1000 egid 1000 sgid 1000 fsgid 1000' '$tmp/text' &&
	grep -qx 'groups: 4 27 1000' '$tmp/text' &&
	grep -qx 'capabilities: effective 0x0 permitted 0x0 inheritable 0x0 bounding 0x1ffffffffff ambient 0x0, dumpable 1, no_new_privs' '$tmp/text' &&
	grep -q '^  tid 4242 \"sh\" ip 0x555555554123 ' '$tmp/text' &&
	grep -q '^  555555554000-555555556000 r-xp *0 pages file /bin/sh\$' '$tmp/text' &&
	grep -q '^  7ffff7f00000-7ffff7f10000 rw-p *3 pages -\$' '$tmp/text' &&
	grep -qx 'pages: 6 in 4 PAGES sections, 24576 bytes' '$tmp/text' &&
	grep -qx 'size: $size bytes in $nsect sections, 24576 of them page data' '$tmp/text' &&
	grep -qx 'checksums: ok' '$tmp/text' && tail -n 1 '$tmp/text' | grep -qx valid"
ktap_check "--json: one valid JSON object with the structure" sh -c \
	"'$ckpt' inspect --json '$img' | python3 '$tmp/valid-json.py' $size $nsect"
ktap_check "'-' reads stdin: the same report" bash -c \
	"'$ckpt' inspect - < '$img' | sed 1d | cmp - <(sed 1d '$tmp/text')"
ktap_check "'-' from a pipe, --json" sh -c \
	"cat '$img' | '$ckpt' inspect --json - | python3 '$tmp/valid-json.py' $size $nsect"
ktap_check "two threads: both listed, leader first" sh -c "
	'$mkimage' -t 2 | '$ckpt' inspect - > '$tmp/two' &&
	grep -A2 '^threads: 2' '$tmp/two' | sed -n 2p | grep -q 'tid 4242 ' &&
	grep -q '^  tid 4243 \"worker-1\" .* nice 8 in syscall\$' '$tmp/two'"
ktap_check "no pages stored: valid" sh -c \
	"'$mkimage' -P | '$ckpt' inspect - | grep -qx 'pages: 0 in 0 PAGES sections, 0 bytes'"
ktap_check "-v: registers, file details and the section list" sh -c "
	'$ckpt' inspect -v '$img' > '$tmp/verbose' &&
	grep -q '^    rdx 0x0 rsi 0x0 rdi 0x0 orig_rax 0xffffffffffffffff rip 0x555555554123 ' '$tmp/verbose' &&
	grep -qx '    pgoff 0x0 dev 0x801 ino 1234 size 125688' '$tmp/verbose' &&
	grep -qx '  5 PAGES   at $(off 5), 8208 bytes' '$tmp/verbose' &&
	'$ckpt' inspect -v --json '$img' | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [s[\"type\"] for s in d[\"sections\"]][-1] == \"END\"'"

for ((i = 0; i < nsect; i++)); do
	o=$(off "$i")
	# a byte in the middle of the payload
	len=$(awk -v i="$i" '$1 == i { print $4 }' "$tmp/sections")
	damage "flip$i" flip $((o + 24 + len / 2))
	ktap_check "a flipped byte in section $i ($(type "$i")) is refused" \
		refuse "$tmp/flip$i" "section checksum mismatch $(at "$i")"
done

# PAGES checksums of a mapped image are checked by several threads, after
# the walk has gone on: still the first damaged section is the one named,
# also when a later one is damaged otherwise, and also when the damage makes
# the PAGES header itself wrong.
pages=($(awk '$2 == "PAGES" { print $1 }' "$tmp/sections"))
p1=${pages[0]} pn=${pages[${#pages[@]} - 1]}
damage pflip1 flip $(($(off "$p1") + 24 + 100))
damage_of "$tmp/pflip1" pflip2 flip $(($(off "$pn") + 24 + 100))
ktap_check "two damaged PAGES sections: the first is named" \
	refuse "$tmp/pflip2" "section checksum mismatch $(at "$p1")"
damage_of "$tmp/pflip1" pflip3 flip "$(off $((nsect - 1)))"
ktap_check "a damaged PAGES section, then a damaged header: the PAGES one is named" \
	refuse "$tmp/pflip3" "section checksum mismatch $(at "$p1")"
damage pflip4 flip $(($(off "$pn") + 24 + 2))
ktap_check "a flipped byte in a PAGES address: a checksum mismatch" \
	refuse "$tmp/pflip4" "section checksum mismatch $(at "$pn")"

damage hdrlen flip $(($(off 3) + 9))
ktap_check "a flipped byte in a section's length: its header is refused" \
	refuse "$tmp/hdrlen" "section header checksum mismatch (section 3 at offset $(off 3))"
damage hdrtype flip "$(off 4)"
ktap_check "a flipped byte in a section's type: its header is refused" \
	refuse "$tmp/hdrtype" "section header checksum mismatch (section 4 at offset $(off 4))"

damage cut-header cut $(($(off 4) + 10))
ktap_check "truncated in a section header" \
	refuse "$tmp/cut-header" "truncated image (section 4 at offset $(off 4))"
damage cut-payload cut $(($(off 5) + 24 + 100))
ktap_check "truncated in a section's payload" \
	refuse "$tmp/cut-payload" "truncated image $(at 5)"
damage cut-end cut "$(off $((nsect - 1)))"
ktap_check "truncated before END" \
	refuse "$tmp/cut-end" "truncated image (section $((nsect - 1)) at offset $(off $((nsect - 1))))"
ktap_check "truncated at every section boundary (+-1) and every 997 bytes" \
	truncations
: > "$tmp/empty"
ktap_check "an empty file" \
	refuse "$tmp/empty" "empty input, not a ckpt image (section 0 at offset 0)"

damage magic set 0 0 I 0x464c457f
ktap_check "wrong magic" refuse "$tmp/magic" "not a ckpt image (bad magic) $(at 0)"
damage version set 0 4 H 3
ktap_check "an older format version (3, no credentials)" refuse "$tmp/version" "unsupported image version $(at 0)"
damage huge len 5 0x4000000000000000
ktap_check "a PAGES length made huge" \
	refuse "$tmp/huge" "section longer than its kind allows $(at 5)"
damage huge-vmas len 4 0x10000000000
ktap_check "a VMAS length made huge" \
	refuse "$tmp/huge-vmas" "section longer than its kind allows $(at 4)"
damage short-process len 1 -8
ktap_check "a PROCESS length made shorter" \
	refuse "$tmp/short-process" "section length does not match its kind $(at 1)"

damage trail1 append 1
ktap_check "one byte after END" \
	refuse "$tmp/trail1" "data after the END section (section $nsect at offset $size)"
damage trail4k append 4096
ktap_check "a page of data after END" \
	refuse "$tmp/trail4k" "data after the END section (section $nsect at offset $size)"
damage pad shorten 2 4
ktap_check "non-zero padding after a payload" \
	refuse "$tmp/pad" "non-zero section padding $(at 2)"
damage pad0 set 2 1148 I 0
img_py "$tmp/pad0-short" shorten "$tmp/pad0" 2 4
ktap_check "zero padding passes, on to the section's own checks" \
	refuse "$tmp/pad0-short" "thread XSAVE state size mismatch $(at 2)"

damage nice set 2 84 i 20
ktap_check "a thread's nice value above 19" refuse "$tmp/nice" "thread nice value out of range $(at 2)"
damage nice0 set 2 4 I 0
ktap_check "a nice value without its flag (an older engine's pad)" \
	refuse "$tmp/nice0" "thread nice value out of range $(at 2)"

damage endpages set $((nsect - 1)) 8 Q 7
ktap_check "END counting other pages than stored" \
	refuse "$tmp/endpages" "END does not match the image (truncated or spliced) $(at $((nsect - 1)))"
damage vmapages set 4 $((576 + 56)) Q 1
ktap_check "more PAGES for a mapping than its nr_pages" \
	refuse "$tmp/vmapages" "more pages stored for a mapping than it holds $(at 5)"
damage order set 7 0 Q 0x7ffff7f01000
ktap_check "PAGES overlapping the one before" \
	refuse "$tmp/order" "PAGES not in ascending order $(at 7)"
# VMA 2's path: a quote, a newline, a backslash, bad UTF-8, good UTF-8, DEL
damage strings bytes 4 $((2 * 576 + 64)) 2f22610a5cff62c3a9e282acf09f9880617f00
cat > "$tmp/strings.py" <<'EOF'
import json, subprocess, sys
run = lambda *a: subprocess.run([sys.argv[1], "inspect", *a, sys.argv[2]],
                                check=True, capture_output=True).stdout
line = [l for l in run().split(b"\n") if b" 3 pages " in l]
assert line == [b"  7ffff7f00000-7ffff7f10000 rw-p      3 pages - "
                b'/\\"a\\x0a\\\\\\xffb\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80a\\x7f'], line
path = json.loads(run("--json"))["vmas"][2]["path"]
assert path == '/"a\n\\\ufffdb\u00e9\u20ac\U0001f600a\x7f', path
EOF
ktap_check "strings from the image escaped: JSON valid, text one line" \
	python3 "$tmp/strings.py" "$ckpt" "$tmp/strings"
ktap_check "--json on a damaged image: valid JSON naming the problem" sh -c "
	'$ckpt' inspect --json '$tmp/flip5' > '$tmp/j' 2> /dev/null; [ \$? = 1 ] &&
	python3 < '$tmp/j' -c '
import json, sys
d = json.load(sys.stdin)
e = d[\"error\"]
assert d[\"valid\"] is False and e[\"message\"] == \"section checksum mismatch\", d
assert e[\"section\"] == 5 and e[\"type\"] == \"PAGES\" and e[\"offset\"] == $(off 5), e'"

# The mm fields and auxv of section 1 PROCESS, as prctl(PR_SET_MM_MAP)
# checks them: end_code at 64, brk 96, start_stack 104, arg_start 112,
# arg_end 120, env_start 128, env_end 136; the auxv's 64 words at 176,
# mkimage's three pairs then AT_NULL at word 6. A restart must never set
# an auxv that /proc/PID/auxv and core dumps would read past.
damage mm-auxv bytes 1 $((176 + 6 * 8)) "$(printf '0100000000000000%.0s0000000000000000' $(seq 29))"
ktap_check "PROCESS: an auxv without an AT_NULL entry" \
	refuse "$tmp/mm-auxv" "auxv not terminated (no AT_NULL entry) $(at 1)"
damage mm-auxv-end bytes 1 $((176 + 6 * 8)) "$(printf '0100000000000000%.0s0000000000000000' $(seq 28))"
ktap_check "PROCESS: an auxv ended by AT_NULL in its last pair is whole" \
	sh -c "'$ckpt' inspect '$tmp/mm-auxv-end' > /dev/null"
damage mm-arg set 1 120 Q 0x7fffffffedf8
ktap_check "PROCESS: arg_end below arg_start" \
	refuse "$tmp/mm-arg" "process arguments inverted (arg_end below arg_start) $(at 1)"
damage mm-env set 1 136 Q 0x7fffffffee00
ktap_check "PROCESS: env_end below env_start" \
	refuse "$tmp/mm-env" "process environment inverted (env_end below env_start) $(at 1)"
damage mm-brk set 1 96 Q 0x555555558000
ktap_check "PROCESS: brk below start_brk" \
	refuse "$tmp/mm-brk" "process heap inverted (brk below start_brk) $(at 1)"
damage mm-code set 1 64 Q 0x555555553fff
ktap_check "PROCESS: end_code below start_code" \
	refuse "$tmp/mm-code" "process code inverted (end_code below start_code) $(at 1)"
damage mm-stack set 1 104 Q 0x7ffffffff000
ktap_check "PROCESS: start_stack at the top of user space (TASK_SIZE)" \
	refuse "$tmp/mm-stack" "process address out of user space $(at 1)"

# Credentials: section 3 CREDS (88 bytes, then 4 per group: 4, 27, 1000).
ktap_check "CREDS: its 100 bytes padded to 104" \
	test "$(type 3) $(($(off 4) - $(off 3)))" = "CREDS 128"
damage cr-nr set 3 76 I 4
ktap_check "CREDS: a group count that does not match the length" \
	refuse "$tmp/cr-nr" "CREDS group count does not match its length $(at 3)"
damage cr-len shorten 3 2
ktap_check "CREDS: a length that is no whole number of groups" \
	refuse "$tmp/cr-len" "CREDS length is not a whole number of groups $(at 3)"
damage cr-noid set 3 12 I 0xffffffff
ktap_check "CREDS: fsuid (uid_t)-1, which is no id" \
	refuse "$tmp/cr-noid" "user or group id out of bounds $(at 3)"
damage cr-euid set 3 4 I 0
ktap_check "CREDS: an euid other than PROCESS's" \
	refuse "$tmp/cr-euid" "CREDS and PROCESS disagree on the ids $(at 3)"
damage cr-groups set 3 88 I 2000
ktap_check "CREDS: groups not ascending" \
	refuse "$tmp/cr-groups" "supplementary groups out of bounds or not ascending $(at 3)"
damage cr-eff set 3 48 Q 0x200000
ktap_check "CREDS: an effective capability not permitted" \
	refuse "$tmp/cr-eff" "capability sets inconsistent $(at 3)"
damage cr-amb-p set 3 40 Q 0x400
img_py "$tmp/cr-amb" set "$tmp/cr-amb-p" 3 64 Q 0x400
ktap_check "CREDS: an ambient capability permitted but not inheritable" \
	refuse "$tmp/cr-amb" "capability sets inconsistent $(at 3)"
damage cr-dump set 3 72 I 3
ktap_check "CREDS: dumpable 3" \
	refuse "$tmp/cr-dump" "dumpable out of bounds $(at 3)"
damage cr-flags set 3 80 I 3
damage cr-pad set 3 84 I 1
ktap_check "CREDS: an unknown flag, a reserved field set" refuse_all \
	"$tmp/cr-flags" "unknown credential flags $(at 3)" \
	"$tmp/cr-pad" "unknown credential flags $(at 3)"
damage cr-none drop 3
ktap_check "no CREDS section: refused at VMAS" \
	refuse "$tmp/cr-none" "no CREDS section before VMAS (section 3 VMAS at offset $(off 3))"
head -c "$(off 4)" "$img" > "$tmp/cr-two"
tail -c +$(($(off 3) + 1)) "$img" >> "$tmp/cr-two"
ktap_check "two CREDS sections" \
	refuse "$tmp/cr-two" "sections out of order (section 4 CREDS at offset $(off 4))"

# Scheduling (mkimage -t 3 -B): section 5 SCHED, an entry of 144 bytes
# a thread (policy, rt_priority, flags, ioprio, then the CPU words at 16).
"$mkimage" -t 3 -B > "$tmp/sched.img"
sdamage() { damage_of "$tmp/sched.img" "$@"; }
sat() { at_of "$tmp/sched.img" "$1"; }
ktap_check "SCHED: each thread's policy and CPUs shown, text and --json; valid" sh -c "
	'$ckpt' inspect '$tmp/sched.img' > '$tmp/stext' && grep '^  tid' '$tmp/stext' &&
	grep -q '^  tid 4242 \"sh\" .* nice 7\$' '$tmp/stext' &&
	grep -q '^  tid 4243 \"worker-1\" .* nice 8 policy batch ioprio idle cpus 0,2-3 in syscall\$' '$tmp/stext' &&
	grep -q '^  tid 4244 \"worker-2\" .* nice 9 policy fifo 10 reset-on-fork ioprio be/2 cpus 1023 in syscall\$' '$tmp/stext' &&
	tail -n 1 '$tmp/stext' | grep -qx valid &&
	'$ckpt' inspect --json '$tmp/sched.img' | python3 -c '
import json, sys
s = [t[\"sched\"] for t in json.load(sys.stdin)[\"threads\"]]
assert s[0] == {\"policy\": \"normal\", \"rt_priority\": 0, \"reset_on_fork\": False, \"ioprio_class\": None, \"cpus\": None}, s
assert s[1][\"policy\"] == \"batch\" and s[1][\"cpus\"] == [0, 2, 3] and s[1][\"ioprio_class\"] == \"idle\", s
assert s[2][\"ioprio_class\"] == \"be\" and s[2][\"ioprio_level\"] == 2, s
assert s[2][\"policy\"] == \"fifo\" and s[2][\"rt_priority\"] == 10 and s[2][\"reset_on_fork\"], s'"
sdamage s-dl set 5 144 I 6
sdamage s-four set 5 144 I 4
sdamage s-fifo0 set 5 292 I 0
sdamage s-prio set 5 148 I 5
sdamage s-prio100 set 5 292 I 100
sdamage s-flags set 5 152 I 4
sdamage s-io4 set 5 156 I 0x8000
sdamage s-io0 set 5 156 I 3
sdamage s-iohint set 5 156 I 0x4008
sdamage s-all set 5 16 Q 1
sdamage s-none set 5 160 Q 0
sdamage s-short shorten 5 144
ktap_check "SCHED: a policy past the known, SCHED_DEADLINE's 4, a real-time priority missing, given to SCHED_BATCH, above 99; unknown flags; an I/O class past IDLE, a level without class, a hint; CPUs with any CPU, none without; an entry short" refuse_all \
	"$tmp/s-dl" "thread scheduling policy out of range $(sat 5)" \
	"$tmp/s-four" "thread scheduling policy out of range $(sat 5)" \
	"$tmp/s-fifo0" "thread scheduling policy out of range $(sat 5)" \
	"$tmp/s-prio" "thread scheduling policy out of range $(sat 5)" \
	"$tmp/s-prio100" "thread scheduling policy out of range $(sat 5)" \
	"$tmp/s-flags" "unknown thread scheduling flags $(sat 5)" \
	"$tmp/s-io4" "thread I/O priority out of range $(sat 5)" \
	"$tmp/s-io0" "thread I/O priority out of range $(sat 5)" \
	"$tmp/s-iohint" "thread I/O priority out of range $(sat 5)" \
	"$tmp/s-all" "thread CPU set empty, or given with any CPU $(sat 5)" \
	"$tmp/s-none" "thread CPU set empty, or given with any CPU $(sat 5)" \
	"$tmp/s-short" "section length does not match its kind $(at_of "$tmp/s-short" 5)"

# File objects (mkimage -O): sections 3 FILEOBJ, 4 FILES, 5-7 FILEDATA.
"$mkimage" -O > "$tmp/obj.img"
odamage() { damage_of "$tmp/obj.img" "$@"; }
oat() { at_of "$tmp/obj.img" "$1"; }
ktap_check "file objects: listed, valid" sh -c "
	'$ckpt' inspect '$tmp/obj.img' > '$tmp/otext' && cat '$tmp/otext' &&
	grep -qx '  0 memfd size 10000 stored 4196 mode 0777 seals 0x5 buf' '$tmp/otext' &&
	grep -qx '  1 fifo size 5 stored 5 mode 0600 capacity 65536 /tmp/fifo' '$tmp/otext' &&
	grep -qxF '  fd 6 shares fd 3 flags 02 cloexec /memfd:buf (deleted)' '$tmp/otext' &&
	'$ckpt' inspect --json '$tmp/obj.img' | python3 -c '
import json, sys
d = json.load(sys.stdin)
o = d[\"fileobjs\"]
assert [x[\"kind\"] for x in o] == [\"memfd\", \"fifo\"] and o[0][\"seals\"] == 5, o'"
# PROCESS's exe_dev (offset 7088) CKPT_IMG_EXE_OBJ: exe_ino (7096) is
# the FILEOBJ entry of an executable deleted while it ran.
odamage exe-obj0 set 1 7088 Q 0xffffffffffffffff
damage_of "$tmp/exe-obj0" exe-obj set 1 7096 Q 0
ktap_check "a deleted executable the image carries: a memfd entry, shown" sh -c "
	'$ckpt' inspect '$tmp/exe-obj' > '$tmp/exe-text' &&
	grep '^exe: ' '$tmp/exe-text' && grep -q '^exe: .* (deleted, object 0)\$' '$tmp/exe-text' &&
	'$ckpt' inspect --json '$tmp/exe-obj' | python3 -c '
import json, sys
p = json.load(sys.stdin)[\"process\"]
assert p[\"exe_deleted\"] is True and p[\"exe_object\"] == 0 and \"exe_dev\" not in p, p'"
damage_of "$tmp/exe-obj" exe-fifo set 1 7096 Q 1
damage_of "$tmp/exe-obj" exe-none set 1 7096 Q 2
damage_of "$tmp/exe-obj" exe-far set 1 7096 Q 1024
damage exe-noobj0 set 1 7088 Q 0xffffffffffffffff
damage_of "$tmp/exe-noobj0" exe-noobj set 1 7096 Q 0
ktap_check "a deleted executable naming a FIFO, an entry past the last, past the bound, none at all" refuse_all \
	"$tmp/exe-fifo" "executable object is no deleted file or memfd of FILEOBJ $(oat 9)" \
	"$tmp/exe-none" "executable object is no deleted file or memfd of FILEOBJ $(oat 9)" \
	"$tmp/exe-far" "executable object out of bounds $(oat 1)" \
	"$tmp/exe-noobj" "executable object is no deleted file or memfd of FILEOBJ $(at 4)"
odamage obj-kind set 4 12 I 9
ktap_check "a FILES entry naming an object of another kind" \
	refuse "$tmp/obj-kind" "file names an object the image does not carry $(oat 4)"
odamage obj-ino set 4 32 Q 2
ktap_check "a FILES entry naming an object that does not exist" \
	refuse "$tmp/obj-ino" "file names an object the image does not carry $(oat 4)"
# File locks (mkimage -O -K): section 8 LOCKS, three of 24 bytes, all on
# fd 3 (FILES entry 0, read-write; fd 4 is a FIFO, fd 6 a dup() of fd 3).
"$mkimage" -O -K > "$tmp/lk.img"
lkdamage() { damage_of "$tmp/lk.img" "$@"; }
ktap_check "file locks: listed, valid" sh -c "
	'$ckpt' inspect '$tmp/lk.img' > '$tmp/lktext' && cat '$tmp/lktext' &&
	grep -qx 'file locks: 4' '$tmp/lktext' &&
	grep -qx '  fd 3 posix write bytes 0-9' '$tmp/lktext' &&
	grep -qx '  fd 3 flock read bytes 0-eof' '$tmp/lktext' &&
	grep -qx '  fd 3 ofd read bytes 100-eof' '$tmp/lktext' &&
	grep -qx '  mapping 555555554000 flock write /bin/sh' '$tmp/lktext' &&
	'$ckpt' inspect --json '$tmp/lk.img' | python3 -c '
import json, sys
l = json.load(sys.stdin)[\"locks\"]
assert [(x[\"fd\"], x[\"kind\"], x[\"type\"], x[\"start\"], x[\"end\"]) for x in l[:3]] == [
    (3, \"posix\", \"write\", 0, 9), (3, \"flock\", \"read\", 0, 2**63 - 1),
    (3, \"ofd\", \"read\", 100, 2**63 - 1)], l
assert l[3] == {\"mapping\": \"0x555555554000\", \"kind\": \"flock\", \"type\": \"write\",
                \"path\": \"/bin/sh\"}, l[3]'"
lkdamage lk-fifo set 8 0 I 4
lkdamage lk-dup set 8 0 I 6
lkdamage lk-none set 8 0 I 5
lkdamage lk-far set 8 0 I 0x100000
lkdamage lk-kind set 8 4 H 4
lkdamage lk-kind0 set 8 4 H 0
lkdamage lk-type set 8 6 H 3
lkdamage lk-inverted set 8 8 Q 10
lkdamage lk-past set 8 64 Q 0x8000000000000000
lkdamage lk-flock set 8 32 Q 1
# fd 3's open_flags (FILES entry 0 at 4), and its dup()'s (entry 2).
lkdamage lk-rdonly0 set 4 4 I 0
damage_of "$tmp/lk-rdonly0" lk-rdonly set 4 1108 I 0
lkdamage lk-wronly0 set 4 4 I 1
damage_of "$tmp/lk-wronly0" lk-wronly set 4 1108 I 1
ktap_check "a lock on a FIFO, a dup(), no descriptor; of another kind or type; over bytes out of order or past the end; a record lock its descriptor is not open for" refuse_all \
	"$tmp/lk-fifo" "lock on a descriptor that is no file of the image $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-dup" "lock on a descriptor that is no file of the image $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-none" "lock on a descriptor that is no file of the image $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-far" "lock on a descriptor that is no file of the image $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-kind" "unknown lock kind or type $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-kind0" "unknown lock kind or type $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-type" "unknown lock kind or type $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-inverted" "lock range out of bounds $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-past" "lock range out of bounds $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-flock" "lock range out of bounds $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-rdonly" "record lock on a descriptor not open for it $(at_of "$tmp/lk.img" 8)" \
	"$tmp/lk-wronly" "record lock on a descriptor not open for it $(at_of "$tmp/lk.img" 8)"
# A flock() lock held through a mapping only, on its first mapping's
# VMAS entry (entry 0: /bin/sh, flags at 28, flock-write in lk.img; entry
# 1: the heap, at 604): on a file's mapping, valid and shown; shared and
# exclusive at once, or on a mapping of no file, refused.
img_py "$tmp/lksects" list "$tmp/lk.img"
lkvmas=$(awk '$2 == "VMAS" { print $1 }' "$tmp/lksects")
damage_of "$tmp/lk.img" lk-map-both set "$lkvmas" 28 I 0x6002
damage_of "$tmp/lk.img" lk-map-heap set "$lkvmas" 604 I 0x2008
ktap_check "a flock() lock through a file's mapping only: valid, shown" sh -c "
	'$ckpt' inspect '$tmp/lk.img' > '$tmp/lkmtext' && cat '$tmp/lkmtext' &&
	grep -qx '  555555554000-555555556000 r-xp      0 pages file,flock-write /bin/sh' '$tmp/lkmtext' &&
	'$ckpt' inspect --json '$tmp/lk.img' | python3 -c '
import json, sys
v = json.load(sys.stdin)[\"vmas\"]
assert v[0][\"flags\"] == [\"file\", \"flock-write\"], v[0]
assert \"flock-write\" not in v[1][\"flags\"], v[1]'"
ktap_check "a flock() lock through a mapping both shared and exclusive, or on a mapping of no file" refuse_all \
	"$tmp/lk-map-both" "flock() lock on a mapping of no file, or both shared and exclusive $(at_of "$tmp/lk.img" "$lkvmas")" \
	"$tmp/lk-map-heap" "flock() lock on a mapping of no file, or both shared and exclusive $(at_of "$tmp/lk.img" "$lkvmas")"
# A memfd's number in a tree (dev) without its sharing; shared outside a tree.
odamage obj-dev set 4 24 Q 1
odamage obj-shared set 4 8 I 4
ktap_check "a memfd's FILES entry with a tree's number but not shared, or shared outside a tree" refuse_all \
	"$tmp/obj-dev" "file names an object the image does not carry $(oat 4)" \
	"$tmp/obj-shared" "only a tree's regular files, directories, eventfds, signalfds, timerfds, epolls, memfds and deleted files are shared between processes $(oat 4)"
# A tree's root with the same memfd (FILES entry 0: flags at 8, dev at
# 24): shared with its number, valid; shared without one, refused.
"$mkimage" -Y -P -O > "$tmp/tobj.img"
img_py "$tmp/tsects" list "$tmp/tobj.img"
tfiles=$(awk '$2 == "FILES" { print $1 }' "$tmp/tsects")
damage_of "$tmp/tobj.img" tobj-nonum set "$tfiles" 8 I 4
damage_of "$tmp/tobj-nonum" tobj-shared set "$tfiles" 24 Q 1
tree_memfd_shared() {
	"$ckpt" inspect "$tmp/tobj-shared" |
		grep -xF '  fd 3 at 10 flags 02 tree-shared /memfd:buf (deleted)' &&
	refuse "$tmp/tobj-nonum" "file names an object the image does not carry $(at_of "$tmp/tobj.img" "$tfiles")"
}
ktap_check "a tree's memfd descriptor shared by fork: with its number, valid and shown; without, refused" \
	tree_memfd_shared
# FILES entry 2 (552 bytes each) is fd 6, sharing fd 3's open file.
odamage share-other set 4 1136 Q 4
odamage share-self set 4 1136 Q 6
odamage share-none set 4 1136 Q 5
odamage share-flags set 4 1108 I 0
ktap_check "a shared descriptor naming one with other flags, itself, none" refuse_all \
	"$tmp/share-other" "shared descriptor names no open file before it $(oat 4)" \
	"$tmp/share-self" "shared descriptor names no open file before it $(oat 4)" \
	"$tmp/share-none" "shared descriptor names no open file before it $(oat 4)" \
	"$tmp/share-flags" "shared descriptor names no open file before it $(oat 4)"
# Entries 0 and 1 made /dev/ckpt descriptors, both with the registration.
odamage reg1 set 4 12 I 1
damage_of "$tmp/reg1" reg2 set 4 8 I 2
damage_of "$tmp/reg2" reg3 set 4 564 I 1
damage_of "$tmp/reg3" reg4 set 4 560 I 2
ktap_check "one /dev/ckpt with the registration; a second one refused" \
	sh -c "'$ckpt' inspect '$tmp/reg2' > /dev/null" &&
	refuse "$tmp/reg4" "only one /dev/ckpt carries a registration $(oat 4)"
odamage obj-seals set 3 8 I 0x40
ktap_check "unknown seals" \
	refuse "$tmp/obj-seals" "unknown file object kind, mode or seals $(oat 3)"
odamage obj-big set 3 32 Q 0x40000001
ktap_check "a memfd over 1 GiB" \
	refuse "$tmp/obj-big" "file object size out of bounds $(oat 3)"
odamage data-out set 6 8 Q 9950
ktap_check "FILEDATA past its file's size" \
	refuse "$tmp/data-out" "FILEDATA outside its file or out of order $(oat 6)"
odamage data-order set 6 8 Q 100
ktap_check "FILEDATA overlapping the run before" refuse_all \
	"$tmp/data-out" "FILEDATA outside its file or out of order $(oat 6)" \
	"$tmp/data-order" "FILEDATA outside its file or out of order $(oat 6)"
odamage data-less set 3 40 Q 4200
ktap_check "FILEOBJ claiming more than FILEDATA holds" \
	refuse "$tmp/data-less" "FILEDATA does not hold what FILEOBJ says it stores $(oat 7)"

# Timers (mkimage -T): sections 3 SIGNALS, 4 TIMERS (8 bytes, then 56 per
# timer: 2, 5 and 7).
"$mkimage" -T > "$tmp/tm.img"
tdamage() { damage_of "$tmp/tm.img" "$@"; }
tat() { at_of "$tmp/tm.img" "$1"; }
ktap_check "timers: interval timers and POSIX timers listed, valid" sh -c "
	'$ckpt' inspect '$tmp/tm.img' > '$tmp/ttext' && cat '$tmp/ttext' &&
	grep -qx 'itimers: real 8000000000 ns/0 ns, virtual 4296000000 ns/300000000 ns, prof 5000000000 ns/400000000 ns' '$tmp/ttext' &&
	grep -qx 'POSIX timers: 3, next id 9' '$tmp/ttext' &&
	grep -qx '  timer 2: realtime, signal 34, value 0x1111, deadline 1795000060000000000 ns, interval 2000000000 ns, overrun 3, last 1' '$tmp/ttext' &&
	grep -qx '  timer 5: thread-cputime of 4242, signal 35 to thread 4242, value 0x5555, left 70000000000 ns, interval 3000000000 ns, overrun 0, last 12, signal pending' '$tmp/ttext' &&
	grep -qx '  timer 7: process-cputime, no signal, value 0x7777, left 60000000000 ns, interval 0 ns, overrun 0, last 0' '$tmp/ttext' &&
	'$ckpt' inspect --json '$tmp/tm.img' | python3 -c '
import json, sys
d = json.load(sys.stdin)
s, t = d[\"signals\"], d[\"timers\"]
assert s[\"pending\"] == 1 and s[\"itimer_virtual_ns\"] == 4296000000, s
assert s[\"itimer_prof_interval_ns\"] == 400000000, s
assert t[\"next_id\"] == 9 and [x[\"id\"] for x in t[\"list\"]] == [2, 5, 7], t
x = t[\"list\"][1]
assert x[\"clock\"] == \"thread-cputime\" and x[\"owner\"] == 4242 and x[\"notify\"] == \"thread-id\", x
assert x[\"tid\"] == 4242 and x[\"pending\"] is True and x[\"overrun_last\"] == 12, x
assert t[\"list\"][0][\"absolute\"] is True and t[\"list\"][2][\"clockid\"] == -6'"
tdamage tm-order set 4 $((8 + 56)) I 2
ktap_check "timer ids not ascending" \
	refuse "$tmp/tm-order" "timer ids out of bounds or not ascending $(tat 4)"
tdamage tm-id set 4 $((8 + 112)) I 0x100000
ktap_check "a timer id at the bound (2^20)" \
	refuse "$tmp/tm-id" "timer ids out of bounds or not ascending $(tat 4)"
tdamage tm-clock set 4 12 i 3
ktap_check "a timer on CLOCK_THREAD_CPUTIME_ID as such (no thread named)" \
	refuse "$tmp/tm-clock" "timer clock out of bounds $(tat 4)"
tdamage tm-alarm set 4 12 i 8
ktap_check "a timer on an alarm clock" \
	refuse "$tmp/tm-alarm" "timer clock out of bounds $(tat 4)"
tdamage tm-other set 4 $((8 + 112 + 4)) i $(( (~4243 << 3) | 2 ))
ktap_check "a timer on another process's CPU-time clock" \
	refuse "$tmp/tm-other" "timer clock out of bounds $(tat 4)"
tdamage tm-notify set 4 16 I 3
ktap_check "an unknown notification" \
	refuse "$tmp/tm-notify" "unknown timer notification $(tat 4)"
tdamage tm-signo set 4 20 i 65
ktap_check "a signal number past 64" \
	refuse "$tmp/tm-signo" "timer signal number out of bounds $(tat 4)"
tdamage tm-tid set 4 24 I 4242
ktap_check "a thread for a timer that signals the process" \
	refuse "$tmp/tm-tid" "timer thread out of bounds $(tat 4)"
tdamage tm-abs set 4 $((8 + 56 + 20)) I 3
ktap_check "CKPT_TIMER_ABSTIME on a CPU-time clock" \
	refuse "$tmp/tm-abs" "unknown timer flags $(tat 4)"
tdamage tm-flags set 4 28 I 4
ktap_check "an unknown timer flag" \
	refuse "$tmp/tm-flags" "unknown timer flags $(tat 4)"
tdamage tm-overrun set 4 $((8 + 52)) I 0x80000000
ktap_check "an overrun count past 2^31 - 1" \
	refuse "$tmp/tm-overrun" "timer time or overrun out of bounds $(tat 4)"
tdamage tm-nr set 4 0 I 4
ktap_check "a timer count that does not match the length" \
	refuse "$tmp/tm-nr" "TIMERS count does not match its length $(tat 4)"
tdamage tm-itimer set 3 40 Q 0x8000000000000000
ktap_check "an interval timer value past KTIME_MAX" \
	refuse "$tmp/tm-itimer" "interval timer out of bounds $(tat 3)"

# The vdso copy (mkimage -V): section 3 VDSO.
"$mkimage" -V > "$tmp/vdso.img"
vdamage() { damage_of "$tmp/vdso.img" "$@"; }
vat() { at_of "$tmp/vdso.img" "$1"; }
ktap_check "a vdso copy: its entry points listed" sh -c "
	'$ckpt' inspect -v '$tmp/vdso.img' > '$tmp/vtext' &&
	grep -qx '  vdso entry points: clock_gettime+0x700 __vdso_clock_gettime+0x700 getcpu+0x900' '$tmp/vtext' &&
	'$ckpt' inspect --json '$tmp/vdso.img' | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d[\"process\"][\"vdso_entries\"] == {\"clock_gettime\": 1792, \"__vdso_clock_gettime\": 1792, \"getcpu\": 2304}, d'"
vdamage vdso-n set 3 0 I 33
ktap_check "VDSO: more entry points than the format holds" \
	refuse "$tmp/vdso-n" "VDSO symbol count out of bounds $(vat 3)"
vdamage vdso-off set 3 $((8 + 2 * 40 + 32)) Q 8192
ktap_check "VDSO: an entry point outside the text" \
	refuse "$tmp/vdso-off" "VDSO symbol out of bounds $(vat 3)"
vdamage vdso-extra set 3 $((8 + 3 * 40)) B 0x41
ktap_check "VDSO: a name past the counted entries" \
	refuse "$tmp/vdso-extra" "VDSO symbol out of bounds $(vat 3)"
vdamage vdso-text set 3 $((1288 + 100)) B 0
ktap_check "VDSO: text that is not the process's vdso" \
	refuse "$tmp/vdso-text" "VDSO text is not the process's vdso $(vat 3)"

# Directories (mkimage -F): section 3 FS, between the THREAD and VMAS.
"$mkimage" -F > "$tmp/fs.img"
fdamage() { damage_of "$tmp/fs.img" "$@"; }
fat() { at_of "$tmp/fs.img" "$1"; }
ktap_check "working and root directories, executable identity: shown, valid" sh -c "
	'$ckpt' inspect -v '$tmp/fs.img' > '$tmp/ftext' && cat '$tmp/ftext' &&
	grep -qx '  exe dev 0x801 ino 1234' '$tmp/ftext' &&
	grep -A1 -x 'cwd: /srv/job/run' '$tmp/ftext' | grep -qx '  dev 0x801 ino 5678' &&
	grep -A1 -x 'root: /srv/job' '$tmp/ftext' | grep -qx '  dev 0x801 ino 5600' &&
	'$ckpt' inspect --json '$tmp/fs.img' | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d[\"cwd\"] == \"/srv/job/run\" and d[\"cwd_ino\"] == 5678, d
assert d[\"root\"] == \"/srv/job\" and d[\"root_dev\"] == 0x801 and d[\"root_ino\"] == 5600, d
assert d[\"process\"][\"exe_dev\"] == 0x801 and d[\"process\"][\"exe_ino\"] == 1234, d'"
fdamage fs-rel bytes 3 4144 78
fdamage fs-unterminated bytes 3 4144 "$(printf '61%.0s' $(seq 4096))"
ktap_check "a root directory not absolute, or not terminated" refuse_all \
	"$tmp/fs-rel" "root directory not absolute or not terminated $(fat 3)" \
	"$tmp/fs-unterminated" "root directory not absolute or not terminated $(fat 3)"
fdamage fs-reserved set 3 32 Q 1
ktap_check "a reserved FS field set" \
	refuse "$tmp/fs-reserved" "reserved FS field set $(fat 3)"
# UNIX socket pairs (mkimage -U): section 3 FILES, 4-6 USOCK, 7 ULISTEN,
# 8 USOCK (a client waiting), 9 UPEND, 10-12 UNAME (a datagram socket
# with a path and two messages, one connected to /dev/log, a stream
# socket with an abstract name; struct ckpt_img_uname: name at 24, its
# len at 36, its path at 40; peer at 148, its uid at 152; data at 272).
"$mkimage" -U -P > "$tmp/usock.img"
udamage() { damage_of "$tmp/usock.img" "$@"; }
uat() { at_of "$tmp/usock.img" "$1"; }
ktap_check "UNIX socket pairs: shown, valid" sh -c "
	'$ckpt' inspect -v '$tmp/usock.img' > '$tmp/utext' && cat '$tmp/utext' &&
	grep -qx '  fd 3 at 0 flags 04002 socket:\[501\]' '$tmp/utext' &&
	grep -qx '  fd 5 shares fd 3 flags 04002 socket:\[501\]' '$tmp/utext'"
udamage usock-self set 4 8 Q 501
udamage usock-long set 4 28 I 5
udamage usock-noino set 3 32 Q 0
udamage usock-msg set 6 32 I 13
ktap_check "a socket its own peer, a queue longer than its section, messages overrunning it, an entry naming no socket" refuse_all \
	"$tmp/usock-self" "UNIX socket out of bounds $(uat 4)" \
	"$tmp/usock-long" "UNIX socket out of bounds $(uat 4)" \
	"$tmp/usock-msg" "UNIX socket messages do not fill its data $(uat 6)" \
	"$tmp/usock-noino" "UNIX socket entry without its socket $(uat 3)"
udamage ulisten-rel set 7 32 B 0x74
udamage ulisten-after set 7 60 B 0x41
udamage ulisten-abs-owner set 7 32 B 0
udamage ulisten-type set 7 8 I 2
ktap_check "a listening socket: a relative path, bytes after its name, an abstract name with an owner, a datagram type" refuse_all \
	"$tmp/ulisten-rel" "a UNIX socket's path is not an absolute, NUL-terminated path $(uat 7)" \
	"$tmp/ulisten-after" "bytes after a UNIX socket's name $(uat 7)" \
	"$tmp/ulisten-abs-owner" "an owner for a UNIX socket name that has none $(uat 7)" \
	"$tmp/ulisten-type" "listening UNIX socket out of bounds $(uat 7)"
udamage upend-id set 9 8 Q 7
udamage upend-client set 9 16 Q 0x8000000000000001
udamage upend-len set 9 28 I 3
udamage usock-upend set 8 0 Q 0x8000000000000005
ktap_check "a waiting connection: an id an inode could have, a client that is one, its bytes overrunning it; a socket named like one" refuse_all \
	"$tmp/upend-id" "waiting UNIX connection out of bounds $(uat 9)" \
	"$tmp/upend-client" "waiting UNIX connection out of bounds $(uat 9)" \
	"$tmp/upend-len" "waiting UNIX connection out of bounds $(uat 9)" \
	"$tmp/usock-upend" "UNIX socket out of bounds $(uat 8)"
ktap_check "UNIX sockets by name: shown, valid, text and JSON" sh -c "
	grep -A3 -x 'UNIX sockets by name: 3' '$tmp/utext' > '$tmp/untext'; cat '$tmp/untext'
	grep -qx '  socket:\[506\] dgram name /tmp/ckpt-dg.sock mode 0600 queued 16 bytes' '$tmp/untext' &&
	grep -qx '  socket:\[507\] dgram connected to /dev/log queued 0 bytes' '$tmp/untext' &&
	grep -qx '  socket:\[508\] stream name @ckpt queued 0 bytes' '$tmp/untext' &&
	'$ckpt' inspect --json '$tmp/usock.img' | python3 -c '
import json, sys
u = json.load(sys.stdin)[\"unix_names\"]
assert [s[\"name\"] for s in u] == [\"/tmp/ckpt-dg.sock\", None, \"@ckpt\"], u
assert u[1][\"peer\"] == \"/dev/log\" and u[0][\"bytes\"] == 16 and u[2][\"type\"] == \"stream\", u'"
udamage uname-type set 10 8 I 3
udamage uname-rel set 10 40 B 0x74
udamage uname-msg set 10 272 I 13
udamage uname-noname bytes 10 24 "$(printf '00%.0s' $(seq 124))"
udamage uname-stream-peer set 11 8 I 1
udamage uname-seq-msg set 10 8 I 5
udamage uname-peer-owner set 11 152 I 1000
udamage uname-abs-owner set 12 24 I 0o600
udamage uname-long set 12 36 I 109
ktap_check "a socket by name: an unknown type, a relative path, messages overrunning it or with no name to come to, a stream connected by name or a seqpacket with messages, a peer or abstract name with an owner, a name too long" refuse_all \
	"$tmp/uname-type" "UNIX socket out of bounds $(uat 10)" \
	"$tmp/uname-rel" "a UNIX socket's path is not an absolute, NUL-terminated path $(uat 10)" \
	"$tmp/uname-msg" "UNIX socket messages do not fill its data $(uat 10)" \
	"$tmp/uname-noname" "messages queued on a UNIX socket with no name $(uat 10)" \
	"$tmp/uname-stream-peer" "a UNIX socket connected by name, or with messages queued, that is no datagram socket $(uat 11)" \
	"$tmp/uname-seq-msg" "a UNIX socket connected by name, or with messages queued, that is no datagram socket $(uat 10)" \
	"$tmp/uname-peer-owner" "an owner for a UNIX socket name that has none $(uat 11)" \
	"$tmp/uname-abs-owner" "an owner for a UNIX socket name that has none $(uat 12)" \
	"$tmp/uname-long" "a UNIX socket's name out of bounds $(uat 12)"
# TCP sockets (mkimage -C): section 3 FILES, 4 TCP listening, 5 TCP a
# connection with bytes both ways, 6 TCP over IPv6, 7 TCP closed.
"$mkimage" -C -P > "$tmp/tcp.img"
tdamage() { damage_of "$tmp/tcp.img" "$@"; }
tat() { at_of "$tmp/tcp.img" "$1"; }
ktap_check "TCP sockets: shown, valid, text and JSON" sh -c "
	'$ckpt' inspect -v '$tmp/tcp.img' > '$tmp/ttext' && cat '$tmp/ttext' &&
	grep -qx 'TCP sockets: 4' '$tmp/ttext' &&
	grep -qx ' socket 601 state listening local 127.0.0.1:5000 backlog 128' '$tmp/ttext' &&
	grep -qx ' socket 602 state established local 127.0.0.1:5000 peer 127.0.0.1:40000 sendq 5 unsent 3 recvq 6 nodelay' '$tmp/ttext' &&
	grep -qx ' socket 603 state established local \[::1\]:40001 peer \[::1\]:5001 sendq 0 unsent 0 recvq 0 keepalive' '$tmp/ttext' &&
	'$ckpt' inspect --json '$tmp/tcp.img' | python3 -c '
import json, sys
t = json.load(sys.stdin)[\"tcp\"]
assert [s[\"state\"] for s in t] == [\"listening\", \"established\", \"established\", \"closed\"], t
assert t[1][\"recvq\"] == 6 and t[1][\"sendq\"] == 5 and t[1][\"nodelay\"], t'"
# struct ckpt_img_tcp: family 8, state 12, flags 16, src 24, dst 40,
# snd_una 96, write_seq 104, rcv_nxt 112, len 136.
# Half-closed: the connection marked shut down for writing (_FIN_OUT) and
# its peer's FIN in (_FIN_IN), its NODELAY kept: valid, shown.
tdamage tcp-half set 5 16 I 0x6001
ktap_check "TCP: a half-closed connection is valid, both of its FINs shown" sh -c "
	'$ckpt' inspect '$tmp/tcp-half' > '$tmp/thtext' && cat '$tmp/thtext' &&
	grep -qx ' socket 602 state established local 127.0.0.1:5000 peer 127.0.0.1:40000 sendq 5 unsent 3 recvq 6 shut-wr peer-shut-wr nodelay' '$tmp/thtext' &&
	'$ckpt' inspect --json '$tmp/tcp-half' | python3 -c '
import json, sys
t = json.load(sys.stdin)[\"tcp\"]
assert t[1][\"shut-wr\"] and t[1][\"peer-shut-wr\"] and not t[2][\"shut-wr\"], t'"
# A connect under way: the closed socket made connecting, from
# 127.0.0.1:40002 to 127.0.0.1:5002 (sport 56, dport 58): valid, shown
# with its peer; without its ports, or with sequence numbers, refused.
tdamage tcp-c1 set 7 12 I 3
damage_of "$tmp/tcp-c1" tcp-c2 set 7 24 I 0x0100007f
damage_of "$tmp/tcp-c2" tcp-c3 set 7 40 I 0x0100007f
damage_of "$tmp/tcp-c3" tcp-connecting set 7 56 I $(((5002 << 16) | 40002))
damage_of "$tmp/tcp-connecting" tcp-conn-seq set 7 96 I 5
ktap_check "TCP: a connect under way is valid, shown with its peer" sh -c "
	'$ckpt' inspect '$tmp/tcp-connecting' > '$tmp/tctext' && cat '$tmp/tctext' &&
	grep -qx ' socket 604 state connecting local 127.0.0.1:40002 peer 127.0.0.1:5002' '$tmp/tctext' &&
	'$ckpt' inspect --json '$tmp/tcp-connecting' | python3 -c '
import json, sys
t = json.load(sys.stdin)[\"tcp\"][3]
assert t[\"state\"] == \"connecting\" and t[\"peer\"] == \"127.0.0.1:5002\" and \"sendq\" not in t, t'"
ktap_check "TCP: a connect under way without its ports, or with sequence numbers, is refused" refuse_all \
	"$tmp/tcp-c3" "TCP socket that is connecting has no ends $(tat 7)" \
	"$tmp/tcp-conn-seq" "TCP socket that is not connected has a connection's state $(tat 7)"
# Waiting to be accepted (state 4): the connection with nothing sent
# (snd_una and snd_nxt 100 at write_seq 1005; its 11 bytes all received,
# copied_seq 108 at 1995) is valid, shown as waiting; with bytes sent,
# refused.
tdamage tcp-w1 set 5 96 I 1005
damage_of "$tmp/tcp-w1" tcp-w2 set 5 100 I 1005
damage_of "$tmp/tcp-w2" tcp-w3 set 5 108 I 1995
damage_of "$tmp/tcp-w3" tcp-waiting set 5 12 I 4
tdamage tcp-wsent set 5 12 I 4
ktap_check "TCP: a connection waiting to be accepted is valid, shown" sh -c "
	'$ckpt' inspect '$tmp/tcp-waiting' > '$tmp/twtext' && cat '$tmp/twtext' &&
	grep -qx ' socket 602 state waiting local 127.0.0.1:5000 peer 127.0.0.1:40000 sendq 0 unsent 0 recvq 11 nodelay' '$tmp/twtext'"
ktap_check "TCP: a connection waiting to be accepted that sent is refused" refuse_all \
	"$tmp/tcp-wsent" "TCP connection waiting to be accepted that sent or shut down $(tat 5)"
tdamage tcp-flags set 5 16 I 0x8000
tdamage tcp-lfin set 4 16 I 0x2000
tdamage tcp-state set 5 12 I 5
tdamage tcp-family set 5 8 I 1
tdamage tcp-v4 set 5 28 I 1
tdamage tcp-seq set 5 104 I 1006
tdamage tcp-len set 5 136 I 12
tdamage tcp-listen set 4 96 I 5
tdamage tcp-noino set 3 32 Q 0
ktap_check "TCP: an unknown state, flag or family, a listening socket shut down for writing, IPv4 with bytes past its address, queues their sequence numbers do not match, a listening socket with a connection's state, an entry naming no socket" refuse_all \
	"$tmp/tcp-state" "TCP socket out of bounds $(tat 5)" \
	"$tmp/tcp-flags" "TCP socket out of bounds $(tat 5)" \
	"$tmp/tcp-lfin" "TCP socket that is not connected has a connection's state $(tat 4)" \
	"$tmp/tcp-family" "TCP socket out of bounds $(tat 5)" \
	"$tmp/tcp-v4" "TCP socket out of bounds $(tat 5)" \
	"$tmp/tcp-seq" "TCP connection queues do not match its sequence numbers $(tat 5)" \
	"$tmp/tcp-len" "TCP socket out of bounds $(tat 5)" \
	"$tmp/tcp-listen" "TCP socket that is not connected has a connection's state $(tat 4)" \
	"$tmp/tcp-noino" "TCP socket entry without its socket $(tat 3)"
# A pseudo-terminal (mkimage -Y): section 2 TREE, 4 FILES (master, slave),
# 5 PTY. struct ckpt_img_file: dev 24; struct ckpt_img_pty: flags 4,
# reserved 60.
"$mkimage" -Y -P > "$tmp/pty.img"
ydamage() { damage_of "$tmp/pty.img" "$@"; }
yat() { at_of "$tmp/pty.img" "$1"; }
# A tree member's image restarted alone: refused by what it is, first,
# not by the engine missing here.
ktap_check "a tree member's image restarted alone: refused by name before the engine is opened" sh -c "
	! CKPT_DEVICE='$tmp/no-such-device' '$ckpt' restart '$tmp/pty.img' 2> '$tmp/e'; cat '$tmp/e';
	grep -qxF \"ckpt restart: $tmp/pty.img: pid 4242's image is member 1 of a process tree of 1: restart the tree's directory, which holds them all\" '$tmp/e'"
ktap_check "a pseudo-terminal: shown, valid, in text and JSON" sh -c "
	'$ckpt' inspect '$tmp/pty.img' > '$tmp/ytext' && cat '$tmp/ytext' &&
	grep -qx 'pseudo-terminals: 1' '$tmp/ytext' &&
	grep -qx '  pts 7 rows 24 cols 80 canonical packet' '$tmp/ytext' &&
	grep -qx '  fd 4 at 0 flags 04002 /dev/pts/7' '$tmp/ytext' &&
	'$ckpt' inspect --json '$tmp/pty.img' | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d[\"ptys\"] == [{\"pts\": 7, \"rows\": 24, \"cols\": 80, \"canonical\": True, \"echo\": False, \"packet\": True, \"locked\": False}], d[\"ptys\"]'"
# FILES entry 2 (552 bytes each) is the tree's shared signalfd 1.
ydamage sfd-alone set 4 1112 I 0
ydamage tfd-ino set 4 1116 I 8
ydamage ep-ino set 4 1116 I 6
damage_of "$tmp/ep-ino" ep-shared set 4 1136 Q 0
damage_of "$tmp/ep-shared" ep-alone set 4 1112 I 0
odamage sfd-notree set 4 8 I 4
damage_of "$tmp/sfd-notree" sfd-notree2 set 4 12 I 5
ktap_check "a tree's shared signalfd: shown, valid; as an epoll, its number in dev, valid" sh -c "
	'$ckpt' inspect '$tmp/pty.img' | grep -qxF '  fd 5 at 0 flags 02 tree-shared anon_inode:[signalfd]' &&
	'$ckpt' inspect '$tmp/ep-shared' > /dev/null"
ktap_check "refused: a signalfd's or epoll's number without its sharing, a timerfd's or an epoll's in ino, one shared outside a tree" refuse_all \
	"$tmp/sfd-alone" "signalfd, timerfd or epoll entry with a number outside a tree's shared file $(yat 4)" \
	"$tmp/tfd-ino" "signalfd, timerfd or epoll entry with a number outside a tree's shared file $(yat 4)" \
	"$tmp/ep-ino" "signalfd, timerfd or epoll entry with a number outside a tree's shared file $(yat 4)" \
	"$tmp/ep-alone" "signalfd, timerfd or epoll entry with a number outside a tree's shared file $(yat 4)" \
	"$tmp/sfd-notree2" "only a tree's regular files, directories, eventfds, signalfds, timerfds, epolls, memfds and deleted files are shared between processes $(oat 4)"
# Section 6 EPOLL (struct ckpt_img_epitem, 24 bytes: epfd 0, tfd 4): fd 6,
# an epoll, watches fd 4 and fd 1.
ydamage ep-on-sfd set 6 0 I 5
ydamage ep-on-none set 6 24 I 9
ydamage ep-watch-none set 6 4 I 7
ydamage ep-watch-master set 6 4 I 3
ydamage ep-watch-0 set 6 28 I 0
ydamage ep-nofiles drop 4
ktap_check "an epoll's items: shown, in text and JSON; one watching another of its descriptors or 0-2, valid" sh -c "
	grep -qx 'epoll items: 2' '$tmp/ytext' &&
	grep -qx '  epoll fd 6 watches fd 4 events 0x1 data 0x1234' '$tmp/ytext' &&
	grep -qx '  epoll fd 6 watches fd 1 events 0x4 data 0x0' '$tmp/ytext' &&
	'$ckpt' inspect --json '$tmp/pty.img' | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d[\"epoll_items\"][0] == {\"epfd\": 6, \"fd\": 4, \"events\": \"0x1\", \"data\": \"0x1234\"}, d[\"epoll_items\"]' &&
	'$ckpt' inspect '$tmp/ep-watch-master' > /dev/null &&
	'$ckpt' inspect '$tmp/ep-watch-0' > /dev/null"
ktap_check "refused: an epoll item on a descriptor that is no epoll or none, or watching one the image does not have; EPOLL without FILES before it" refuse_all \
	"$tmp/ep-nofiles" "sections out of order $(at_of "$tmp/ep-nofiles" 5)" \
	"$tmp/ep-on-sfd" "epoll item on a descriptor that is no epoll of the image $(yat 6)" \
	"$tmp/ep-on-none" "epoll item on a descriptor that is no epoll of the image $(yat 6)" \
	"$tmp/ep-watch-none" "epoll item watching a descriptor the image does not have $(yat 6)"
ydamage pty-flags set 5 4 I 8
ydamage pty-reserved set 5 60 I 1
ydamage pty-end set 4 24 Q 3
ktap_check "PTY: an unknown flag, a reserved field set, an entry naming no end" refuse_all \
	"$tmp/pty-flags" "pseudo-terminal out of bounds $(yat 5)" \
	"$tmp/pty-reserved" "pseudo-terminal out of bounds $(yat 5)" \
	"$tmp/pty-end" "pseudo-terminal entry without its end, or outside a tree $(yat 4)"
# A tree root's node-local file (mkimage -L): section 2 TREE, 4 FILEOBJ, 5 FILES
# (struct ckpt_img_file: kind 12); -l: the same without TREE (3 FILEOBJ).
"$mkimage" -L -P > "$tmp/local.img"
"$mkimage" -l -P > "$tmp/local-alone.img"
ktap_check "a node-local file carried by content: shown, valid" sh -c "
	'$ckpt' inspect '$tmp/local.img' > '$tmp/ltext' && cat '$tmp/ltext' &&
	grep -qx '  0 local size 12288 stored 8192 mode 0640 /tmp/job/seg' '$tmp/ltext'"
damage_of "$tmp/local.img" local-fd set 5 12 I 18
ktap_check "a node-local file outside a tree, a descriptor of that kind: refused" refuse_all \
	"$tmp/local-alone.img" "node-local file object outside a tree's member $(at_of "$tmp/local-alone.img" 3)" \
	"$tmp/local-fd" "unknown file flags or kind $(at_of "$tmp/local.img" 5)"
# That file's open file shared in the tree (flags 4 at 8), the second of
# that file's (CKPT_FILE_OPEN_NR 1 in bits 16-31): valid, shown. The
# number without the sharing, or on a memfd's entry (tobj.img): refused.
damage_of "$tmp/local.img" local-nr set 5 8 I 0x10004
damage_of "$tmp/local.img" local-nr-alone set 5 8 I 0x10000
damage_of "$tmp/tobj-shared" tobj-nr set "$tfiles" 8 I 0x10004
damage_of "$tmp/local-nr" local-nr-dev set 5 24 Q 0x10000002a
open_nr_checks() {
	"$ckpt" inspect "$tmp/local-nr" | grep -xF '  fd 3 at 4 flags 02 tree-shared open 1 /tmp/job/seg' &&
	"$ckpt" inspect --json "$tmp/local-nr" | python3 -c '
import json, sys
f = json.load(sys.stdin)["files"][0]
assert f["tree_shared"] is True and f["open_nr"] == 1, f' &&
	refuse_all \
	"$tmp/local-nr-alone" "an open file's number on an entry other than a tree's shared regular file or directory $(at_of "$tmp/local.img" 5)" \
	"$tmp/tobj-nr" "an open file's number on an entry other than a tree's shared regular file or directory $(at_of "$tmp/tobj.img" "$tfiles")" \
	"$tmp/local-nr-dev" "a tree's shared file with a device number over 32 bits $(at_of "$tmp/local.img" 5)"
}
ktap_check "a file's second open file shared in a tree: numbered, valid and shown; the number unshared or on a memfd, a device number over 32 bits, refused" \
	open_nr_checks
# That file on a procfs (flags 8) or a sysfs (16): valid, shown; on both,
# or a memfd's entry (obj.img, FILES section 4) marked so: refused.
damage_of "$tmp/local.img" local-procfs set 5 8 I 8
damage_of "$tmp/local.img" local-sysfs set 5 8 I 16
damage_of "$tmp/local.img" local-kernfs-both set 5 8 I 24
odamage obj-procfs set 4 8 I 8
kernfs_checks() {
	"$ckpt" inspect "$tmp/local-procfs" | grep -xF '  fd 3 at 4 flags 02 procfs /tmp/job/seg' &&
	"$ckpt" inspect --json "$tmp/local-sysfs" | python3 -c '
import json, sys
f = json.load(sys.stdin)["files"][0]
assert f["sysfs"] is True and f["procfs"] is False, f' &&
	refuse_all \
	"$tmp/local-kernfs-both" "only a regular file or directory is on a procfs or a sysfs, and on one of them $(at_of "$tmp/local.img" 5)" \
	"$tmp/obj-procfs" "only a regular file or directory is on a procfs or a sysfs, and on one of them $(oat 4)"
}
ktap_check "a file on a procfs or a sysfs: valid and shown; on both, or a memfd marked so, refused" \
	kernfs_checks
# An inotify instance (mkimage -N): section 3 FILES (fd 3, next watch 5
# at pos, byte 16), 4 INOTIFY (544 bytes a watch: fd 0, wd 4, mask 8,
# reserved 12, path 32; watches 1 and 4).
"$mkimage" -N -P > "$tmp/ino.img"
idamage() { damage_of "$tmp/ino.img" "$@"; }
iat() { at_of "$tmp/ino.img" "$1"; }
inotify_shown() {
	"$ckpt" inspect "$tmp/ino.img" > "$tmp/itext" && cat "$tmp/itext" &&
	grep -qx '  fd 3 at 5 flags 04000 anon_inode:inotify' "$tmp/itext" &&
	grep -qx 'inotify watches: 2' "$tmp/itext" &&
	grep -qx '  fd 3 wd 1 mask 0x2 /tmp/job/log' "$tmp/itext" &&
	grep -qx '  fd 3 wd 4 mask 0x80000300 /tmp/job' "$tmp/itext" &&
	"$ckpt" inspect --json "$tmp/ino.img" | python3 -c '
import json, sys
w = json.load(sys.stdin)["inotify"]
assert [(x["fd"], x["wd"], x["mask"], x["path"]) for x in w] == [
    (3, 1, "0x2", "/tmp/job/log"), (3, 4, "0x80000300", "/tmp/job")], w'
}
ktap_check "an inotify instance and its watches: valid, shown" inotify_shown
idamage ino-order set 4 548 i 1
idamage ino-past set 4 548 i 5
idamage ino-zero set 4 4 i 0
idamage ino-mask set 4 8 I 0x1000
idamage ino-nomask set 4 8 I 0
idamage ino-reserved set 4 12 I 1
idamage ino-path bytes 4 32 746d70
idamage ino-fd set 4 0 I 4
idamage ino-pos set 3 16 Q 0
idamage ino-pos-high set 3 16 Q 0x80000000
idamage ino-dev set 3 24 Q 1
ktap_check "inotify watches out of order, past the next number, numbered 0, of unknown mask or none, reserved set, a relative path, on no inotify; its state out of bounds" refuse_all \
	"$tmp/ino-order" "inotify watch numbers out of order or out of bounds $(iat 4)" \
	"$tmp/ino-past" "inotify watch numbers out of order or out of bounds $(iat 4)" \
	"$tmp/ino-zero" "inotify watch numbers out of order or out of bounds $(iat 4)" \
	"$tmp/ino-mask" "unknown inotify mask or reserved field set $(iat 4)" \
	"$tmp/ino-nomask" "unknown inotify mask or reserved field set $(iat 4)" \
	"$tmp/ino-reserved" "unknown inotify mask or reserved field set $(iat 4)" \
	"$tmp/ino-path" "inotify watch path not absolute or not terminated $(iat 4)" \
	"$tmp/ino-fd" "inotify watch on a descriptor that is no inotify of the image $(iat 4)" \
	"$tmp/ino-pos" "inotify state out of bounds $(iat 3)" \
	"$tmp/ino-pos-high" "inotify state out of bounds $(iat 3)" \
	"$tmp/ino-dev" "inotify state out of bounds $(iat 3)"
# Several trees taken as one (CKPT_CHECKPOINT_ROOTS): a member past 0 with
# no parent is marked CKPT_TREE_ROOT (struct ckpt_img_tree: index at 16,
# nr_members at 20, flags at 36), and only such a member.
damage_of "$tmp/local.img" root0-flag set 2 36 I 8
damage_of "$tmp/local.img" root-i1 set 2 16 I 1
damage_of "$tmp/root-i1" root-nomark set 2 20 I 2
damage_of "$tmp/root-nomark" root-other set 2 36 I 8
ktap_check "another root (CKPT_TREE_ROOT): shown, valid" sh -c "
	'$ckpt' inspect '$tmp/root-other' > '$tmp/rtext' &&
	grep -q '^tree: member 1 of 2, another root, ' '$tmp/rtext'"
ktap_check "refused: member 0 marked as another root, a member past 0 with no parent unmarked" refuse_all \
	"$tmp/root0-flag" "TREE: member 0 marked as another root $(at_of "$tmp/local.img" 2)" \
	"$tmp/root-nomark" "TREE: the roots and only the roots have no parent $(at_of "$tmp/local.img" 2)"
# A tree root's System V objects and zombie children (mkimage -I): section
# 2 TREE, 4 SYSVSHM, 5 SYSVDATA, 6 SYSVSHM (removed), 7 SYSVSEM, 8 SYSVMSG,
# 9 and 10 ZOMBIE, 11 and 12 SEMUNDO (sets 0 and 65536), 14 VMAS (the
# segment's mapping is entry 3).
"$mkimage" -I -P > "$tmp/sysv.img"
sdamage() { damage_of "$tmp/sysv.img" "$@"; }
sat() { at_of "$tmp/sysv.img" "$1"; }
ktap_check "System V objects and zombie children: shown, valid, in text and JSON" sh -c "
	'$ckpt' inspect '$tmp/sysv.img' > '$tmp/stext' && cat '$tmp/stext' &&
	grep -qx 'System V objects: 4' '$tmp/stext' &&
	grep -q '^tree: member 0 of 1, the root, pgid 4242 sid 4242, id [0-9a-f]*, child subreaper$' '$tmp/stext' &&
	grep -qx '  shm id 32769 key 0x00000000 uid 1000 gid 1000 cuid 1000 cgid 1000 mode 0640 size 4096 stored 0 removed' '$tmp/stext' &&
	grep -qx '  sem id 0 key 0x00000000 uid 1000 gid 1000 cuid 1000 cgid 1000 mode 0666 nsems 2' '$tmp/stext' &&
	grep -q ' maywrite,sysv /SYSV5ee1c0de' '$tmp/stext' &&
	grep -qx '  pid 4249 exit 3 exit_signal 17 pgid 4242 sid 4242' '$tmp/stext' &&
	grep -qx '  pid 4250 signal 15 exit_signal 17 pgid 4250 sid 4242' '$tmp/stext' &&
	'$ckpt' inspect --json '$tmp/sysv.img' | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [o[\"kind\"] for o in d[\"sysv\"]] == [\"shm\", \"shm\", \"sem\", \"msg\"], d[\"sysv\"]
assert d[\"sysv\"][0][\"key\"] == \"0x5ee1c0de\" and d[\"sysv\"][1][\"removed\"] is True
assert d[\"sysv\"][3][\"messages\"] == 2
assert d[\"zombies\"][1] == {\"pid\": 4250, \"signal\": 15, \"core\": False, \"exit_signal\": 17, \"pgid\": 4250, \"sid\": 4242}'"
sdamage shm-mode set 4 24 I 0x200
sdamage shm-stored set 4 40 Q 9000
sdamage shm-less set 4 40 Q 0
sdamage shm-more set 4 40 Q 8192
sdamage data-id set 5 0 I 4
sdamage data-off set 5 8 Q 8192
sdamage shm-order set 6 0 I 2
ktap_check "a segment: a mode bit, more stored than its size, its bytes more or fewer than it says, bytes of another or beyond it, ids not ascending" refuse_all \
	"$tmp/shm-mode" "System V object's id, mode or flags out of bounds $(sat 4)" \
	"$tmp/shm-stored" "System V segment size out of bounds $(sat 4)" \
	"$tmp/shm-less" "SYSVDATA holds more than SYSVSHM says it stores $(sat 5)" \
	"$tmp/shm-more" "SYSVDATA does not hold what SYSVSHM says it stores $(sat 6)" \
	"$tmp/data-id" "SYSVDATA outside its segment or out of order $(sat 5)" \
	"$tmp/data-off" "SYSVDATA outside its segment or out of order $(sat 5)" \
	"$tmp/shm-order" "System V objects too many, or their ids not ascending $(sat 6)"
sdamage sem-val set 7 44 I 32768
sdamage sem-nsems set 7 32 I 3
sdamage msg-type set 8 48 q 0
sdamage msg-nr set 8 40 I 1
sdamage vma-sysv set 14 1756 I 0x1200
ktap_check "a semaphore above SEMVMX or more than its set holds, a message of type 0, fewer messages than bytes, a segment mapped private" refuse_all \
	"$tmp/sem-val" "System V semaphore value above SEMVMX $(sat 7)" \
	"$tmp/sem-nsems" "System V semaphore set out of bounds $(sat 7)" \
	"$tmp/msg-type" "System V message type or length out of bounds $(sat 8)" \
	"$tmp/msg-nr" "System V message queue's messages do not fill it $(sat 8)" \
	"$tmp/vma-sysv" "System V segment mapping out of bounds $(sat 14)"
sdamage tree-flag set 2 36 I 16
sdamage tree-res set 2 44 I 1
sdamage tree-ctty set 2 40 I 3
sdamage tree-cttyflag set 2 36 I 5
damage_of "$tmp/tree-cttyflag" tree-cttybig set 2 40 I 0x100000
damage_of "$tmp/tree-cttyflag" tree-cttyok set 2 40 I 7
sdamage zombie-stopped set 9 4 I 0x137f
sdamage zombie-nopid set 9 0 I 0
sdamage zombie-self set 10 0 I 4242
sdamage zombie-sig set 10 8 I 65
ktap_check "a zombie: a stopped status, no pid, the process itself, an exit signal past 64; an unknown TREE flag or field, a terminal's number without its flag or past devpts' last" refuse_all \
	"$tmp/tree-flag" "reserved TREE field set $(sat 2)" \
	"$tmp/tree-res" "reserved TREE field set $(sat 2)" \
	"$tmp/tree-ctty" "TREE: a controlling terminal's number out of bounds or without its flag $(sat 2)" \
	"$tmp/tree-cttybig" "TREE: a controlling terminal's number out of bounds or without its flag $(sat 2)" \
	"$tmp/zombie-stopped" "zombie's status is no exit status $(sat 9)" \
	"$tmp/zombie-nopid" "zombie's pid, group, session or exit signal out of bounds $(sat 9)" \
	"$tmp/zombie-self" "a process its own zombie child $(sat 10)" \
	"$tmp/zombie-sig" "zombie's pid, group, session or exit signal out of bounds $(sat 10)"
ktap_check "semaphore adjustments: those not 0 shown, in text and JSON" sh -c "
	'$ckpt' inspect '$tmp/sysv.img' > '$tmp/utext' &&
	grep -A2 -x 'semaphore adjustments: 2 sets' '$tmp/utext' | tee /dev/stderr |
		tr '\\n' '|' | grep -qx 'semaphore adjustments: 2 sets|  set 0 nsems 2 sem 0 +1|  set 65536 nsems 2 sem 1 -3|' &&
	'$ckpt' inspect --json '$tmp/sysv.img' | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d[\"semundo\"] == [{\"id\": 0, \"nsems\": 2, \"adj\": [{\"sem\": 0, \"adj\": 1}]},
                         {\"id\": 65536, \"nsems\": 2, \"adj\": [{\"sem\": 1, \"adj\": -3}]}], d[\"semundo\"]'"
sdamage undo-nsems set 11 4 I 3
sdamage undo-id set 12 0 I 0x80000000
sdamage undo-order set 12 0 I 0
sdamage undo-none set 11 4 I 0
ktap_check "semaphore adjustments: a count the section does not hold, none, an id out of bounds, sets not ascending" refuse_all \
	"$tmp/undo-nsems" "semaphore adjustments out of bounds $(sat 11)" \
	"$tmp/undo-none" "semaphore adjustments out of bounds $(sat 11)" \
	"$tmp/undo-id" "semaphore adjustments out of bounds $(sat 12)" \
	"$tmp/undo-order" "semaphore adjustments' set ids not ascending $(sat 12)"
ktap_check "a member's controlling terminal: shown in text and JSON; none: null" sh -c "
	'$ckpt' inspect '$tmp/tree-cttyok' | grep '^tree: ' | tee /dev/stderr |
		grep -q ', child subreaper, controlling terminal: pts 7$' &&
	'$ckpt' inspect --json '$tmp/tree-cttyok' | grep -q '\"ctty\":7[,}]' &&
	'$ckpt' inspect --json '$tmp/sysv.img' | grep -q '\"ctty\":null[,}]'"
damage exe-rel bytes 1 2992 78
ktap_check "an executable path that is not absolute" \
	refuse "$tmp/exe-rel" "executable path not absolute $(at 1)"

ktap_check "a missing file is named" sh -c "
	! '$ckpt' inspect '$tmp/no-such.img' 2> '$tmp/e' && cat '$tmp/e' &&
	grep -qx 'ckpt inspect: cannot open $tmp/no-such.img: No such file or directory' '$tmp/e'"
ktap_check "a directory that is no tree's: its missing manifest is named" sh -c "
	! '$ckpt' inspect '$tmp' 2> '$tmp/e' && cat '$tmp/e' &&
	grep -qx 'ckpt inspect: cannot open $tmp/manifest: No such file or directory' '$tmp/e'"
# A tree's manifest is read line by line, and each wrong line is named.
mkdir -p "$tmp/t1" "$tmp/t2" "$tmp/t3" "$tmp/t4"
printf 'ckpt-tree 2\n' > "$tmp/t1/manifest"
printf 'ckpt-tree 1\nid %032d\nmembers 2\nmember 10 -\nmember 11 1\n' 0 > "$tmp/t2/manifest"
printf 'ckpt-tree 1\nid %032d\nmembers 1\nmember 10 -\nmore\n' 0 > "$tmp/t3/manifest"
printf 'ckpt-tree 1\nid %032d\nmembers 1\nmember 10 -\n' 0 > "$tmp/t4/manifest"
ktap_check "tree manifests: a wrong line is named, a missing image too" sh -c "
	! '$ckpt' inspect '$tmp/t1' 2> '$tmp/e1'; ! '$ckpt' inspect '$tmp/t2' 2> '$tmp/e2';
	! '$ckpt' inspect '$tmp/t3' 2> '$tmp/e3'; ! '$ckpt' inspect --json '$tmp/t4' > '$tmp/j4' 2> '$tmp/e4';
	cat '$tmp/e1' '$tmp/e2' '$tmp/e3' '$tmp/e4' '$tmp/j4' &&
	grep -q 't1/manifest: line 1 is not' '$tmp/e1' && grep -q 't2/manifest: line 5 is not' '$tmp/e2' &&
	grep -q 't3/manifest: line 5 is not' '$tmp/e3' && grep -q 'cannot open $tmp/t4/10.img' '$tmp/e4' &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[\"valid\"] is False, d' '$tmp/j4'"
ktap_check "usage: no image, two images, an unknown option: exit 1" sh -c "
	! '$ckpt' inspect 2> '$tmp/e' && grep -q '^usage: ckpt inspect' '$tmp/e' &&
	! '$ckpt' inspect '$img' '$img' 2> '$tmp/e' && grep -q '^usage: ckpt inspect' '$tmp/e' &&
	! '$ckpt' inspect --bogus '$img' 2> '$tmp/e' && grep -q '^usage: ckpt inspect' '$tmp/e'"
ktap_check "inspect --help, exit 0; listed by ckpt --help" sh -c "
	'$ckpt' inspect --help | grep -q '^usage: ckpt inspect' &&
	'$ckpt' --help | grep -q '^  inspect '"
# The checksum itself: XXH64's published values, and the C code (fed
# whole and in pieces) against the Python one on random data.
ktap_check "XXH64 of \"\" and \"abc\": ef46db3751d8e999, 44bc2cf5ad770999" \
	sh -c "[ \"\$(printf '' | '$mkimage' -c)\" = 'ef46db3751d8e999 ef46db3751d8e999' ] &&
	[ \"\$(printf abc | '$mkimage' -c)\" = '44bc2cf5ad770999 44bc2cf5ad770999' ]"
head -c 100003 /dev/urandom > "$tmp/rand"
ktap_check "XXH64 of random data: C whole, C in pieces and Python agree" \
	sh -c "set -- \$('$mkimage' -c < '$tmp/rand') &&
	want=\$(python3 -c 'import sys; exec(open(\"$tmp/img.py\").read().split(\"def sections\")[0]); print(\"%016x\" % xxh64(open(sys.argv[1], \"rb\").read()))' '$tmp/rand') &&
	echo \"\$1 \$2 \$want\" && [ \"\$1\" = \"\$want\" ] && [ \"\$2\" = \"\$want\" ]"

ktap_finish
