#!/usr/bin/env bash
# Build the trace reader fuzz targets (clang, libFuzzer, ASan, UBSan) and run each one.
#
#   tools/fuzz/run-trace-fuzzers.sh SECONDS [FORMAT...]
#
# FORMAT is blktrace, blkparse, msr, fio or ftrace (default: all five, one after the other, SECONDS
# each). Work corpora, logs and crash artifacts go to $ELV_FUZZ_DIR (default
# build-fuzz-trace/); the seed corpus in tests/fuzz/corpus/ is only read. Prints one line per
# target with its executions and exits non-zero if any target found a crash, leak or
# sanitizer report. Replay a finding with: build-fuzz-trace/fuzz_trace_<fmt> <artifact>.
set -euo pipefail

usage() {
	echo "usage: $0 SECONDS [blktrace|blkparse|msr|fio|ftrace ...]" >&2
	exit 2
}

[ $# -ge 1 ] || usage
seconds=$1
shift
case $seconds in '' | *[!0-9]* | 0) usage ;; esac # libFuzzer reads 0 s as "no limit"
formats=("$@")
[ ${#formats[@]} -gt 0 ] || formats=(blktrace blkparse msr fio ftrace)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${ELV_FUZZ_DIR:-$root/build-fuzz-trace}
cc=${ELV_FUZZ_CC:-clang}
mkdir -p "$out"

if ! command -v "$cc" >/dev/null; then
	echo "$cc not found: the fuzz targets need clang with libFuzzer" >&2
	exit 1
fi

cflags=(-std=c11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror
	"-fsanitize=fuzzer,address,undefined" -fno-sanitize-recover=all
	-I"$root/include" -I"$root/lib/sim")
sources=("$root"/lib/sim/trace_*.c)

# Build every target first, then fuzz them ELV_FUZZ_JOBS at a time (default 2, one per core).
for fmt in "${formats[@]}"; do
	case $fmt in blktrace | blkparse | msr | fio | ftrace) ;; *) usage ;; esac
	bin=$out/fuzz_trace_$fmt
	echo "+ $cc ... tests/fuzz/fuzz_trace_$fmt.c -> ${bin#"$root"/}"
	"$cc" "${cflags[@]}" "${sources[@]}" "$root/tests/fuzz/fuzz_trace_$fmt.c" -o "$bin"
done

run_one() {
	local fmt=$1 bin=$out/fuzz_trace_$1 max_len=8192 rc=0
	local work=$out/corpus/trace_$fmt art=$out/artifacts/trace_$fmt log=$out/fuzz_trace_$fmt.log
	mkdir -p "$work" "$art"
	# Every input libFuzzer is given runs first: seeds and the work corpus so far.
	echo $(($(find "$work" "$root/tests/fuzz/corpus/trace_$fmt" -type f | wc -l))) \
		>"$out/fuzz_trace_$fmt.inputs"
	[ "$fmt" = blktrace ] && max_len=4096
	"$bin" -max_total_time="$seconds" -print_final_stats=1 -max_len="$max_len" -timeout=10 \
		-dict="$root/tests/fuzz/fuzz_trace_$fmt.dict" -artifact_prefix="$art/" \
		"$work" "$root/tests/fuzz/corpus/trace_$fmt" >"$log" 2>&1 || rc=$?
	echo "$rc" >"$out/fuzz_trace_$fmt.rc"
}

jobs_max=${ELV_FUZZ_JOBS:-2}
# No verdict from an earlier run; only this run's formats, as another run may use the others.
for fmt in "${formats[@]}"; do
	rm -f "$out/fuzz_trace_$fmt.rc" "$out/fuzz_trace_$fmt.log" "$out/fuzz_trace_$fmt.inputs"
done
for fmt in "${formats[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n || true
	done
	run_one "$fmt" &
done
wait

failed=0
total=0
for fmt in "${formats[@]}"; do
	log=$out/fuzz_trace_$fmt.log
	rc=$(cat "$out/fuzz_trace_$fmt.rc" 2>/dev/null || echo missing)
	[ "$rc" = missing ] && rc=1
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	units=$(find "$out/corpus/trace_$fmt" -type f | wc -l)
	execs=${execs:-0}
	nseeds=$(find "$root/tests/fuzz/corpus/trace_$fmt" -type f 2>/dev/null | wc -l)
	ninputs=$(cat "$out/fuzz_trace_$fmt.inputs" 2>/dev/null || echo 1)
	total=$((total + execs))
	if [ "$rc" -ne 0 ]; then
		failed=$((failed + 1))
		echo "fuzz_trace_$fmt: FAILED (status $rc) after $execs executions; log: ${log#"$root"/}"
		grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -n 20 || true
	elif [ "$nseeds" -eq 0 ] || [ "$execs" -eq 0 ] || [ "$execs" -lt "$ninputs" ]; then
		# No seeds, or fewer executions than inputs given: the target did not really fuzz.
		failed=$((failed + 1))
		echo "fuzz_trace_$fmt: FAILED: $execs executions for $ninputs inputs ($nseeds seeds); log: ${log#"$root"/}"
		tail -n 20 "$log"
	else
		echo "fuzz_trace_$fmt: ${seconds} s, $execs executions, $units corpus files, no finding"
	fi
done
echo "total: $total executions, $failed target(s) failed"
[ "$failed" -eq 0 ]
