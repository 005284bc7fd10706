#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel code is checkpatch-clean and sparse-clean against the headers
# of each supported kernel line (make style), and builds warning-free with
# W=1 (the build turns warnings into errors): one build a line, sparse
# checking every file of it, in build/style: the VM suites, which run
# meanwhile, load build/KVER's module.
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
