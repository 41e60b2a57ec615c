#!/usr/bin/env python3
"""Write the small blktrace sample files used by tests/sim/test_trace_blktrace.c.

Each file holds the same event sequence in one header version (7: 48-byte header, 8: 64-byte
header with a 64-bit action) and one byte order. Run from anywhere; the files land next to
this script. The expected records are listed in the test, not here.
"""
import os
import struct

MAGIC = 0x65617400

# Categories (shifted left by 16 into the action) and action codes.
TC_READ, TC_WRITE, TC_FLUSH, TC_SYNC = 0x1, 0x2, 0x4, 0x8
TC_QUEUE, TC_ISSUE, TC_COMPLETE = 0x10, 0x40, 0x80
TC_PC, TC_NOTIFY, TC_AHEAD, TC_META, TC_DISCARD = 0x200, 0x400, 0x800, 0x1000, 0x2000
A_QUEUE, A_GETRQ, A_ISSUE, A_COMPLETE, A_UNPLUG_IO = 1, 4, 7, 8, 10
N_PROCESS, N_TIMESTAMP, N_MESSAGE = 0, 1, 2
CGROUP = 0x100


def act(cat, code):
    return (cat << 16) | code


# (time ns, sector, bytes, action, pid, payload)
EVENTS = [
    (1000000, 0, 0, act(TC_NOTIFY, N_PROCESS), 100, b"dd".ljust(16, b"\0")),
    (1000100, 2048, 4096, act(TC_QUEUE | TC_READ, A_QUEUE), 100, b""),
    (1000200, 2048, 4096, act(TC_QUEUE | TC_READ, A_GETRQ), 100, b""),
    (1000300, 2048, 4096, act(TC_ISSUE | TC_READ, A_ISSUE), 100, b""),
    (1000400, 0, 0, act(TC_NOTIFY, N_TIMESTAMP), 0, struct.pack("<QQ", 1700000000, 5)),
    (1000500, 9000, 8192, act(TC_QUEUE | TC_WRITE | TC_SYNC, A_QUEUE) | CGROUP, 200,
     struct.pack("<Q", 0x1234)),
    (1000600, 0, 0, act(TC_QUEUE, A_UNPLUG_IO), 200, struct.pack(">Q", 1)),
    (1000700, 10000, 1048576, act(TC_QUEUE | TC_WRITE | TC_DISCARD, A_QUEUE), 300, b""),
    (1000800, 0, 0, act(TC_QUEUE | TC_WRITE | TC_FLUSH | TC_SYNC, A_QUEUE), 200, b""),
    (1000900, 123, 1000, act(TC_QUEUE | TC_READ | TC_META, A_QUEUE), 300, b""),
    (1001000, 555, 0, act(TC_QUEUE | TC_WRITE, A_QUEUE), 300, b""),
    (1001100, 2048, 4096, act(TC_COMPLETE | TC_READ, A_COMPLETE), 0, b""),
    (1001200, 0, 36, act(TC_QUEUE | TC_READ | TC_PC, A_QUEUE), 400,
     bytes([0x12, 0, 0, 0, 0x24, 0])),
    (1001300, 0, 0, act(TC_NOTIFY, N_MESSAGE), 0, b"cfq100 slice expired\0"),
    # Recorded on another CPU: earlier than the lines above, so the reader must sort.
    (1000550, 70000, 131072, act(TC_QUEUE | TC_READ | TC_AHEAD, A_QUEUE), 100, b""),
]


def record(version, order, seq, ev):
    t, sector, nbytes, action, pid, pdu = ev
    if version == 7:
        hdr = struct.pack(order + "IIQQIIIIIHH", MAGIC | 7, seq, t, sector, nbytes, action,
                          pid, (8 << 20) | 0, 0, 0, len(pdu))
    else:
        hdr = struct.pack(order + "IIQQIIQIIHH12x", MAGIC | 8, seq, t, sector, nbytes, pid,
                          action, (8 << 20) | 0, 0, 0, len(pdu))
    return hdr + pdu


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for version in (7, 8):
        for name, order in (("le", "<"), ("be", ">")):
            data = b"".join(record(version, order, i, ev) for i, ev in enumerate(EVENTS))
            path = os.path.join(here, "blktrace_v%d_%s.bin" % (version, name))
            with open(path, "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
