#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A job's address map at restart, without VMs (tests/host/addrmap_unit.c):
# the coordinator's map, and libckpt's connect(), bind(), getsockname(),
# getpeername() and accept() through it, preloaded as ckpt-run preloads
# it. The swapped-nodes MPI tests (mpi_nodes_*) drive it end to end.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
CKPT_ADDRMAP_DIR=$dir LD_PRELOAD=$CKPT_TOP/build/lib/libckpt.so.1 \
	"$CKPT_TOP/build/tests/host/addrmap_unit" "$dir"
