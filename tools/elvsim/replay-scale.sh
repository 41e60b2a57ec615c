#!/usr/bin/env bash
# Scale benchmark of trace replay: synthetic SNIA MSR traces of uniform random 4 KiB requests,
# 70% reads, one every 10-200 us (uniform), far more than the disk serves, so the queue grows
# to hundreds of thousands of requests. Each size is replayed with `elvsim replay` on the
# barracuda model under every policy, and the wall time is printed with the CPU time (user +
# system) and the CPU time per request, which stays flat when the cost per request does not grow
# with the queue. The budget applies to wall time; on a machine shared with other work the CPU
# column says how much of it was this program.
# Fails when a run fails or is cut, or when a run of the largest trace takes over the budget.
#
# usage: tools/elvsim/replay-scale.sh [ELVSIM] [SIZES...]
#   ELVSIM   the elvsim program (default: build/tools/elvsim/elvsim)
#   SIZES    requests per trace (default: 100000 200000 1000000); the last is held to the budget
# environment: BUDGET_S (default 20), POLICIES (default: every built-in policy), KEEP_DIR (keep
# the generated traces there instead of a temporary directory removed at exit)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
elvsim=${1:-build/tools/elvsim/elvsim}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 200000 1000000)
budget=${BUDGET_S:-20}
[ -x "$elvsim" ] || { echo "replay-scale: no elvsim at '$elvsim' (build it first)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "replay-scale: python3 is needed" >&2; exit 2; }
if [ -n "${POLICIES:-}" ]; then
	read -ra policies <<<"${POLICIES//,/ }"
else
	# The policies elvsim lists, in its order.
	mapfile -t policies < <("$elvsim" list | awk '/^policies:/ { p = 1; next }
		p && /^  [^ ]/ { print $1 }')
fi
[ ${#policies[@]} -gt 0 ] || { echo "replay-scale: no policy found" >&2; exit 2; }

if [ -n "${KEEP_DIR:-}" ]; then
	dir=$KEEP_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT INT TERM
fi

fails=0
runs=0
last=${sizes[$((${#sizes[@]} - 1))]}
printf '%-10s %-13s %8s %8s %14s %10s %s\n' requests policy wall_s cpu_s cpu_us/request \
	sim_s result
for n in "${sizes[@]}"; do
	trace="$dir/msr-$n.csv"
	[ -s "$trace" ] || python3 "$here/gen-msr-trace.py" --requests "$n" --reads 0.7 \
		--gap-min-us 10 --gap-max-us 200 --size 4096 --seed 1 -o "$trace"
	for p in "${policies[@]}"; do
		rc=0
		TIMEFORMAT='%R %U %S'
		{ time "$elvsim" replay "$trace" --format msr --device barracuda --policy "$p" \
			--quiet --csv "$dir/out.csv" 2>"$dir/err" || rc=$?; } 2>"$dir/time"
		read -r wall user sys <"$dir/time"
		cpu=$(echo "$user + $sys" | bc -l)
		per=$(echo "$cpu * 1000000 / $n" | bc -l)
		sim=$(awk -F, '$5 == "*" { print $6 }' "$dir/out.csv" 2>/dev/null || true)
		result=ok
		if [ "$rc" -ne 0 ]; then
			result="FAIL: exit $rc: $(head -1 "$dir/err")"
			fails=$((fails + 1))
		elif [ "$n" = "$last" ] && [ "$(echo "$wall > $budget" | bc -l)" -eq 1 ]; then
			result="FAIL: over the ${budget} s budget"
			fails=$((fails + 1))
		fi
		runs=$((runs + 1))
		printf '%-10s %-13s %8.2f %8.2f %14.2f %10.0f %s\n' "$n" "$p" "$wall" "$cpu" "$per" \
			"${sim:-0}" "$result"
	done
done
expect=$((${#sizes[@]} * ${#policies[@]}))
if [ "$runs" -ne "$expect" ]; then
	echo "replay-scale: ran $runs replays, expected $expect" >&2
	exit 1
fi
if [ "$fails" -ne 0 ]; then
	echo "replay-scale: $fails of $runs replays failed" >&2
	exit 1
fi
echo "replay-scale: $runs replays, every ${last}-request replay within ${budget} s"
