#!/usr/bin/env bash
# Regenerate the measured sections of docs/performance.md from one elvbench run:
#   - the results table (every case: ns per request, instructions per request, mean seek,
#     allocations) from `elvbench --instr --json`,
#   - the summary at the top and the targets, met or not, computed from the same JSON,
#   - deadline against the bare legacy deadline (baseline-rbtree-fifo) at every depth,
#   - deadline with the zone stage attached against deadline on the same writers,
#   - the per-function instruction split of the target cases and of the bare legacy
#     deadline (tools/elvbench/profile.sh),
#   - bytes per request, stream and queue on x86-64 and 32-bit ARM (memory-table.sh), and
#     the bytes a queued request costs in all.
#
#   tools/elvbench/make-table.sh [--no-instr] [BUILD_DIR]    (default build-bench)
#
# BUILD_DIR is configured Release with -O2 if it does not exist. Needs valgrind for the
# instruction counts (--no-instr leaves them out and keeps the doc's split tables).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
instr=--instr
if [ "${1:-}" = "--no-instr" ]; then
	instr=
	shift
fi
build=${1:-build-bench}
doc=docs/performance.md
if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -g -DNDEBUG" \
		-DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_SIM=OFF >/dev/null
fi
cmake --build "$build" -j2 --target elvbench >/dev/null
bench="$build/tools/elvbench/elvbench"
json="$build/elvbench.json"
"$bench" $instr --json "$json" >"$build/elvbench.txt"

split="$build/split.md"
: >"$split"
if [ -n "$instr" ]; then
	for c in "noop 1024 0 random" "deadline 1024 0 random" "anticipatory 1024 64 random" \
		"cfq 1024 64 random" "kyber 1024 0 random" "bfq 1024 64 random" \
		"baseline-rbtree-fifo 1024 0 random"; do
		set -- $c
		{
			echo
			echo "\`$1\`, depth $2, $3 streams, $4 (\`profile.sh ELVBENCH $c\`):"
			echo
			echo "| function (with what is inlined into it) | instructions per request |"
			echo "|---|---:|"
			tools/elvbench/profile.sh "$bench" "$@" |
				awk '$1 != "total" { printf "| `%s` | %s |\n", $1, $2 }
				     $1 == "total" { t = $2 }
				     END { printf "| **total** | **%s** |\n", t }'
		} >>"$split"
	done
fi

memory="$build/memory.md"
tools/elvbench/memory-table.sh "$build" >"$memory"

# The tree measured: a commit, marked when the working tree differs from it.
tree=$(git rev-parse --short HEAD 2>/dev/null || echo "outside git")
if [ "$tree" != "outside git" ] && ! git diff --quiet HEAD -- lib include tools/elvbench 2>/dev/null; then
	tree="$tree with local changes"
fi

python3 - "$json" "$doc" "$split" "$(gcc --version | head -1)" "$memory" "$tree" <<'PY'
import json, re, sys
path, doc, split_path, cc, memory_path, tree = sys.argv[1:7]
d = json.load(open(path))
res = d["results"]

def fmt(x, nd=0):
    if x is None:
        return "-"
    return f"{x:,.{nd}f}"

def find(impl, depth, streams=None, pattern="random"):
    for r in res:
        if r["impl"] == impl and r["depth"] == depth and r["pattern"] == pattern and \
           (streams is None or r["streams"] == streams):
            return r
    return None

rows = ["| impl | depth | streams | pattern | ns/req (median) | instr/req | mean seek (sectors) "
        "| merged | allocs |", "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
for r in res:
    rows.append(f"| {r['impl']} | {r['depth']} | {r['streams']} | {r['pattern']} | "
                f"{fmt(r['ns_per_req'], 1)} | {fmt(r['instr_per_req'], 1)} | "
                f"{fmt(r['mean_seek_sectors'])} | {r['merged']} | {r['allocs']} |")
table = "\n".join(rows)

def instr(r):
    return r["instr_per_req"] if r else None

t = []
def target(name, value, limit, ok):
    t.append(f"| {name} | {value} | {limit} | {'met' if ok else '**not met**'} |")

noop = [r for r in res if r["impl"] == "noop"]
worst = max(noop, key=lambda r: r["instr_per_req"] or 0) if noop else None
if worst and worst["instr_per_req"] is not None:
    target("noop instr/req, worst depth and pattern",
           f"{fmt(worst['instr_per_req'], 1)} (depth {worst['depth']}, {worst['pattern']})",
           "<= 80", worst["instr_per_req"] <= 80)
dl1024, dl64, dl65536 = (find("deadline", x) for x in (1024, 64, 65536))
if instr(dl1024) is not None:
    target("deadline instr/req, depth 1024", fmt(instr(dl1024), 1), "<= 450",
           instr(dl1024) <= 450)
if instr(dl64) is not None and instr(dl65536) is not None:
    ratio = instr(dl65536) / instr(dl64)
    target("deadline instr/req, depth 65536 / depth 64", f"{ratio:.2f}", "<= 2.5", ratio <= 2.5)
if dl64 and dl65536:
    ratio = dl65536["ns_per_req"] / dl64["ns_per_req"]
    target("deadline ns/req, depth 65536 / depth 64", f"{ratio:.2f}", "<= 2.5", ratio <= 2.5)
for impl, limit in (("anticipatory", 650), ("cfq", 1000), ("bfq", 1500)):
    r = find(impl, 1024, 64)
    if instr(r) is not None:
        target(f"{impl} instr/req, depth 1024, 64 streams", fmt(instr(r), 1), f"<= {limit}",
               instr(r) <= limit)
ky1024 = find("kyber", 1024)
if instr(ky1024) is not None:
    target("kyber instr/req, depth 1024", fmt(instr(ky1024), 1), "<= 400", instr(ky1024) <= 400)
dl512, sl512 = find("deadline", 512), find("baseline-sorted-list", 512)
if dl512 and sl512:
    sp = sl512["ns_per_req"] / dl512["ns_per_req"]
    target("deadline vs sorted list, depth 512: speed-up (ns/req)", f"{sp:.1f}x", ">= 5x",
           sp >= 5)
    if instr(dl512) is not None and instr(sl512) is not None:
        spi = instr(sl512) / instr(dl512)
        target("deadline vs sorted list, depth 512: speed-up (instr/req)", f"{spi:.1f}x",
               ">= 5x", spi >= 5)
    dev = dl512["mean_seek_sectors"] / sl512["mean_seek_sectors"] - 1
    target("deadline vs sorted list, depth 512: mean seek", f"{dev * 100:+.1f}%", "within 5%",
           abs(dev) <= 0.05)
allocs = sum(r["allocs"] for r in res)
target("heap allocations in all measured loops", str(allocs), "0", allocs == 0)
target("sizeof(struct elv_request), x86-64", str(d["sizeof_request"]), "<= 96",
       d["sizeof_request"] <= 96)
targets = "| target | measured | limit | verdict |\n|---|---|---|---|\n" + "\n".join(t)

# The summary: every figure of the opening paragraph comes from this run.
def met(ok):
    return "met" if ok else "not met"
s = [f"In short (tree {tree}): the {len(res)} cases made {allocs} heap allocations in their "
     f"measured loops, and `struct elv_request` is {d['sizeof_request']} bytes."]
if instr(dl64) is not None and instr(dl65536) is not None:
    s.append(f"Deadline's instruction count grows {instr(dl65536) / instr(dl64):.2f}x from depth "
             f"64 to depth 65536 ({fmt(instr(dl64))} to {fmt(instr(dl65536))}), its time "
             f"{dl65536['ns_per_req'] / dl64['ns_per_req']:.2f}x.")
if dl512 and sl512 and instr(dl512) is not None and instr(sl512) is not None:
    s.append(f"At depth 512 its dispatch order seeks {dev * 100:+.1f}% against the disksort "
             f"elevator's while it executes {instr(sl512) / instr(dl512):.1f}x fewer instructions "
             f"and runs {sl512['ns_per_req'] / dl512['ns_per_req']:.1f}x faster.")
costs = [(impl, find(impl, 1024, st)) for impl, st in
         (("noop", 0), ("deadline", 0), ("anticipatory", 64), ("cfq", 64), ("kyber", 0),
          ("bfq", 64))]
costs = [(impl, r) for impl, r in costs if impl not in ("kyber", "bfq") or r is not None]
if all(instr(r) is not None for _, r in costs):
    budget = {"noop": 80, "deadline": 450, "anticipatory": 650, "cfq": 1000, "kyber": 400,
              "bfq": 1500}
    s.append("At depth 1024 on random reads (anticipatory, CFQ and bfq with 64 streams) the "
             "policies cost " + ", ".join(f"{impl} {fmt(instr(r))}" for impl, r in costs) +
             " instructions per request; against the budgets (" +
             ", ".join(f"{impl} {fmt(budget[impl])}: {met(instr(r) <= budget[impl])}"
                       for impl, r in costs) + ").")
rb1024 = find("baseline-rbtree-fifo", 1024)
if instr(rb1024) is not None and instr(dl1024) is not None:
    s.append(f"The bare legacy deadline, the same algorithm without API, validation, merging or "
             f"priorities, costs {fmt(instr(rb1024))} at that depth: the library's deadline "
             f"spends {instr(dl1024) / instr(rb1024):.2f}x its instructions.")
summary = "\n".join(s)

# deadline against the bare legacy deadline, depth by depth.
lg = ["| depth | pattern | deadline instr/req | legacy instr/req | added by the library "
      "| deadline ns/req | legacy ns/req | deadline merges | mean seek, deadline vs legacy |",
      "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
for r in res:
    if r["impl"] != "baseline-rbtree-fifo":
        continue
    dl = find("deadline", r["depth"], None, r["pattern"])
    if not dl:
        continue
    added = (f"{fmt(instr(dl) - instr(r), 1)} ({instr(dl) / instr(r):.2f}x)"
             if instr(dl) is not None and instr(r) is not None else "-")
    seek = (f"{(dl['mean_seek_sectors'] / r['mean_seek_sectors'] - 1) * 100:+.2f}%"
            if r["mean_seek_sectors"] else "-")
    lg.append(f"| {r['depth']} | {r['pattern']} | {fmt(instr(dl), 1)} | {fmt(instr(r), 1)} | "
              f"{added} | {fmt(dl['ns_per_req'], 1)} | {fmt(r['ns_per_req'], 1)} | "
              f"{dl['merged']} | {seek} |")
legacy = "\n".join(lg)

# The zone stage: deadline+zone against deadline on the same sequential writers, by depth.
zn = ["| depth | writers | deadline instr/req | deadline+zone instr/req | added by the stage "
      "| deadline ns/req | deadline+zone ns/req | merged, deadline | merged, deadline+zone |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for r in res:
    if r["impl"] != "deadline+zone":
        continue
    dl = find("deadline", r["depth"], r["streams"], r["pattern"])
    if not dl:
        continue
    added = (f"{fmt(instr(r) - instr(dl), 1)}"
             if instr(dl) is not None and instr(r) is not None else "-")
    zn.append(f"| {r['depth']} | {r['streams']} | {fmt(instr(dl), 1)} | {fmt(instr(r), 1)} | "
              f"{added} | {fmt(dl['ns_per_req'], 1)} | {fmt(r['ns_per_req'], 1)} | "
              f"{dl['merged']} | {r['merged']} |")
zone = "\n".join(zn)

text = open(doc).read()
def put(text, name, body):
    pat = re.compile(rf"(<!-- {name}: begin[^\n]*-->\n).*?(<!-- {name}: end -->)", re.S)
    if not pat.search(text):
        sys.exit(f"{doc}: no {name} markers")
    return pat.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)

head = (f"{len(res)} cases, ns/req the median of {d['runs']} runs (thread CPU time),\n"
        f"instructions per request from callgrind; compiler: {cc}, -O2; tree: {tree}.\n\n")
text = put(text, "bench-targets", targets)
text = put(text, "bench-table", head + table)
split = open(split_path).read().strip()
if split:
    text = put(text, "bench-split", split)
memory = open(memory_path).read().strip()
text = put(text, "bench-memory", memory)
text = put(text, "bench-summary", summary)
if len(lg) > 2:
    text = put(text, "bench-legacy", legacy)
if len(zn) > 2:
    text = put(text, "bench-zone", zone)

# What a queued request costs in all: its struct plus its share of the queue (hash buckets and
# filter), from the noop queue sizes at nr_requests 1024 and 65536 (both powers of two above
# the 64-bucket minimum, so the difference is buckets alone).
def mem_row(what):
    for line in memory.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells and cells[0] == what:
            return cells
    return None
rq, q1024, q65536 = (mem_row(w) for w in ("`struct elv_request`",
                                          "queue, noop, nr_requests = 1024",
                                          "queue, noop, nr_requests = 65536"))
if rq and q1024 and q65536:
    parts = []
    for col, arch in ((1, "x86-64"), (2, "32-bit ARM")):
        if q65536[col] == "n/a":
            continue
        per = (int(q65536[col]) - int(q1024[col])) / (65536 - 1024)
        parts.append(f"{per:g} bytes on {arch} (a queued request costs {int(rq[col]) + per:g} "
                     f"bytes in all: {rq[col]} + {per:g})")
    text = put(text, "bench-per-request", "Per expected request the hash and its filter add " +
               " and ".join(parts) + ".")
open(doc, "w").write(text)
print(f"{doc}: {len(res)} cases written")
PY
