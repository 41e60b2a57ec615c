#!/usr/bin/env python3
"""Why a log-block FTL did its full merges: replay the writes of an `elvsim --trace` file.

The USB stick model (lib/sim/flash.c) keeps K open log blocks. A write to an erase block with
no log block takes a free one or merges the least recently written; a log block written in
order from page 0 to the end is switched in, written in order but not to the end gets a
partial merge, anything else a full merge (P (r + w) + 2e). This script runs the same rules
over the writes in the order the device received them and, for every full merge, records why
the log block was not written in order from page 0:

  metadata block        the block holds FAT or directory sectors: scattered single sectors,
                        written back every 5 s; once per writeback pass
  metadata, same pass   a metadata block left and written again within one writeback pass
                        (its writes less than a second apart)
  reopened, metadata    a data block left unfinished while metadata writes went to the
                        device, then written again
  reopened, other data  a data block left unfinished while writes to other data blocks went
                        first, then written again (the dispatch order interleaved them)
  first write mid-block a data block whose first write did not start at page 0

It checks its merge counts against the simulator's (the JSON report) and fails loudly when
they differ, so the attribution is of the simulator's own merges.

Usage: ftl_causes.py TRACE REPORT.json META_END [K]
  META_END: first sector after the FAT and directory clusters (PostMark on VFAT).
Prints JSON: per policy, the counts and times per cause and the metadata writeback passes.
"""
import json
import sys

PAGE_SECTORS = 4
PAGES = 64
READ_US, PROG_US, ERASE_US = 25.0, 200.0, 1500.0
FULL_US = PAGES * (READ_US + PROG_US) + 2 * ERASE_US


def writes_by_policy(path):
    out = {}
    with open(path) as f:
        for line in f:
            pol, ev, ms, op, sector, nr = line.split()
            if ev == "D" and op == "W":
                out.setdefault(pol, []).append((float(ms), int(sector), int(nr)))
    return out


def analyse(writes, meta_end, k):
    meta_blocks = (meta_end - 1) // (PAGE_SECTORS * PAGES)  # last block holding metadata
    logs = []          # open log blocks: [block, next page, in order, last use, cause]
    clock = 0
    hist = []          # erase block of every page written, in order
    last = {}          # erase block -> index in hist of its last page written
    last_ms = {}       # erase block -> time of its last write
    counts = {"full": 0, "partial": 0, "switch": 0}
    causes = {}

    def merge(lb):
        if lb[2] and lb[1] == PAGES:
            counts["switch"] += 1
        elif lb[2]:
            counts["partial"] += 1
        else:
            counts["full"] += 1
            causes[lb[4]] = causes.get(lb[4], 0) + 1

    def cause_of(blk, ms):
        if blk <= meta_blocks:
            if blk in last_ms and ms - last_ms[blk] < 1000:
                return "metadata, same pass"
            return "metadata block"
        if blk not in last:
            return "first write mid-block"
        between = hist[last[blk] + 1:]
        if any(b <= meta_blocks for b in between):
            return "reopened, metadata"
        return "reopened, other data"

    for ms, sector, nr in writes:
        for page in range(sector // PAGE_SECTORS, (sector + nr - 1) // PAGE_SECTORS + 1):
            blk, off = divmod(page, PAGES)
            lb = next((x for x in logs if x[0] == blk), None)
            if lb is None:
                free = [x for x in logs if x[0] < 0]
                if len(logs) < k:
                    lb = [0] * 5
                    logs.append(lb)
                elif free:
                    lb = free[0]
                else:
                    lb = min(logs, key=lambda x: x[3])
                    merge(lb)
                lb[:] = [blk, 0, True, 0, cause_of(blk, ms)]
            if off != lb[1]:
                lb[2] = False
            lb[1] += 1
            clock += 1
            lb[3] = clock
            if lb[1] == PAGES:
                merge(lb)
                lb[:] = [-1, 0, False, 0, ""]
            last[blk] = len(hist)
            last_ms[blk] = ms
            hist.append(blk)
    # Metadata writeback passes: runs of metadata writes with no gap of a second.
    passes, prev = 0, None
    for ms, sector, _ in writes:
        if sector < meta_end:
            if prev is None or ms - prev > 1000:
                passes += 1
            prev = ms
    return counts, causes, passes


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    trace, report, meta_end = sys.argv[1], sys.argv[2], int(sys.argv[3])
    k = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    with open(report) as f:
        rep = {r["policy"]: r for r in json.load(f)["results"]}
    out = {}
    for pol, writes in writes_by_policy(trace).items():
        counts, causes, passes = analyse(writes, meta_end, k)
        fl = rep[pol]["flash"]
        sim = {"full": fl["full_merges"], "partial": fl["partial_merges"],
               "switch": fl["switch_merges"]}
        if counts != sim:
            sys.exit(f"ftl_causes: {pol}: replayed merges {counts} differ from the "
                     f"simulator's {sim}")
        out[pol] = {"merges": counts, "metadata_passes": passes,
                    "full_by_cause": {c: {"n": n, "s": n * FULL_US / 1e6}
                                      for c, n in sorted(causes.items())}}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
