#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's Open MPI 4.1 over two nodes, 4 ranks over its TCP BTL on ckpt0:
# checkpointed and let go on three times, checkpointed with --kill and
# restarted on the same nodes, then with the nodes swapped
# (vm-tests/lib/mpinodes.sh says what is checked). Swapped, each node's
# runtime finds the files of its session directory in the other node's
# /tmp: ckptd's checkpoints carry a job's tmpfs files (engine.md, "Files").
#
# Topology: node0 and node1 on the private link ckpt0, each with ckptd,
# the snapshot root on the results share both mount.
# nodes: 2
# kernels: 6.12
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinodes.sh"
mpi_job openmpi "mpirun.openmpi --host node0:2,node1:2 -np 4 --mca btl tcp,self
	--mca btl_tcp_if_include ckpt0 --mca oob_tcp_if_include ckpt0"
ktap_finish
