#!/usr/bin/env python3
"""Shorten a tracefs block trace for storage, keeping everything elvsim's ftrace reader uses.

Reads the text capture-trace.sh saved and prints only the block_rq_insert, _issue, _complete,
_requeue and _merge lines, as "PID [CPU] SECONDS.MICROS: EVENT: FIELDS [COMM]": the padding,
the task name before the pid, the irq/preempt flags column and the I/O priority column
(always "be,0,N" or "none,0,0" in these captures) are dropped. The result is still a line
format the reader accepts (the one perf script prints, without its padding).

With --arrivals, only what the replay's arrivals need is kept: inserts, and issues of requests
that had no insert (flushes, requests that bypassed the scheduler). Issues paired with an
insert and all completions go, so the recorded service times go too; the pairing is the
reader's (same device, start sector and kind of operation, first in first out).
"""
import re
import sys

EV = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+\.\d+): "
                r"(block_rq_(?:insert|issue|complete|requeue|merge)): (.*)$")
PRIO = re.compile(r" (?:none|rt|be|idle),\d+,\d+ \[")


def op_of(rwbs):
    if rwbs.startswith("FF"):
        return "F"
    k = rwbs[1:2] if rwbs.startswith("F") else rwbs[:1]
    return {"R": "R", "D": "D", "E": "D"}.get(k, "W")


def key_of(fields):
    w = fields.split()
    op = op_of(w[1])
    # "dev rwbs [bytes] () sector + n": the sector is the word before "+".
    sector = "0" if op == "F" else w[w.index("+") - 1]
    return (w[0], sector, op)


def keep(ev, fields, queued):
    """--arrivals: whether the line is needed, updating the per-request queues."""
    if ev == "block_rq_complete":
        return False
    k = key_of(fields)
    q = queued.setdefault(k, 0)
    if ev in ("block_rq_insert", "block_rq_requeue"):
        queued[k] = q + 1
        return ev == "block_rq_insert"
    if ev == "block_rq_merge":
        queued[k] = max(q - 1, 0)
        return True
    if q:  # an issue of a queued request: its arrival is the insert
        queued[k] = q - 1
        return False
    return True


def main():
    args = sys.argv[1:]
    arrivals = bool(args) and args[0] == "--arrivals"
    if arrivals:
        args = args[1:]
    if len(args) != 1:
        sys.exit("usage: compact.py [--arrivals] TRACE")
    n = 0
    queued = {}
    out = sys.stdout
    with open(args[0], errors="replace") as f:
        for line in f:
            m = EV.match(line)
            if not m:
                if "block_rq_" in line and not line.lstrip().startswith("#"):
                    sys.exit("compact.py: cannot read line: %s" % line.strip())
                continue
            _, pid, cpu, t, ev, fields = m.groups()
            fields = PRIO.sub(" [", " ".join(fields.split()))
            if arrivals and not keep(ev, fields, queued):
                continue
            out.write("%s [%d] %s: %s: %s\n" % (pid, int(cpu), t, ev, fields))
            n += 1
    if not n:
        sys.exit("compact.py: no block request event in %s" % args[0])


if __name__ == "__main__":
    main()
