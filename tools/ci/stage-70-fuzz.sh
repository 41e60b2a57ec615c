#!/usr/bin/env bash
# Fuzz the five trace readers (blktrace, blkparse, MSR, fio, ftrace) with libFuzzer under ASan and
# UBSan, 60 s each from the seed corpus in tests/fuzz/corpus/. Any crash, leak, sanitizer
# report or broken promise about the records fails the stage; the artifact is left in
# build-ci/fuzz-traces/artifacts/. ELV_FUZZ_SECONDS overrides the time per target.
source "$(dirname "$0")/common.sh"
ELV_FUZZ_DIR="$ELV_CI_DIR/fuzz-traces" tools/fuzz/run-trace-fuzzers.sh "${ELV_FUZZ_SECONDS:-60}"
