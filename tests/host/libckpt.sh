#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libckpt and ckpt-run without an engine: the library's argument checks
# (libckpt_unit), its installable pieces (every exported call has a man
# page that renders cleanly, pkg-config data), and ckpt-run's errors and
# environment (sh, and the sh it executes, each try to register). The engine-side behaviour is tested in the VM
# (tests/kselftest/libckpt.c).
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
b=$CKPT_TOP/build
run=$b/bin/ckpt-run
man=$CKPT_TOP/Documentation/man
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ktap_plan 11
ktap_check "library calls without an engine (libckpt_unit)" "$b/tests/host/libckpt_unit"
nm -D --defined-only "$b/lib/libckpt.so.1" | awk '$2 == "T" { print $3 }' > "$tmp/all"
ktap_check "the shared library exports exactly the API, versioned" sh -c \
	"grep @@LIBCKPT_1 '$tmp/all' | sed 's/@.*//' | sort > '$tmp/syms' &&
	 grep -o '^[a-z_ ]*[ *]ckpt_[a-z_]*(' '$CKPT_TOP/lib/libckpt/libckpt.h' | sed 's/.*[ *]//; s/(//' | sort > '$tmp/api' &&
	 diff '$tmp/syms' '$tmp/api'"
ktap_check "and, unversioned, only the address map's calls and MPI_Finalize (addrmap.c, mpi.c)" sh -c \
	"grep -v @ '$tmp/all' | LC_ALL=C sort | tr '\n' ' ' | grep -qx 'MPI_Finalize accept accept4 bind connect getpeername getsockname '"
ktap_check "every exported call has a man page" sh -c \
	"for s in \$(cat '$tmp/syms'); do test -f '$man/'\$s.3 || { echo missing \$s.3; exit 1; }; done"
# As installed: .so links name man3/PAGE.
mkdir -p "$tmp/man/man1" "$tmp/man/man3" "$tmp/man/man7" "$tmp/man/man8"
for s in 1 3 7 8; do cp "$man"/*."$s" "$tmp/man/man$s/"; done
ktap_check "the man pages render without warnings" sh -c \
	"cd '$tmp/man' && for p in man*/*; do groff -man -Tutf8 -ww -z -I. \$p 2>&1 | grep . && exit 1; done; true"
ktap_check "pkg-config data" sh -c \
	"PKG_CONFIG_PATH='$b/lib' pkg-config --libs libckpt | grep -q -- -lckpt"
ktap_check "ckpt-run --help" sh -c "'$run' --help | grep -q 'usage: ckpt-run'"
ktap_check "ckpt-run without a program: usage, exit 1" sh -c \
	"! '$run' 2> '$tmp/e' && grep -q usage '$tmp/e'"
ktap_check "ckpt-run without an engine: named, exit 1" sh -c \
	"CKPT_DEVICE=$tmp/none '$run' --no-job true 2> '$tmp/e'; test \$? = 1 && grep -q 'engine not loaded: $tmp/none' '$tmp/e'"
ktap_check "ckpt-run: a missing program exits 127" sh -c \
	"CKPT_DEVICE=/dev/null '$run' --no-job /nonexistent/prog 2> /dev/null; test \$? = 127"
ktap_check "ckpt-run preloads libckpt into the program and what it executes" sh -c \
	"CKPT_DEVICE=/dev/null CKPT_DEBUG=1 LD_PRELOAD= '$run' --no-job sh -c 'exec sh -c \"echo \\\$LD_PRELOAD \\\$CKPT_PRELOAD\"' > '$tmp/o' 2> '$tmp/e' &&
	 grep -q 'libckpt.so.1 1\$' '$tmp/o' && test \$(grep -c 'libckpt: the engine refused the registration' '$tmp/e') = 2"
ktap_finish
