#!/usr/bin/env bash
# Build the queue fuzz target (clang, libFuzzer, ASan, UBSan) and run it.
#
#   tools/fuzz/run-queue-fuzzer.sh SECONDS [libFuzzer options...]
#
# The target (tests/fuzz/fuzz_queue.c) turns the fuzzer's bytes into calls of the model
# checker's call language and checks the model after every call. Work corpus, log and crash
# artifacts go to $ELV_FUZZ_DIR (default build-fuzz-queue/); the seed corpus in
# tests/fuzz/corpus/queue is only read. One process, one core. Prints the executions and
# exits non-zero on a finding; replay one with build-fuzz-queue/fuzz_queue <artifact>, whose
# output ends with a reproducer for `elvcheck --replay`.
#
# Environment: ELV_FUZZ_CC (default clang); ELV_FUZZ_LIB, a tree whose lib/ is compiled instead
# of this one's (to fuzz a candidate fix); ELV_FUZZ_EXCLUDE, policies to leave out.
set -euo pipefail

usage() {
	echo "usage: $0 SECONDS [libFuzzer options...]" >&2
	exit 2
}

[ $# -ge 1 ] || usage
seconds=$1
shift
case $seconds in '' | *[!0-9]* | 0) usage ;; esac # libFuzzer reads 0 s as "no limit"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lib=${ELV_FUZZ_LIB:-$root}
out=${ELV_FUZZ_DIR:-$root/build-fuzz-queue}
cc=${ELV_FUZZ_CC:-clang}
mkdir -p "$out"

if ! command -v "$cc" >/dev/null; then
	echo "$cc not found: the fuzz target needs clang with libFuzzer" >&2
	exit 1
fi

# The library's own source lists, so that a file not yet registered is not compiled.
mapfile -t sources < <(sed -n '/^set(ELV_\(CORE\|POLICY\)_SOURCES/,/^)/p' \
	"$lib/cmake/elv_sources.cmake" | grep -o 'lib/[A-Za-z0-9_/]*\.c' | sed "s|^|$lib/|")
[ ${#sources[@]} -gt 0 ] || { echo "no library sources found under $lib" >&2; exit 1; }

bin=$out/fuzz_queue
obj=$out/obj
mkdir -p "$obj"
common=(-std=c11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror -fno-sanitize-recover=all
	-I"$lib/include" -I"$lib/lib/core")
echo "+ $cc ... tests/fuzz/fuzz_queue.c (${#sources[@]} library sources from $lib) -> $bin"
objs=()
for src in "${sources[@]}"; do
	o=$obj/$(basename "$src" .c).o
	# The invariant walk runs after every call: instrumenting it for coverage only slows
	# the fuzzer down (it walks every hash bucket), sanitizers still apply.
	if [ "$(basename "$src")" = check.c ]; then
		"$cc" "${common[@]}" -fsanitize=address,undefined -c "$src" -o "$o"
	else
		"$cc" "${common[@]}" -fsanitize=fuzzer-no-link,address,undefined -c "$src" -o "$o"
	fi
	objs+=("$o")
done
# The model is not instrumented either: coverage feedback comes from the library alone.
"$cc" "${common[@]}" -fsanitize=address,undefined -c "$root/tests/fuzz/fuzz_queue.c" \
	-o "$obj/fuzz_queue.o"
"$cc" "${common[@]}" -fsanitize=fuzzer,address,undefined "${objs[@]}" "$obj/fuzz_queue.o" \
	-o "$bin"

work=$out/corpus
art=$out/artifacts
log=$out/fuzz_queue.log
seeds=$root/tests/fuzz/corpus/queue
mkdir -p "$work" "$art"
nseeds=$(find "$seeds" -type f 2>/dev/null | wc -l)
if [ "$nseeds" -eq 0 ]; then
	echo "fuzz_queue: no seed inputs in ${seeds#"$root"/}" >&2
	exit 1
fi
# libFuzzer first runs every input it was given: the seeds and the work corpus so far.
ninputs=$((nseeds + $(find "$work" -type f | wc -l)))
rc=0
rm -f "$log"
"$bin" -max_total_time="$seconds" -print_final_stats=1 -max_len=512 -timeout=20 \
	-artifact_prefix="$art/" "$@" "$work" "$seeds" >"$log" 2>&1 || rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
execs=${execs:-0}
units=$(find "$work" -type f | wc -l)
if [ "$rc" -ne 0 ]; then
	echo "fuzz_queue: FAILED (status $rc) after $execs executions; log: $log"
	grep -E "VIOLATION|ERROR|SUMMARY|Test unit written" "$log" | head -n 20 || true
	exit 1
fi
# A run that executed fewer inputs than it was given did not fuzz: wrong options, a target
# that returns at once, or a build that never reached the fuzzing loop.
if [ "$execs" -lt "$ninputs" ] || [ "$execs" -eq 0 ]; then
	echo "fuzz_queue: FAILED: $execs executions for $ninputs inputs given; log: $log"
	tail -n 20 "$log"
	exit 1
fi
echo "fuzz_queue: ${seconds} s, $execs executions, $units corpus files, no finding"
