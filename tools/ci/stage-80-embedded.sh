#!/usr/bin/env bash
# Embedded targets: the freestanding archive needs nothing beyond memset/memcpy and has no
# writable data; no configuration option changes a public struct; the whole cmocka suite passes on bare-metal Cortex-M3 (QEMU mps2-an385),
# 32-bit ARM Linux (qemu-arm) and big-endian s390x (qemu-s390x); examples/baremetal prints
# the same dispatch order on the host and on the Cortex-M3; every compile-time option builds
# and behaves as documented on the host and on the Cortex-M3; the Cortex-M3 code sizes keep
# to tools/size-budget.txt (minimal configuration within its budgets, full configuration
# within 2% of its recorded figures). Every step runs even when an earlier one failed, so one
# run reports everything; the stage fails if any step failed.
source "$(dirname "$0")/common.sh"
export ELV_EMBEDDED_BUILD="$ELV_CI_DIR/embedded"
export ELV_JOBS
mkdir -p "$ELV_EMBEDDED_BUILD"

failed=()
step() { # step NAME COMMAND...
	local name=$1 t0=$SECONDS
	shift
	echo
	echo "--- embedded: $name: $*"
	if "$@"; then
		echo "--- embedded: $name: ok ($((SECONDS - t0)) s)"
	else
		echo "--- embedded: $name: FAILED ($((SECONDS - t0)) s)"
		failed+=("$name")
	fi
}

step freestanding-arm-Os tests/embedded/freestanding.sh --cc arm --opt -Os
step freestanding-arm-O2 tests/embedded/freestanding.sh --cc arm --opt -O2 -DELV_NO_STRERROR
step freestanding-host tests/embedded/freestanding.sh --cc host --opt -O2 --no-assert
step freestanding-arm-nocheck tests/embedded/freestanding.sh --cc arm --opt -Os --no-assert -DELV_NO_CHECK
step nocheck-host tests/embedded/nocheck.sh
step options tests/embedded/options.sh all
step layout tests/embedded/layout.sh
for target in cortex-m3 armhf s390x; do
	step "suite-$target" tests/embedded/run.sh "$target"
done
step baremetal-example examples/baremetal/run.sh
step size-budget tools/size-table.sh --check

echo
if [ "${#failed[@]}" -ne 0 ]; then
	echo "embedded: failed steps: ${failed[*]}"
	exit 1
fi
echo "embedded: all steps passed"
