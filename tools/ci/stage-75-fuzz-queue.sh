#!/usr/bin/env bash
# Fuzz the queue through the model checker's call language (tests/fuzz/fuzz_queue.c) with
# libFuzzer under ASan and UBSan, 60 s from the seed corpus in tests/fuzz/corpus/queue. A
# model violation, crash or sanitizer report fails the stage; the artifact is left in
# build-ci/fuzz-queue/artifacts/ and its log ends with a reproducer for elvcheck --replay.
# ELV_FUZZ_SECONDS overrides the time.
source "$(dirname "$0")/common.sh"
ELV_FUZZ_DIR="$ELV_CI_DIR/fuzz-queue" tools/fuzz/run-queue-fuzzer.sh "${ELV_FUZZ_SECONDS:-60}" \
	-max_len=256
