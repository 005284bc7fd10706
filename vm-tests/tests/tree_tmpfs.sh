#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A tree's files on a node's own file system (tmpfs), carried by content
# with "ckpt checkpoint --tree --tmpfs" (what ckptd does for every job):
# tests/workloads/tmpfstree, a root and its child taking turns through a
# tmpfs file both map MAP_SHARED and logging each turn to a tmpfs file both
# hold open and to another both hold open write-only, is checkpointed with
# --kill mid-run. Its directory removed (as on another node, or after a
# clean-up), the restart makes the three files again
# with their content (the hole kept, missing directories 0700, the files
# their modes) and the tree ends as an uninterrupted run does. Checked too:
# the same restart with the files still there uses them; a file that is
# another at the path is refused by name, starting nothing; one the tree
# shares with a process outside it is carried; without --tmpfs a removed
# file is refused by name, as before. Debian 12's /tmp is on the root
# file system, not a tmpfs: the same tree in /var/tmp on an ext4 file
# system (a loop device here) is carried as well (--local-files, the
# option's name now), and in a directory elsewhere on that file system
# it is not. A restarted tree, in a mount namespace of its own with its
# own mount of /var/tmp, has a file it opened there carried when
# checkpointed again.
#
# Topology: one node, no network.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
. "$CKPT_TOP/vm-tests/lib/tree.sh"

prog=$CKPT_TOP/build/tests/workloads/tmpfstree
turns=3000
tmp=$(mktemp -d)
dir=$tmp/job

elsewhere=/mnt/ckpt-tree-tmpfs

# on_ext4 DIR: DIR is the test's ext4 file system (the guest's own /var/tmp
# is a tmpfs, which must stay).
on_ext4() {
	test "$(stat -f -c %T "$1" 2> /dev/null)" = ext2/ext3
}

cleanup() {
	pkill -KILL -x tmpfstree 2> /dev/null || true
	wait 2> /dev/null || true
	! on_ext4 /var/tmp || umount /var/tmp 2> /dev/null || true
	! on_ext4 "$elsewhere" || umount "$elsewhere" 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# run NAME [FLAGS]: the tree in $dir, checkpointed with --kill and FLAGS
# into $tmp/NAME once it has had 20 turns.
run() {
	rm -rf "$dir" "$tmp/ready"
	setsid "$prog" "$dir" "$turns" "$tmp/ready" > /dev/null 2>&1 &
	root=$!
	ktap_poll 120 test -e "$tmp/ready" || ktap_note "$1: not ready after 120 s"
	ckpt checkpoint --tree "$root" --kill --timeout 60 ${2:-} -o "$tmp/$1" > /dev/null ||
		ktap_note "$1: the checkpoint failed"
	reap "$root" 30 || true
}

# restart NAME: restarts $tmp/NAME, its output in $tmp/NAME.out, its
# status in $rc.
restart() {
	rc=0
	timeout 120 ckpt restart "$tmp/$1" > "$tmp/$1.out" 2> "$tmp/$1.err" || rc=$?
	cat "$tmp/$1.err" >&2
}

ktap_plan 15
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"

rc=0
"$prog" "$tmp/ref" "$turns" "$tmp/ref.ready" > "$tmp/expected" || rc=$?
sed 's/^/# uninterrupted: /' "$tmp/expected"
ktap_check "an uninterrupted run ends with 3 and a complete log" \
	sh -c "test $rc = 3 && grep -q ', log complete, out complete\$' '$tmp/expected'"

run carried --tmpfs
ktap_check "the images carry the three tmpfs files, the hole left out" sh -c "
	ckpt inspect -v '$tmp/carried/$root.img' > '$tmp/inspect.txt' &&
	grep -E '^  [0-9]+ local size 12288 stored 8192 mode 0640 .*$dir/sub/seg' '$tmp/inspect.txt' &&
	grep -E '^  [0-9]+ local size [1-9][0-9]* stored [1-9][0-9]* mode 0600 .*$dir/log' '$tmp/inspect.txt' &&
	grep -E '^  [0-9]+ local size [1-9][0-9]* stored [1-9][0-9]* mode 0644 .*$dir/out' '$tmp/inspect.txt'"

rm -rf "$dir"
restart carried
ktap_check "their directory removed, the restart makes them again and ends as an uninterrupted run" \
	sh -c "test $rc = 3 && cmp '$tmp/expected' '$tmp/carried.out'"
ktap_check "made as they were: the directories 0700, the files their modes" sh -c "
	test \"\$(stat -c %a '$dir' '$dir/sub' '$dir/sub/seg' '$dir/log' '$dir/out' | tr '\n' ' ')\" = '700 700 640 600 644 '"

# The files the restart made are not the checkpoint's: refused, by name.
restart carried
ktap_check "another file at the path is refused by name, starting nothing" sh -c "
	test $rc != 0 && test $rc != 3 &&
	grep -qE '$dir/(sub/seg|log|out) is not the file it was at the checkpoint' '$tmp/carried.err' &&
	! pgrep -x tmpfstree"

# The files still there (the same node, not cleaned): used as they are.
run kept --tmpfs
restart kept
ktap_check "the files still there are used: the restart ends as an uninterrupted run" \
	sh -c "test $rc = 3 && cmp '$tmp/expected' '$tmp/kept.out'"

# A tmpfs file the tree's root inherited write-only from a process outside
# the tree, which holds it too (a launcher's "exec 3>>FILE"): carried all
# the same, as its name is anyone's, not refused as an open file shared
# with the outside.
rm -rf "$dir" "$tmp/ready" "$tmp/outside"
mkdir "$tmp/outside"
sh -c 'exec 3>> "$1/shared"; setsid "$2" "$3" "$4" "$5" > /dev/null 2>&1 & echo $! > "$1/pid"; wait' \
	sh "$tmp/outside" "$prog" "$dir" "$turns" "$tmp/ready" &
launcher=$!
ktap_poll 120 test -e "$tmp/ready" || ktap_note "outside: not ready after 120 s"
root=$(cat "$tmp/outside/pid")
ktap_check "one shared with a process outside the tree is carried, not refused" sh -c "
	ckpt checkpoint --tree $root --kill --timeout 60 --tmpfs -o '$tmp/outside/img' &&
	ckpt inspect -v '$tmp/outside/img/$root.img' |
		grep -E '^  [0-9]+ local size 0 stored 0 mode 0644 .*$tmp/outside/shared'"
wait "$launcher" 2> /dev/null || true

# On a local disk: /var/tmp an ext4 file system, the tree in it.
truncate -s 64M "$tmp/disk.img"
# (No /dev/loop* until the module is in: mount would say EPERM.)
modprobe loop || true
mkfs.ext4 -q -F "$tmp/disk.img" > /dev/null 2>&1 && mount -o loop "$tmp/disk.img" /var/tmp ||
	ktap_note "no ext4 file system on /var/tmp"
tmpfs_dir=$dir
dir=/var/tmp/job
run disk --local-files
ktap_check "under /var/tmp on ext4, the images carry the three files" sh -c "
	test \"\$(stat -f -c %T /var/tmp)\" = ext2/ext3 &&
	ckpt inspect -v '$tmp/disk/$root.img' > '$tmp/disk.txt' &&
	grep -E '^  [0-9]+ local size 12288 stored 8192 mode 0640 $dir/sub/seg\$' '$tmp/disk.txt' &&
	grep -E '^  [0-9]+ local size [1-9][0-9]* stored [1-9][0-9]* mode 0600 $dir/log\$' '$tmp/disk.txt' &&
	grep -E '^  [0-9]+ local size [1-9][0-9]* stored [1-9][0-9]* mode 0644 $dir/out\$' '$tmp/disk.txt'"
rm -rf "$dir"
restart disk
ktap_check "their directory removed from the disk, the restart makes them again and ends as an uninterrupted run" \
	sh -c "test $rc = 3 && cmp '$tmp/expected' '$tmp/disk.out' && test -s '$dir/sub/seg'"
# A restarted tree is in a mount namespace of its own (its /proc), where
# /var/tmp is a mount of its own too: a file it opens there after the
# restart is still the node's.
cat > "$tmp/hold.py" <<'EOF'
import os, signal, sys, time
path, ready, opened, go = sys.argv[1:5]
fd = None
asked = False
def ask(sig, frame):
    global asked
    asked = True
c = os.fork()
if c == 0:
    while not os.path.exists(go):
        time.sleep(0.05)
    os._exit(0)
signal.signal(signal.SIGUSR1, ask)
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.05)
    if asked and fd is None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.write(fd, b"kept\n")
        open(opened, "w").close()
os.lseek(fd, 0, os.SEEK_SET)
print(os.read(fd, 64).decode().strip(), flush=True)
os.waitpid(c, 0)
EOF
rm -f "$tmp/h.ready" "$tmp/h.opened" "$tmp/h.go"
setsid python3 "$tmp/hold.py" /var/tmp/held/h "$tmp/h.ready" "$tmp/h.opened" "$tmp/h.go" > /dev/null &
h=$!
ktap_poll 120 test -e "$tmp/h.ready" || ktap_note "h.ready not there after 120 s"
ckpt checkpoint --tree "$h" --kill -o "$tmp/h1" > /dev/null || ktap_note "h1: the checkpoint failed"
reap "$h" 30 2> /dev/null || true
ckpt restart "$tmp/h1" > /dev/null 2> "$tmp/h1.err" &
restarter=$!
h_found() { h_root=$(restarted_root "$restarter" 2 python3); }
h_root=
ktap_poll 150 h_found || ktap_note "the restart's two never ran: $(cat "$tmp/h1.err")"
# (Its images are named by the pids of its first run, which it has again.)
ktap_check "a restarted tree's file opened in /var/tmp (its mount namespace's), checkpointed: carried" sh -c "
	kill -USR1 '$h_root' && for i in \$(seq 100); do test -e '$tmp/h.opened' && break; sleep 0.3; done &&
	ckpt checkpoint --tree '$h_root' --kill --local-files -o '$tmp/h2' &&
	ckpt inspect -v '$tmp/h2/$h.img' | grep -E '^  [0-9]+ local size 5 stored [0-9]+ mode 0600 /var/tmp/held/h\$'"
reap "$restarter" 30 2> /dev/null || true
rm -rf /var/tmp/held
touch "$tmp/h.go"
ktap_check "that file removed, the restart makes it again with its content" sh -c "
	timeout 120 ckpt restart '$tmp/h2' > '$tmp/h2.out'; rc=\$?; cat '$tmp/h2.out'; test \$rc = 0 && grep -qx kept '$tmp/h2.out'"

# The same file system elsewhere: files of a disk, maybe shared, by path.
on_ext4 /var/tmp && { umount /var/tmp || ktap_note "cannot unmount /var/tmp"; }
mkdir -p "$elsewhere"
mount -o loop "$tmp/disk.img" "$elsewhere" || ktap_note "cannot mount the ext4 file system at $elsewhere"
dir=$elsewhere/job
run away --local-files
ktap_check "the same ext4 file system outside /tmp and /var/tmp: its files stay by path" sh -c "
	test \"\$(stat -f -c %T '$elsewhere')\" = ext2/ext3 &&
	ckpt inspect -v '$tmp/away/$root.img' > '$tmp/away.txt' &&
	grep -q '$dir/sub/seg' '$tmp/away.txt' && ! grep -E '^  [0-9]+ local ' '$tmp/away.txt'"
! on_ext4 "$elsewhere" || umount "$elsewhere" || true
dir=$tmpfs_dir

# Without --tmpfs, a removed file is refused as before.
run plain
ktap_check "without --tmpfs the images carry no tmpfs file" sh -c "
	ckpt inspect -v '$tmp/plain/$root.img' > '$tmp/plain.txt' &&
	grep -q '$dir/sub/seg' '$tmp/plain.txt' && ! grep -E '^  [0-9]+ local ' '$tmp/plain.txt'"
rm -rf "$dir"
restart plain
ktap_check "without --tmpfs a removed file is refused by name" sh -c "
	test $rc != 0 && test $rc != 3 && grep -q '$dir/' '$tmp/plain.err' && ! pgrep -x tmpfstree"
ktap_finish
