#!/usr/bin/env bash
# Where one elvbench case spends its instructions: self cost per function (code inlined into a
# function counts for it), per request in steady state, from two callgrind runs of different
# lengths (their difference cancels the fill phase and the teardown).
#
#   tools/elvbench/profile.sh ELVBENCH IMPL DEPTH STREAMS PATTERN [OPS]
#   e.g. tools/elvbench/profile.sh build-perf/tools/elvbench/elvbench noop 1024 0 random
set -euo pipefail
if [ $# -lt 5 ]; then
	sed -n '2,7p' "$0" >&2
	exit 2
fi
bench=$1 impl=$2 depth=$3 streams=$4 pattern=$5 ops=${6:-20000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in "$ops" $((2 * ops)); do
	valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$tmp/cg.$n" \
		--toggle-collect=elv_add --toggle-collect=elv_dispatch \
		--toggle-collect=elv_complete --toggle-collect=elv_next_event \
		--toggle-collect=baseline_add --toggle-collect=baseline_dispatch \
		--toggle-collect=floor_add --toggle-collect=floor_dispatch \
		--toggle-collect=floor_complete \
		--toggle-collect=rbf_add --toggle-collect=rbf_dispatch \
		"$bench" --count "$impl" "$depth" "$streams" "$pattern" "$n" >/dev/null 2>&1
	callgrind_annotate --auto=no --threshold=100 "$tmp/cg.$n" 2>/dev/null |
		awk '$1 ~ /^[0-9,]+$/ && $0 ~ /:/ && $0 !~ /PROGRAM TOTALS/ {
			c = $1; gsub(",", "", c)
			for (i = 2; i <= NF; i++) if ($i ~ /:/) { f = $i; break }
			sub(/^.*:/, "", f)
			s[f] += c
		} END { for (f in s) print f, s[f] }' >"$tmp/f.$n"
done
awk -v ops="$ops" '
	FNR == NR { a[$1] = $2; next }
	{ d = ($2 - a[$1]) / ops; if (d >= 0.5) { t += d; printf "%-28s %8.1f\n", $1, d } }
	END { printf "%-28s %8.1f\n", "total", t }
' "$tmp/f.$ops" "$tmp/f.$((2 * ops))" | sort -k2 -n -r
