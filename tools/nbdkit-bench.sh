#!/usr/bin/env bash
# Overhead of the nbdkit elevator filter: the memory plugin alone, then behind
# policy=noop and policy=deadline, measured side by side in one run. fio sends 4 KiB random
# reads at iodepth 32 over a Unix socket. For each setup: IOPS, the ratio to the plugin
# alone, and the CPU time the nbdkit process spent per request (utime + stime from
# /proc/PID/stat, over the measured run only).
#
#   tools/nbdkit-bench.sh [-r ROUNDS] [-t SECONDS] [-b BUILD_DIR]
#
# Each round runs the three setups back to back, in an order that rotates from round to
# round, so that a busy spell of the machine falls on all of them alike. The ratio to no
# filter is taken within each round (the setup against the plugin alone run next to it) and
# the table shows the median of those ratios, the median IOPS and the median CPU per request.
# Output: a Markdown table on stdout. Needs nbdkit, nbdkit-plugin-dev and fio.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=10
secs=4
build="$root/build-nbdkit-bench"
while getopts "r:t:b:" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	t) secs=$OPTARG ;;
	b) build=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-t SECONDS] [-b BUILD_DIR]" >&2; exit 2 ;;
	esac
done
for tool in nbdkit fio python3; do
	command -v "$tool" >/dev/null || { echo "$0: $tool is missing" >&2; exit 1; }
done

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DELV_BUILD_NBDKIT=ON \
	-DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build" -j2 --target nbdkit-elevator-filter >/dev/null
filter="$build/nbdkit/nbdkit-elevator-filter.so"

tmp=$(mktemp -d /tmp/elv-nbdkit-bench.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

setups=(none noop deadline)
declare -A pre=([none]="" [noop]="--filter=$filter" [deadline]="--filter=$filter")
declare -A post=([none]="" [noop]="policy=noop" [deadline]="policy=deadline")
hz=$(getconf CLK_TCK)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# one_run SETUP ROUND: prints "iops cpu_us_per_request".
one_run() {
	local sock="$tmp/s.sock" uri c0 c1 i
	rm -f "$sock"
	# shellcheck disable=SC2086
	nbdkit -f -U "$sock" ${pre[$1]} memory 256M ${post[$1]} 2>"$tmp/nbdkit.log" &
	pid=$!
	for i in $(seq 1 100); do
		[ -S "$sock" ] && break
		sleep 0.1
	done
	[ -S "$sock" ] || { cat "$tmp/nbdkit.log" >&2; exit 1; }
	uri="nbd+unix:///?socket=$sock"
	# Fill the disk first, so that reads copy data instead of answering holes.
	timeout 120 fio --name=fill --ioengine=nbd --uri="$uri" --rw=write --bs=1m \
		--iodepth=8 --size=256m >/dev/null
	c0=$(cpu_ticks "$pid")
	timeout $((secs + 60)) fio --name=bench --ioengine=nbd --uri="$uri" --rw=randread \
		--bs=4k --iodepth=32 --size=256m --time_based --runtime="$secs" --ramp_time=1 \
		--output-format=json --output="$tmp/fio.json" >/dev/null
	c1=$(cpu_ticks "$pid")
	kill "$pid"
	timeout 30 tail --pid="$pid" -f /dev/null
	wait "$pid" || true
	pid=
	python3 - "$tmp/fio.json" "$c0" "$c1" "$hz" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["read"]
c0, c1, hz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ios = j["total_ios"]
print(f'{j["iops"]:.0f} {(c1 - c0) / hz * 1e6 / ios:.2f}')
PY
}

declare -A results
for r in $(seq 1 "$rounds"); do
	for k in 0 1 2; do
		s=${setups[$(((r + k) % 3))]}
		out=$(one_run "$s" "$r")
		results[$s]+="$out;"
		echo "round $r $s: IOPS and CPU us per request: $out" >&2
	done
done

python3 - "$rounds" "$secs" "${results[none]}" "${results[noop]}" "${results[deadline]}" <<'PY'
import statistics, sys
rounds, secs = sys.argv[1], sys.argv[2]
names = ["no filter", "policy=noop", "policy=deadline"]
runs = [[tuple(map(float, x.split())) for x in raw.split(";") if x.strip()]
        for raw in sys.argv[3:]]
base = runs[0]
print(f"fio 4 KiB random reads, iodepth 32, memory plugin, {rounds} rounds of {secs} s; "
      "medians over the rounds, the ratio taken within each round:\n")
print("| setup | IOPS | ratio to no filter | nbdkit CPU per request (us) | ratio per round |")
print("|---|---:|---:|---:|---|")
for name, rs in zip(names, runs):
    ratios = [a[0] / b[0] for a, b in zip(rs, base)]
    print(f"| {name} | {statistics.median(r[0] for r in rs):.0f} | "
          f"{statistics.median(ratios):.3f} | {statistics.median(r[1] for r in rs):.2f} | "
          f"{' '.join(f'{x:.2f}' for x in ratios)} |")
PY
