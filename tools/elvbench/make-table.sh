#!/usr/bin/env bash
# Regenerate the measured sections of docs/performance.md from one elvbench run:
#   - the results table (every case: ns per request, instructions per request, mean seek,
#     allocations) from `elvbench --instr --json`,
#   - the issue's targets, met or not, computed from the same JSON,
#   - the per-function instruction split of the target cases (tools/elvbench/profile.sh),
#   - bytes per request, stream and queue on x86-64 and 32-bit ARM (memory-table.sh).
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
		"cfq 1024 64 random"; do
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

python3 - "$json" "$doc" "$split" "$(gcc --version | head -1)" "$memory" <<'PY'
import json, re, sys
path, doc, split_path, cc, memory_path = sys.argv[1:6]
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
for impl, limit in (("anticipatory", 650), ("cfq", 1000)):
    r = find(impl, 1024, 64)
    if instr(r) is not None:
        target(f"{impl} instr/req, depth 1024, 64 streams", fmt(instr(r), 1), f"<= {limit}",
               instr(r) <= limit)
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

text = open(doc).read()
def put(text, name, body):
    pat = re.compile(rf"(<!-- {name}: begin[^\n]*-->\n).*?(<!-- {name}: end -->)", re.S)
    if not pat.search(text):
        sys.exit(f"{doc}: no {name} markers")
    return pat.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)

head = (f"{len(res)} cases, ns/req the median of {d['runs']} runs (thread CPU time),\n"
        f"instructions per request from callgrind; compiler: {cc}, -O2.\n\n")
text = put(text, "bench-targets", targets)
text = put(text, "bench-table", head + table)
split = open(split_path).read().strip()
if split:
    text = put(text, "bench-split", split)
text = put(text, "bench-memory", open(memory_path).read().strip())
open(doc, "w").write(text)
print(f"{doc}: {len(res)} cases written")
PY
