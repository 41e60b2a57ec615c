#!/usr/bin/env bash
# Record the real traces that `elvsim run trace-...` replays, with capture-trace.sh, and
# store them compressed in traces/ (xz, at most 2 MB each):
#
#   tools/capture/record-traces.sh [postmark-usb] [stream-vs-small-files] [write-bomb]
#
# postmark-usb           PostMark (Debian postmark 1.53) with the USB-flash experiment's
#                        parameters (500 files of 500 B to 500 KB, 500 transactions, 1000
#                        subdirectories) on a 1 GB ext4 mounted -o sync.
# stream-vs-small-files  a 512 MB file streamed with cat (page cache dropped after each pass,
#                        so every pass reads the disk) while a tree of about 13,800 small files
#                        (copies of /usr/include and /usr/lib/python3) is read with
#                        find | xargs cat; the trace ends when the tree is read.
# write-bomb             `dd if=/dev/zero of=foo bs=1M count=512 conv=notrunc` three times
#                        (buffered; writeback from 16 MB dirty, writers throttled at 64 MB)
#                        while an interactive reader reads 4 KiB at random offsets of another
#                        file with O_DIRECT, one read every 50 ms.
# All three use the kernel's mq-deadline. Before storing, compact.py keeps only the request
# events the reader uses and shortens the columns it does not (see traces/README.md).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cap=$here/capture-trace.sh
out=$root/traces
which=("$@")
[ ${#which[@]} -gt 0 ] || which=(postmark-usb stream-vs-small-files write-bomb)
command -v xz >/dev/null || { echo "record-traces: xz is missing" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The whole trace when it fits in 2 MB compressed, else only its arrivals (compact.py).
store() {
	python3 "$here/compact.py" "$tmp/$1.raw" | xz -9e -T2 >"$out/$1.ftrace.xz"
	if [ "$(stat -c %s "$out/$1.ftrace.xz")" -gt 2097152 ]; then
		echo "record-traces: $1 is over 2 MB whole; keeping its arrivals only" >&2
		python3 "$here/compact.py" --arrivals "$tmp/$1.raw" | xz -9e -T2 >"$out/$1.ftrace.xz"
	fi
	local bytes
	bytes=$(stat -c %s "$out/$1.ftrace.xz")
	echo "record-traces: $out/$1.ftrace.xz, $bytes bytes" >&2
	[ "$bytes" -le 2097152 ] || { echo "record-traces: $1 is over 2 MB" >&2; exit 1; }
}

for w in "${which[@]}"; do
	case $w in
	postmark-usb)
		command -v postmark >/dev/null || { echo "record-traces: postmark is missing" >&2; exit 2; }
		printf '%s\n' 'set number 500' 'set transactions 500' 'set size 500 500000' \
			'set subdirectories 1000' 'set seed 42' run quit >"$tmp/pm.cfg"
		"$cap" --size 1G --mount-opts sync "$tmp/$w.raw" -- \
			sh -c "postmark <'$tmp/pm.cfg' >'$tmp/pm.log' 2>&1"
		tail -n 12 "$tmp/pm.log" >&2
		;;
	stream-vs-small-files)
		"$cap" --size 2G --prepare 'head -c 512M /dev/zero >big && mkdir tree &&
			cp -a /usr/include tree/include && cp -a /usr/lib/python3 tree/python3' \
			"$tmp/$w.raw" -- sh -c '
			(while :; do dd if=big of=/dev/null bs=128k iflag=nocache status=none; done) &
			s=$!
			find tree -type f -print0 | xargs -0 cat >/dev/null
			kill $s; wait $s 2>/dev/null; true'
		;;
	write-bomb)
		# Writeback starts at 16 MB of dirty data and writers block at 64 MB, as on a machine
		# with little memory; the settings are restored when the command ends.
		"$cap" --size 2G --prepare 'head -c 256M /dev/zero >reader.dat' "$tmp/$w.raw" -- sh -c '
			b=$(cat /proc/sys/vm/dirty_background_bytes); d=$(cat /proc/sys/vm/dirty_bytes)
			br=$(cat /proc/sys/vm/dirty_background_ratio); dr=$(cat /proc/sys/vm/dirty_ratio)
			restore() {
				if [ "$b" -gt 0 ]; then echo $b >/proc/sys/vm/dirty_background_bytes
				else echo $br >/proc/sys/vm/dirty_background_ratio; fi
				if [ "$d" -gt 0 ]; then echo $d >/proc/sys/vm/dirty_bytes
				else echo $dr >/proc/sys/vm/dirty_ratio; fi
			}
			trap restore EXIT
			echo 16777216 >/proc/sys/vm/dirty_background_bytes
			echo 67108864 >/proc/sys/vm/dirty_bytes
			(while :; do
				dd if=reader.dat of=/dev/null bs=4k count=1 iflag=direct \
					skip=$(($(od -An -N4 -tu4 /dev/urandom) % 65536)) status=none
				sleep 0.05; done) &
			r=$!
			for t in 1 2 3; do dd if=/dev/zero of=foo bs=1M count=512 conv=notrunc status=none; done
			sync; kill $r; wait $r 2>/dev/null; true'
		;;
	*)
		echo "record-traces: unknown trace $w" >&2
		exit 2
		;;
	esac
	store "$w"
done
