#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's MPICH 4.0 over two nodes, 4 ranks over UCX's tcp transport on
# ckpt0: checkpointed and let go on three times to its end, then its last
# snapshot restarted with the nodes swapped; then the all-to-all stress
# program checkpointed and let go on, checkpointed with --kill and
# restarted with the nodes swapped (vm-tests/lib/mpinodes.sh says what is
# checked); then heat over UCX's sysv transport within each node (System
# V segments in the nodes' own IPC namespaces, under plain ckpt-run),
# killed and restarted with the nodes swapped. With CKPT_TEST_MPIX=1,
# also MPIX_Checkpoint with the ranks
# placed from node1 first, so that rank 0, which asks for the checkpoint,
# runs on node1, whose ckptd does not coordinate the job and passes the
# request to node0's (daemon/ask.c): it returns checkpoint and snapshot 1
# is made; the job killed, restarted from it, returns restart and ends
# with the uninterrupted sum. Some 5 to 6 minutes alone, left out of make
# check for CI's hour (stop 48): the request passed between the daemons
# is ckptd_nodes' (a detached checkpoint asked on the node that does not
# coordinate), and MPIX_Checkpoint's return values mpi_api's, on one
# node. mpi_nodes_openmpi.sh has Open MPI's.
#
# Topology: node0 and node1 on the private link ckpt0, each with ckptd,
# the snapshot root on the results share both mount. Some 7 minutes
# alone (5 more with CKPT_TEST_MPIX=1), 9 in a whole make check (stop
# 51): a limit of 25 (testing.md, "Time limits").
# nodes: 2
# kernels: 6.12
# timeout: 1500
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinodes.sh"
if [ "${CKPT_TEST_MPIX:-0}" = 1 ]; then ktap_plan 15; else ktap_plan 13; fi
mpinodes_start
mpi_job mpich "$NODES_MPICH"
a2a_job mpich "$NODES_MPICH" swapped
ucx_sysv_nodes_job
[ "${CKPT_TEST_MPIX:-0}" != 1 ] ||
	mpix_job mpich "mpirun.mpich -hosts node1:2,node0:2 -n 4 -iface ckpt0" node1
ktap_finish
