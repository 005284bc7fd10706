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
# mid-run ends with the checksum of an uninterrupted run; checkpointed
# with --kill mid-run and restarted from its snapshot, it prints that same
# checksum; the all-to-all job, checkpointed once and then with --kill and
# restarted, finds every byte right. Heat's final reduction has ranks 0
# and 2 exchange their first message, after the restart.
#
# MPICH over Debian's UCX 1.13 is run as Documentation/testing.md says:
# UCX_TLS=tcp,self (its shared-memory transports spin in MPI_Finalize
# here, ckpt or not), MPIR_CVAR_NOLOCAL=1, -iface ckptd0 (a dummy
# interface with 192.0.2.1/24). Even so MPI_Finalize now and then never
# returns, with or without ckpt: a run's result is its output line, read
# within a bound, and the job is ended after it if it has not ended.
#
# Open MPI 4.1 is run as root with OMPI_ALLOW_RUN_AS_ROOT, over the TCP
# BTL on ckptd0 (--mca btl tcp,self, btl_tcp_if_include and
# oob_tcp_if_include ckptd0), --oversubscribe on the VM's 2 CPUs.
#
# Some 3 minutes under TCG: on one kernel line only (the engine's TCP and
# pty paths run on both in tree_tcp and tree_pty; make demo runs MPICH on
# 6.1).
# kernels: 6.12
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

bin=$CKPT_TOP/build/bin
tmp=$(mktemp -d)
chmod 755 "$tmp"
snap=$tmp/snap
export CKPTD_SOCKET=$tmp/ckptd.sock PATH=$bin:$PATH
export UCX_TLS=tcp,self UCX_TCP_PUT_ENABLE=n MPIR_CVAR_NOLOCAL=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cleanup() {
	[ -n "${ckptd:-}" ] && kill "$ckptd" 2> /dev/null
	pkill -KILL -x heat 2> /dev/null || true
	pkill -KILL -x alltoall 2> /dev/null || true
	pkill -KILL -f hydra_pmi_proxy 2> /dev/null || true
	pkill -KILL -f mpirun 2> /dev/null || true
	wait 2> /dev/null || true
	ip link del ckptd0 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp" /etc/ckpt/mpi-node-test.conf
}
trap cleanup EXIT

# Whether file $1 has a line matching $2, within $3 seconds.
has_line() {
	ktap_poll "$3" grep -qE "$2" "$1"
}

# Ends what is left of job $1 (ranks stuck in MPI_Finalize) and waits for
# its runner, pid $2.
end_job() {
	local p
	for p in $(cat "/sys/fs/cgroup/ckpt/$1/cgroup.procs" 2> /dev/null); do
		kill -KILL "$p" 2> /dev/null || true
	done
	wait "$2" 2> /dev/null || true
}

# Starts "ckpt-run --name $1 ..." with output in $tmp/$1.out; sets job and
# runner once its ranks run.
start_job() {
	local name=$1
	shift
	(cd "$tmp" && exec timeout 400 ckpt-run --name "$name" $run "$@" \
		> "$tmp/$name.out" 2> "$tmp/$name.err") &
	runner=$!
	ktap_poll 60 grep -q '^ckpt-run: job ' "$tmp/$name.err"
	job=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/$name.err")
	# Four ranks in the job's cgroup, past MPI_Init (a second of work).
	ktap_poll 60 sh -c "test \$(grep -lx '$(basename "$1")' \
		\$(sed 's|.*|/proc/&/comm|' /sys/fs/cgroup/ckpt/$job/cgroup.procs) \
		/dev/null 2> /dev/null | wc -l) = 4"
	sleep 2
}

ktap_plan 23
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"
ip link add ckptd0 type dummy
ip addr add 192.0.2.1/24 dev ckptd0
ip link set ckptd0 up
head -c 32 /dev/urandom > "$tmp/key"
chmod 600 "$tmp/key"
mkdir -p /etc/ckpt
cat > /etc/ckpt/mpi-node-test.conf <<EOF
snapshot_root = $snap
key_file = $tmp/key
socket = $CKPTD_SOCKET
log_level = 2
EOF
ckptd --foreground --config /etc/ckpt/mpi-node-test.conf >> "$tmp/ckptd.log" 2>&1 &
ckptd=$!
ktap_poll 20 test -S "$CKPTD_SOCKET"

# mpi_job IMPL "MPIRUN ARGS": every check above with IMPL's programs
# (build/tests/mpi/IMPL) run by "MPIRUN ARGS PROGRAM ...".
mpi_job() {
	local impl=$1 mpi=$CKPT_TOP/build/tests/mpi/$1 want ref
	run=$2
	# The reference: 200 steps, uninterrupted, without ckpt.
	(cd "$tmp" && exec timeout 300 $run "$mpi/heat" 200 > "$tmp/$impl-ref.out" 2>&1) &
	ref=$!
	has_line "$tmp/$impl-ref.out" '^heat: 4 ranks, .* checksum 0x' 300 || true
	kill -KILL $ref 2> /dev/null || true
	pkill -KILL -x heat 2> /dev/null || true
	wait $ref 2> /dev/null || true
	want=$(grep '^heat: ' "$tmp/$impl-ref.out" || true)
	ktap_check "$impl: an uninterrupted run: $want" test -n "$want"

	# Three checkpoints of a running job, each let go on.
	start_job $impl-cont "$mpi/heat" 200 100
	for n in 1 2 3; do
		ktap_check "$impl: heat, checkpointed and let go on: snapshot $n" sh -c \
			"timeout 300 ckpt job '$job' | grep -q '^snapshot *$snap/$job/$n\$'"
		sleep 1
	done
	has_line "$tmp/$impl-cont.out" '^heat: ' 300 || true
	end_job "$job" "$runner"
	ktap_check "$impl: after three checkpoints, the uninterrupted run's checksum" \
		grep -qxF "$want" "$tmp/$impl-cont.out"

	# Killed mid-run, restarted from the snapshot.
	start_job $impl-kill "$mpi/heat" 200 100
	ktap_check "$impl: heat, checkpointed with --kill mid-run" sh -c \
		"timeout 300 ckpt job '$job' --kill | grep -q '^snapshot *$snap/$job/1\$'"
	wait "$runner" 2> /dev/null || true
	ktap_check "$impl: killed before its end: no checksum printed" \
		sh -c "! grep -q '^heat:' '$tmp/$impl-kill.out'"
	(cd "$tmp" && exec timeout 400 ckpt restart "$snap/$job/latest" \
		> "$tmp/$impl-restart.out" 2> "$tmp/$impl-restart.err") &
	runner=$!
	has_line "$tmp/$impl-restart.out" '^heat: ' 300 || cat "$tmp/$impl-restart.err"
	end_job "$job" "$runner"
	ktap_check "$impl: restarted from the snapshot: the uninterrupted run's checksum" \
		grep -qxF "$want" "$tmp/$impl-restart.out"

	# The all-to-all job: a checkpoint let go on, then --kill and a restart.
	start_job $impl-a2a "$mpi/alltoall" 150 100
	ktap_check "$impl: alltoall, checkpointed and let go on" sh -c \
		"timeout 300 ckpt job '$job' | grep -q '^snapshot *$snap/$job/1\$'"
	sleep 1
	ktap_check "$impl: alltoall, checkpointed with --kill" sh -c \
		"timeout 300 ckpt job '$job' --kill | grep -q '^snapshot *$snap/$job/2\$'"
	wait "$runner" 2> /dev/null || true
	(cd "$tmp" && exec timeout 400 ckpt restart "$snap/$job/latest" \
		> "$tmp/$impl-a2a-restart.out" 2> "$tmp/$impl-a2a-restart.err") &
	runner=$!
	has_line "$tmp/$impl-a2a-restart.out" '^alltoall: ' 300 || cat "$tmp/$impl-a2a-restart.err"
	end_job "$job" "$runner"
	ktap_check "$impl: restarted: every byte of 150 rounds verified" \
		grep -qE '^alltoall: 4 ranks, 150 rounds, [0-9]+ bytes verified$' "$tmp/$impl-a2a-restart.out"
	cat "$tmp/$impl-a2a-restart.out" "$tmp/$impl-cont.out" | sed 's/^/# /'
}

mpi_job mpich "mpirun.mpich -np 4 -iface ckptd0"
mpi_job openmpi "mpirun.openmpi -np 4 --oversubscribe --mca btl tcp,self
	--mca btl_tcp_if_include ckptd0 --mca oob_tcp_if_include ckptd0"
ktap_finish
