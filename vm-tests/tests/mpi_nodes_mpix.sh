#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# MPIX_Checkpoint over two nodes: MPICH 4.0's mpix (4 ranks over UCX's tcp
# transport) started under ckpt-run on node0 with its ranks placed from
# node1 first, so rank 0, which asks for the checkpoint, runs on node1,
# whose ckptd does not coordinate the job: it passes the request to
# node0's (daemon/ask.c). MPIX_Checkpoint returns checkpoint and snapshot
# 1 is made; the job killed, restarted from it, returns restart and ends
# with the uninterrupted sum (vm-tests/lib/mpinodes.sh). One library: the
# request's way through ckptd is the same for both (mpi_api runs both on
# one node).
#
# Topology: node0 and node1 on the private link ckpt0, each with ckptd,
# the snapshot root on the results share both mount.
# nodes: 2
# kernels: 6.12
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinodes.sh"
ktap_plan 4
mpinodes_start
mpix_job mpich "mpirun.mpich -hosts node1:2,node0:2 -n 4 -iface ckpt0"
ktap_finish
