# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the process tree tests (tree.sh, tree_shared.sh).

# members PID: PID and its descendants, each after its parent.
members() {
	local todo=$1 p out=""
	while [ -n "$todo" ]; do
		set -- $todo
		p=$1
		shift
		todo=$(echo $* $(cat /proc/$p/task/*/children 2> /dev/null))
		out="$out $p"
	done
	echo $out
}

# restarted_root PID N COMM: the root of the tree `ckpt restart` (PID)
# makes, the only child of its namespace's init, printed once it and its
# descendants are N processes that all run COMM again; fails before.
restarted_root() {
	local init root p n=0
	init=$(cat /proc/$1/task/*/children 2> /dev/null | tr -d ' ')
	[ -n "$init" ] || return 1
	root=$(cat /proc/$init/task/*/children 2> /dev/null | tr -d ' ')
	[ -n "$root" ] || return 1
	for p in $(members "$root"); do
		[ "$(cat /proc/$p/comm 2> /dev/null)" = "$3" ] || return 1
		n=$((n + 1))
	done
	[ "$n" = "$2" ] && echo "$root"
}

# reap PID [SECONDS]: waits for the background job PID to end (a zombie,
# or gone: the shell reaps its jobs on its own), SECONDS at most (150;
# then kills it), and returns its exit status.
reap() {
	local i st
	# The state field, past the (command) that may hold spaces; read and
	# the nap are bash's own (a process a try cost 0.1 s of CPU here).
	for i in $(seq $((${2:-150} * 10))); do
		st=
		read -r st 2> /dev/null < "/proc/$1/stat" || :
		st=${st##*) }
		st=${st%% *}
		[ -z "$st" ] || [ "$st" = Z ] && break
		ktap_nap 0.1
	done
	kill -KILL "$1" 2> /dev/null || true
	wait "$1"
}
