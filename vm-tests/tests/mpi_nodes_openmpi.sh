#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's Open MPI 4.1 over two nodes, 4 ranks over its TCP BTL on ckpt0:
# checkpointed and let go on three times to its end, then its last
# snapshot restarted with the nodes swapped (vm-tests/lib/mpinodes.sh
# says what is checked); then MPIX_Checkpoint over both nodes, asked by
# rank 0 on node0 (Open MPI puts its first ranks on mpirun's node;
# mpi_nodes_mpich.sh has rank 0 ask from node1, through node0's ckptd),
# killed and restarted from that snapshot. Swapped, each node's
# runtime finds the files of its session directory in the other node's
# /tmp: ckptd's checkpoints carry a job's tmpfs files (engine.md, "Tmpfs
# files").
#
# Topology: node0 and node1 on the private link ckpt0, each with ckptd,
# the snapshot root on the results share both mount. Some 8 minutes
# alone: a limit of 20.
# nodes: 2
# kernels: 6.12
# timeout: 1200
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinodes.sh"
ktap_plan 10
mpinodes_start
mpi_job openmpi "$NODES_OPENMPI"
mpix_job openmpi "$NODES_OPENMPI" node0
ktap_finish
