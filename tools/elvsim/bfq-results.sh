#!/usr/bin/env bash
# The BFQ section of docs/results.md: BFQ's published claims (start-up latency against ten
# sequential readers, with the idle-disk figure; throughput of sequential readers) and its
# weights and groups, under every Linux elevator, seed 1, on the ide2003 disk model.
#
#   tools/elvsim/bfq-results.sh [BUILD_DIR]
#
# Builds elvsim (Release) in BUILD_DIR (default build-results/), writes the JSON reports to
# BUILD_DIR/results/bfq/, and puts the section (tools/elvsim/bfq_md.py) into
# docs/results.md: in place of the old one, else before "## Real traces", else at the end.
# tools/elvsim/make-results.sh runs it after regenerating the rest.
source "$(dirname "$0")/results-common.sh"
build=${1:-$root/build-results}
results_build "$build"
out="$build/results/bfq"
mkdir -p "$out"
"$elvsim" list | grep -q '^  bfq ' || { echo "bfq-results: bfq is not built in" >&2; exit 1; }
for s in startup seq-readers; do
	"$elvsim" run "$s" --policy linux --seed 1 --quiet --json "$out/$s.json"
done
for j in weights groups one-reader; do
	"$elvsim" job "$root/tools/elvsim/bfq-$j.job" --policy linux --seed 1 --quiet \
		--json "$out/$j.json"
done
section=$(python3 "$root/tools/elvsim/bfq_md.py" "$out")
results_section "BFQ" "$section"
