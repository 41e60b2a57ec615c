#!/usr/bin/env bash
# Run every tools/ci/stage-*.sh in name order; stop at the first that fails.
# Each stage prints its own output; this prints a banner and the time per stage,
# then one summary line: "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

passed=0
failed=0
start_all=$SECONDS
mapfile -t stages < <(find tools/ci -maxdepth 1 -name 'stage-*.sh' -print | LC_ALL=C sort)
if [ "${#stages[@]}" -eq 0 ]; then
	echo "no stages found in tools/ci" >&2
	exit 1
fi

for stage in "${stages[@]}"; do
	name=$(basename "$stage" .sh)
	echo
	echo "=================== ${name} ==================="
	t0=$SECONDS
	if bash "$stage"; then
		passed=$((passed + 1))
		echo "=================== ${name}: ok ($((SECONDS - t0)) s) ==================="
	else
		rc=$?
		failed=$((failed + 1))
		echo "=================== ${name}: FAILED with status ${rc} ($((SECONDS - t0)) s) ==================="
		break
	fi
done

echo
echo "total $((SECONDS - start_all)) s"
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
