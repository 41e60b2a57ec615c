#!/usr/bin/env bash
# The tables of the "Real traces" section of docs/results.md: every recorded trace
# (traces/) replayed open loop and closed loop under noop, deadline, anticipatory and cfq on
# the device model it is set against. Prints Markdown on stdout.
#   tools/capture/trace-results.sh ELVSIM
set -euo pipefail
elvsim=${1:?usage: trace-results.sh ELVSIM}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in trace-postmark-usb trace-stream-vs-small-files trace-write-bomb; do
	for mode in open closed; do
		extra=()
		[ "$mode" = closed ] && extra=(--closed-loop)
		"$elvsim" run "$s" --policy noop,deadline,anticipatory,cfq "${extra[@]}" \
			--json "$tmp/$s.$mode.json" >/dev/null 2>"$tmp/$s.$mode.err"
		grep 'service time' "$tmp/$s.$mode.err" >"$tmp/$s.svc" || true
	done
done
python3 - "$tmp" <<'PY'
import json, os, sys
d = sys.argv[1]
for s in ("trace-postmark-usb", "trace-stream-vs-small-files", "trace-write-bomb"):
    o = json.load(open(os.path.join(d, s + ".open.json")))
    c = json.load(open(os.path.join(d, s + ".closed.json")))
    print("### %s (%s, %d records)\n" % (s, o["device"], o["results"][0]["requests"]))
    print("| policy | open: time (s) | vs noop | read p50 / p99 (ms) | full / switch merges "
          "| closed: time (s) | vs noop | read p50 / p99 (ms) | full / switch merges | closed: idle (s) |")
    print("|---|---:|---:|---|---|---:|---:|---|---|---:|")
    n0 = (o["results"][0]["makespan_s"], c["results"][0]["makespan_s"])
    for ro, rc in zip(o["results"], c["results"]):
        def merges(r):
            f = r.get("flash") or {}
            return "%d / %d" % (f["full_merges"], f["switch_merges"]) if f else "-"
        def lat(r):
            l = r["read_lat_ms"]
            return "%.1f / %.1f" % (l["p50"], l["p99"]) if l.get("n") else "-"
        print("| %s | %.1f | %+.1f%% | %s | %s | %.1f | %+.1f%% | %s | %s | %.2f |" % (
            ro["policy"], ro["makespan_s"], 100 * (ro["makespan_s"] / n0[0] - 1), lat(ro),
            merges(ro), rc["makespan_s"], 100 * (rc["makespan_s"] / n0[1] - 1), lat(rc),
            merges(rc), rc["idle_s"]))
    svc = open(os.path.join(d, s + ".svc")).read().strip()
    if svc:  # from the closed-loop run: the recorded times do not depend on the mode
        print("\n" + "  \n".join("Closed loop, " + l + "." for l in svc.splitlines()))
    print()
PY
