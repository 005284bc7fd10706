#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's Open MPI 4.1 over two nodes, 4 ranks over its TCP BTL on ckpt0:
# checkpointed and let go on three times, checkpointed with --kill and
# restarted on the same nodes; its restart with the nodes swapped refused by name
# (vm-tests/lib/mpinodes.sh says what is checked).
#
# Topology: node0 and node1 on the private link ckpt0, each with ckptd,
# the snapshot root on the results share both mount.
# nodes: 2
# kernels: 6.12
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinodes.sh"
# Restarted with the nodes swapped, node1's orted would need the files of
# its session directory, in node1's /tmp, on node0: files a job holds on a
# node's own file systems do not travel with a snapshot yet (ckptd.md,
# "Not yet"). The refusal must name one.
mpi_job openmpi "mpirun.openmpi --host node0:2,node1:2 -np 4 --mca btl tcp,self
	--mca btl_tcp_if_include ckpt0 --mca oob_tcp_if_include ckpt0" \
	'cannot reopen /tmp/ompi\.node[01]\.'
ktap_finish
