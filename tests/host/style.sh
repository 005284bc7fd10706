#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel code is checkpatch-clean and sparse-clean against the headers
# of each supported kernel line (make style), and builds warning-free with
# W=1 (every module build turns warnings into errors): sparse checks every
# file of build/KVER's module, which make check built before the tests and
# which is not compiled again (the VM suites load it meanwhile; mk/style
# fails if it was).
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"

mapfile -t kvers < <("$CKPT_TOP/mk/kver" --all)
ktap_plan $((1 + ${#kvers[@]}))
# checkpatch reads the sources alone: once does for every kernel line.
ktap_check "checkpatch" make -s -C "$CKPT_TOP" style STYLE_ONLY=checkpatch
for k in "${kvers[@]}"; do
	ktap_check "W=1 -Werror build and sparse against $k" \
		make -s -C "$CKPT_TOP" style STYLE_ONLY=sparse KVER="$k" \
			KDIR="/lib/modules/$k/build"
done
ktap_finish
