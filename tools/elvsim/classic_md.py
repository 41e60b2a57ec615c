#!/usr/bin/env python3
"""The classic-algorithms section of docs/results.md, and its plot.

    classic_md.py RESULTS_DIR [SVG_PATH]

Reads classic.json (elvsim run classic --policy all --seed 1 --json) and
seek-sort-classic.json (elvsim run seek-sort --policy classic --seed 1 --json) from RESULTS_DIR and prints Markdown. Every outcome sentence is computed: a published finding is
marked reproduced or not by a stated test on the numbers, and the explanation printed is the
one the numbers call for. With SVG_PATH, also writes mean response time against arrival rate
as an SVG line plot (no plotting library needed)."""
import json
import math
import sys

CLASSIC = ["fcfs", "sstf", "scan", "look", "cscan", "clook", "nscan", "fscan", "vr", "sptf",
           "asptf"]
SEEK = ["sstf", "scan", "look", "cscan", "clook", "nscan", "fscan", "vr"]

out = sys.argv[1]
svg_path = sys.argv[2] if len(sys.argv) > 2 else None


def load(name):
    with open(f"{out}/{name}.json") as fh:
        return {r["policy"]: r for r in json.load(fh)["results"]}


cl = load("classic")
ss = load("seek-sort-classic")
pols = [p for p in CLASSIC if p in cl]
rates = [pt["rate"] for pt in cl[pols[0]]["sweep"]]


def pt(p, rate):
    return next(x for x in cl[p]["sweep"] if x["rate"] == rate)


def f(x, nd=1):
    return f"{x:,.{nd}f}"


lines = []
w = lines.append
w("## classic (barracuda)")
w("")
w("Poisson arrivals of independent 512-byte reads uniform over the disk, one command at the")
w("drive, 2000 reads per rate and the same arrivals for every policy (`elvsim run classic`).")
w("Response time is arrival to completion. SCV is the squared coefficient of variation,")
w("variance / mean², the measure Worthington, Ganger and Patt report beside the mean.")
w("`scan` and `look` (and `cscan` and `clook`) dispatch in the same order, so their rows")
w("match; they differ only in the head travel they count. The Linux elevators ran too")
w("(classic.json); the tables show the classic algorithms.")
w("")
w("Mean response time (ms) / SCV by arrival rate (reads/s):")
w("")
w("| policy | " + " | ".join(f"{r:g}/s" for r in rates) + " |")
w("|---|" + "---|" * len(rates))
for p in pols:
    w(f"| {p} | " + " | ".join(f"{f(pt(p, r)['mean_ms'])} / {f(pt(p, r)['scv'], 2)}"
                              for r in rates) + " |")
w("")
w("p99 / max response time (ms):")
w("")
w("| policy | " + " | ".join(f"{r:g}/s" for r in rates) + " |")
w("|---|" + "---|" * len(rates))
for p in pols:
    w(f"| {p} | " + " | ".join(f"{f(pt(p, r)['p99_ms'], 0)} / {f(pt(p, r)['max_ms'], 0)}"
                              for r in rates) + " |")
w("")
sat = [r for r in rates if pt("fcfs", r)["iops"] < 0.97 * r]
w("Completions per second fall short of the offered rate (by more than 3 %) for: " +
  ", ".join(f"{p} at {', '.join(f'{r:g}' for r in rates if pt(p, r)['iops'] < 0.97 * r)}/s"
            for p in pols if any(pt(p, r)["iops"] < 0.97 * r for r in rates)) + "."
  if any(pt(p, r)["iops"] < 0.97 * r for p in pols for r in rates)
  else "Every policy completes the offered rate at every point.")
w("")
if svg_path:
    w("![mean response time against arrival rate](classic-response.svg)")
    w("")

# ---- the published findings, each tested on the numbers ---------------------------------
light = [r for r in rates if r <= 60]
heavy = [r for r in rates if r >= 80]
findings = []


def finding(source, claim, test, ok, why_yes, why_no):
    findings.append((source, claim, test, ok, why_yes if ok else why_no))


# Teorey & Pinkerton: SSTF low mean, high variance.
sstf_scv = all(pt("sstf", r)["scv"] > pt("look", r)["scv"] for r in heavy)
sstf_mean = [r for r in heavy if pt("sstf", r)["mean_ms"] <= pt("look", r)["mean_ms"]]
finding("Teorey & Pinkerton 1972",
        "SSTF has a low mean response time but a high variance",
        "at every rate ≥ 80/s: SCV(sstf) > SCV(look) and mean(sstf) ≤ mean(look)",
        sstf_scv and len(sstf_mean) == len(heavy),
        "SSTF's SCV is above LOOK's and its mean at or below it at every heavy rate.",
        f"SCV(sstf) > SCV(look) at every heavy rate: {'yes' if sstf_scv else 'no'}; "
        f"mean(sstf) ≤ mean(look) at {len(sstf_mean)} of {len(heavy)} heavy rates "
        f"(at {heavy[-1]:g}/s: {f(pt('sstf', heavy[-1])['mean_ms'])} vs "
        f"{f(pt('look', heavy[-1])['mean_ms'])} ms); the two means stay within "
        f"{max(abs(pt('sstf', r)['mean_ms'] / pt('look', r)['mean_ms'] - 1) for r in rates):.0%}"
        " of each other at every rate, and the sources give no magnitude to test against "
        "(secondary summaries only).")
# Teorey & Pinkerton: SCAN for light-to-moderate load, C-SCAN for heavy (lower variance).
scan_light = all(pt("scan", r)["mean_ms"] <= pt("cscan", r)["mean_ms"] for r in light)
cscan_heavy = all(pt("cscan", r)["scv"] < pt("scan", r)["scv"] for r in heavy)
finding("Teorey & Pinkerton 1972",
        "SCAN is best at light to moderate load, C-SCAN at heavy load (lower variance)",
        "mean(scan) ≤ mean(cscan) at every rate ≤ 60/s, and SCV(cscan) < SCV(scan) at every "
        "rate ≥ 80/s",
        scan_light and cscan_heavy,
        "SCAN has the lower mean at every light rate and C-SCAN the lower SCV at every "
        "heavy one.",
        f"SCAN's mean lower at every light rate: {'yes' if scan_light else 'no'}; C-SCAN's "
        f"SCV lower at every heavy rate: {'yes' if cscan_heavy else 'no'}.")
# Geist & Daniel: V(0.2) mean near SSTF, variance near SCAN.
vr_ok = []
for r in heavy:
    m_ok = pt("vr", r)["mean_ms"] <= 1.05 * pt("sstf", r)["mean_ms"]
    v_ok = abs(pt("vr", r)["scv"] - pt("look", r)["scv"]) < \
        abs(pt("vr", r)["scv"] - pt("sstf", r)["scv"])
    vr_ok.append(m_ok and v_ok)
finding("Geist & Daniel 1987",
        "V(0.2) has a mean close to or better than SSTF's with a variance near SCAN's",
        "at every rate ≥ 80/s: mean(vr) ≤ 1.05 × mean(sstf), and SCV(vr) nearer SCV(look) "
        "than SCV(sstf)",
        all(vr_ok),
        "V(0.2) meets both at every heavy rate.",
        f"met at {sum(vr_ok)} of {len(heavy)} heavy rates.")
# Worthington, Ganger & Patt: positioning-time scheduling is best; aging bounds the tail.
best = [r for r in rates if r >= 50 and
        min(pols, key=lambda p: pt(p, r)["mean_ms"]) in ("sptf", "asptf")]
mid = [r for r in rates if r >= 50]
finding("Worthington, Ganger & Patt 1994",
        "positioning-time algorithms (SPTF and aged SPTF) give the best response time",
        "sptf or asptf has the lowest mean of all classic algorithms at every rate ≥ 50/s",
        len(best) == len(mid),
        "They do at every such rate.",
        f"they do at {len(best)} of {len(mid)} rates.")
age_ok = all(pt("asptf", r)["max_ms"] < pt("sptf", r)["max_ms"] and
             pt("asptf", r)["mean_ms"] <= 1.10 * pt("sptf", r)["mean_ms"] for r in heavy)
finding("Worthington, Ganger & Patt 1994; Jacobson & Wilkes 1991",
        "aging trades a small increase of the mean for a shorter tail",
        "at every rate ≥ 80/s: max(asptf) < max(sptf) and mean(asptf) ≤ 1.10 × mean(sptf) "
        "(weight 0.01)",
        age_ok,
        f"At {heavy[-1]:g}/s the maximum falls from {f(pt('sptf', heavy[-1])['max_ms'], 0)} to "
        f"{f(pt('asptf', heavy[-1])['max_ms'], 0)} ms for a mean of "
        f"{f(pt('asptf', heavy[-1])['mean_ms'])} instead of "
        f"{f(pt('sptf', heavy[-1])['mean_ms'])} ms.",
        "not at " + ", ".join(
            f"{r:g}/s (max {f(pt('asptf', r)['max_ms'], 0)} vs {f(pt('sptf', r)['max_ms'], 0)}"
            f" ms, mean {f(pt('asptf', r)['mean_ms'])} vs {f(pt('sptf', r)['mean_ms'])} ms)"
            for r in heavy
            if not (pt("asptf", r)["max_ms"] < pt("sptf", r)["max_ms"] and
                    pt("asptf", r)["mean_ms"] <= 1.10 * pt("sptf", r)["mean_ms"])) +
        ". In seek-sort (15 readers) the maximum falls from "
        f"{f(ss['sptf']['read_lat_ms']['max'], 0)} to {f(ss['asptf']['read_lat_ms']['max'], 0)}"
        " ms.")
# Seltzer, Chen & Ousterhout: multi-fold gains of STF over seek-based at long queues.
best_seek = min(SEEK, key=lambda p: ss[p]["makespan_s"])
gain = ss[best_seek]["makespan_s"] / ss["sptf"]["makespan_s"]
finding("Seltzer, Chen & Ousterhout 1990",
        "shortest-time-first gives a 2-3× throughput gain over seek-based scheduling at long "
        "queues",
        "seek-sort (15 readers, closed loop): throughput(sptf) / throughput(best seek-based) "
        "≥ 2",
        gain >= 2,
        f"{gain:.2f}× over {best_seek}.",
        f"{gain:.2f}× over {best_seek}: the queue here never holds more than 15 requests, "
        "while the finding is about very long queues (log-structured, write-heavy systems); "
        "no scenario here queues that deep.")

w("### Published findings")
w("")
w("The findings are qualitative (see docs/policies/classic.md for the sources); each is "
  "turned into a test on the numbers above.")
w("")
w("| source | finding | test | reproduced | why |")
w("|---|---|---|---|---|")
for src, claim, test, ok, why in findings:
    w(f"| {src} | {claim} | {test} | {'yes' if ok else 'no'} | {why} |")
w("")
w("Not tested: Worthington, Ganger and Patt's findings on full LBN-to-physical mapping and on "
  "C-LOOK with read sequentiality need a sequential workload and a mapping-aware variant; "
  "this sweep is random reads only.")
w("")

# ---- seek-sort: which classic policy reaches the published elevator figure ---------------
ref = 67000
w("### seek-sort under the classic algorithms")
w("")
w("The seek-sort scenario (15 dependent random readers, see above) under every classic "
  f"algorithm, against the published elevator-sorted mean seek of {ref:,} sectors:")
w("")
w("| policy | mean seek (sectors) | vs 67,000 | within 10 % | time (s) |")
w("|---|---|---|---|---|")
reach = []
for p in pols:
    s = ss[p]["mean_seek_sectors"]
    ok = abs(s / ref - 1) <= 0.10
    if ok:
        reach.append(p)
    w(f"| {p} | {f(s, 0)} | {s / ref - 1:+.1%} | {'yes' if ok else 'no'} | "
      f"{f(ss[p]['makespan_s'], 2)} |")
w("")
w("Within 10 % of the published figure: " + (", ".join(reach) if reach else "none") + ". "
  "The published figure comes from a one-way elevator (N/(Q+1) = 60,000 sectors for 15 "
  f"readers). SPTF seeks {f(ss['sptf']['mean_seek_sectors'], 0)} sectors on average, more "
  f"than any sweep, yet finishes in {f(ss['sptf']['makespan_s'], 2)} s against "
  f"{f(ss[best_seek]['makespan_s'], 2)} s for the fastest seek-based order ({best_seek}): "
  "it minimises seek plus rotational wait, not distance.")
w("")
print("\n".join(lines))

# ---- the plot ------------------------------------------------------------------------------
if svg_path:
    W, H, L, B, T, Rm = 720, 440, 70, 50, 20, 150
    ys = [pt(p, r)["mean_ms"] for p in pols for r in rates]
    lo, hi = math.log10(min(ys)), math.log10(max(ys))
    xmin, xmax = min(rates), max(rates)

    def X(r):
        return L + (r - xmin) / (xmax - xmin) * (W - L - Rm)

    def Y(v):
        return T + (hi - math.log10(v)) / (hi - lo) * (H - T - B)

    colors = ["#000000", "#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628",
              "#f781bf", "#999999", "#66c2a5", "#fc8d62"]
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         'font-family="sans-serif" font-size="11">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<line x1="{L}" y1="{H - B}" x2="{W - Rm}" y2="{H - B}" stroke="black"/>',
         f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>']
    for r in rates:
        s.append(f'<text x="{X(r):.1f}" y="{H - B + 15}" text-anchor="middle">{r:g}</text>')
    s.append(f'<text x="{(L + W - Rm) / 2:.0f}" y="{H - 12}" text-anchor="middle">'
             'arrival rate (reads/s)</text>')
    for e in range(int(math.floor(lo)), int(math.ceil(hi)) + 1):
        v = 10 ** e
        if lo <= e <= hi:
            s.append(f'<text x="{L - 6}" y="{Y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
            s.append(f'<line x1="{L}" y1="{Y(v):.1f}" x2="{W - Rm}" y2="{Y(v):.1f}" '
                     'stroke="#dddddd"/>')
    s.append(f'<text x="14" y="{(T + H - B) / 2:.0f}" transform="rotate(-90 14 '
             f'{(T + H - B) / 2:.0f})" text-anchor="middle">mean response (ms, log)</text>')
    for i, p in enumerate(pols):
        c = colors[i % len(colors)]
        pts = " ".join(f"{X(r):.1f},{Y(pt(p, r)['mean_ms']):.1f}" for r in rates)
        s.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="1.5"/>')
        s.append(f'<text x="{W - Rm + 10}" y="{T + 14 * i + 10}" fill="{c}">{p}</text>')
    s.append("</svg>")
    with open(svg_path, "w") as fh:
        fh.write("\n".join(s) + "\n")
