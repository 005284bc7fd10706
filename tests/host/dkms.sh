#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An administrator installs the engine with DKMS the way a cluster does:
# built once on a build host, its binaries shipped to the nodes. Here the
# host lays the sources out in /usr/src's shape, dkms adds them and builds
# the module for both kernel lines, and packs the 6.1 binaries with
# mktarball --binaries-only; then a 6.1 VM, a node, loads that tarball
# (dkms ldtarball), installs it, modprobe loads the engine by name, and dkms
# removes it again (vm-tests/guest/dkms).
#
# The builds run natively: building in the VM under TCG took about ten
# minutes of make check for the same compiler run. On the host, dkms works in
# a mount namespace with a throwaway /var/lib/dkms, so the host's own DKMS
# state (and the signing key dkms makes on first use) is left as it was.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
version=$(cat "$CKPT_TOP/VERSION")
k61=$("$CKPT_TOP/mk/kver" 6.1)
k612=$("$CKPT_TOP/mk/kver" 6.12)
work=$CKPT_TOP/build/dkms
src=$work/src
rm -rf "$work"
mkdir -p "$src"

# dkms_host STEP...: the steps, in order, in one mount namespace whose
# /var/lib/dkms is a fresh tmpfs; each step's output goes to
# $work/STEP.log and its status to $work/STEP.rc.
cat > "$work/host.sh" <<EOS
set -u
mount -t tmpfs ckpt-dkms /var/lib/dkms || exit 1
step() {
	name=\$1
	shift
	"\$@" > "$work/\$name.log" 2>&1
	echo \$? > "$work/\$name.rc"
}
step add dkms add -m ckpt -v "$version" --sourcetree "$src"
step build-61 dkms build -m ckpt -v "$version" -k "$k61" --sourcetree "$src"
step build-612 dkms build -m ckpt -v "$version" -k "$k612" --sourcetree "$src"
step tarball dkms mktarball -m ckpt -v "$version" -k "$k61" --binaries-only \
	--archive "$work/ckpt-$version-$k61.tar.gz" --sourcetree "$src"
EOS

# point NAME DESCRIPTION: one test point from a step of host.sh
point() {
	local rc
	rc=$(cat "$work/$1.rc" 2> /dev/null || echo "did not run")
	if [ "$rc" = 0 ]; then
		ktap_ok "$2"
	else
		sed 's/^/# /' "$work/$1.log" 2> /dev/null | tail -n 30
		ktap_fail "$2 (exit status $rc)"
	fi
}

ktap_plan 10
ktap_check "sources laid out in /usr/src's shape" \
	"$CKPT_TOP/mk/dkms-src" "$src/ckpt-$version"
unshare -m bash "$work/host.sh" > "$work/host.log" 2>&1 || cat "$work/host.log"
point add "dkms add"
point build-61 "dkms builds for $k61"
point build-612 "dkms builds for $k612"
point tarball "dkms mktarball --binaries-only for $k61"

# The node: its TAP points become ours, in order; any it did not reach
# fail here. Its dkms install (depmod over Debian's module tree) took
# over 300 s once under TCG with other VMs on the machine: it gets 600.
# dkms walks /lib/modules/KVER with find for each command, and depmod reads
# it: over 9p without a cache that was most of the node's seven minutes.
rc=0
CKPT_VM_9P_CACHE=loose "$CKPT_TOP/vm-tests/vm" -q -k "$k61" -t 600 -o "$work/vm" -- \
	"$CKPT_TOP/vm-tests/guest/dkms" "$work/ckpt-$version-$k61.tar.gz" \
	> "$work/vm.log" 2>&1 || rc=$?
sed 's/^/# /' "$work/vm.log"
n=0
while IFS= read -r line; do
	case "$line" in
	"ok "*) n=$((n + 1)); ktap_ok "${line#ok [0-9]* }" ;;
	"not ok "*) n=$((n + 1)); ktap_fail "${line#not ok [0-9]* }" ;;
	"1.."*|"TAP version"*) ;;
	"#"*) echo "$line" ;;
	*) echo "# $line" ;;
	esac
done < <(cat "$work/vm/node0.out" 2> /dev/null)
while [ "$n" -lt 4 ]; do
	n=$((n + 1))
	ktap_fail "node step $n not reached (vm exit status $rc; logs in $work/vm)"
done
# and the node's kernel log stayed clean (vm-tests/vm's verdict)
if [ "$rc" = 0 ]; then
	ktap_ok "the node's run was clean"
else
	ktap_fail "the node's run: $(cat "$work/vm/verdict" 2> /dev/null) (vm exit status $rc)"
fi
ktap_finish
