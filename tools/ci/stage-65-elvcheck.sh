#!/usr/bin/env bash
# Model-based checking (tests/model/elvcheck): every built-in policy as the starting one,
# random calls checked after each against the reference model, fixed seeds; then the
# checker's self-test, which plants bugs and expects each one to be found. A violation
# prints a shrunk reproducer for `elvcheck --replay`. ELV_ELVCHECK_OPS overrides the calls
# per policy and seed, ELV_ELVCHECK_SEEDS the seeds.
source "$(dirname "$0")/common.sh"
ci_configure elvcheck -DCMAKE_BUILD_TYPE=RelWithDebInfo -DELV_BUILD_TOOLS=OFF \
	-DELV_BUILD_EXAMPLES=OFF
ci_build elvcheck --target elvcheck elvcheck_planted
bin=$ELV_CI_DIR/elvcheck/tests/model/elvcheck
ops=${ELV_ELVCHECK_OPS:-200000}
for seed in ${ELV_ELVCHECK_SEEDS:-1 2 3}; do
	echo "+ elvcheck --policy all --seed $seed --ops $ops"
	"$bin" --policy all --seed "$seed" --ops "$ops"
done
ci_ctest elvcheck -L model
