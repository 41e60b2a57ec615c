#!/bin/sh
# elvsim from the command line: help and version exit 0; a trace with a 7-hour gap replays in
# full; a time limit that cuts a run exits 3 with one line per cut run on stderr and the same
# line in the table, JSON and CSV; a job file runs with chosen percentiles and write latency
# per stream; a malformed job file gives one "file:line: reason" line and exit 2.
# usage: cli.sh PATH/TO/elvsim
set -eu
elvsim=$1
[ -x "$elvsim" ] || { echo "FAIL: no elvsim at '$elvsim'" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
checks=0
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { checks=$((checks + 1)); }

"$elvsim" --help >"$tmp/help" || fail "--help exits $?"
grep -q '^usage: elvsim list' "$tmp/help" || fail "--help prints no usage"
ok
"$elvsim" replay x --help >/dev/null || fail "--help after a command exits non-zero"
ok
"$elvsim" --version >"$tmp/version" || fail "--version exits $?"
grep -Eq '^elvsim [0-9]+\.[0-9]+\.[0-9]+$' "$tmp/version" || fail "--version: $(cat "$tmp/version")"
ok
rc=0; "$elvsim" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "no command exits $rc, not 2"
ok

# Three records, the last 7 hours after the second.
t0=128166372000000000
printf '%s,h,0,Read,4096,4096,0\n%s,h,0,Write,8192,4096,0\n%s,h,0,Read,1048576,4096,0\n' \
	"$t0" "$((t0 + 10000000))" "$((t0 + 252010000000))" >"$tmp/gap.csv"
"$elvsim" replay "$tmp/gap.csv" --format msr --device barracuda --policy all \
	--csv "$tmp/full.csv" >"$tmp/full.txt" 2>"$tmp/full.err" || fail "full replay exits $?"
[ ! -s "$tmp/full.err" ] || fail "full replay wrote to stderr: $(cat "$tmp/full.err")"
# Column 23 is cut (the CSV header in docs/simulator.md).
rows=$(awk -F, '$5 == "*" && $7 == 3 && $23 == "" { n++ } END { print n + 0 }' "$tmp/full.csv")
# Every built-in policy, as elvsim lists them (two-space indent under "policies:").
npol=$("$elvsim" list | awk '/^policies:/ { p = 1; next } p && /^  [^ ]/ { n++ } END { print n + 0 }')
[ "$npol" -ge 4 ] || fail "elvsim list names $npol policies"
[ "$rows" -eq "$npol" ] || fail "full replay: $rows of $npol policies completed 3 requests uncut"
ok

rc=0
"$elvsim" replay "$tmp/gap.csv" --format msr --device barracuda --policy noop,cfq \
	--time-limit 3600 --json "$tmp/cut.json" --csv "$tmp/cut.csv" >"$tmp/cut.txt" \
	2>"$tmp/cut.err" || rc=$?
[ "$rc" -eq 3 ] || fail "a cut replay exits $rc, not 3"
msg="cut by the time limit at 3600.000 s: 1 of 3 trace records never issued"
[ "$(wc -l <"$tmp/cut.err")" -eq 2 ] || fail "stderr of a cut replay: $(cat "$tmp/cut.err")"
for p in noop cfq; do
	for f in cut.err cut.txt cut.json cut.csv; do
		n=$(grep -c "$p $msg" "$tmp/$f" || true)
		[ "$n" -eq 1 ] || fail "$f names the cut of $p $n times, not once"
		ok
	done
done

cat >"$tmp/good.job" <<'JOB'
# a reader and a writer
device = null
seed = 3
[reader]
pattern = random
size = 4k-16k
read_share = 100%
depth = 2
count = 400
[writer]
pattern = sequential
size = 64k
read_share = 0
think = 100us
bytes = 4m
JOB
"$elvsim" job "$tmp/good.job" --policy deadline,noop --percentiles 50,90,99,99.9 \
	--csv "$tmp/job.csv" >"$tmp/job.txt" || fail "job file run exits $?"
grep -q 'latency percentiles (ms, nearest rank)' "$tmp/job.txt" || fail "no percentile table"
grep -Eq 'policy +stream +op +n +p50 +p90 +p99 +p99\.9' "$tmp/job.txt" ||
	fail "percentile table header"
grep -Eq '^ +writer +write +64 ' "$tmp/job.txt" || fail "no write percentiles for the writer"
grep -Eq 'writer +done .* write p50 +[0-9.]+ p99' "$tmp/job.txt" || fail "no per-stream write latency"
head -1 "$tmp/job.csv" | grep -q ',cut,read_p50_ms,write_p50_ms,read_p90_ms,write_p90_ms,read_p99_ms,write_p99_ms,read_p99.9_ms,write_p99.9_ms$' ||
	fail "CSV percentile columns: $(head -1 "$tmp/job.csv")"
ok

printf '[r]\ncount = 4\nsize = 4q\n' >"$tmp/bad.job"
rc=0; "$elvsim" job "$tmp/bad.job" >"$tmp/bad.out" 2>"$tmp/bad.err" || rc=$?
[ "$rc" -eq 2 ] || fail "a malformed job file exits $rc, not 2"
[ "$(cat "$tmp/bad.err")" = "elvsim: $tmp/bad.job:3: size: unknown unit 'q' (k, m, g or t)" ] ||
	fail "malformed job file message: $(cat "$tmp/bad.err")"
[ ! -s "$tmp/bad.out" ] || fail "a malformed job file printed a report"
ok

# A region past the end of the chosen device is refused by name.
printf '[a]\ncount = 3\n[big]\ncount = 1\noffset = 90%%\nspan = 20%%\n' >"$tmp/range.job"
rc=0; "$elvsim" job "$tmp/range.job" --device ssd >/dev/null 2>"$tmp/range.err" || rc=$?
[ "$rc" -eq 2 ] || fail "a job that does not fit the device exits $rc, not 2"
[ "$(cat "$tmp/range.err")" = "elvsim: $tmp/range.job: stream 'big': its offset, span or size does not fit ssd" ] ||
	fail "job range message: $(cat "$tmp/range.err")"
ok

[ "$checks" -eq 16 ] || fail "ran $checks checks, expected 16"
echo "elvsim command line: $checks checks passed"
