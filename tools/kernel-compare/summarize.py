#!/usr/bin/env python3
"""One table (and JSON) from the fio JSON outputs of kernel-compare.sh.

Arguments after the options come in fours: JOBFILE SIDE SCHEDULER FIO_JSON. Each fio job
(group) of a job file gives one row: throughput (read + write MB/s) and the completion
latency percentiles fio measured (clat: submission to completion, in ms).
"""
import argparse
import json
import sys


def pct(d, key):
    p = d.get("clat_ns", {}).get("percentile", {})
    v = p.get(key)
    return None if v is None else v / 1e6


def side_stats(d):
    if not d.get("total_ios"):
        return None
    return {
        "ios": d["total_ios"],
        "mbps": d["bw_bytes"] / 1e6,
        "p50_ms": pct(d, "50.000000"),
        "p99_ms": pct(d, "99.000000"),
        "max_ms": d.get("clat_ns", {}).get("max", 0) / 1e6,
    }


def rows_of(path):
    with open(path) as f:
        text = f.read()
    # fio may print notes before the JSON document.
    doc = json.loads(text[text.index("{"):])
    rows = []
    for j in doc["jobs"]:
        r, w = side_stats(j["read"]), side_stats(j["write"])
        rows.append({
            "fio_job": j["jobname"],
            "mbps": (r["mbps"] if r else 0) + (w["mbps"] if w else 0),
            "read": r,
            "write": w,
        })
    return rows


def fmt(x):
    return "-" if x is None else ("%.1f" % x if x < 1000 else "%.0f" % x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--runtime", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--json")
    ap.add_argument("runs", nargs="*")
    a = ap.parse_args()
    if len(a.runs) % 4 or not a.runs:
        sys.exit("summarize.py: arguments come in fours: JOB SIDE SCHEDULER FIO_JSON")
    out = {"model": a.model, "runtime_s": int(a.runtime), "kernel": a.kernel, "runs": []}
    hdr = "%-10s %-12s %-13s %-7s %8s %8s %8s %8s %8s %8s %8s" % (
        "job", "side", "scheduler", "fio_job", "MB/s", "rd_p50", "rd_p99", "rd_max",
        "wr_p50", "wr_p99", "wr_max")
    print("latency in ms (fio completion latency); model %s, %s s per run, kernel %s" %
          (a.model, a.runtime, a.kernel))
    print(hdr)
    for i in range(0, len(a.runs), 4):
        job, side, sched, path = a.runs[i:i + 4]
        rows = rows_of(path)
        out["runs"].append({"job": job, "side": side, "scheduler": sched, "fio_jobs": rows})
        for r in rows:
            rd, wr = r["read"] or {}, r["write"] or {}
            print("%-10s %-12s %-13s %-7s %8s %8s %8s %8s %8s %8s %8s" % (
                job, side, sched, r["fio_job"][:7], fmt(r["mbps"]), fmt(rd.get("p50_ms")),
                fmt(rd.get("p99_ms")), fmt(rd.get("max_ms")), fmt(wr.get("p50_ms")),
                fmt(wr.get("p99_ms")), fmt(wr.get("max_ms"))))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
