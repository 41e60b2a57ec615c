#!/usr/bin/env bash
# Embedded targets: the freestanding archive needs nothing beyond memset/memcpy and has no
# writable data; no configuration option changes a public struct; the whole cmocka suite passes on bare-metal Cortex-M3 (QEMU mps2-an385),
# 32-bit ARM Linux (qemu-arm) and big-endian s390x (qemu-s390x); examples/baremetal prints
# the same dispatch order on the host and on the Cortex-M3; every compile-time option builds
# and behaves as documented on the host and on the Cortex-M3; the Cortex-M3 code sizes keep
# to tools/size-budget.txt (minimal configuration within its budgets, full configuration
# within 2% of its recorded figures). Every step runs even when an earlier one failed, so one
# run reports everything; the stage fails if any step failed.
#
# The steps are independent (each has its own output directory) and mostly one process after
# another, so they run ELV_JOBS at a time, longest first: the three suites, one process at a
# time each and a minute or more of emulated tests, start first, so that no core is left idle
# at the end waiting for one of them; options.sh (40 builds and runs) and size-table.sh (21
# freestanding builds) build ELV_JOBS at a time themselves and fill the cores beside the last
# suite, the short steps after them. Each step's output is printed whole when it ends, with
# its wall and CPU time.
source "$(dirname "$0")/common.sh"
export ELV_EMBEDDED_BUILD="$ELV_CI_DIR/embedded"
mkdir -p "$ELV_EMBEDDED_BUILD/steps"
fs="$ELV_EMBEDDED_BUILD/freestanding"

# name|jobs|command, longest first.
steps=(
	"suite-armhf|1|tests/embedded/run.sh armhf"
	"suite-s390x|1|tests/embedded/run.sh s390x"
	"suite-cortex-m3|1|tests/embedded/run.sh cortex-m3"
	"options|$ELV_JOBS|tests/embedded/options.sh all"
	"size-budget|$ELV_JOBS|tools/size-table.sh --check"
	"freestanding-arm-nocheck|1|tests/embedded/freestanding.sh --out $fs-arm-nocheck --cc arm --opt -Os --no-assert -DELV_NO_CHECK"
	"freestanding-host|1|tests/embedded/freestanding.sh --out $fs-host --cc host --opt -O2 --no-assert"
	"freestanding-arm-Os|1|tests/embedded/freestanding.sh --out $fs-arm-Os --cc arm --opt -Os"
	"freestanding-arm-O2|1|tests/embedded/freestanding.sh --out $fs-arm-O2 --cc arm --opt -O2 -DELV_NO_STRERROR"
	"nocheck-host|1|tests/embedded/nocheck.sh"
	"baremetal-example|1|examples/baremetal/run.sh"
	"layout|1|tests/embedded/layout.sh"
)

# The three suites share one cmocka source tree: fetched (or found) once, before they start.
t0=$SECONDS
echo "--- embedded: cmocka source: $(tests/embedded/fetch-cmocka.sh "$ELV_EMBEDDED_BUILD/_cmocka") ($((SECONDS - t0)) s)"

dir="$ELV_EMBEDDED_BUILD/steps"
declare -A step_cmd step_name step_start
# run_step NAME JOBS: the step's command with ELV_JOBS=JOBS, its output in $dir/NAME.log and
# the CPU time it took (user and system, seconds) in $dir/NAME.cpu.
run_step() {
	local rc=0
	# shellcheck disable=SC2086 # the command is split into words on purpose
	ELV_JOBS=$2 ${step_cmd[$1]} >"$dir/$1.log" 2>&1 || rc=$?
	# (times in this shell, not in a pipe: its second line is the children's user and system.)
	times >"$dir/$1.times"
	awk 'NR == 2 { gsub(/[ms]/, " "); print int($1 * 60 + $2 + $3 * 60 + $4 + 0.5) }' \
		"$dir/$1.times" >"$dir/$1.cpu"
	return "$rc"
}
failed=()
cpu_total=0
ci_pool_done() { # PID STATUS: print the step's output and verdict
	local name=${step_name[$1]} cpu
	cpu=$(cat "$dir/$name.cpu" 2>/dev/null || echo 0)
	cpu_total=$((cpu_total + cpu))
	echo
	echo "--- embedded: $name: ${step_cmd[$name]}"
	cat "$dir/$name.log"
	if [ "$2" -eq 0 ]; then
		echo "--- embedded: $name: ok ($((SECONDS - step_start[$1])) s, CPU $cpu s)"
	else
		echo "--- embedded: $name: FAILED ($((SECONDS - step_start[$1])) s, CPU $cpu s)"
		failed+=("$name")
	fi
	unset "step_name[$1]"
}
for s in "${steps[@]}"; do
	name=${s%%|*}
	jobs=${s#*|}
	jobs=${jobs%%|*}
	step_cmd[$name]=${s#*|*|}
	ci_pool_start run_step "$name" "$jobs"
	step_name[$!]=$name
	step_start[$!]=$SECONDS
done
ci_pool_drain

echo
echo "embedded: ${#steps[@]} steps in $((SECONDS - t0)) s, CPU $cpu_total s"
if [ "${#failed[@]}" -ne 0 ]; then
	echo "embedded: failed steps: ${failed[*]}"
	exit 1
fi
echo "embedded: all ${#steps[@]} steps passed"
