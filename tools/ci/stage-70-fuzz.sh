#!/usr/bin/env bash
# libFuzzer under ASan and UBSan, from the seed corpora in tests/fuzz/corpus/:
# - the five trace readers (blktrace, blkparse, MSR, fio, ftrace; tools/fuzz/run-trace-fuzzers.sh),
#   45 s each. Any crash, leak, sanitizer report or broken promise about the records fails the
#   stage; the artifact is left in build-ci/fuzz-traces/artifacts/.
# - the queue through the model checker's call language (tests/fuzz/fuzz_queue.c;
#   tools/fuzz/run-queue-fuzzer.sh, inputs up to 256 bytes), 60 s. A model violation, crash or
#   sanitizer report fails the stage; the artifact is left in build-ci/fuzz-queue/artifacts/
#   and its log ends with a reproducer for elvcheck --replay.
# Why the trace readers get less: they are small parsers run at 15 000 to 90 000 inputs a
# second, and their coverage stops growing within about 20 s (one run: blktrace 130 edges
# after 3 s and at 45 s, fio 156 after 3 s and 157 at 45 s, ftrace 337 after 17 s and at
# 45 s), so 45 s is more than twice what they need; the queue target runs about 1 500 inputs
# a second and still finds new edges at 60 s, so it keeps its full minute.
# Each target fuzzes on one core: the six run in two lanes of three, one lane per core
# (blktrace, blkparse, msr | fio, ftrace, queue), so that no core idles while a target still
# waits (ELV_JOBS=1 runs the lanes one after the other). Both lanes run to the end, and the
# stage fails if either had a failure. ELV_FUZZ_SECONDS overrides the time per trace reader,
# ELV_FUZZ_QUEUE_SECONDS the queue target's (default: ELV_FUZZ_SECONDS if set, else 60).
source "$(dirname "$0")/common.sh"
secs=${ELV_FUZZ_SECONDS:-45}
qsecs=${ELV_FUZZ_QUEUE_SECONDS:-${ELV_FUZZ_SECONDS:-60}}

lane_traces() {
	ELV_FUZZ_JOBS=1 ELV_FUZZ_DIR="$ELV_CI_DIR/fuzz-traces" tools/fuzz/run-trace-fuzzers.sh \
		"$secs" blktrace blkparse msr
}
lane_traces_queue() {
	local rc=0
	ELV_FUZZ_JOBS=1 ELV_FUZZ_DIR="$ELV_CI_DIR/fuzz-traces" tools/fuzz/run-trace-fuzzers.sh \
		"$secs" fio ftrace || rc=1
	ELV_FUZZ_DIR="$ELV_CI_DIR/fuzz-queue" tools/fuzz/run-queue-fuzzer.sh "$qsecs" -max_len=256 ||
		rc=1
	return "$rc"
}

status=0
ci_pair "$ELV_CI_DIR/fuzz-lane" lane_traces lane_traces_queue || status=1
[ "$status" -eq 0 ] && echo "fuzz: 5 trace targets, ${secs} s each, and the queue target, ${qsecs} s: no finding"
exit "$status"
