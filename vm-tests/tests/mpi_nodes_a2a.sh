#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The all-to-all stress program (tests/mpi/alltoall: random-size messages
# between every pair of ranks, every byte verified) over two nodes, 4 ranks,
# two on each, with MPICH 4.0 (UCX's tcp transport) and then Open MPI 4.1
# (its TCP BTL): checkpointed and let go on, then checkpointed with --kill
# and restarted, MPICH's with the nodes swapped and Open MPI's on the same
# nodes (each library's heat restarts swapped in mpi_nodes_*.sh); each must
# end verifying every byte of its 200 rounds (vm-tests/lib/mpinodes.sh). About 8 minutes alone: a
# limit of 15.
#
# Topology: node0 and node1 on the private link ckpt0, each with ckptd,
# the snapshot root on the results share both mount.
# nodes: 2
# kernels: 6.12
# timeout: 900
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinodes.sh"
ktap_plan 8
mpinodes_start
a2a_job mpich "$NODES_MPICH" swapped
a2a_job openmpi "$NODES_OPENMPI" same
ktap_finish
