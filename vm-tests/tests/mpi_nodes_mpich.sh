#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's MPICH 4.0 over two nodes, 4 ranks over UCX's tcp transport on
# ckpt0: checkpointed and let go on three times to its end; its first
# snapshot restarted on the same nodes and checkpointed with --kill, and
# that restarted with the nodes swapped
# (vm-tests/lib/mpinodes.sh says what is checked).
#
# Topology: node0 and node1 on the private link ckpt0, each with ckptd,
# the snapshot root on the results share both mount. Some 5 minutes
# alone; 10 were seen on a busy machine: 15 minutes.
# nodes: 2
# kernels: 6.12
# timeout: 900
set -eu
. "$CKPT_TOP/vm-tests/lib/mpinodes.sh"
ktap_plan 10
mpinodes_start
mpi_job mpich "$NODES_MPICH" "$NODE0_MPICH"
ktap_finish
