# SPDX-License-Identifier: GPL-2.0
#
# KTAP helpers for vm-tests shell tests. Source it, call ktap_plan N, then
# one ktap_ok/ktap_fail/ktap_skip/ktap_check per test point, and end with
# ktap_finish, which exits 1 if any point failed.

# A test under set -e that ends early says where: the harness counts the
# points it never ran as failed, and CI's log has only the TAP. Functions
# inherit the trap (-E). Only the test's own shell speaks: a subshell's
# failure (a background job, a command substitution) is its parent's to
# judge, and its output may be a file the test compares (ckptd.sh's job
# output, where a function's python3 exits as its killed job).
ktap_err() {
	local i where=""
	[ "$BASHPID" = "$$" ] || return 0
	case $- in *e*) ;; *) return 0 ;; esac
	for ((i = 1; i < ${#FUNCNAME[@]}; i++)); do
		where="$where ${FUNCNAME[i]}@${BASH_SOURCE[i]##*/}:${BASH_LINENO[i - 1]}"
	done
	echo "# '$2' ended with $1 in$where, and the test with it"
}
set -E
trap 'ktap_err $? "$BASH_COMMAND"' ERR

ktap_n=0
ktap_failed=0
ktap_planned=0
ktap_t=$SECONDS

# Where a test's time goes: each point says how long since the one before.
ktap_took() {
	echo "# $((SECONDS - ktap_t)) s since the last point"
	ktap_t=$SECONDS
}

ktap_plan() {
	ktap_planned=$1
	echo "TAP version 13"
	echo "1..$1"
}

ktap_ok() {
	ktap_took
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n $*"
}

ktap_fail() {
	ktap_took
	ktap_n=$((ktap_n + 1))
	ktap_failed=$((ktap_failed + 1))
	echo "not ok $ktap_n $*"
}

ktap_skip() {
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n $1 # SKIP $2"
}

# Echo a line as a TAP comment.
ktap_note() {
	echo "$*" | sed 's/^/# /'
}

# ktap_check DESCRIPTION COMMAND [ARG...]: run the command (echoed, with its
# output shown as comments) and report one test point by its status.
ktap_check() {
	local desc=$1 out rc
	shift
	# Every line a comment: a command's line that began "ok" would be
	# read as a test point.
	ktap_note "+ $*"
	out=$("$@" 2>&1) && rc=0 || rc=$?
	[ -n "$out" ] && ktap_note "$out"
	if [ "$rc" = 0 ]; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc (exit status $rc)"
	fi
}

# ktap_poll SECONDS COMMAND...: run the command until it succeeds, or fail
# once SECONDS have passed. Its naps grow from 0.1 s to 1 s: a test waits
# for a restart or a job over many seconds, and each try is a process or
# more, about 0.1 s of a CPU under TCG. (A poll for something there only
# for a moment loops on ktap_nap itself.) The clock is bash's SECONDS and
# the nap a read that times out on a pipe nothing writes (a fork for the
# pipe, no exec): date and sleep cost an exec each, and with them a poll
# took half a vCPU (measured in a guest), CPU the test's own job and the
# other lane's VM go without. A read that fails other than by its timeout
# (status 128 or less: no pipe) sleeps instead, rather than not at all.
ktap_nap() {
	read -r -t "$1" <> <(:) && return 0
	[ $? -gt 128 ] || sleep "$1"
}
ktap_poll() {
	local end=$((SECONDS + $1)) nap=0.1
	shift
	until "$@" > /dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || return 1
		ktap_nap $nap
		case $nap in
		0.1) nap=0.2 ;; 0.2) nap=0.4 ;; 0.4) nap=0.7 ;; *) nap=1 ;;
		esac
	done
}

ktap_finish() {
	if [ "$ktap_n" != "$ktap_planned" ]; then
		echo "# planned $ktap_planned test points, ran $ktap_n"
		exit 1
	fi
	exit $((ktap_failed != 0))
}
