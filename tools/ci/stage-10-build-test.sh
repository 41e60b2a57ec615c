#!/usr/bin/env bash
# gcc, Release, warnings as errors: build everything and run the test suite.
source "$(dirname "$0")/common.sh"
ci_configure gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Release
ci_build gcc
ci_ctest gcc
# README's demonstration must keep working.
"$ELV_CI_DIR/gcc/examples/driver-loop/driver-loop"
