# SPDX-License-Identifier: GPL-2.0
#
# heat_ref IMPL ITERS: the line of an uninterrupted run of 4 ranks of
# IMPL's heat ITERS, without ckpt, made on the build host before the VMs
# boot (make heat-refs: tests/mpi/heat-ref, which says why it is the
# line a guest's run prints); nothing, and a word on stderr, if it is not
# there. For mpi_node.sh and the two-node heat tests.
heat_ref() {
	local f=$CKPT_TOP/build/tests/mpi/$1/heat-$2.ref
	if [ -s "$f" ]; then
		cat "$f"
	else
		echo "# $f is missing: run make heat-refs on the host" >&2
	fi
}
