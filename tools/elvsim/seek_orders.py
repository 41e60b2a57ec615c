#!/usr/bin/env python3
"""Mean seek distance of dispatch orders over the seek-sort closed loop, without a disk.

The seek-sort scenario keeps 15 dependent readers of uniform random sectors over N sectors.
When a read completes, the driver dispatches the next one before the reader queues its next
read, so each choice is made among Q = 14 held requests. This script replays that loop with
abstract orders only (no timing, no drive) to separate what each rule of an order costs:

  fifo            oldest first; independent uniform positions give N/3
  c-look          lowest sector at or above the head, else the lowest of all (one-way)
  c-look, cached  c-look, but the next request is fixed when the previous one is dispatched
                  (the successor then held); a read arriving in between waits a sweep
  oldest restart  c-look choice above the head, but when none is left the sweep restarts
                  at the oldest request instead of the lowest sector
  deadline        both rules: the successor cached at dispatch, the restart at the oldest
                  (deadline's read batches with no expiry)

Usage: seek_orders.py [STEPS]   (prints one line per order: name, mean distance, vs N/(Q+1))
"""
import bisect
import random
import sys

N = 960000
READERS = 15
Q = READERS - 1
WARMUP = 1000


def run(order, steps, seed=1):
    rng = random.Random(seed)
    held = []        # sorted (sector, arrival) pairs
    age = 0
    for _ in range(Q):
        bisect.insort(held, (rng.randrange(N), age))
        age += 1
    head = rng.randrange(N)
    cached = None
    total = 0
    for step in range(steps):
        if order == "fifo":
            pick = min(held, key=lambda x: x[1])
        elif order in ("c-look", "oldest restart"):
            i = bisect.bisect_left(held, (head, -1))
            if i < len(held):
                pick = held[i]
            elif order == "c-look":
                pick = held[0]
            else:
                pick = min(held, key=lambda x: x[1])
        else:  # the cached successor, restarting at the lowest or the oldest
            if cached is not None:
                pick = cached
            elif order == "c-look, cached":
                pick = held[0]
            else:
                pick = min(held, key=lambda x: x[1])
        held.remove(pick)
        if step >= WARMUP:
            total += abs(pick[0] - head)
        head = pick[0]
        i = bisect.bisect_left(held, pick)
        cached = held[i] if i < len(held) else None
        # The reader whose read completed queues its next one after the dispatch.
        bisect.insort(held, (rng.randrange(N), age))
        age += 1
    return total / (steps - WARMUP)


ORDERS = ("fifo", "c-look", "c-look, cached", "oldest restart", "deadline")


def table(steps=200000):
    return [(o, run(o, steps)) for o in ORDERS]


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    ref = N / (Q + 1)
    for name, mean in table(steps):
        print(f"{name:16s} {mean:10.0f} {mean / ref - 1:+.1%}")
