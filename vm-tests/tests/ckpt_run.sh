#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ckpt-run under real launchers: an Open MPI job and an MPICH job started
# under ckpt-run run to completion, and every rank (a shell) runs with
# libckpt's callback thread, i.e. registered through mpirun, orted/hydra
# and exec without a change. A plain shell pipeline keeps working too.
#
# Topology: one node; a dummy interface ckptd0 with 192.0.2.1/24 for MPI's
# TCP transport (MPI refuses loopback-only hosts).
# User space: on one kernel line (the engine paths it drives run on both
# in the kselftest programs).
# kernels: 6.1
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)

cleanup() {
	ip link del ckptd0 2> /dev/null || true
	rmmod ckpt 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# Each rank prints its callback thread count (1 when registered).
rank='grep -lx ckpt-callbacks /proc/$$/task/*/comm | wc -l'

ktap_plan 5
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"
ip link add ckptd0 type dummy
ip addr add 192.0.2.1/24 dev ckptd0
ip link set ckptd0 up
ktap_check "a shell pipeline under ckpt-run" sh -c \
	"ckpt-run --no-job sh -c 'echo hello | tr a-z A-Z' | grep -qx HELLO"
ktap_check "Open MPI: every rank registered" sh -c \
	"timeout 120 ckpt-run --no-job mpirun.openmpi -np 2 --oversubscribe \
		--mca btl tcp,self --mca btl_tcp_if_include ckptd0 --mca oob_tcp_if_include ckptd0 \
		sh -c '$rank' > '$tmp/ompi' && cat '$tmp/ompi' && test \"\$(sort -u '$tmp/ompi')\" = 1 && test \$(wc -l < '$tmp/ompi') = 2"
ktap_check "MPICH: every rank registered" sh -c \
	"timeout 120 ckpt-run --no-job mpirun.mpich -np 2 -iface ckptd0 \
		sh -c '$rank' > '$tmp/mpich' && cat '$tmp/mpich' && test \"\$(sort -u '$tmp/mpich')\" = 1 && test \$(wc -l < '$tmp/mpich') = 2"
ktap_check "rmmod ckpt once every registration is gone" rmmod ckpt
ktap_finish
