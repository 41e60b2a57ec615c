#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer, no recovery: the suite and the examples.
# No other stage compiles with these flags: the compiler cache would only add its own cost.
ELV_NO_CCACHE=1
source "$(dirname "$0")/common.sh"
ci_configure sanitize -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Debug -DELV_SANITIZE=ON \
	-DELV_BUILD_TOOLS=OFF
ci_build sanitize
ci_expect_suite sanitize
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ci_ctest sanitize
for prog in driver-loop/driver-loop cmake-consumer/cmake-consumer \
	pkgconfig-consumer/pkgconfig-consumer; do
	"$ELV_CI_DIR/sanitize/examples/$prog" >/dev/null
done
echo "sanitize: driver-loop and both consumers ran clean"
