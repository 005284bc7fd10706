# SPDX-License-Identifier: GPL-2.0
#
# Unmodified MPI jobs over two nodes (Documentation/ckptd.md, "TCP between
# nodes"), for mpi_nodes_openmpi.sh and mpi_nodes_mpich.sh (one library
# each, to stay within a test's 10 minutes): 4 ranks of tests/mpi/heat,
# two on each node, started with the library's mpirun under ckpt-run on
# node0, which starts node1's part through ckpt-ssh, so the job is
# ckptd's on both. Their TCP connections between the nodes (the TCP BTL
# or UCX's tcp transport between ranks, the runtimes' own links, ckpt-ssh's
# link) are captured end by end, one end in each node's share, and joined
# by the coordinator. Checked: the job checkpointed and let go on three
# times mid-run ends with the checksum of an uninterrupted run; checkpointed
# with --kill and restarted on the same nodes, it prints that checksum
# too, and so it does restarted from that snapshot with the nodes swapped
# (their addresses mapped: Documentation/decisions.md, "TCP on other
# nodes"; Open MPI's session directory in each node's /tmp made again on
# the other from the snapshot: "A job's files on a node's own file
# systems").
#
# MPICH over UCX's tcp transport as in mpi_node.sh (MPI_Finalize may spin:
# a run's result is its output line, read within a bound, and the job is
# ended after it).
#
# Source it, then: mpi_job IMPL "MPIRUN ARGS" and ktap_finish.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

shared=${ckptvm_out:?}/mpi-nodes
. "$CKPT_TOP/vm-tests/lib/twonodes.sh"
export PATH=$bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export UCX_TLS=tcp,self UCX_TCP_PUT_ENABLE=n MPIR_CVAR_NOLOCAL=1

# By name, never by command line (which would match the ssh that says it).
kill_ranks="pkill -KILL -x heat; pkill -KILL -x hydra_pmi_proxy; pkill -KILL -x orted
	pkill -KILL -x mpirun.openmpi; pkill -KILL -x mpirun.mpich; pkill -KILL -x orterun
	pkill -KILL -x mpiexec.hydra; true"

# Leftovers of a run (a reference's, a killed job's) on both nodes.
cleanup_ranks() {
	local n
	for n in node0 node1; do
		ssh "$n" "$kill_ranks" > /dev/null 2>&1 || true
	done
}

cleanup() {
	cleanup_ranks
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
	local end=$(($(date +%s) + $3))
	until grep -qE "$2" "$1" 2> /dev/null; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		[ -z "${4:-}" ] || kill -0 "$4" 2> /dev/null ||
			{ grep -qE "$2" "$1" 2> /dev/null; return; }
		sleep 0.5
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
	ktap_poll 60 grep -q '^ckpt-run: job ' "$shared/$name.err"
	job=$(job_of "$shared/$name.err")
	for n in node0 node1; do
		ktap_poll 90 ssh "$n" "test \$(grep -lx heat \$(sed 's|.*|/proc/&/comm|' \
			/sys/fs/cgroup/ckpt/$job/cgroup.procs) /dev/null 2> /dev/null | wc -l) = 2" ||
			ktap_note "$name: two ranks on $n did not show"
	done
	sleep 3
}

ktap_plan 11
ktap_check "node0: engine, key, ckptd" start_node node0
ktap_check "node1: engine, key, ckptd" start_node node1

# restart_from NAME NODE WHERE [ARGS...]: job $job's latest snapshot
# restarted by "ckpt restart" on NODE with ARGS, its output in
# $shared/NAME.out, which must end with the checksum $want.
restart_from() {
	local name=$1 node=$2 where=$3
	shift 3
	(exec ssh "$node" "cd '$shared' && exec timeout 500 '$bin/ckpt' restart \
		'$snap/$job/latest' $*" > "$shared/$name.out" 2> "$shared/$name.err") &
	runner=$!
	has_line "$shared/$name.out" '^heat: ' 400 "$runner" || cat "$shared/$name.err"
	end_job "$job" "$runner"
	ktap_check "${name%%-*}: restarted $where: the uninterrupted run's checksum" \
		grep -qxF "$want" "$shared/$name.out"
	cleanup_ranks
}

# mpi_job IMPL "MPIRUN ARGS": every check above with IMPL's heat.
mpi_job() {
	local impl=$1 heat=$CKPT_TOP/build/tests/mpi/$1/heat want ref
	run=$2
	# The reference: uninterrupted, without ckpt.
	(cd "$shared" && exec timeout 400 $run "$heat" 300 > "$shared/$impl-ref.out" 2>&1) &
	ref=$!
	has_line "$shared/$impl-ref.out" '^heat: 4 ranks, .* checksum 0x' 400 $ref || true
	kill -KILL $ref 2> /dev/null || true
	cleanup_ranks
	wait $ref 2> /dev/null || true
	want=$(grep '^heat: ' "$shared/$impl-ref.out" || true)
	ktap_check "$impl: an uninterrupted run over both nodes: $want" test -n "$want"

	start_job $impl-cont "$heat" 300 100
	for n in 1 2 3; do
		ktap_check "$impl: checkpointed with the ranks' connections between the nodes, let go on: snapshot $n" \
			sh -c "timeout 300 ckpt job '$job' --timeout 60 | tee /dev/stderr | grep -q '^snapshot *$snap/$job/$n\$'"
		sleep 2
	done
	has_line "$shared/$impl-cont.out" '^heat: ' 400 "$runner" || cat "$shared/$impl-cont.err"
	end_job "$job" "$runner"
	ktap_check "$impl: after three checkpoints, the uninterrupted run's checksum" \
		grep -qxF "$want" "$shared/$impl-cont.out"

	start_job $impl-kill "$heat" 300 100
	ktap_check "$impl: checkpointed with --kill mid-run" sh -c \
		"timeout 300 ckpt job '$job' --kill --timeout 60 | tee /dev/stderr | grep -q '^snapshot *$snap/$job/1\$'"
	wait "$runner" 2> /dev/null || true
	cleanup_ranks
	ktap_check "$impl: killed before its end: no checksum printed" \
		sh -c "! grep -q '^heat:' '$shared/$impl-kill.out'"
	restart_from "$impl-restart" node0 "on the same nodes"
	# node0's share on node1 and node1's on node0: the root's share is
	# restarted where it is to run, on node1.
	restart_from "$impl-swap" node1 "with the nodes swapped" \
		--hosts node0=node1,node1=node0
}
