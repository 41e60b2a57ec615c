#!/usr/bin/env bash
# The whole suite under valgrind memcheck: any error or definite/indirect leak fails.
# No other stage compiles with these flags: the compiler cache would only add its own cost.
ELV_NO_CCACHE=1
source "$(dirname "$0")/common.sh"
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
# -O1 keeps valgrind reports exact enough and runs the suite about three times faster than -O0.
# To find where an uninitialised value came from, rerun the failing test by hand under
# valgrind --track-origins=yes.
ci_configure memcheck -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
	-DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF
ci_build memcheck
ci_expect_suite memcheck
# elvcheck_planted_* run a copy of the library with bugs planted on purpose, to prove the model
# checker finds them; they say nothing about the shipped code's memory use, cost a third of
# this stage under valgrind, and run natively in the gcc and clang stages.
status=0
ci_ctest memcheck -T memcheck -E '^elvcheck_planted_' || status=$?

# valgrind's --error-exitcode already fails a test with errors or leaks; the logs are
# checked too, so that a test that ignores its exit path cannot hide a report.
shopt -s nullglob
logs=("$ELV_CI_DIR"/memcheck/Testing/Temporary/MemoryChecker.*.log)
if [ "${#logs[@]}" -eq 0 ]; then
	echo "memcheck: no valgrind logs were written" >&2
	exit 1
fi
dirty=0
for log in "${logs[@]}"; do
	if grep -Eq 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]|indirectly lost: [1-9]' "$log"; then
		echo "---- $log"
		cat "$log"
		dirty=1
	fi
done
echo "memcheck: ${#logs[@]} valgrind logs checked"
[ "$status" -eq 0 ] && [ "$dirty" -eq 0 ]
