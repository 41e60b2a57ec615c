#!/usr/bin/env bash
# Per-request cost of a queue that outgrows nr_requests: each policy with nr_requests left at
# its default (128) and the queue held at depths 1000, 64000 and 400000, library instructions
# per request in steady state (callgrind, difference of two run lengths as in profile.sh; the
# runs are long, 100000 and 200000 requests by default, because filling and draining a deep
# queue costs more than the loop and varies by a percent between runs). The policies are the
# four Linux elevators unless named (any built-in, e.g. sstf sptf).
#
#   tools/elvbench/overshoot.sh ELVBENCH [OPS [POLICY...]]
#   e.g. tools/elvbench/overshoot.sh build/tools/elvbench/elvbench
#
# Fails when, for any policy and pattern, instructions per request at the deepest queue over
# those at the shallowest exceed log2(400000) / log2(1000) = 1.87: what a cost a + b*log2(n)
# (a, b >= 0) can grow at most over that range. A per-request walk that grows with the queue
# (the hash chains before they were capped grew 400-fold) lands far above it. Also fails when
# valgrind is missing or any run fails or reports nothing.
set -euo pipefail
if [ $# -lt 1 ]; then
	sed -n '2,10p' "$0" >&2
	exit 2
fi
bench=$1 ops=${2:-100000}
shift $(($# < 2 ? $# : 2))
policies=("$@")
[ ${#policies[@]} -gt 0 ] || policies=(noop deadline anticipatory cfq)
depths="1000 64000 400000"
command -v valgrind >/dev/null || { echo "overshoot.sh: valgrind not found" >&2; exit 1; }
[ -x "$bench" ] || { echo "overshoot.sh: $bench is not executable" >&2; exit 1; }

# Instructions the library spends in one run of N requests at depth D (nr_requests default).
collected() { # impl depth streams pattern ops
	local out
	out=$(valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=/dev/null \
		--toggle-collect=elv_add --toggle-collect=elv_dispatch \
		--toggle-collect=elv_complete --toggle-collect=elv_next_event \
		"$bench" --count "$1" "$2" "$3" "$4" "$5" 0 2>&1) || {
		echo "overshoot.sh: elvbench --count $* 0 failed" >&2
		return 1
	}
	sed -n 's/.*Collected : \([0-9][0-9]*\).*/\1/p' <<<"$out" | tail -n 1
}

bound=$(awk 'BEGIN { printf "%.3f", log(400000) / log(1000) }')
printf '%-13s %-7s %7s %12s %12s %12s %7s\n' policy pattern streams \
	"instr@1k" "instr@64k" "instr@400k" ratio
fail=0 rows=0
for impl in "${policies[@]}"; do
	streams=0
	case $impl in anticipatory | cfq) streams=64 ;; esac
	for pattern in random mixed; do
		per=()
		for d in $depths; do
			a=$(collected "$impl" "$d" "$streams" "$pattern" "$ops")
			b=$(collected "$impl" "$d" "$streams" "$pattern" $((2 * ops)))
			if [ -z "$a" ] || [ -z "$b" ] || [ "$b" -le "$a" ]; then
				echo "overshoot.sh: no instruction count for $impl $d $pattern" >&2
				exit 1
			fi
			per+=("$(awk -v a="$a" -v b="$b" -v n="$ops" 'BEGIN { printf "%.1f", (b - a) / n }')")
		done
		ratio=$(awk -v s="${per[0]}" -v d="${per[2]}" 'BEGIN { printf "%.3f", d / s }')
		printf '%-13s %-7s %7s %12s %12s %12s %7s\n' "$impl" "$pattern" "$streams" \
			"${per[0]}" "${per[1]}" "${per[2]}" "$ratio"
		rows=$((rows + 1))
		if awk -v r="$ratio" -v b="$bound" 'BEGIN { exit !(r > b) }'; then
			echo "overshoot.sh: $impl $pattern: 400k/1k = $ratio > $bound" >&2
			fail=1
		fi
	done
done
want=$((2 * ${#policies[@]}))
[ "$rows" -eq "$want" ] || { echo "overshoot.sh: measured $rows cases, expected $want" >&2; exit 1; }
echo "nr_requests default (128), $ops and $((2 * ops)) requests per run; bound $bound"
exit "$fail"
