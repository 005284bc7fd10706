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
