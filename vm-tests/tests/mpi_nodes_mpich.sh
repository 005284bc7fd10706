#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's MPICH 4.0 over two nodes, 4 ranks over UCX's tcp transport on
# ckpt0: checkpointed and let go on three times to its end, then its last
# snapshot restarted with the nodes swapped; then MPIX_Checkpoint with the
# ranks placed from node1 first, so that rank 0, which asks for the
# checkpoint, runs on node1, whose ckptd does not coordinate the job and
# passes the request to node0's (daemon/ask.c): it returns checkpoint and
# snapshot 1 is made; the job killed, restarted from it, returns restart
# and ends with the uninterrupted sum (vm-tests/lib/mpinodes.sh says what
# is checked). mpi_nodes_openmpi.sh has Open MPI's rank 0 ask on node0.
#
# Topology: node0 and node1 on the private link ckpt0, each with ckptd,
# the snapshot root on the results share both mount. Some 7 minutes
# alone: a limit of 15.
# nodes: 2
# kernels: 6.12
# timeout: 900
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinodes.sh"
ktap_plan 10
mpinodes_start
mpi_job mpich "$NODES_MPICH"
mpix_job mpich "mpirun.mpich -hosts node1:2,node0:2 -n 4 -iface ckpt0" node1
ktap_finish
