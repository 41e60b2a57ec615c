#!/usr/bin/env bash
# What the QoS stage adds per request: instructions per request (tools/elvbench/profile.sh,
# steady state, four streams, random pattern) of deadline with the stage in each elvbench
# set-up beside deadline alone, at depths 1, 64 and 1024, as a Markdown table. The busy mClock
# row lets 16 requests out, so it is compared with deadline at depth 16 (or less); in the
# waiting throttle row the policy sees one request at a time, so it is compared with deadline
# at depth 1.
#
#   tools/elvbench/qos-cost.sh ELVBENCH [OPS]      (OPS default 10000)
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
	sed -n '2,7p' "$0" >&2
	exit 2
fi
bench=$1 ops=${2:-10000}
here=$(dirname "$0")
total() { # IMPL DEPTH: instructions per request
	local t
	t=$("$here/profile.sh" "$bench" "$1" "$2" 4 random "$ops" | awk '$1 == "total" { print $2 }')
	[ -n "$t" ] || { echo "qos-cost: no figure for $1 at depth $2" >&2; exit 1; }
	echo "$t"
}
kinds="none throttle throttle-busy throttle-mixed throttle-wait mclock mclock-busy"
printf '| depth | deadline |'
for k in $kinds; do printf ' +%s |' "$k"; done
printf '\n|---:|---:|'
for k in $kinds; do printf -- '---:|'; done
printf '\n'
for d in 1 64 1024; do
	base=$(total deadline "$d")
	printf '| %s | %s |' "$d" "$base"
	for k in $kinds; do
		t=$(total "deadline+$k" "$d")
		ref=$base
		if [ "$k" = mclock-busy ]; then
			ref=$(total deadline $((d < 16 ? d : 16)))
		elif [ "$k" = throttle-wait ]; then
			ref=$(total deadline 1)
		fi
		printf ' %s (%+.1f) |' "$t" "$(awk -v a="$t" -v b="$ref" 'BEGIN { print a - b }')"
	done
	printf '\n'
done
