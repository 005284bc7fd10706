#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest's test runner (vm-tests/guest/runtests), run here on the host
# in a tree of its own: a test's TAP and exit status are kept; a test that
# cannot be ended (a process stuck in the kernel, played by a `timeout`
# that ignores its limit) fails alone, naming what keeps it, and the tests
# after it still run; a process a test leaves behind holding its output
# does not hold the runner up.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
tmp=$(mktemp -d)
trap 'pkill -f "^sleep (61|121)\.31$" 2> /dev/null; rm -rf "$tmp"' EXIT

mkdir -p "$tmp/vm-tests/guest" "$tmp/build/bin" "$tmp/t"
cp "$CKPT_TOP/vm-tests/guest/runtests" "$tmp/vm-tests/guest/"
printf '#!/bin/sh\nexit 0\n' > "$tmp/vm-tests/guest/tidy"
printf '#!/bin/sh\necho "1..1"\necho "ok 1 fine"\n' > "$tmp/t/good.sh"
printf '#!/bin/sh\necho "1..1"\necho "not ok 1 bad"\nexit 1\n' > "$tmp/t/bad.sh"
printf '#!/bin/sh\necho "1..1"\necho "ok 1 left a child"\nexec 2>&1; sleep 61.31 &\nexit 0\n' \
	> "$tmp/t/leaves.sh"
printf '#!/bin/sh\necho "1..1"\necho "ok 1 never ends"\n' > "$tmp/t/stuck.sh"
chmod +x "$tmp"/t/*.sh "$tmp/vm-tests/guest"/*

# The `timeout` the runner finds first: the real one, except for the
# stuck test, whose process lingers past any limit.
cat > "$tmp/build/bin/timeout" <<EOF
#!/bin/sh
case "\$*" in
*stuck.sh) "\$4"; exec sleep 121.31 ;;
*) exec /usr/bin/timeout "\$@" ;;
esac
EOF
chmod +x "$tmp/build/bin/timeout"

run() {
	local t0=$SECONDS
	CKPT_TEST_TIMEOUT=1 CKPT_STUCK_GRACE=1 \
		"$tmp/vm-tests/guest/runtests" "$tmp/res" "$@" > "$tmp/out" 2>&1
	echo $((SECONDS - t0)) > "$tmp/secs"
}
run "$tmp/t/good.sh" "$tmp/t/leaves.sh" "$tmp/t/stuck.sh" "$tmp/t/bad.sh"

ktap_plan 6
ktap_check "a passing test's TAP and status are kept and streamed" \
	sh -c "grep -qx 'ok 1 fine' '$tmp/res/good.tap' &&
	       grep -qx 0 '$tmp/res/good.rc' && grep -qx 'ok 1 fine' '$tmp/out'"
ktap_check "a failing test's status is kept" grep -qx 1 "$tmp/res/bad.rc"
ktap_check "a test stuck past its limit fails with status 125" \
	grep -qx 125 "$tmp/res/stuck.rc"
ktap_check "... its TAP says it is stuck and lists its processes" \
	sh -c "grep -q '^not ok 999 stuck: stuck: processes of it could not be ended' '$tmp/res/stuck.tap' &&
	       grep -q '^# .*sleep 121.31' '$tmp/res/stuck.tap'"
ktap_check "... and the test after it still ran" test -s "$tmp/res/bad.tap"
# The stuck test costs its limit, SIGKILL's 10 s and the grace; the child
# left behind (61 s) must cost nothing.
ktap_check "a child left holding a test's output holds nothing up" \
	sh -c "[ \$(cat '$tmp/secs') -lt 40 ]"
ktap_finish
