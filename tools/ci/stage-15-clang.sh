#!/usr/bin/env bash
# clang, Debug, warnings as errors: build everything and run the test suite.
source "$(dirname "$0")/common.sh"
ci_configure clang -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug
ci_build clang
ci_expect_suite clang
ci_ctest clang
