# SPDX-License-Identifier: GPL-2.0
#
# One node's MPI jobs under ckptd, for mpi_node.sh and mpi_api.sh: the
# engine, a dummy interface ckptd0 (192.0.2.1/24) for the libraries' TCP,
# ckptd with its snapshots under a temporary directory, and the helpers
# below. MPICH over Debian's UCX 1.13 runs as Documentation/testing.md
# says (UCX_TLS=tcp,self, MPIR_CVAR_NOLOCAL=1, -iface ckptd0): even so its
# MPI_Finalize now and then never returns, with or without ckpt, so a
# run's result is its output line, read within a bound, and the job is
# ended after it. Open MPI 4.1 runs as root with OMPI_ALLOW_RUN_AS_ROOT,
# over the TCP BTL on ckptd0, --oversubscribe on the VM's 2 CPUs.
#
# Source it, call ktap_plan N, then mpinode_start (one test point);
# MPIRUN_MPICH and MPIRUN_OPENMPI are each library's mpirun with its
# arguments.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
. "$CKPT_TOP/vm-tests/lib/heatref.sh"

bin=$CKPT_TOP/build/bin
tmp=$(mktemp -d)
chmod 755 "$tmp"
snap=$tmp/snap
export CKPTD_SOCKET=$tmp/ckptd.sock PATH=$bin:$PATH
export UCX_TLS=tcp,self UCX_TCP_PUT_ENABLE=n MPIR_CVAR_NOLOCAL=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN_MPICH="mpirun.mpich -np 4 -iface ckptd0"
MPIRUN_OPENMPI="mpirun.openmpi -np 4 --oversubscribe --mca btl tcp,self
	--mca btl_tcp_if_include ckptd0 --mca oob_tcp_if_include ckptd0"

cleanup() {
	local p
	[ -n "${ckptd:-}" ] && kill "$ckptd" 2> /dev/null
	for p in heat alltoall window mpix; do
		pkill -KILL -x $p 2> /dev/null || true
	done
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

# Starts "ckpt-run --name $1 $run $2..." with output in $tmp/$1.out; sets
# job and runner once its four ranks run.
start_job() {
	local name=$1
	shift
	(cd "$tmp" && exec timeout 400 ckpt-run --name "$name" $run "$@" \
		> "$tmp/$name.out" 2> "$tmp/$name.err") &
	runner=$!
	ktap_poll 120 grep -q '^ckpt-run: job ' "$tmp/$name.err" ||
		ktap_note "$name: no job after 120 s"
	job=$(sed -n 's/^ckpt-run: job \([0-9a-f]*\)$/\1/p' "$tmp/$name.err")
	# Four ranks in the job's cgroup, past MPI_Init (a second of work).
	ktap_poll 120 sh -c "test \$(grep -lx '$(basename "$1")' \
		\$(sed 's|.*|/proc/&/comm|' /sys/fs/cgroup/ckpt/$job/cgroup.procs) \
		/dev/null 2> /dev/null | wc -l) = 4" ||
		ktap_note "$name: four ranks did not show in 120 s"
	sleep 2
}

# plain_run NAME PATTERN PROGRAM [ARGS...]: "$run PROGRAM ARGS" without
# ckpt, output in $tmp/NAME.out, until a line of it matches PATTERN (300 s
# at most); then nothing of it is left.
plain_run() {
	local name=$1 pat=$2 pid
	shift 2
	(cd "$tmp" && exec timeout 300 $run "$@" > "$tmp/$name.out" 2>&1) &
	pid=$!
	has_line "$tmp/$name.out" "$pat" 300 || true
	kill -KILL $pid 2> /dev/null || true
	pkill -KILL -x "$(basename "$1")" 2> /dev/null || true
	wait $pid 2> /dev/null || true
}

# restart_job NAME SNAPSHOT: "ckpt restart SNAPSHOT", output in
# $tmp/NAME.out; sets runner.
restart_job() {
	(cd "$tmp" && exec timeout 400 ckpt restart "$2" \
		> "$tmp/$1.out" 2> "$tmp/$1.err") &
	runner=$!
}

mpinode_start() {
	ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"
	ip link add ckptd0 type dummy
	ip addr add 192.0.2.1/24 dev ckptd0
	ip link set ckptd0 up
	head -c 32 /dev/urandom > "$tmp/key"
	chmod 600 "$tmp/key"
	mkdir -p /etc/ckpt
	cat > /etc/ckpt/mpi-node-test.conf <<EOC
snapshot_root = $snap
key_file = $tmp/key
socket = $CKPTD_SOCKET
log_level = 2
EOC
	ckptd --foreground --config /etc/ckpt/mpi-node-test.conf >> "$tmp/ckptd.log" 2>&1 &
	ckptd=$!
	ktap_poll 60 test -S "$CKPTD_SOCKET" || ktap_note "ckptd: no socket after 60 s"
}
