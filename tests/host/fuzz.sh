#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The image reader under libFuzzer for 30 seconds, in one process: ckpt
# inspect's own code (tests/fuzz/image_fuzz.c), built with ASan and UBSan,
# seeded with mkimage's images. Any crash, leak, timeout or sanitizer
# report fails the point; tests/fuzz/run says which.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

ktap_plan 1
if ! command -v clang > /dev/null; then
	ktap_skip "30 s of libFuzzer on the image reader" "clang is not installed"
	ktap_finish
fi
echo "# + make fuzz-build"
rc=0
out=$(make -s -C "$CKPT_TOP" fuzz-build 2>&1) || rc=$?
[ -z "$out" ] || ktap_note "$out"
if [ "$rc" != 0 ]; then
	ktap_fail "30 s of libFuzzer on the image reader (the build failed)"
	ktap_finish
fi
ktap_check "30 s of libFuzzer on the image reader: no crash, leak or sanitizer report" \
	timeout -k 10 300 "$CKPT_TOP/tests/fuzz/run" -t 30
ktap_finish
