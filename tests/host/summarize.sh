#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The closing count of make check: passes, failures and skips are counted
# from TAP, crashes and missing results count as failures, skips never as
# passes, and the exit status says whether everything passed.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
sum=$CKPT_TOP/mk/summarize
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# mk_result DIR NAME RC TAP-LINES...
mk_result() {
	local dir=$1 name=$2 rc=$3
	shift 3
	mkdir -p "$dir"
	printf '%s\n' "$@" > "$dir/$name.tap"
	echo "$rc" > "$dir/$name.rc"
}

# expect DIR "closing line" STATUS
expect() {
	local out rc=0
	out=$("$sum" "$1") || rc=$?
	out=$(tail -n 1 <<< "$out")
	if [ "$out" = "$2" ] && [ "$rc" = "$3" ]; then
		return 0
	fi
	echo "got '$out' (exit $rc), wanted '$2' (exit $3)"
	return 1
}

ktap_plan 11
mk_result "$tmp/a" one 0 "TAP version 13" "1..2" "ok 1 x" "ok 2 y"
mk_result "$tmp/a/sub" two 0 "1..1" "ok 1 z # SKIP no module"
ktap_check "passes and skips are counted apart" expect "$tmp/a" "2 passed, 0 failed, 1 skipped" 0

mk_result "$tmp/b" one 1 "1..2" "ok 1 x" "not ok 2 y"
ktap_check "a failed point fails the run" expect "$tmp/b" "1 passed, 1 failed" 1

mk_result "$tmp/c" crash 139 "1..3" "ok 1 x"
ktap_check "results missing from the plan count as failures" expect "$tmp/c" "1 passed, 2 failed" 1

mk_result "$tmp/d" crash 134 "ok 1 x"
ktap_check "a non-zero exit without a failed point is a failure" expect "$tmp/d" "1 passed, 1 failed" 1

mk_result "$tmp/e" nothing 0 "TAP version 13"
ktap_check "a program with no results is a failure" expect "$tmp/e" "0 passed, 1 failed" 1

mkdir -p "$tmp/f"
ktap_check "no tests at all is not a success" expect "$tmp/f" "0 passed, 0 failed" 1

mk_result "$tmp/g" nested 0 "1..1" "    ok 1 inner" "    not ok 2 inner" "ok 1 outer"
ktap_check "only top-level points count" expect "$tmp/g" "1 passed, 0 failed" 0

mk_result "$tmp/h" stray 0 "1..1" "ok 1 x" "ok = (r.returncode != 0)"
ktap_check "a line that only begins with ok is no test point" expect "$tmp/h" "1 passed, 0 failed" 0

mk_result "$tmp/i" more 0 "1..1" "ok 1 x" "ok 2 y"
ktap_check "more results than planned is a failure" expect "$tmp/i" "2 passed, 1 failed" 1
# explain DIR WANT...: each WANT is a line of "what failed", in order,
# before the closing line.
explain() {
	local dir=$1 out
	shift
	out=$("$sum" "$dir") || true
	out=$(sed -n '/^# what failed:$/,$p' <<< "$out")
	if [ "$(printf '%s\n' "# what failed:" "$@")" = "$(head -n -1 <<< "$out")" ]; then
		return 0
	fi
	echo "got:"
	echo "$out"
	return 1
}
mk_result "$tmp/j/results" t1 1 "1..2" "# noise" "ok 1 x" "not ok 2 y"
mk_result "$tmp/j/results" t2 1 "1..1" "not ok 1 t2: no result (the VM stopped under it)"
mk_result "$tmp/j/results" t3 1 "1..1" "not ok 1 t3: no result (the VM stopped under it)"
mk_result "$tmp/j" vm 0 "1..1" "not ok 1 vm 6.12: ran out of time" "# hung task: t2"
ktap_check "the log's tail says what failed, the VM's verdict first" \
	explain "$tmp/j" "# vm:" "#   not ok 1 vm 6.12: ran out of time" \
	"#   # hung task: t2" "# results/t1:" "#   not ok 2 y" \
	"# 2 program(s) without results: the VM stopped under them"
# A kselftest says why before its "not ok" (stop 64's CI failure did not).
mk_result "$tmp/k" t 1 "1..3" "# old" "ok 1 x" "# a" "# b" "# c" "# d" \
	"# t.c:9:y:Expected 0 (0) == r (-1)" "not ok 2 y" "not ok 3 z"
ktap_check "a failed point comes with the comments before it" \
	explain "$tmp/k" "# t:" "#   # b" "#   # c" "#   # d" \
	"#   # t.c:9:y:Expected 0 (0) == r (-1)" "#   not ok 2 y" "#   not ok 3 z"
ktap_finish
