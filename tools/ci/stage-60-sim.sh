#!/usr/bin/env bash
# The research harness end to end: build elvsim (release), run the six reference scenarios
# and BFQ's two (startup, seq-readers) within 15 s per policy in total (60 s for the four original ones): seek-sort and classic
# under every policy, the others under the Linux elevators (a classic algorithm such as SSTF
# starves stream-vs-small-files' tree behind its looping streamer, so that run never ends),
# check the JSON contract, and check determinism: the same seed gives byte-identical JSON,
# another seed does not.
source "$(dirname "$0")/common.sh"

# gcc by name, as stage 10 builds Release: the compiler cache then holds these objects.
ci_configure sim -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Release -DELV_BUILD_TESTS=OFF \
	-DELV_BUILD_EXAMPLES=OFF
ci_build sim --target elvsim
elvsim="$ELV_CI_DIR/sim/tools/elvsim/elvsim"
out="$ELV_CI_DIR/sim/out"
rm -rf "$out"
mkdir -p "$out"

scenarios=(seek-sort tcq-depth write-bomb stream-vs-small-files postmark-usb classic startup
	seq-readers)
# The policies each scenario runs under (see the top).
pols() {
	case $1 in seek-sort | classic) echo all ;; *) echo linux ;; esac
}
t0=$(date +%s.%N)
for s in "${scenarios[@]}"; do
	echo "+ elvsim run $s --policy $(pols "$s") --seed 1 --json $out/$s.json"
	# A hang or a runaway queue fails the stage instead of stalling or swapping the machine:
	# at most 300 s and 4 GiB of address space per scenario.
	(ulimit -v 4194304 && timeout 300 "$elvsim" run "$s" --policy "$(pols "$s")" --seed 1 \
		--quiet --json "$out/$s.json")
done
t1=$(date +%s.%N)
elapsed=$(echo "$t1 - $t0" | bc)
npol=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["results"]))' \
	"$out/seek-sort.json")
echo "all ${#scenarios[@]} scenarios (seek-sort under all $npol policies): ${elapsed} s"
if [ "$(echo "$elapsed > 15 * $npol" | bc)" -eq 1 ]; then
	echo "FAIL: the scenarios took more than $((15 * npol)) s (15 s per policy)" >&2
	exit 1
fi

# The contract scripts rely on.
python3 - "$out" "${scenarios[@]}" <<'PY'
import json, sys
out, names = sys.argv[1], sys.argv[2:]
need = ["policy", "makespan_s", "requests", "mean_seek_sectors", "mean_seek_ms", "read_lat_ms",
        "write_lat_ms", "read_MBps", "write_MBps", "idle_s", "streams", "policy_stats", "flash"]
for n in names:
    d = json.load(open(f"{out}/{n}.json"))
    assert d["scenario"] == n and "device" in d and "seed" in d, n
    # A result for each policy asked for, none missing, none twice.
    got = [r["policy"] for r in d["results"]]
    assert len(got) == len(set(got)), (n, got)
    assert {"noop", "deadline", "anticipatory", "cfq"} <= set(got), (n, got)
    for r in d["results"]:
        for k in need:
            assert k in r, (n, k)
        for k in ("p50", "p99", "max"):
            assert k in r["read_lat_ms"] and k in r["write_lat_ms"], (n, k)
        for s in r["streams"]:
            assert {"name", "done_s", "MBps", "read_lat_ms"} <= set(s), (n, s)
        assert {"full_merges", "switch_merges"} <= set(r["flash"]), n
        if n == "tcq-depth":
            assert [p["qd"] for p in r["curve"]] == list(range(1, 32)), n
        if n == "startup":
            # The idle-disk reference beside the start-up time under load.
            assert r["reference"] > 0 and r["primary"] > 0, (n, r["policy"])
        if n == "classic":
            assert len(r["sweep"]) == 8, n
            for p in r["sweep"]:
                assert {"rate", "iops", "mean_ms", "scv", "p99_ms", "max_ms"} <= set(p), n
    if n in ("seek-sort", "classic"):
        # --policy all: the classic algorithms too.
        assert {"fcfs", "sstf", "look", "sptf", "asptf"} <= set(got), (n, got)
print("JSON contract: ok for", len(names), "scenarios")
PY

for s in seek-sort write-bomb postmark-usb classic; do
	"$elvsim" run "$s" --policy "$(pols "$s")" --seed 1 --quiet --json "$out/$s.again.json"
	if ! cmp "$out/$s.json" "$out/$s.again.json"; then
		echo "FAIL: $s is not deterministic" >&2
		exit 1
	fi
	"$elvsim" run "$s" --policy "$(pols "$s")" --seed 2 --quiet --json "$out/$s.seed2.json"
	if cmp -s "$out/$s.json" "$out/$s.seed2.json"; then
		echo "FAIL: $s ignores the seed" >&2
		exit 1
	fi
done
echo "determinism: ok"

# Zoned devices: zoned-writers on smr and zns under every policy with the zone write
# plugging stage (no write may fail), and under deadline without it (writes must fail off
# the write pointer: the device reorders what it holds).
for dev in smr zns; do
	echo "+ elvsim run zoned-writers --device $dev --policy all --seed 1 --scale 0.5"
	"$elvsim" run zoned-writers --device "$dev" --policy all --seed 1 --quiet --scale 0.5 \
		--json "$out/zoned-$dev.json"
	"$elvsim" run zoned-writers --device "$dev" --policy deadline --seed 1 --quiet \
		--scale 0.5 --no-zone-stage --json "$out/zoned-$dev-nostage.json"
	python3 - "$out/zoned-$dev.json" "$out/zoned-$dev-nostage.json" <<'PY'
import json, sys
stage, nostage = (json.load(open(p))["results"] for p in sys.argv[1:3])
assert len(stage) >= 5, "zoned-writers ran under too few policies"
for r in stage:
    z = r["zones"]
    assert z["stage"] and z["wp_errors"] == 0 and z["failed_requests"] == 0, (r["policy"], z)
    assert r["requests"] >= 4 * 512, (r["policy"], r["requests"])
z = nostage[0]["zones"]
assert not z["stage"] and z["wp_errors"] > 0, z
print(f"zoned: {len(stage)} policies, no failed write with the stage; deadline without it: "
      f"{z['wp_errors']} write-pointer errors")
PY
done
