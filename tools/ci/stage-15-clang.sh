#!/usr/bin/env bash
# clang, Debug, warnings as errors: build everything and run the test suite.
# No other stage compiles with these flags: the compiler cache would only add its own cost.
ELV_NO_CCACHE=1
source "$(dirname "$0")/common.sh"
ci_configure clang -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug
ci_build clang
ci_expect_suite clang
ci_ctest clang
