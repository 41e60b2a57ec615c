#!/usr/bin/env bash
# Capture a block trace of PostMark on ext4 mounted -o sync, for replay with elvsim:
#   tools/elvsim/capture-postmark.sh OUT.blkparse [SIZE_MB]
# A file-backed loop device (SIZE_MB, default 1024: the usb-stick preset's size) gets ext4,
# is mounted -o sync, and PostMark (Debian package postmark, 1.53) runs on it while the kernel's
# block:block_bio_queue trace event (tracefs) records every bio queued to the loop device.
# The events are written to OUT as blkparse text (Q lines), which elvsim reads. Needs root.
# Everything it creates (mount point, loop device, backing file, tracefs mount and trace
# settings) is removed or undone on exit, also on failure.
# Replay: elvsim replay OUT --format blkparse --closed-loop --device usb-stick
set -euo pipefail
out=${1:?usage: capture-postmark.sh OUT.blkparse [SIZE_MB]}
size_mb=${2:-1024}
for t in postmark losetup mkfs.ext4 python3; do
	command -v "$t" >/dev/null || { echo "capture-postmark: $t is missing" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "capture-postmark: needs root" >&2; exit 2; }

tr=/sys/kernel/tracing
work=$(mktemp -d)
loop=""
mounted=0
tracefs=0
traced=0
cleanup() {
	set +e
	if [ "$traced" -eq 1 ]; then
		echo 0 >"$tr/events/block/block_bio_queue/enable"
		echo 0 >"$tr/events/block/block_bio_queue/filter"
		echo >"$tr/trace"
	fi
	[ "$tracefs" -eq 1 ] && umount "$tr"
	[ "$mounted" -eq 1 ] && umount "$work/mnt"
	[ -n "$loop" ] && losetup -d "$loop"
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

if ! mountpoint -q "$tr"; then
	mount -t tracefs nodev "$tr"
	tracefs=1
fi
[ -e "$tr/events/block/block_bio_queue/enable" ] ||
	{ echo "capture-postmark: no block_bio_queue trace event" >&2; exit 2; }
truncate -s "${size_mb}M" "$work/disk.img"
loop=$(losetup -f --show "$work/disk.img")
mkfs.ext4 -q -F "$loop"
mkdir "$work/mnt"
mount -o sync "$loop" "$work/mnt"
mounted=1
sync
majmin=$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')
# The kernel's dev_t: major << 20 | minor.
dev=$(( (${majmin%%:*} << 20) | ${majmin##*:} ))
traced=1
echo >"$tr/trace"
echo "dev == $dev" >"$tr/events/block/block_bio_queue/filter"
echo 1 >"$tr/events/block/block_bio_queue/enable"
# The postmark-usb scenario's PostMark settings: 500 files of 500 B .. 500 KB, 500
# transactions, 1000 subdirectories, PostMark's own 512-byte read and write blocks.
postmark >"$work/postmark.log" <<PM
set location $work/mnt
set number 500
set transactions 500
set size 500 500000
set subdirectories 1000
set seed 42
run
quit
PM
sync
echo 0 >"$tr/events/block/block_bio_queue/enable"
cat "$tr/trace" >"$work/events"
# "comm-pid [cpu] flags secs.usecs: block_bio_queue: maj,min RWBS sector + n [comm]"
python3 - "$work/events" "$out" <<'PY'
import re, sys
ev = re.compile(r"^\s*(.+)-(\d+)\s+\[(\d+)\]\s+\S*\s*(\d+)\.(\d+): block_bio_queue: "
                r"(\d+),(\d+) (\S+) (\d+) \+ (\d+) \[(.*)\]\s*$")
n = 0
t0 = None
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as o:
    for line in f:
        m = ev.match(line)
        if not m:
            continue
        _, pid, cpu, s, frac, maj, mnr, rwbs, sector, nr, comm = m.groups()
        ns = int(s) * 10**9 + int(frac.ljust(9, "0")[:9])
        t0 = ns if t0 is None else t0
        ns -= t0
        n += 1
        o.write("%3s,%-3s %2s %8d %5d.%09d %5s  Q %3s %s + %s [%s]\n" % (
            maj, mnr, cpu, n, ns // 10**9, ns % 10**9, pid, rwbs, sector, nr, comm))
if not n:
    sys.exit("capture-postmark: no block event recorded")
PY
grep -E 'seconds total|transactions' "$work/postmark.log" | head -3 >&2 || true
echo "capture-postmark: $(wc -l <"$out") events in $out" >&2
