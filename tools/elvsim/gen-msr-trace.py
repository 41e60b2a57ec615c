#!/usr/bin/env python3
"""Write a synthetic SNIA MSR Cambridge trace for scale benchmarks of elvsim replay.

Uniform random 4 KiB requests over a span of bytes, a share of reads, and arrival gaps drawn
uniformly between two bounds. The output is deterministic for a given seed, so two runs of the
benchmark replay the same bytes.
"""
import argparse
import random
import sys

# Windows FILETIME of 2007-02-22, near where the MSR Cambridge traces start: any origin works,
# the reader counts time from the first record.
ORIGIN_TICKS = 128166372000000000


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--reads", type=float, default=0.70, help="share of reads (0..1)")
    ap.add_argument("--gap-min-us", type=float, default=10.0)
    ap.add_argument("--gap-max-us", type=float, default=200.0)
    ap.add_argument("--size", type=int, default=4096, help="request size in bytes")
    ap.add_argument("--span", type=int, default=2 * 10**9,
                    help="bytes the offsets spread over (aligned to --size)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    if a.requests < 1 or not 0 <= a.reads <= 1 or a.size < 512 or a.span < a.size \
            or not 0 <= a.gap_min_us <= a.gap_max_us:
        ap.error("bad arguments")
    rng = random.Random(a.seed)
    slots = a.span // a.size
    out = sys.stdout if a.output == "-" else open(a.output, "w")
    ticks = ORIGIN_TICKS
    lines = []
    for _ in range(a.requests):
        ticks += int(round(rng.uniform(a.gap_min_us, a.gap_max_us) * 10))  # 100 ns ticks
        kind = "Read" if rng.random() < a.reads else "Write"
        off = rng.randrange(slots) * a.size
        lines.append("%d,bench,0,%s,%d,%d,0\n" % (ticks, kind, off, a.size))
        if len(lines) == 65536:
            out.writelines(lines)
            lines = []
    out.writelines(lines)
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
