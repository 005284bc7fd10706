#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What an MPI job sees of ckpt, with each of Debian's MPI libraries, 4
# ranks on one node under ckpt-run (vm-tests/lib/mpinode.sh):
#
# - Checkpoints between MPI_Init and MPI_Finalize only (tests/mpi/window,
#   whose ranks stop before each edge until the test lets them on): a
#   checkpoint before MPI_Init has ended waits for it up to its timeout
#   and is then refused by name, the job running on; one asked with a
#   longer timeout waits and is taken once MPI_Init has ended; one in
#   MPI_Finalize is refused by name.
# - MPIX_Checkpoint (tests/mpi/mpix, linked with libckpt-mpi): the job
#   asks for its own checkpoint halfway and the call returns checkpoint;
#   the job then dies (SIGKILL), and restarted from that snapshot it
#   returns restart and ends with the sum of an uninterrupted run; run
#   without ckpt-run, the call returns ignore, and the sum is the same.
#
# About 3 minutes under TCG alone, 391 s in a whole make check (stop 51):
# a limit of 20 minutes (testing.md, "Time limits"). User space, on one
# kernel line.
# kernels: 6.12
# timeout: 1200
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinode.sh"

ktap_plan 13
mpinode_start

# The window: IMPL's window program, "MPIRUN ARGS" in $run.
window_job() {
	local impl=$1 w=$tmp/$1-w waiter
	mkdir "$w"
	start_job $impl-window "$CKPT_TOP/build/tests/mpi/$impl/window" "$w"
	ktap_check "$impl: before MPI_Init: the checkpoint waits its timeout, then is refused, named" sh -c \
		"! timeout 60 ckpt job '$job' --timeout 5 2> '$w/e1'; cat '$w/e1';
		 grep -q 'pid [0-9]*.*an MPI rank before the end of MPI_Init longer than the timeout' '$w/e1'"
	(timeout 240 ckpt job "$job" --timeout 180 > "$w/c2" 2>&1) &
	waiter=$!
	sleep 2
	touch "$w/init"
	wait $waiter || true
	ktap_check "$impl: one asked before MPI_Init waits for its end: snapshot 1" sh -c \
		"cat '$w/c2'; grep -q '^snapshot *$snap/$job/1\$' '$w/c2' &&
		 grep -qx 'window: inside' '$tmp/$impl-window.out'"
	touch "$w/finalize"
	has_line "$tmp/$impl-window.out" '^window: finalizing' 60 || true
	sleep 1
	ktap_check "$impl: in or past MPI_Finalize: refused, named" sh -c \
		"! timeout 60 ckpt job '$job' --timeout 5 2> '$w/e3'; cat '$w/e3';
		 grep -q 'pid [0-9]*.*an MPI rank in or past MPI_Finalize longer than the timeout' '$w/e3'"
	touch "$w/exit"
	has_line "$tmp/$impl-window.out" '^window: finalized' 30 || true
	end_job "$job" "$runner"
}

# MPIX_Checkpoint: IMPL's mpix, 40 steps; the sum is 4 * 40 * 41 / 2.
# Killed once its snapshot is in, before its end: a job that dies leaves
# Open MPI's session directory in /tmp, which its restart needs (one that
# ends cleans it away; Documentation/status.md). Rank 0 holds after the
# checkpoint until a file that is never made exists (mpix's HOLD): the
# snapshot is committed after the ranks go on, and under load that may
# take longer than the last 20 steps.
mpix_job() {
	local impl=$1 mpix=$CKPT_TOP/build/tests/mpi/$1/mpix
	local sum='^mpix: 4 ranks, 40 steps, sum 3280$'
	start_job $impl-mpix "$mpix" 40 500 "$tmp/$impl-mpix.hold"
	has_line "$tmp/$impl-mpix.out" '^mpix: step 20: ' 120 || cat "$tmp/$impl-mpix.err"
	ktap_poll 60 test -f "$snap/$job/1/meta.json" || true
	end_job "$job" "$runner"
	ktap_check "$impl: MPIX_Checkpoint returns checkpoint, snapshot 1 is made; the job is killed then" sh -c \
		"cat '$tmp/$impl-mpix.out'; grep -qx 'mpix: step 20: checkpoint' '$tmp/$impl-mpix.out' &&
		 test -f '$snap/$job/1/meta.json' && ! grep -q '^mpix: 4 ranks' '$tmp/$impl-mpix.out'"
	restart_job $impl-mpix-restart "$snap/$job/1"
	has_line "$tmp/$impl-mpix-restart.out" '^mpix: 4 ranks' 300 || cat "$tmp/$impl-mpix-restart.err"
	end_job "$job" "$runner"
	ktap_check "$impl: restarted from it: MPIX_Checkpoint returns restart, the uninterrupted sum" sh -c \
		"cat '$tmp/$impl-mpix-restart.out'; grep -qx 'mpix: step 20: restart' '$tmp/$impl-mpix-restart.out' &&
		 grep -q '$sum' '$tmp/$impl-mpix-restart.out'"
	plain_run $impl-mpix-plain '^mpix: 4 ranks' "$mpix" 40
	ktap_check "$impl: without ckpt-run: MPIX_Checkpoint returns ignore, the same sum" sh -c \
		"cat '$tmp/$impl-mpix-plain.out'; grep -qx 'mpix: step 20: ignore' '$tmp/$impl-mpix-plain.out' &&
		 grep -q '$sum' '$tmp/$impl-mpix-plain.out'"
}

for impl in mpich openmpi; do
	[ $impl = mpich ] && run=$MPIRUN_MPICH || run=$MPIRUN_OPENMPI
	window_job $impl
	mpix_job $impl
done
ktap_finish
