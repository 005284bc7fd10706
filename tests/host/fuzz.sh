#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The image reader under libFuzzer for 30 seconds, in one process: ckpt
# inspect's own code (tests/fuzz/image_fuzz.c), built with ASan and UBSan,
# seeded with mkimage's images. Then ckptd's frame reader, message decoder
# and snapshot metadata checker (tests/fuzz/msg_fuzz.c) for 15 seconds.
# Any crash, leak, timeout or sanitizer report fails the point;
# tests/fuzz/run says which.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

ktap_plan 2
if ! command -v clang > /dev/null; then
	ktap_skip "30 s of libFuzzer on the image reader" "clang is not installed"
	ktap_skip "15 s of libFuzzer on ckptd's messages" "clang is not installed"
	ktap_finish
fi
echo "# + make fuzz-build"
rc=0
out=$(make -s -C "$CKPT_TOP" fuzz-build 2>&1) || rc=$?
[ -z "$out" ] || ktap_note "$out"
if [ "$rc" != 0 ]; then
	ktap_fail "30 s of libFuzzer on the image reader (the build failed)"
	ktap_fail "15 s of libFuzzer on ckptd's messages (the build failed)"
	ktap_finish
fi
ktap_check "30 s of libFuzzer on the image reader: no crash, leak or sanitizer report" \
	timeout -k 10 300 "$CKPT_TOP/tests/fuzz/run" -t 30
ktap_check "15 s of libFuzzer on ckptd's messages and snapshot metadata: no crash, leak or sanitizer report" \
	timeout -k 10 300 "$CKPT_TOP/tests/fuzz/run" -f msg -t 15
ktap_finish
