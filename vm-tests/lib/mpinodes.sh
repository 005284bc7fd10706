# SPDX-License-Identifier: GPL-2.0
#
# Unmodified MPI jobs over two nodes (Documentation/ckptd.md, "TCP between
# nodes"), for mpi_nodes_openmpi.sh and mpi_nodes_mpich.sh (heat and
# alltoall, one library each, to keep within a test's limit): 4 ranks of
# tests/mpi/heat or tests/mpi/alltoall, two on each node, started with
# the library's mpirun under ckpt-run on node0, which starts node1's part
# through ckpt-ssh, so the job is ckptd's on both. Their TCP connections between the nodes (the TCP BTL
# or UCX's tcp transport between ranks, the runtimes' own links, ckpt-ssh's
# link) are captured end by end, one end in each node's share, and joined
# by the coordinator. Checked: the heat job checkpointed and let go on
# three times mid-run ends with the checksum of an uninterrupted run of the
# same 4 ranks (run natively on the build host, make heat-refs: heat's
# result does not depend on where its ranks run), and so does its last
# snapshot, once it has ended, restarted with the nodes swapped (their addresses mapped:
# Documentation/decisions.md, "TCP on other nodes"; Open MPI's session
# directory in each node's /tmp made again on the other from the
# snapshot: "A job's files on a node's own file systems"); heat's first
# and last ranks first talk to each other after the restart. The
# all-to-all stress program, checkpointed and let go on, then with --kill,
# and restarted (MPICH's with the nodes swapped, Open MPI's on the same
# nodes), verifies every byte of every message between every pair of
# ranks. MPIX_Checkpoint asked by a rank 0 on the node that does not
# coordinate the job (mpix_job).
#
# MPICH over UCX's tcp transport as in mpi_node.sh (MPI_Finalize may spin:
# a run's result is its output line, read within a bound, and the job is
# ended after it).
#
# Source it, then: ktap_plan, mpinodes_start, mpi_job IMPL "MPIRUN ARGS",
# a2a_job IMPL "MPIRUN ARGS", sysv_nodes_job, vader_nodes_job,
# ucx_sysv_nodes_job or mpix_job IMPL "MPIRUN ARGS", ktap_finish.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
. "$CKPT_TOP/vm-tests/lib/heatref.sh"

shared=${ckptvm_out:?}/mpi-nodes
. "$CKPT_TOP/vm-tests/lib/twonodes.sh"
export PATH=$bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export UCX_TLS=tcp,self UCX_TCP_PUT_ENABLE=n MPIR_CVAR_NOLOCAL=1
# Each library's mpirun over both nodes, two ranks on each, on ckpt0.
NODES_MPICH="mpirun.mpich -hosts node0:2,node1:2 -n 4 -iface ckpt0"
NODES_OPENMPI="mpirun.openmpi --host node0:2,node1:2 -np 4 --mca btl tcp,self
	--mca btl_tcp_if_include ckpt0 --mca oob_tcp_if_include ckpt0"

# By name, never by command line (which would match the ssh that says it).
kill_ranks="pkill -KILL -x heat; pkill -KILL -x alltoall; pkill -KILL -x mpix
	pkill -KILL -x hydra_pmi_proxy; pkill -KILL -x orted
	pkill -KILL -x mpirun.openmpi; pkill -KILL -x mpirun.mpich; pkill -KILL -x orterun
	pkill -KILL -x mpiexec.hydra; true"

# Leftovers of a run (a killed job's) on both nodes.
cleanup_ranks() {
	local n
	for n in node0 node1; do
		ssh "$n" "$kill_ranks" > /dev/null 2>&1 || true
	done
}

cleanup() {
	local logs=$ckptvm_out/mpi-nodes-logs/$(basename "$0" .sh)

	cleanup_ranks
	# The daemons' logs and the jobs' stderr outlive the run, for a slow
	# or failed point's story (stop 66: a restart that took 502 s in a
	# whole make check, whose logs were gone).
	mkdir -p "$logs"
	cp "$shared"/ckptd-node*.log "$shared"/*.err "$logs/" 2> /dev/null || true
	twonodes_cleanup
}
trap cleanup EXIT

# Ends what is left of job $1 on both nodes (ranks stuck in MPI_Finalize)
# and waits for its runner, pid $2.
end_job() {
	local n
	for n in node0 node1; do
		ssh "$n" "for p in \$(cat /sys/fs/cgroup/ckpt/$1/cgroup.procs 2> /dev/null); do
			kill -KILL \$p; done" 2> /dev/null || true
	done
	wait "$2" 2> /dev/null || true
}

# Whether file $1 has a line matching $2, within $3 seconds; with $4, a
# pid, not once that process has ended without it.
has_line() {
	local end=$((SECONDS + $3))
	until grep -qE "$2" "$1" 2> /dev/null; do
		[ "$SECONDS" -lt "$end" ] || return 1
		[ -z "${4:-}" ] || kill -0 "$4" 2> /dev/null ||
			{ grep -qE "$2" "$1" 2> /dev/null; return; }
		ktap_nap 0.5
	done
}

# start_job NAME CMD...: "ckpt-run --name NAME $run CMD..." on node0, its
# output in $shared/NAME.out; sets job and runner once two ranks run on
# each node.
start_job() {
	local name=$1
	shift
	(cd "$shared" && exec timeout 500 ckpt-run --name "$name" $run "$@" \
		> "$shared/$name.out" 2> "$shared/$name.err") &
	runner=$!
	ktap_poll 120 grep -q '^ckpt-run: job ' "$shared/$name.err" ||
		ktap_note "$name: no job after 120 s"
	job=$(job_of "$shared/$name.err")
	for n in node0 node1; do
		ktap_poll 300 ssh "$n" "test \$(grep -lx ${1##*/} \$(sed 's|.*|/proc/&/comm|' \
			/sys/fs/cgroup/ckpt/$job/cgroup.procs) /dev/null 2> /dev/null | wc -l) = 2" ||
			ktap_note "$name: two ranks on $n did not show"
	done
	sleep 3
}

# mpinodes_start: both nodes ready (2 points).
mpinodes_start() {
	start_nodes
}

# restart_bg NAME NODE SNAPSHOT [ARGS...]: "ckpt restart SNAPSHOT ARGS" on
# NODE in the background, its output in $shared/NAME.out; sets runner.
restart_bg() {
	local name=$1 node=$2 from=$3
	shift 3
	(exec ssh "$node" "cd '$shared' && exec timeout 500 '$bin/ckpt' restart \
		'$from' $*" > "$shared/$name.out" 2> "$shared/$name.err") &
	runner=$!
}

# restart_from NAME NODE WHERE WHAT LINE [ARGS...]: job $job's latest
# snapshot restarted by "ckpt restart" on NODE with ARGS, its output in
# $shared/NAME.out, which must have a line matching the ERE LINE (WHAT).
restart_from() {
	local name=$1 node=$2 where=$3 what=$4 line=$5
	shift 5
	restart_bg "$name" "$node" "$snap/$job/latest" "$@"
	has_line "$shared/$name.out" '^(heat|alltoall): ' 400 "$runner" || cat "$shared/$name.err"
	end_job "$job" "$runner"
	ktap_check "${name%%-*}: restarted $where: $what" grep -qxE "$line" "$shared/$name.out"
	cleanup_ranks
}

# mpi_job IMPL "MPIRUN ARGS": every check above
# with IMPL's heat. 6 points.
mpi_job() {
	local impl=$1 heat=$CKPT_TOP/build/tests/mpi/$1/heat want pace=$shared/pace
	run=$2
	# The reference: the same 4 ranks uninterrupted, without ckpt (heat's
	# grid and checksum do not depend on where its ranks run).
	want=$(heat_ref "$impl" 200)
	ktap_check "$impl: an uninterrupted run of its 4 ranks: $want" test -n "$want"

	# 200 ms a step, and held after its last step until the checkpoints
	# are made (heat's WHILE file): a slow machine's third checkpoint came
	# once as Open MPI's mpirun was removing its session directory at the
	# job's end, and once (CI, stop 51) after the job had ended. The
	# rest of the run and the restart go at full speed (1 to 3 s).
	touch "$pace"
	start_job $impl-cont "$heat" 200 200 "$pace"
	for n in 1 2 3; do
		ktap_check "$impl: checkpointed with the ranks' connections between the nodes, let go on: snapshot $n" \
			sh -c "timeout 300 ckpt job '$job' --timeout 180 | tee /dev/stderr | grep -q '^snapshot *$snap/$job/$n\$'"
		sleep 2
	done
	rm -f "$pace"
	has_line "$shared/$impl-cont.out" '^heat: ' 400 "$runner" || cat "$shared/$impl-cont.err"
	end_job "$job" "$runner"
	ktap_check "$impl: after three checkpoints, the uninterrupted run's checksum" \
		grep -qxF "$want" "$shared/$impl-cont.out"
	cleanup_ranks

	# The job has ended: its last snapshot restarted with the nodes
	# swapped. Its first and last ranks first talk after the restart.
	want=$(printf '%s' "$want" | sed 's/[][\\.^$*+?(){}|]/\\&/g')
	# node0's share on node1 and node1's on node0: the root's share is
	# restarted where it is to run, on node1.
	restart_from "$impl-swap" node1 "from its last snapshot once it ended, with the nodes swapped" \
		"the uninterrupted run's checksum" "$want" \
		--hosts node0=node1,node1=node0
}

# sysv_nodes_job: Open MPI's shared-memory BTL (vader) over System V
# segments on both nodes, TCP between them, under ckpt-run --ns: each
# node's ranks in namespaces of the job's own there, orted's through
# ckpt-ssh (ckptd.md, "Jobs in namespaces of their own"), so that the
# segments are taken; killed and restarted on the same nodes, the
# uninterrupted run's checksum. 2 points.
sysv_nodes_job() {
	local heat=$CKPT_TOP/build/tests/mpi/openmpi/heat pace=$shared/pace want
	want=$(heat_ref openmpi 200)
	run="--ns ${NODES_OPENMPI/btl tcp,self/btl vader,tcp,self} --mca shmem sysv
		--mca btl_vader_single_copy_mechanism none"
	touch "$pace"
	start_job openmpi-sysv "$heat" 200 100 "$pace"
	ktap_check "openmpi --ns, vader over System V segments on both nodes: checkpointed with --kill" sh -c \
		"timeout 300 ckpt job '$job' --kill --timeout 180 | tee /dev/stderr |
		 grep -q '^snapshot *$snap/$job/1\$'"
	wait "$runner" 2> /dev/null || true
	rm -f "$pace"
	restart_bg openmpi-sysv-restart node0 "$snap/$job/1"
	has_line "$shared/openmpi-sysv-restart.out" '^heat: ' 400 "$runner" ||
		cat "$shared/openmpi-sysv-restart.err"
	end_job "$job" "$runner"
	ktap_check "openmpi --ns over both nodes: restarted, the uninterrupted run's checksum" \
		grep -qxF "$want" "$shared/openmpi-sysv-restart.out"
	cleanup_ranks
}

# kill_swap IMPL NAME MAPPED WHAT: IMPL's heat run by "$run" over both
# nodes, paced until its checkpoint; node0's ranks seen to map MAPPED (a
# pattern of /proc/PID/maps), checkpointed with --kill and restarted with
# the nodes swapped, so that what each node's ranks mapped comes back on
# the other: the uninterrupted run's checksum. 2 points.
kill_swap() {
	local impl=$1 name=$2 mapped=$3 what=$4 pace=$shared/pace want
	want=$(heat_ref "$impl" 200)
	touch "$pace"
	start_job "$name" "$CKPT_TOP/build/tests/mpi/$impl/heat" 200 100 "$pace"
	ktap_check "$what: checkpointed with --kill" sh -c \
		"grep -l '$mapped' /dev/null \$(pgrep -x heat | sed 's|.*|/proc/&/maps|') &&
		 timeout 300 ckpt job '$job' --kill --timeout 180 | tee /dev/stderr |
		 grep -q '^snapshot *$snap/$job/1\$'"
	wait "$runner" 2> /dev/null || true
	rm -f "$pace"
	cleanup_ranks
	restart_from "$name-swap" node1 "with the nodes swapped ($what)" \
		"the uninterrupted run's checksum" "$want" --hosts node0=node1,node1=node0
}

# vader_nodes_job: Open MPI with its default BTLs, vader over the files it
# maps within each node (in /dev/shm and its session directory), tcp
# between the nodes, under plain ckpt-run. 2 points.
vader_nodes_job() {
	run="${NODES_OPENMPI/--mca btl tcp,self/}"
	kill_swap openmpi openmpi-vader vader_segment \
		"openmpi over its default BTLs (vader within each node)"
}

# ucx_sysv_nodes_job: MPICH over UCX's sysv transport within each node
# (System V segments), cma, and tcp between the nodes, under plain
# ckpt-run. 2 points.
ucx_sysv_nodes_job() {
	run=$NODES_MPICH
	UCX_TLS=sysv,cma,tcp,self kill_swap mpich mpich-sysv ' /SYSV' \
		"mpich over UCX's sysv within each node"
}

# a2a_job IMPL "MPIRUN ARGS" same|swapped: the stress program, IMPL's
# alltoall: every pair of ranks, within and across the nodes, talking in
# every round (paced until the kill); let go on once, then killed and
# restarted on the same nodes or with the nodes swapped. A byte lost, doubled or wrong ends it
# without its line. 3 points.
a2a_job() {
	local impl=$1 a2a=$CKPT_TOP/build/tests/mpi/$1/alltoall pace=$shared/pace
	run=$2
	touch "$pace"
	start_job $impl-a2a "$a2a" 120 300 "$pace"
	ktap_check "$impl: alltoall over both nodes, checkpointed and let go on" sh -c \
		"timeout 300 ckpt job '$job' --timeout 180 | tee /dev/stderr | grep -q '^snapshot *$snap/$job/1\$'"
	sleep 2
	ktap_check "$impl: alltoall, checkpointed with --kill" sh -c \
		"timeout 300 ckpt job '$job' --kill --timeout 180 | tee /dev/stderr | grep -q '^snapshot *$snap/$job/2\$'"
	wait "$runner" 2> /dev/null || true
	rm -f "$pace"
	cleanup_ranks
	if [ "$3" = swapped ]; then
		restart_from "$impl-a2a-swap" node1 "with the nodes swapped" \
			"every byte of 120 rounds verified" \
			'alltoall: 4 ranks, 120 rounds, [0-9]+ bytes verified' \
			--hosts node0=node1,node1=node0
	else
		restart_from "$impl-a2a-restart" node0 "on the same nodes" \
			"every byte of 120 rounds verified" \
			'alltoall: 4 ranks, 120 rounds, [0-9]+ bytes verified'
	fi
}

# mpix_job IMPL "MPIRUN ARGS" NODE: IMPL's mpix (tests/mpi/mpix: 40 steps
# 500 ms apart, MPIX_Checkpoint after 20), whose MPIRUN ARGS put rank 0,
# which asks ckptd, on NODE. On node0 its ckptd coordinates the job; on
# node1 its ckptd passes the request to node0's (daemon/ask.c). Held
# after the checkpoint (mpix's HOLD, a file never made: the snapshot is
# committed after the ranks go on, and may take longer than the last 20
# steps), killed once that snapshot is in, restarted from it. 2 points.
mpix_job() {
	local impl=$1 mpix=$CKPT_TOP/build/tests/mpi/$1/mpix out err how said
	local sum='^mpix: 4 ranks, 40 steps, sum 3280$'
	run=$2
	start_job $impl-mpix "$mpix" 40 500 "$shared/$impl-mpix.hold"
	if [ "$3" = node1 ]; then
		how="rank 0 on node1, node0 coordinating"
		said="job $job: the detached checkpoint passed to its coordinator, node node0"
	else
		how="rank 0 on node0, which coordinates"
		said="job $job: the detached checkpoint starts"
	fi
	out=$shared/$impl-mpix.out
	has_line "$out" '^mpix: step 20: ' 180 "$runner" || cat "$shared/$impl-mpix.err"
	ktap_poll 60 test -f "$snap/$job/1/meta.json" || true
	end_job "$job" "$runner"
	cleanup_ranks
	ktap_check "$impl: MPIX_Checkpoint, $how: checkpoint, snapshot 1 made" \
		sh -c "cat '$out'; grep -qx 'mpix: step 20: checkpoint' '$out' &&
			test -f '$snap/$job/1/meta.json' && ! grep -q '^mpix: 4 ranks' '$out' &&
			grep -q \"$said\" '$shared/ckptd-$3.log'"
	restart_bg $impl-mpix-restart node0 "$snap/$job/1"
	out=$shared/$impl-mpix-restart.out
	err=$shared/$impl-mpix-restart.err
	has_line "$out" '^mpix: 4 ranks' 300 "$runner" || cat "$err"
	end_job "$job" "$runner"
	cleanup_ranks
	ktap_check "$impl: restarted from it: MPIX_Checkpoint returns restart, the uninterrupted sum" \
		sh -c "cat '$out'; grep -qx 'mpix: step 20: restart' '$out' && grep -q '$sum' '$out'"
}
