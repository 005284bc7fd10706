#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ckpt checkpoint and ckpt restart as a user runs them, on memhog (two
# threads, beating every 2 ms): the three modes (continue, --stop, --kill),
# the report and its frozen time (text and --json), images of mode 0600,
# a timeout that leaves the process and an earlier image as they were,
# an image streamed through a pipe (checkpoint -o - | gzip, zcat |
# restart -), wrong arguments refused by name, and a restarted process
# checkpointed and restarted again.
#
# Topology: one node, no network.
# User space: on one kernel line (the engine paths it drives run on both
# in the kselftest programs).
# kernels: 6.1
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

hog=$CKPT_TOP/build/tests/workloads/memhog
waitfor=$CKPT_TOP/build/tests/workloads/waitfor
tmp=$(mktemp -d)
pids=()

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -CONT "$p" 2> /dev/null || true
		kill -KILL "$p" 2> /dev/null || true
	done
	wait 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# beats_after FILE: waits (30 s at most) for a beat after the lines FILE has now.
beats_after() {
	"$waitfor" "$1" beat "$(wc -l < "$1")" 30
}

ktap_plan 10
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"

"$hog" 2 4 8 > "$tmp/hog.out" &
hogpid=$!
pids+=("$hogpid")
"$waitfor" "$tmp/hog.out" ready 0 60 || ktap_note "the hog is not ready after 60 s"

ktap_check "checkpoint and continue: a 0600 image, a report with the frozen time, the process beats on" sh -c "
	ckpt checkpoint $hogpid -o '$tmp/a.img' > '$tmp/report' && cat '$tmp/report' &&
	grep -Eq '^pid $hogpid: 3 thread\(s\), [0-9]+ pages, [0-9]+ bytes, frozen [0-9.]+ ms -> $tmp/a.img\$' '$tmp/report' &&
	test \"\$(stat -c %a '$tmp/a.img')\" = 600 &&
	'$waitfor' '$tmp/hog.out' beat \$(wc -l < '$tmp/hog.out') 30 &&
	ckpt inspect '$tmp/a.img' > /dev/null"

ktap_check "--json reports the same, frozen_ns no more than total_ns" sh -c "
	ckpt checkpoint $hogpid -o '$tmp/j.img' --json > '$tmp/json' && cat '$tmp/json' &&
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d[\"pid\"] == $hogpid and d[\"threads\"] == 3 and d[\"image\"] == sys.argv[2], d
assert 0 < d[\"frozen_ns\"] <= d[\"total_ns\"] and d[\"bytes\"] > 4 << 20, d
' '$tmp/json' '$tmp/j.img'"

# A stopped process never reaches a safe point: the checkpoint times out,
# the earlier image stays whole and no temporary file is left.
cp "$tmp/a.img" "$tmp/a.copy"
kill -STOP "$hogpid"
ktap_check "--timeout: a stopped process is refused, named; the earlier image stays" sh -c "
	! ckpt checkpoint $hogpid -o '$tmp/a.img' --timeout 1 2> '$tmp/err'; cat '$tmp/err';
	grep -q '^ckpt checkpoint: pid $hogpid: .*(Connection timed out)\$' '$tmp/err' &&
	cmp '$tmp/a.img' '$tmp/a.copy' && test -z \"\$(ls '$tmp' | grep '\.tmp\.')\" &&
	test \$(awk '/^State:/ { print \$2 }' /proc/$hogpid/status) = T"
kill -CONT "$hogpid"

ktap_check "wrong arguments are refused by name, nothing is touched" sh -c "
	! ckpt checkpoint $hogpid --stop --kill -o '$tmp/x.img' 2> '$tmp/err1'; cat '$tmp/err1';
	! ckpt checkpoint $hogpid --frobnicate 2> '$tmp/err2'; cat '$tmp/err2';
	! ckpt checkpoint 999999 -o '$tmp/x.img' 2> '$tmp/err3'; cat '$tmp/err3';
	! ckpt restart '$tmp/none.img' 2> '$tmp/err4'; cat '$tmp/err4';
	grep -q 'exclude each other' '$tmp/err1' && grep -q 'frobnicate' '$tmp/err2' &&
	grep -q 'pid 999999' '$tmp/err3' && grep -q 'cannot open $tmp/none.img' '$tmp/err4' &&
	test ! -e '$tmp/x.img' && kill -0 $hogpid"

# --stop: captured, then left stopped until SIGCONT.
beats_after "$tmp/hog.out" || ktap_note "the hog does not beat"
ktap_check "--stop leaves the process stopped; SIGCONT resumes it" sh -c "
	ckpt checkpoint $hogpid -o '$tmp/s.img' --stop &&
	test \$(awk '/^State:/ { print \$2 }' /proc/$hogpid/status) = T &&
	n=\$(wc -l < '$tmp/hog.out') && sleep 0.5 && test \$(wc -l < '$tmp/hog.out') = \$n &&
	kill -CONT $hogpid && '$waitfor' '$tmp/hog.out' beat \$n 30"

# --kill into a pipe, compressed; restarted from another pipe. The killed
# process may stay a zombie until this shell reaps it.
ktap_check "--kill streamed through gzip: the process is gone" sh -c "
	ckpt checkpoint $hogpid -o - --kill 2> '$tmp/kreport' | gzip -1 > '$tmp/k.img.gz';
	cat '$tmp/kreport'; grep -q 'bytes, frozen .* -> stdout' '$tmp/kreport' &&
	sleep 0.2 && { ! test -d /proc/$hogpid || grep -q '^State:.*Z' /proc/$hogpid/status; }"
wait "$hogpid" 2> /dev/null || true
last=$(grep beat "$tmp/hog.out" | tail -n 1 | awk '{ print $2 }')

zcat "$tmp/k.img.gz" | ckpt restart - > "$tmp/r1.out" 2> "$tmp/r1.err" &
rpid=$!
pids+=("$rpid")
ktap_check "zcat | ckpt restart -: same pid, beats on from where it was" sh -c "
	'$waitfor' '$tmp/r1.out' beat 0 60; cat '$tmp/r1.err';
	test \$(cat /proc/$hogpid/comm) = memhog &&
	first=\$(grep -m 1 beat '$tmp/r1.out' | awk '{ print \$2 }') &&
	echo 'last beat before: $last, first after: '\$first &&
	test \$first -gt $last && test \$first -le \$(($last + 100))"

# The restarted process, checkpointed with --kill and restarted again.
# On any failure the process is killed, so that no wait below can hang.
ckpt checkpoint "$hogpid" -o "$tmp/b.img" --kill > "$tmp/breport" 2>&1 && bok=1 ||
	{ bok=0; kill -KILL "$hogpid" 2> /dev/null || true; }
wait "$rpid" && rrc=0 || rrc=$?
ktap_check "a restarted process checkpointed with --kill: its restarter exits 137" sh -c "
	cat '$tmp/breport'; echo 'restarter exit $rrc'; test $bok = 1 && test $rrc = 137"
ckpt restart "$tmp/b.img" > "$tmp/r2.out" 2> "$tmp/r2.err" &
r2=$!
pids+=("$r2")
if "$waitfor" "$tmp/r2.out" beat 0 60; then
	kill -TERM "$hogpid"
else
	kill -KILL "$hogpid" 2> /dev/null || true
fi
wait "$r2" && r2rc=0 || r2rc=$?
ktap_check "restarted again, it beats; SIGTERM ends it and its restarter exits 143" sh -c "
	cat '$tmp/r2.err'; echo 'restarter exit $r2rc';
	grep -q beat '$tmp/r2.out' && test $r2rc = 143"
ktap_finish
