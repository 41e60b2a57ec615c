#!/usr/bin/env bash
# The "Zoned storage" section of docs/results.md: the zoned-writers scenario on the smr and
# zns presets under every policy, seed 1, with the zone write plugging stage, without it,
# and without it on a device that keeps write order (zone_ordered=1).
#
#   tools/elvsim/zoned-results.sh [BUILD_DIR]
#
# Builds elvsim (Release) in BUILD_DIR (default build-results/), writes the JSON reports to
# BUILD_DIR/results/zoned/, and puts the section (tools/elvsim/zoned_md.py) into
# docs/results.md: in place of the old one, else before "## Real traces", else at the end.
# tools/elvsim/make-results.sh runs it after regenerating the rest.
source "$(dirname "$0")/results-common.sh"
build=${1:-$root/build-results}
results_build "$build"
out="$build/results/zoned"
mkdir -p "$out"
for dev in smr zns; do
	"$elvsim" run zoned-writers --device "$dev" --policy all --seed 1 --quiet \
		--json "$out/$dev-stage.json"
	"$elvsim" run zoned-writers --device "$dev" --policy all --seed 1 --quiet \
		--no-zone-stage --json "$out/$dev-nostage.json"
	"$elvsim" run zoned-writers --device "$dev" --policy all --seed 1 --quiet \
		--no-zone-stage --dev-set zone_ordered=1 --json "$out/$dev-ordered-nostage.json"
done
section=$(python3 "$root/tools/elvsim/zoned_md.py" "$out")
results_section "Zoned storage" "$section"
