#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The multi-node test bed works as later job tests need it: every node is
# reachable by name over IPv4 and IPv6 on the private link, root can ssh
# between nodes without a password, and both MPI stacks start ranks on both
# nodes over TCP.
#
# Topology:  node0 (192.0.2.10, 2001:db8::10) --ckpt0-- node1 (192.0.2.11, 2001:db8::11)
#            one QEMU socket netdev on the host's 127.0.0.1
# nodes: 2
# kernels: 6.12
# (The test bed, not the engine: one kernel line is enough; testing.md, Time.)
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

ktap_plan 6
ktap_check "node0 has its addresses on ckpt0" sh -c \
	"ip -br addr show ckpt0 | grep -q '192.0.2.10/24.*2001:db8::10/64'"
ktap_check "node1 answers over IPv4" ping -c 1 -W 10 node1
ktap_check "node1 answers over IPv6" ping -6 -c 1 -W 10 node1-v6
ktap_check "root ssh to node1 and back" sh -c \
	"test \"\$(ssh node1 ssh node0 hostname)\" = node0"
ktap_check "Open MPI starts ranks on both nodes" sh -c \
	"mpirun.openmpi --host node0,node1 -np 2 --mca btl_tcp_if_include ckpt0 \
		--mca oob_tcp_if_include ckpt0 hostname | sort | tr '\n' ' ' |
		tee /dev/stderr | grep -qx 'node0 node1 '"
ktap_check "MPICH starts ranks on both nodes" sh -c \
	"mpiexec.mpich -hosts node0,node1 -n 2 -iface ckpt0 hostname | sort |
		tr '\n' ' ' | tee /dev/stderr | grep -qx 'node0 node1 '"
ktap_finish
