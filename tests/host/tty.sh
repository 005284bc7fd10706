#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The terminal a job restarted through ckptd gets from ckpt restart
# (cli/tty.c), without VMs: the relay between the user's terminal and the
# job's pseudo-terminal (tests/host/tty_unit.c). The whole path, ckptd's
# side included, runs in vm-tests/tests/ckptd.sh.
set -eu
exec "$CKPT_TOP/build/tests/host/tty_unit"
