#!/usr/bin/env bash
# Model-based checking (tests/model/elvcheck): every built-in policy as the starting one,
# random calls checked after each against the reference model, on seeds drawn afresh for
# every run and printed first; then the checker's self-test (ctest label model), which plants
# bugs and expects each one to be found, and replays the reproducers of bugs found before.
# A violation prints the one command that reruns it and a shrunk reproducer for
# `elvcheck --replay`. ELV_ELVCHECK_SEEDS sets the seeds (to rerun a CI run), ELV_ELVCHECK_OPS
# the calls per policy and seed (default: 4 000 000 per seed shared among the policies, at
# least 500 000 each; with four policies, 1 000 000, within which expiry switched off in
# deadline is found on most seeds; the planted self-test proves it on a fixed one).
source "$(dirname "$0")/common.sh"
ci_configure elvcheck -DCMAKE_BUILD_TYPE=RelWithDebInfo -DELV_BUILD_TOOLS=OFF \
	-DELV_BUILD_EXAMPLES=OFF
ci_build elvcheck --target elvcheck elvcheck_planted
bin=$ELV_CI_DIR/elvcheck/tests/model/elvcheck
npol=$("$bin" --list | wc -l)
[ "$npol" -ge 4 ] || { echo "elvcheck --list names $npol policies" >&2; exit 1; }
share=$((4000000 / npol))
ops=${ELV_ELVCHECK_OPS:-$((share > 500000 ? share : 500000))}
if [ -n "${ELV_ELVCHECK_SEEDS:-}" ]; then
	read -r -a seeds <<<"$ELV_ELVCHECK_SEEDS"
else
	read -r -a seeds < <(od -An -N8 -tu4 /dev/urandom) # two: one per core
fi
[ "${#seeds[@]}" -gt 0 ] || { echo "elvcheck: no seeds" >&2; exit 1; }
echo "elvcheck: seeds ${seeds[*]} (rerun this stage on them: ELV_ELVCHECK_SEEDS='${seeds[*]}'), $npol policies, $ops calls each"

# One run per core; each writes its own log, printed whole once every run
# is done, and its status, read back below.
logdir=$ELV_CI_DIR/elvcheck/seeds
ci_pool_done() { :; } # each run's verdict is read from its .rc file
rm -rf "$logdir"
mkdir -p "$logdir"
for seed in "${seeds[@]}"; do
	ci_pool_start ci_logged "$logdir" "$seed" "$bin" --policy all --seed "$seed" --ops "$ops"
done
ci_pool_drain
failed=()
for seed in "${seeds[@]}"; do
	echo "+ elvcheck --policy all --seed $seed --ops $ops"
	cat "$logdir/$seed.log"
	rc=$(cat "$logdir/$seed.rc" 2>/dev/null || echo missing)
	# Every policy, every call counted: a run that checked fewer did not run them all.
	if [ "$rc" != 0 ]; then
		failed+=("$seed")
	elif ! grep -qx "$((npol * ops)) passed, 0 failed" "$logdir/$seed.log"; then
		echo "elvcheck: seed $seed did not report $((npol * ops)) calls checked" >&2
		failed+=("$seed")
	elif "$bin" --list | grep -qx bfq && ! grep -q "^fairness bfq seed $seed: " "$logdir/$seed.log"; then
		# bfq promises proportional service: its fairness check must have run.
		echo "elvcheck: seed $seed ran no fairness check on bfq" >&2
		failed+=("$seed")
	elif [ "$(grep -c "^qos [a-z0-9_-]* seed $seed: .* reservations met" "$logdir/$seed.log")" \
		-ne "$npol" ]; then
		# mClock in front of every policy: the reservation check (qos_check.c) ran on each.
		echo "elvcheck: seed $seed ran the QoS reservation check on fewer than $npol policies" >&2
		failed+=("$seed")
	fi
done
# The zoned model (elvcheck --zoned, tests/model/elv_zmodel.h): the zone stage in front of
# every policy, on the same seeds; ELV_ELVCHECK_ZONED_OPS calls each (default 1 000 000).
# One seed per core again, each log printed whole once every run is done.
zops=${ELV_ELVCHECK_ZONED_OPS:-1000000}
for seed in "${seeds[@]}"; do
	ci_pool_start ci_logged "$logdir" "zoned-$seed" "$bin" --zoned --seed "$seed" --ops "$zops"
done
ci_pool_drain
for seed in "${seeds[@]}"; do
	echo "+ elvcheck --zoned --seed $seed --ops $zops"
	cat "$logdir/zoned-$seed.log"
	rc=$(cat "$logdir/zoned-$seed.rc" 2>/dev/null || echo missing)
	if [ "$rc" != 0 ] || ! grep -qx "$zops passed, 0 failed" "$logdir/zoned-$seed.log"; then
		failed+=("$seed (zoned)")
	fi
done
if [ "${#failed[@]}" -ne 0 ]; then
	echo "elvcheck: violations on seeds ${failed[*]}; each 'reproduce:' line above reruns one" >&2
	exit 1
fi
echo "elvcheck: seeds ${seeds[*]}, $ops calls per policy each, no violation"
ci_ctest elvcheck -L model
