# SPDX-License-Identifier: GPL-2.0
#
# For the VM harness's self-tests (tests/host/harness*.sh). Source it after
# setting $vm (vm-tests/vm), $vm_kernel (its -k argument) and $work.
#
# run_vm NAME WANT-STATUS VM-ARGS...: runs the harness quietly with its
# files in $work/NAME, shows its output indented, and fails unless its exit
# status is WANT-STATUS.
run_vm() {
	local name=$1 want=$2 rc=0
	shift 2
	"$vm" -q -k "$vm_kernel" -o "$work/$name" "$@" > "$work/$name.log" 2>&1 || rc=$?
	sed 's/^/    /' "$work/$name.log"
	[ "$rc" = "$want" ] || { echo "exit status $rc, wanted $want"; return 1; }
}
