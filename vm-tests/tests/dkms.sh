#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An administrator installs the engine with DKMS: the sources go to
# /usr/src/ckpt-VERSION, dkms builds and installs the module for the running
# kernel, modprobe loads it by name, and dkms removes it again.
#
# Topology: one node, no network. Runs on the default (6.1) line only:
# building under TCG takes minutes, and DKMS itself is kernel-neutral.
# kernels: 6.1
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

version=$(cat "$CKPT_TOP/VERSION")
kver=$(uname -r)

cleanup() {
	modprobe -r ckpt > /dev/null 2>&1 || true
	dkms remove -m ckpt -v "$version" --all > /dev/null 2>&1 || true
	rm -rf "/usr/src/ckpt-$version"
}
trap cleanup EXIT

ktap_plan 6
ktap_check "sources laid out in /usr/src/ckpt-$version" \
	"$CKPT_TOP/mk/dkms-src" "/usr/src/ckpt-$version"
ktap_check "dkms add" dkms add -m ckpt -v "$version"
ktap_check "dkms builds and installs for $kver" \
	dkms install -m ckpt -v "$version" -k "$kver"
if ! modinfo -k "$kver" ckpt > /dev/null 2>&1; then
	tail -n 30 "/var/lib/dkms/ckpt/$version/build/make.log" 2> /dev/null |
		sed 's/^/# make.log: /'
fi
ktap_check "modprobe ckpt loads the DKMS module" modprobe ckpt
ktap_check "the engine answers" sh -c \
	"grep -qx '$version' /sys/module/ckpt/version && test -c /dev/ckpt"
ktap_check "modprobe -r and dkms remove" sh -c \
	"modprobe -r ckpt && dkms remove -m ckpt -v '$version' --all && ! modinfo ckpt"
ktap_finish
