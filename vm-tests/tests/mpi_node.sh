#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unmodified MPI jobs on one node, as their user runs them, with each of
# Debian's MPI libraries: 4 ranks of tests/mpi/heat (a 2-D stencil with
# halo exchange, one checksum line) and of tests/mpi/alltoall
# (random-size messages, every byte verified), built with its mpicc and
# started with its mpirun under ckpt-run, so the job is ckptd's. MPICH:
# mpirun, hydra_pmi_proxy and the ranks, talking over TCP (hydra's control
# connections, UCX's tcp transport between the ranks). Open MPI: mpirun
# and the ranks, over its TCP BTL and its runtime's TCP links, each rank's
# output through a pseudo-terminal of mpirun's. For each, checked: the
# heat job checkpointed and let go on three times
# mid-run ends with the checksum of an uninterrupted run (made natively on
# the build host: make heat-refs; a snapshot of a
# job that has ended restarts too: mpi_nodes_*.sh, over two nodes);
# checkpointed with --kill mid-run and restarted from its snapshot, it prints that same
# checksum; the all-to-all job, checkpointed once and then with --kill and
# restarted, finds every byte right. Heat's final reduction has ranks 0
# and 2 exchange their first message, after the restart. Open MPI's heat
# once more over its shared-memory BTL on System V segments, started
# with ckpt-run --ns: checkpointed, killed, restarted, the same checksum;
# without --ns too (its segments are the job's alone in the node's IPC
# namespace: the restart makes one for them); and over its default
# on-node transport, vader over mapped files, killed and restarted; and
# MPICH's heat over UCX's sysv and posix shared-memory transports, killed
# and restarted. How
# each library is run: vm-tests/lib/mpinode.sh.
#
# Some 3 minutes under TCG: on one kernel line only (the engine's TCP and
# pty paths run on both in tree_tcp and tree_pty; make demo runs MPICH on
# 6.1).
# 196 s in a whole make check here (stop 51): a limit of 15 minutes
# (testing.md, "Time limits").
# kernels: 6.12
# timeout: 900
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinode.sh"

ktap_plan 34
mpinode_start

# mpi_job IMPL "MPIRUN ARGS": every check above with IMPL's programs
# (build/tests/mpi/IMPL) run by "MPIRUN ARGS PROGRAM ...".
mpi_job() {
	local impl=$1 mpi=$CKPT_TOP/build/tests/mpi/$1 want pace=$tmp/pace
	run=$2
	# The reference: 200 steps, uninterrupted, without ckpt.
	want=$(heat_ref "$impl" 200)
	ktap_check "$impl: an uninterrupted run: $want" test -n "$want"

	# Three checkpoints of a running job, each let go on; paced (100 ms a
	# step) only until they are made (heat's WHILE file).
	touch "$pace"
	start_job $impl-cont "$mpi/heat" 200 100 "$pace"
	for n in 1 2 3; do
		ktap_check "$impl: heat, checkpointed and let go on: snapshot $n" sh -c \
			"timeout 300 ckpt job '$job' --timeout 180 | grep -q '^snapshot *$snap/$job/$n\$'"
		sleep 1
	done
	rm -f "$pace"
	has_line "$tmp/$impl-cont.out" '^heat: ' 300 || true
	end_job "$job" "$runner"
	ktap_check "$impl: after three checkpoints, the uninterrupted run's checksum" \
		grep -qxF "$want" "$tmp/$impl-cont.out"

	# Killed mid-run, restarted from the snapshot.
	touch "$pace"
	start_job $impl-kill "$mpi/heat" 200 100 "$pace"
	ktap_check "$impl: heat, checkpointed with --kill mid-run" sh -c \
		"timeout 300 ckpt job '$job' --kill --timeout 180 | grep -q '^snapshot *$snap/$job/1\$'"
	wait "$runner" 2> /dev/null || true
	rm -f "$pace"
	ktap_check "$impl: killed before its end: no checksum printed" \
		sh -c "! grep -q '^heat:' '$tmp/$impl-kill.out'"
	restart_job $impl-restart "$snap/$job/latest"
	has_line "$tmp/$impl-restart.out" '^heat: ' 300 || cat "$tmp/$impl-restart.err"
	end_job "$job" "$runner"
	ktap_check "$impl: restarted from the snapshot: the uninterrupted run's checksum" \
		grep -qxF "$want" "$tmp/$impl-restart.out"

	# The all-to-all job: a checkpoint let go on, then --kill and a restart.
	touch "$pace"
	start_job $impl-a2a "$mpi/alltoall" 150 100 "$pace"
	ktap_check "$impl: alltoall, checkpointed and let go on" sh -c \
		"timeout 300 ckpt job '$job' --timeout 180 | grep -q '^snapshot *$snap/$job/1\$'"
	sleep 1
	ktap_check "$impl: alltoall, checkpointed with --kill" sh -c \
		"timeout 300 ckpt job '$job' --kill --timeout 180 | grep -q '^snapshot *$snap/$job/2\$'"
	wait "$runner" 2> /dev/null || true
	rm -f "$pace"
	restart_job $impl-a2a-restart "$snap/$job/latest"
	has_line "$tmp/$impl-a2a-restart.out" '^alltoall: ' 300 || cat "$tmp/$impl-a2a-restart.err"
	end_job "$job" "$runner"
	ktap_check "$impl: restarted: every byte of 150 rounds verified" \
		grep -qE '^alltoall: 4 ranks, 150 rounds, [0-9]+ bytes verified$' "$tmp/$impl-a2a-restart.out"
	cat "$tmp/$impl-a2a-restart.out" "$tmp/$impl-cont.out" | sed 's/^/# /'
}

# kill_restart IMPL NAME MAPPED WHAT: IMPL's heat run by "$run", paced
# until its checkpoint; its ranks seen to map MAPPED (a pattern of
# /proc/PID/maps; nothing if empty), checkpointed with --kill and
# restarted from that snapshot: the uninterrupted run's checksum. 2 points.
kill_restart() {
	local impl=$1 name=$2 mapped=$3 what=$4 pace=$tmp/pace want
	want=$(heat_ref "$impl" 200)
	touch "$pace"
	start_job "$name" "$CKPT_TOP/build/tests/mpi/$impl/heat" 200 100 "$pace"
	ktap_check "$what: checkpointed with --kill" sh -c \
		"{ [ -z '$mapped' ] || grep -l '$mapped' /dev/null \$(pgrep -x heat | sed 's|.*|/proc/&/maps|'); } &&
		 timeout 300 ckpt job '$job' --kill --timeout 180 2> '$tmp/$name.kill' |
		 grep -q '^snapshot *$snap/$job/1\$' || { cat '$tmp/$name.kill'; false; }"
	wait "$runner" 2> /dev/null || true
	rm -f "$pace"
	restart_job "$name-restart" "$snap/$job/latest"
	has_line "$tmp/$name-restart.out" '^heat: ' 300 || cat "$tmp/$name-restart.err"
	end_job "$job" "$runner"
	ktap_check "$what: restarted, the uninterrupted run's checksum" \
		grep -qxF "$want" "$tmp/$name-restart.out"
}

# Open MPI's shared-memory BTL (vader) over System V segments (its shmem
# sysv component), the job started with ckpt-run --ns (ckptd.md, "Jobs in
# namespaces of their own"): checkpointed continuing and with --kill,
# restarted, the uninterrupted run's checksum. Without --ns, the same job,
# its segments in the node's IPC namespace but attached by none but its
# ranks, killed and restarted: that checksum too.
sysv_job() {
	local mpi=$CKPT_TOP/build/tests/mpi/openmpi pace=$tmp/pace want
	want=$(heat_ref openmpi 200)
	run="${MPIRUN_OPENMPI/btl tcp,self/btl vader,self} --mca shmem sysv
		--mca btl_vader_single_copy_mechanism none"
	touch "$pace"
	run="--ns $run" start_job openmpi-sysv "$mpi/heat" 200 100 "$pace"
	ktap_check "openmpi --ns, vader over System V segments: checkpointed, let go on" sh -c \
		"timeout 300 ckpt job '$job' --timeout 180 | grep -q '^snapshot *$snap/$job/1\$'"
	ktap_check "and with --kill" sh -c \
		"timeout 300 ckpt job '$job' --kill --timeout 180 | grep -q '^snapshot *$snap/$job/2\$'"
	wait "$runner" 2> /dev/null || true
	rm -f "$pace"
	restart_job openmpi-sysv-restart "$snap/$job/latest"
	has_line "$tmp/openmpi-sysv-restart.out" '^heat: ' 300 || cat "$tmp/openmpi-sysv-restart.err"
	end_job "$job" "$runner"
	ktap_check "openmpi --ns: restarted, the uninterrupted run's checksum" \
		grep -qxF "$want" "$tmp/openmpi-sysv-restart.out"
	kill_restart openmpi openmpi-sysv-host ' /SYSV' \
		"openmpi without --ns, its System V segments in the node's IPC namespace"
	ipcrm --all=shm 2> /dev/null || true
}

# Open MPI as it runs by default on one node: vader over files it maps
# (its backing files in /dev/shm, the session directory's in /tmp), and
# the TCP BTL's only to reach another node. Killed and restarted, the
# uninterrupted run's checksum.
vader_job() {
	run="${MPIRUN_OPENMPI/--mca btl tcp,self/}"
	kill_restart openmpi openmpi-vader vader_segment \
		"openmpi over its default BTLs (vader over mapped files)"
}

# MPICH over UCX's shared-memory transports instead of its tcp: System V
# segments (sysv, seen mapped) and POSIX shared memory (posix), with cma,
# under plain ckpt-run. Killed and restarted, the uninterrupted run's
# checksum (read as every MPICH result here is, within a bound:
# testing.md says why).
ucx_shm_job() {
	run=$MPIRUN_MPICH
	UCX_TLS=sysv,cma,self kill_restart mpich mpich-sysv ' /SYSV' \
		"mpich over UCX's sysv transport"
	UCX_TLS=posix,cma,self kill_restart mpich mpich-posix '' \
		"mpich over UCX's posix transport"
	ipcrm --all=shm 2> /dev/null || true
}

mpi_job mpich "$MPIRUN_MPICH"
mpi_job openmpi "$MPIRUN_OPENMPI"
sysv_job
vader_job
ucx_shm_job
ktap_finish
