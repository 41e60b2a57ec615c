#!/usr/bin/env bash
# Record the block requests a command makes, as Linux block tracepoint text for
# `elvsim replay --format ftrace`:
#
#   tools/capture/capture-trace.sh [--scheduler S] [--mount-opts O] [--size 2G]
#                                  [--prepare 'SHELL COMMAND'] OUT -- COMMAND...
#
# A file-backed loop device (--size, default 2G, sparse) gets a fresh ext4, mounted with
# --mount-opts (default: ext4's defaults) on a temporary directory; the kernel scheduler S
# (default mq-deadline) is selected on it. --prepare runs first, in the mounted file system
# and untraced (to create the files a read workload needs); then everything is synced, the
# page cache is dropped, and the block_rq_insert, _issue, _complete, _requeue and _merge
# events are enabled for that one device. COMMAND runs with the mount point as its working
# directory (also in $CAPTURE_MNT); the events stream from trace_pipe into OUT while it runs.
# Lost events fail the capture. Everything is undone on exit, also on failure or Ctrl-C: event
# enables and filters, the trace buffer size, tracing_on, a tracefs mount made here, the mount,
# the loop device and the image. Exit status: COMMAND's, or 2 for a capture problem.
set -euo pipefail

me=capture-trace
die() {
	echo "$me: $*" >&2
	exit 2
}
usage() {
	echo "usage: $me [--scheduler S] [--mount-opts O] [--size SIZE] [--prepare CMD] OUT -- COMMAND..." >&2
	exit 2
}

sched=mq-deadline
mopts=
size=2G
prepare=
while [ $# -gt 0 ]; do
	case $1 in
	--scheduler) [ $# -ge 2 ] || usage; sched=$2; shift 2 ;;
	--mount-opts) [ $# -ge 2 ] || usage; mopts=$2; shift 2 ;;
	--size) [ $# -ge 2 ] || usage; size=$2; shift 2 ;;
	--prepare) [ $# -ge 2 ] || usage; prepare=$2; shift 2 ;;
	--) usage ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -ge 3 ] && [ "$2" = -- ] || usage
out=$1
shift 2

[ "$(id -u)" -eq 0 ] || die "needs root (loop devices, mount, tracefs); run it with sudo"
for t in losetup mkfs.ext4 lsblk mountpoint; do
	command -v "$t" >/dev/null || die "$t is missing"
done
[ -e /dev/loop-control ] || die "no loop device support (/dev/loop-control is missing)"
case $size in '' | *[!0-9KMGT]*) die "--size '$size' is not a size like 512M or 2G" ;; esac
out_dir=$(cd "$(dirname "$out")" && pwd) || die "the directory of $out does not exist"
out=$out_dir/$(basename "$out")

tr=/sys/kernel/tracing
events=(block_rq_insert block_rq_issue block_rq_complete block_rq_requeue block_rq_merge)
work=$(mktemp -d /tmp/capture-trace.XXXXXX)
loop=
mounted=0
tracefs=0
traced=0
reader=
cmd=
saved_kb=
saved_on=
declare -A saved_enable saved_filter

restore() {
	local e
	set +e
	# A second signal (Ctrl-C pressed twice, or timeout(1) signalling its whole group) must
	# not cut the restore short.
	trap '' INT TERM
	trap - EXIT
	if [ -n "$cmd" ]; then
		kill -TERM -- "-$cmd" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 -- "-$cmd" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$cmd" 2>/dev/null
		wait "$cmd" 2>/dev/null
	fi
	if [ -n "$reader" ]; then
		kill "$reader" 2>/dev/null
		wait "$reader" 2>/dev/null
	fi
	if [ "$traced" -eq 1 ]; then
		for e in "${events[@]}"; do
			echo "${saved_enable[$e]}" >"$tr/events/block/$e/enable"
			if [ "${saved_filter[$e]}" = none ]; then
				echo 0 >"$tr/events/block/$e/filter"
			else
				echo "${saved_filter[$e]}" >"$tr/events/block/$e/filter"
			fi
		done
		[ -n "$saved_kb" ] && echo "$saved_kb" >"$tr/buffer_size_kb"
		[ -n "$saved_on" ] && echo "$saved_on" >"$tr/tracing_on"
	fi
	[ "$tracefs" -eq 1 ] && umount "$tr"
	if [ "$mounted" -eq 1 ]; then
		cd /
		umount "$work/mnt" 2>/dev/null || { sleep 1; umount "$work/mnt"; } ||
			umount -l "$work/mnt"
	fi
	[ -n "$loop" ] && losetup -d "$loop"
	rm -rf "$work"
}
on_signal() {
	echo "$me: interrupted; restoring" >&2
	restore
	exit 130
}
trap restore EXIT
trap on_signal INT TERM

if ! mountpoint -q "$tr"; then
	mount -t tracefs nodev "$tr" || die "cannot mount tracefs on $tr"
	tracefs=1
fi
for e in "${events[@]}"; do
	[ -e "$tr/events/block/$e/enable" ] || die "the kernel has no block:$e trace event"
	[ "$(cat "$tr/events/block/$e/enable")" = 0 ] ||
		die "block:$e is already enabled (another capture running?); not touching it"
done

truncate -s "$size" "$work/disk.img"
loop=$(losetup -f --show "$work/disk.img") || die "no free loop device"
mkfs.ext4 -q -F "$loop" >/dev/null
mkdir "$work/mnt"
mount ${mopts:+-o "$mopts"} "$loop" "$work/mnt"
mounted=1
qdir=/sys/block/$(basename "$loop")/queue
grep -qw -- "$sched" "$qdir/scheduler" ||
	die "scheduler '$sched' is not one of: $(tr -d '[]' <"$qdir/scheduler")"
echo "$sched" >"$qdir/scheduler"
export CAPTURE_MNT=$work/mnt

if [ -n "$prepare" ]; then
	(cd "$work/mnt" && bash -c "$prepare") || die "--prepare failed"
fi
sync
echo 3 >/proc/sys/vm/drop_caches

majmin=$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')
dev=$(((${majmin%%:*} << 20) | ${majmin##*:}))
saved_kb=$(cat "$tr/buffer_size_kb")
saved_kb=${saved_kb%% *}
saved_on=$(cat "$tr/tracing_on")
for e in "${events[@]}"; do
	saved_enable[$e]=$(cat "$tr/events/block/$e/enable")
	saved_filter[$e]=$(cat "$tr/events/block/$e/filter")
done
traced=1
echo 16384 >"$tr/buffer_size_kb"
echo >"$tr/trace"
for e in "${events[@]}"; do
	echo "dev == $dev" >"$tr/events/block/$e/filter"
done
overruns() { cat "$tr"/per_cpu/cpu*/stats | awk '/^overrun:/ { s += $2 } END { print s + 0 }'; }
lost0=$(overruns)
cat "$tr/trace_pipe" >"$out" &
reader=$!
echo 1 >"$tr/tracing_on"
for e in "${events[@]}"; do
	echo 1 >"$tr/events/block/$e/enable"
done

# COMMAND runs as its own process group, so that a signal to this script can stop all of it
# before the file system is unmounted; its standard input stays the script's.
rc=0
exec 3<&0
setsid bash -c 'cd "$1" && shift && exec "$@"' capture-command "$work/mnt" "$@" <&3 &
cmd=$!
wait "$cmd" || rc=$?
cmd=
sync
for e in "${events[@]}"; do
	echo 0 >"$tr/events/block/$e/enable"
done
# trace_pipe blocks once drained: give the reader a moment to catch up, then stop it.
sleep 1
kill "$reader" 2>/dev/null || true
wait "$reader" 2>/dev/null || true
reader=
lost=$(($(overruns) - lost0))
n=$(grep -c 'block_rq_' "$out" || true)
[ "$lost" -eq 0 ] || die "the trace buffer overran ($lost events lost); $out is incomplete"
grep -q 'LOST.*EVENTS' "$out" && die "events were lost; $out is incomplete"
echo "$me: $n events of $loop ($sched) in $out; command exit status $rc" >&2
exit "$rc"
