#!/usr/bin/env bash
# Regenerate docs/results.md: build elvsim (Release) in build-results/, run the five
# reference scenarios under every policy with seed 1, then the recommendation check, and
# turn the JSON into the tables of docs/results.md.
#
#   tools/elvsim/make-results.sh [BUILD_DIR]
source "$(dirname "$0")/results-common.sh"
build=${1:-$root/build-results}
results_build "$build"
out="$build/results"
mkdir -p "$out"
# The Linux elevators here: a classic algorithm (SSTF, LOOK, ...) starves the tree of
# stream-vs-small-files behind its looping streamer for good. The classic algorithms run
# seek-sort and their own scenario below.
for s in seek-sort tcq-depth write-bomb stream-vs-small-files; do
	"$elvsim" run "$s" --policy linux --seed 1 --quiet --json "$out/$s.json"
done
"$elvsim" run seek-sort --policy classic --seed 1 --quiet --json "$out/seek-sort-classic.json"
"$elvsim" run classic --policy all --seed 1 --quiet --json "$out/classic.json"
# postmark-usb with a command trace, to find why each full merge of the FTL happened.
# 10080 is the end of the FAT (from sector 32, 2048 sectors) and of the 1000 directory
# clusters of the PostMark layout on the 1 GB stick.
"$elvsim" run postmark-usb --policy linux --seed 1 --quiet --json "$out/postmark-usb.json" \
	--trace "$out/postmark-usb.trace"
python3 "$root/tools/elvsim/ftl_causes.py" "$out/postmark-usb.trace" \
	"$out/postmark-usb.json" 10080 >"$out/postmark-usb-causes.json"
# Deadline with no read expiry: does expiry explain its distance to N/(Q+1)?
"$elvsim" run seek-sort --policy deadline --seed 1 --quiet --set read_expire=3600000 \
	--json "$out/seek-sort-noexpire.json"
# The log-block FTL with more open log blocks: does reordering still cost merges?
for k in 2 3 4 8; do
	"$elvsim" run postmark-usb --policy linux --seed 1 --quiet --dev-set log_blocks=$k \
		--json "$out/postmark-usb-k$k.json"
done
# The same policies with their idling switched off: what the idling itself costs on flash.
"$elvsim" run postmark-usb --policy anticipatory,cfq --seed 1 --quiet --set antic_expire=0 \
	--set slice_idle=0 --set group_idle=0 --json "$out/postmark-usb-noidle.json" \
	--trace "$out/postmark-usb-noidle.trace"
python3 "$root/tools/elvsim/ftl_causes.py" "$out/postmark-usb-noidle.trace" \
	"$out/postmark-usb-noidle.json" 10080 >"$out/postmark-usb-noidle-causes.json"
# ssd-write-flood, and kyber with writes given a 1 s target (once more at four times the reads).
"$elvsim" run ssd-write-flood --policy linux --seed 1 --quiet --json "$out/ssd-write-flood.json"
"$elvsim" run ssd-write-flood --policy kyber --seed 1 --quiet --set write_lat_nsec=1000000000 \
	--percentiles 50,95,99 --json "$out/ssd-write-flood-wlat1s.json"
"$elvsim" run ssd-write-flood --policy kyber --seed 1 --quiet --set write_lat_nsec=1000000000 \
	--percentiles 50,95,99 --scale 4 --json "$out/ssd-write-flood-wlat1s-x4.json"
"$elvsim" recommend --seed 1 --quiet --json "$out/recommend.json" >/dev/null
# The "Real traces" section comes from tools/capture/trace-results.sh; keep it at the end.
real=$(sed -n '/^## Real traces/,$p' "$root/docs/results.md")
python3 "$root/tools/elvsim/results_md.py" "$out" >"$root/docs/results.md"
python3 "$root/tools/elvsim/classic_md.py" "$out" "$root/docs/classic-response.svg" \
	>>"$root/docs/results.md"
[ -z "$real" ] || printf '\n%s\n' "$real" >>"$root/docs/results.md"
# BFQ's published claims, weights and groups: their own section, before the real traces.
"$root/tools/elvsim/bfq-results.sh" "$build"
# Zoned storage: the zone write plugging stage on the smr and zns models, its own section.
"$root/tools/elvsim/zoned-results.sh" "$build"
echo "wrote docs/results.md"
