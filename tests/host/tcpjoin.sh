#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ckptd's join of a job's TCP connections between nodes, without VMs: the
# coordinator's checks of every node's TCP ends (lib/ckptd/tcpjoin.c,
# tests/host/tcpjoin_unit.c), which the two-node MPI test (mpi_nodes)
# drives end to end; and the check of every peer request's protocol
# version and the headers of a share's files shipped between nodes
# (lib/ckptd/proto.c), which every two-node test passes through.
set -eu
exec "$CKPT_TOP/build/tests/host/tcpjoin_unit"
