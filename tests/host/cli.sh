#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ckpt CLI's front door: help, version, unknown commands and options,
# restart's --hosts given what is no snapshot, and clear errors when the engine cannot be reached (CKPT_DEVICE points it
# at a missing node, or at one that is not the engine).
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
ckpt=$CKPT_TOP/build/bin/ckpt
version=$(cat "$CKPT_TOP/VERSION")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# status WANT COMMAND...: exit status is WANT; output kept in $tmp/out, $tmp/err
status() {
	local want=$1 rc=0
	shift
	"$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
	[ "$rc" = "$want" ] || { echo "exit $rc, wanted $want"; cat "$tmp/err"; return 1; }
}

ktap_plan 11
ktap_check "--version" sh -c "'$ckpt' --version | grep -qx 'ckpt $version'"
ktap_check "--help lists the commands, exit 0" sh -c "'$ckpt' --help | grep -q '^  version '"
ktap_check "no command: usage on stderr, exit 1" sh -c \
	"! '$ckpt' 2> '$tmp/e' > /dev/null && grep -q '^usage:' '$tmp/e'"
ktap_check "unknown command: named, usage, exit 1" sh -c \
	"! '$ckpt' frobnicate 2> '$tmp/e' && grep -q \"unknown command 'frobnicate'\" '$tmp/e' && grep -q '^usage:' '$tmp/e'"
ktap_check "unknown option of a command: usage, exit 1" sh -c \
	"! '$ckpt' version --bogus 2> '$tmp/e' && grep -q 'usage: ckpt version' '$tmp/e'"
ktap_check "version --help, exit 0" sh -c "'$ckpt' version --help | grep -q 'usage: ckpt version'"
ktap_check "restart --hosts of a path that does not exist: named, exit 1" sh -c \
	"! '$ckpt' restart '$tmp/snap/latest' --hosts a=b 2> '$tmp/e' &&
	grep -qx 'ckpt restart: $tmp/snap/latest: No such file or directory' '$tmp/e'"
ktap_check "restart --hosts of what is no snapshot: named, exit 1" sh -c \
	"! '$ckpt' restart /etc/hostname --hosts a=b 2> '$tmp/e' &&
	grep -qx \"ckpt restart: --hosts is for a job's snapshot, and /etc/hostname is none\" '$tmp/e'"

export CKPT_DEVICE=$tmp/no-such-device
ktap_check "engine missing: clear message, exit 1" sh -c \
	"! '$ckpt' version 2> '$tmp/e' && grep -q 'engine not loaded: $tmp/no-such-device' '$tmp/e'"
ktap_check "engine missing: --json still valid JSON with an error" sh -c \
	"'$ckpt' version --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"engine\"] is None and d[\"error\"]'"
export CKPT_DEVICE=/dev/null
ktap_check "a device that is not the engine: named, exit 1" sh -c \
	"! '$ckpt' version 2> '$tmp/e' && grep -q 'cannot query the engine at /dev/null' '$tmp/e'"
ktap_finish
