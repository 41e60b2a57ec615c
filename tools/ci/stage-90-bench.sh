#!/usr/bin/env bash
# elvbench smoke check: build it in Release (-O2), run every policy and every baseline once in
# --quick mode, and fail on any heap allocation in a measured loop (elvbench exits non-zero)
# or a JSON report that breaks the documented schema. Timings are printed, never judged: CI
# machines are shared and noisy. docs/performance.md has the real measurements.
source "$(dirname "$0")/common.sh"

ci_configure bench -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
	-DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_SIM=OFF
ci_build bench --target elvbench
bench="$ELV_CI_DIR/bench/tools/elvbench/elvbench"
json="$ELV_CI_DIR/bench/quick.json"

t0=$SECONDS
echo "+ elvbench --quick --json $json"
timeout 60 "$bench" --quick --json "$json"
echo "elvbench --quick: $((SECONDS - t0)) s"

python3 - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
need = {"impl": str, "depth": int, "streams": int, "pattern": str, "ns_per_req": float,
        "mean_seek_sectors": (int, float), "allocs": int}
res = d["results"]
impls = {r["impl"] for r in res}
for want in ("noop", "deadline", "anticipatory", "cfq", "baseline-fifo", "baseline-sorted-list",
             "baseline-hash-fifo", "baseline-rbtree-fifo"):
    assert want in impls, f"no results for {want}"
for r in res:
    for k, t in need.items():
        assert k in r and isinstance(r[k], t), (k, r)
    assert "instr_per_req" in r and (r["instr_per_req"] is None or
                                     isinstance(r["instr_per_req"], float)), r
    assert r["pattern"] in ("random", "mixed", "sequential", "prio"), r
    assert r["allocs"] == 0, f"heap allocations on the hot path: {r}"
    assert r["ns_per_req"] > 0, r
    assert r["requests"] > 0, r
assert any(r["pattern"] == "sequential" and r["merged"] > 0 for r in res), "no merges seen"
assert d["runs"] >= 5 and d["sizeof_request"] <= 96, d["sizeof_request"]
print(f"JSON schema: ok, {len(res)} cases, no allocations, "
      f"sizeof(struct elv_request) = {d['sizeof_request']}")
PY

# The instruction-count mode runs one case on its own (what --instr runs under callgrind)
# and prints one line with its figures.
for impl in deadline baseline-rbtree-fifo; do
	line=$("$bench" --count "$impl" 64 0 random 1000)
	echo "$line"
	echo "$line" | grep -Eq "^$impl depth 64 streams 0 random: [0-9]+ requests .* ns/req" ||
		{ echo "elvbench --count $impl printed no result line" >&2; exit 1; }
done
help=$("$bench" --help)
echo "$help" | grep -q '^usage: elvbench' || { echo "elvbench --help: no usage" >&2; exit 1; }
version=$("$bench" --version)
want="elvbench (libelevator) $(sed -n 's/^project(libelevator VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
[ "$version" = "$want" ] || { echo "elvbench --version: '$version', expected '$want'" >&2; exit 1; }
echo "elvbench --count, --help, --version: ok"

# Cost per request of queues far past nr_requests (1,000 to 400,000 queued, nr_requests at its
# default): instruction counts are deterministic, so this one is judged (overshoot.sh fails
# when the deepest queue costs more than log2(400000) / log2(1000) times the shallowest).
# Callgrind runs one process on one core: the four policies run as two halves side by side,
# each printed whole when both have ended (ELV_JOBS=1: one after the other), and the stage
# fails if either half failed.
command -v valgrind >/dev/null || { echo "bench: valgrind is not installed" >&2; exit 1; }
half_one() { tools/elvbench/overshoot.sh "$bench" 100000 noop cfq; }
half_two() { tools/elvbench/overshoot.sh "$bench" 100000 deadline anticipatory; }
ci_pair "$ELV_CI_DIR/bench/overshoot" half_one half_two
