#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bash completion (contrib/bash-completion/ckpt) and the man pages
# against the programs: every command `ckpt --help` lists, and every long
# option the usage lines of each command, of ckpt-run and of ckptd name,
# is offered by the completion and named in the man page (ckpt.1, or
# ckpt-run.1 for ckpt run, ckptd.8). A command or option added without
# its completion or its page fails here.
set -eu
. "$CKPT_TOP/vm-tests/lib/ktap.sh"
bin=$CKPT_TOP/build/bin
# The completion functions, without bash-completion's own package: the
# one helper they call (_command, for ckpt-run's PROGRAM) is not reached
# for options.
set +eu
. "$CKPT_TOP/contrib/bash-completion/ckpt"
set -eu

# offered FUNCTION WORD...: what FUNCTION offers for the last WORD.
offered() {
	local fn=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	"$fn"
	printf '%s\n' "${COMPREPLY[@]}"
}

# usage_options PROGRAM ARGS...: the long options its usage lines name.
usage_options() {
	"$@" --help 2>&1 | awk '/^usage:/ { u = 1; print; next } u && /^ / { print; next } { u = 0 }' |
		grep -o -- '--[a-z][a-z-]*' | sort -u
}

# missing FUNCTION OPTIONS WORD...: the OPTIONS (one a line) not offered.
missing() {
	local fn=$1 want=$2
	shift 2
	comm -23 <(printf '%s\n' "$want" | sed '/^$/d' | sort -u) <(offered "$fn" "$@" | sort -u)
}

# undocumented PAGE OPTIONS: the OPTIONS (one a line) PAGE never names.
undocumented() {
	local o
	for o in $2; do
		grep -qF -- "${o//-/\\-}" "$CKPT_TOP/Documentation/man/$1" ||
			echo "$o"
	done
}

commands=$("$bin/ckpt" --help | awk '/^commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 }')
ktap_plan 7
ktap_check "every command of ckpt --help is offered after ckpt" \
	test -z "$(missing _ckpt "$commands" ckpt '')"
gaps=
for c in $commands; do
	m=$(missing _ckpt "$(usage_options "$bin/ckpt" "$c")" ckpt "$c" --)
	[ -z "$m" ] || gaps="$gaps $c:$(tr "\n" " " <<< "$m")"
done
ktap_note "options without completion:${gaps:- none}"
ktap_check "every long option of each command's usage is offered after ckpt COMMAND" test -z "$gaps"
ktap_check "every long option of ckpt-run's usage is offered" \
	test -z "$(missing _ckpt_run "$(usage_options "$bin/ckpt-run")" ckpt-run --)"
ktap_check "every long option of ckptd's usage is offered" \
	test -z "$(missing _ckptd "$(usage_options "$bin/ckptd")" ckptd --)"
gaps=
for c in $commands; do
	page=ckpt.1
	[ "$c" != run ] || page=ckpt-run.1
	m=$(undocumented "$page" "$(usage_options "$bin/ckpt" "$c")")
	[ -z "$m" ] || gaps="$gaps $c:$(tr "\n" " " <<< "$m")"
done
ktap_note "options without a man page's word:${gaps:- none}"
ktap_check "every long option of each command's usage is in ckpt.1 (ckpt run's in ckpt-run.1)" \
	test -z "$gaps"
ktap_check "every long option of ckpt-run's usage is in ckpt-run.1" \
	test -z "$(undocumented ckpt-run.1 "$(usage_options "$bin/ckpt-run")")"
ktap_check "every long option of ckptd's usage is in ckptd.8" \
	test -z "$(undocumented ckptd.8 "$(usage_options "$bin/ckptd")")"
ktap_finish
