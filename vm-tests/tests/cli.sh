#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ckpt CLI reaches the engine: it reports the engine's version when the
# module is loaded (plain and --json), and says clearly that the engine is
# not loaded, exiting 1, when it is not.
#
# Topology: one node, no network.
# User space: on one kernel line (the engine paths it drives run on both
# in the kselftest programs).
# kernels: 6.1
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

version=$(cat "$CKPT_TOP/VERSION")

cleanup() {
	rmmod ckpt 2> /dev/null || true
}
trap cleanup EXIT

ktap_plan 5
ktap_check "insmod ckpt.ko" insmod "$CKPT_MODULE"
ktap_check "ckpt version names the engine" sh -c \
	"ckpt version | tee /dev/stderr | grep -qx 'engine $version (uAPI [0-9]*)'"
ktap_check "ckpt version --json" sh -c \
	"ckpt version --json | tee /dev/stderr | grep -q '\"engine\":{\"release\":\"$version\",\"uapi\":[0-9]*}'"
ktap_check "rmmod ckpt" rmmod ckpt
ktap_check "without the engine: exit 1 and a clear message" sh -c \
	"! ckpt version 2> /tmp/err; cat /tmp/err; grep -q 'engine not loaded: /dev/ckpt' /tmp/err"
ktap_finish
