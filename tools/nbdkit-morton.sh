#!/usr/bin/env bash
# Morton's experiment with real clients: one fio job streams sequential reads through a large
# region of the disk while a second does small dependent reads, with think time, in a region
# far away. Served by nbdkit: the elevator filter under each policy in front of elvdisk
# model=ide2003 (one command at a time, like the drive it models), and once without the
# filter. The filter is told rotational=true, so it keeps one request in the plugin (depth 1)
# and the policy orders the rest. Per run: the small reader's completion time and latency,
# the streamer's throughput.
#
#   tools/nbdkit-morton.sh [BUILD_DIR]      (default: build)
#
# Environment: TIMESCALE (elvdisk timescale=, default 1), SMALL_IOS (reads of the small
# reader, default 50), THINK (its think time between reads, default 2ms), ROUNDS (default 3:
# every setup runs once per round, rounds one after the other; the table shows the median and
# the range), POLICIES (space-separated, default every built-in policy the filter lists).
# Prints a Markdown table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
case $build in /*) ;; *) build=$PWD/$build ;; esac
filter=$build/nbdkit/nbdkit-elevator-filter.so
plugin=$build/nbdkit/nbdkit-elvdisk-plugin.so
timescale=${TIMESCALE:-1}
small_ios=${SMALL_IOS:-50}
rounds=${ROUNDS:-1}
think=${THINK:-2ms}
stream=${STREAM:-64m}

for f in "$filter" "$plugin"; do
	if [ ! -f "$f" ]; then
		echo "$f not found: build the nbdkit targets first" >&2
		exit 1
	fi
done
for tool in nbdkit fio python3 timeout; do
	command -v "$tool" >/dev/null 2>&1 || { echo "$tool not found" >&2; exit 1; }
done
if [ -n "${POLICIES:-}" ]; then
	read -r -a policies <<<"$POLICIES"
else
	read -r -a policies <<<"$(nbdkit --filter="$filter" null --help 2>/dev/null |
		sed -n 's/^Built-in policies://p')"
fi
if [ "${#policies[@]}" -eq 0 ]; then
	echo "the filter lists no policies" >&2
	exit 1
fi

tmp=$(mktemp -d)
cleanup() {
	rm -rf "$tmp"
}
trap cleanup EXIT

# The streamer reads a large file's worth (STREAM, default 64 MiB) from the start of the disk,
# four 256 KiB reads ahead. The small reader reads 4 KiB at random offsets in 1 GiB at the
# 30 GiB mark, one at a time, thinking between reads. Both do a fixed amount of work and the
# run ends when both are done, so a policy that starves one of them shows it as a long time
# rather than never ending.
cat >"$tmp/morton.fio" <<EOF
[global]
ioengine=nbd
uri=\${URI}

[streamer]
rw=read
bs=256k
iodepth=4
offset=0
size=$stream

[small]
rw=randread
bs=4k
iodepth=1
offset=30g
size=1g
thinktime=$think
number_ios=$small_ios
randseed=42
EOF

# run NAME ROUND [FILTER PARAMETERS...]: one setup, served for the length of the fio run.
run() {
	local name=$1 round=$2 filter_args=()
	shift 2
	[ $# -gt 0 ] && filter_args=(--filter="$filter")
	# Captive nbdkit: it serves while the command runs and exits with it. \$uri is set by
	# nbdkit for the command's shell; the temporary paths hold no quotes.
	echo "round $round: $name" >&2
	timeout 120 nbdkit -U - "${filter_args[@]}" "$plugin" model=ide2003 \
		timescale="$timescale" "$@" --run "URI=\"\$uri\" fio '$tmp/morton.fio' \
		--output-format=json --output='$tmp/$name.$round.json' >/dev/null"
}

# The median of the rounds, and their range.
table() {
	python3 - "$tmp" "$rounds" "$@" <<'PY'
import json, statistics, sys
tmp, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def med(v):
    return statistics.median(v)
for n in names:
    small, lat, p99, sdone, bw = [], [], [], [], []
    for r in range(1, rounds + 1):
        jobs = {j["jobname"]: j["read"]
                for j in json.load(open(f"{tmp}/{n}.{r}.json"))["jobs"]}
        s, m = jobs["small"], jobs["streamer"]
        small.append(s["runtime"] / 1000)
        lat.append(s["clat_ns"]["mean"] / 1e6)
        p99.append(s["clat_ns"]["percentile"]["99.000000"] / 1e6)
        sdone.append(m["runtime"] / 1000)
        bw.append(m["bw_bytes"] / 1e6)
    rng = lambda v, f: f"{med(v):{f}}" + (f" ({min(v):{f}}-{max(v):{f}})" if rounds > 1 else "")
    print(f"| {n} | {rng(small, '.2f')} | {med(lat):.1f} | {med(p99):.1f} | "
          f"{rng(sdone, '.2f')} | {med(bw):.1f} |")
PY
}

t0=$SECONDS
for r in $(seq "$rounds"); do
	run "no filter" "$r"
	for p in "${policies[@]}"; do
		run "$p" "$r" policy="$p" rotational=true
	done
done
echo "elvdisk model=ide2003 timescale=$timescale; small reader: $small_ios dependent 4 KiB" \
	"reads, think time $think; streamer: $stream in 256 KiB sequential reads, 4 in flight;" \
	"median of $rounds round(s)"
echo
echo "| policy | small reader done (s) | its mean latency (ms) | its p99 (ms) |" \
	"streamer done (s) | streamer (MB/s) |"
echo "|---|---:|---:|---:|---:|---:|"
table "no filter" "${policies[@]}"
echo
echo "total $((SECONDS - t0)) s"
