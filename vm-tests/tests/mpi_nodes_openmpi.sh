#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's Open MPI 4.1 over two nodes, 4 ranks over its TCP BTL on ckpt0:
# checkpointed and let go on three times to its end, then its last
# snapshot restarted with the nodes swapped; then the all-to-all stress
# program checkpointed and let go on, checkpointed with --kill and
# restarted on the same nodes (vm-tests/lib/mpinodes.sh says what is
# checked); then, under ckpt-run --ns, heat over the shared-memory BTL on
# System V segments within each node, killed and restarted; then, under
# plain ckpt-run, heat over Open MPI's default BTLs (vader over mapped
# files within each node), killed and restarted with the nodes swapped.
# With CKPT_TEST_MPIX=1, also MPIX_Checkpoint over both nodes,
# asked by rank 0 on node0 (Open MPI puts its first ranks on mpirun's
# node; mpi_nodes_mpich.sh has rank 0 ask from node1, through node0's
# ckptd), killed and restarted from that snapshot: some 3 to 5 minutes,
# left out of make check for CI's hour (stop 44), since what it adds is
# covered apart: Open MPI's MPIX_Checkpoint on one node, whose ckptd
# coordinates as node0's does here (mpi_api), the coordinated checkpoint
# over two nodes (the heat points above), and a request asked on a node
# that does not coordinate (ckptd_nodes). Swapped, each node's runtime
# finds the files of its session directory in the other node's /tmp:
# ckptd's checkpoints carry a job's tmpfs files (engine.md, "Tmpfs
# files").
#
# Topology: node0 and node1 on the private link ckpt0, each with ckptd,
# the snapshot root on the results share both mount. Some 4 minutes
# alone (5 more with CKPT_TEST_MPIX=1); 13 in stop 66's whole make check,
# one restart of 8 of them: a limit of 33 (testing.md, "Time limits").
# nodes: 2
# kernels: 6.12
# timeout: 2000
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinodes.sh"
if [ "${CKPT_TEST_MPIX:-0}" = 1 ]; then ktap_plan 17; else ktap_plan 15; fi
mpinodes_start
mpi_job openmpi "$NODES_OPENMPI"
a2a_job openmpi "$NODES_OPENMPI" same
sysv_nodes_job
vader_nodes_job
[ "${CKPT_TEST_MPIX:-0}" != 1 ] || mpix_job openmpi "$NODES_OPENMPI" node0
ktap_finish
