#!/usr/bin/env bash
# The nbdkit elevator filter checked with real clients over Unix sockets (never a network
# address): fio with crc32c verification under every policy and under live policy switches,
# merging, nbdcopy and qemu-img compare of a 64 MiB image, one fio job under valgrind,
# cancellation when a client vanishes, a plugin error kept to its client, refused bad input,
# and the install location. Debug build, so the filter runs elv_queue_check() after every
# queue operation. Every server is killed by pid on exit, every wait is bounded.
source "$(dirname "$0")/common.sh"

for tool in nbdkit fio nbdcopy nbdinfo qemu-img valgrind python3 timeout; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "FAIL: $tool is missing (tools/ci/packages/nbdkit.txt)" >&2
		exit 1
	fi
done
if ! fio --enghelp=nbd >/dev/null 2>&1; then
	echo "FAIL: this fio has no nbd ioengine" >&2
	exit 1
fi

ci_configure nbdkit -DCMAKE_BUILD_TYPE=Debug -DELV_BUILD_NBDKIT=ON -DELV_BUILD_TESTS=ON \
	-DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF
ci_build nbdkit --target nbdkit-elevator-filter test_nbdkit_filter
filter="$ELV_CI_DIR/nbdkit/nbdkit/nbdkit-elevator-filter.so"

# The parsing and the histogram on their own (cmocka), under valgrind.
(cd "$ELV_CI_DIR/nbdkit" && ctest --output-on-failure --no-tests=error -R '^test_nbdkit_filter$')
valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	"$ELV_CI_DIR/nbdkit/nbdkit/filter/test_nbdkit_filter" >/dev/null 2>&1 ||
	{ echo "FAIL: test_nbdkit_filter under valgrind" >&2; exit 1; }

source "$ELV_ROOT/tools/ci/nbdkit.sh"
nbd_init nbdkit

# run_fio NAME ARGS...: one fio job against $uri, JSON in $tmp/NAME.fio.json.
run_fio() {
	local name=$1
	shift
	timeout 120 fio --name="$name" --ioengine=nbd --uri="$uri" --output-format=json \
		--output="$tmp/$name.fio.json" --verify_state_save=0 "$@" ||
		{ cat "$tmp/$name.fio.json" >&2 || true; fail "fio $name"; }
}

# verify_job NAME [fio args]: random writes of 4 KiB to 1 MiB at iodepth 32, then every
# block read back and checked with crc32c.
verify_job() {
	local name=$1
	shift
	run_fio "$name" --rw=randwrite --bsrange=4k-1m --iodepth=32 --size=96m \
		--verify=crc32c --verify_fatal=1 --do_verify=1 "$@"
	python3 - "$tmp/$name.fio.json" <<'PY'
import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    assert j["error"] == 0, ("fio error", j["error"])
    assert j["write"]["total_ios"] > 0 and j["read"]["total_ios"] > 0, "no I/O verified"
PY
}

# stats_check FILE PYTHON-EXPRESSION: an assertion on the filter's stats JSON (as d).
stats_check() {
	python3 - "$1" "$2" <<'PY' || fail "stats check '$2' on $1"
import json, sys
d = json.load(open(sys.argv[1]))
q, a = d["queue"], d["all"]
ok = eval("(" + sys.argv[2] + ")")
if not ok:
    print(json.dumps(d, indent=1), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# ---- every policy, from the filter's own list -------------------------------------------
read -r -a policies < <(nbdkit --filter="$filter" null --help 2>&1 |
	sed -n 's/^Built-in policies: //p')
builtin=$(grep -c '^[[:space:]]*&elv_policy_' lib/policies/registry.c)
[ "${#policies[@]}" -eq "$builtin" ] && [ "$builtin" -ge 4 ] ||
	fail "filter lists ${#policies[@]} policies (${policies[*]}), registry has $builtin"
# Each policy twice: as for flash (depth 32), and as for a disk (depth 4), where anticipation
# and CFQ idle. Two fio jobs, so two connections and two streams, on separate halves.
# check_policy NAME POLICY TRAITS...: one server, the verify job, its stats checked.
check_policy() {
	local name=$1 p=$2
	shift 2
	start_server "$name" --filter="$filter" memory 256M policy="$p" "$@" stats="$tmp/$name.json"
	verify_job "verify-$name" --numjobs=2 --offset_increment=128m
	stop_server
	stats_check "$tmp/$name.json" "d['policy'] == '$p' and q['completed'] > 0 and
		q['queued'] == 0 and q['in_flight'] == 0 and a['errors'] == 0 and
		sum(c['writes'] > 0 for c in d['connections']) == 2"
}
# Much of a check is waiting (idling policies, fio's round trips): ELV_JOBS checks run at once,
# each in a subshell that kills its own server if it fails, its output shown when it ends.
declare -A check_of
checked=0
bad=()
ci_pool_done() { # PID STATUS: count the check, or record its failure
	if [ "$2" -eq 0 ]; then
		checked=$((checked + 1))
	else
		cat "$tmp/${check_of[$1]}.out" >&2
		bad+=("${check_of[$1]}")
	fi
}
# check_in_subshell NAME POLICY TRAITS...: check_policy in a subshell that kills its own
# server if it fails, its output in $tmp/NAME.out.
check_in_subshell() {
	(
		servers=()
		trap nbd_kill_servers EXIT
		check_policy "$@"
	) >"$tmp/$1.out" 2>&1
}
for p in "${policies[@]}"; do
	for traits in "rotational=false" "rotational=true depth=4"; do
		name="p-$p-${traits%% *}"
		# shellcheck disable=SC2086
		ci_pool_start check_in_subshell "$name" "$p" $traits
		check_of[$!]=$name
	done
done
ci_pool_drain
[ "${#bad[@]}" -eq 0 ] || fail "policy checks failed: ${bad[*]}"
ran=$((checked / 2))
[ "$ran" -eq "${#policies[@]}" ] || fail "ran $ran of ${#policies[@]} policies"
echo "fio verify (crc32c): zero errors under all $ran policies (${policies[*]}), two clients each"

# ---- merging: sequential 4 KiB writes queue up behind depth=1 and merge -----------------
start_server merge --filter="$filter" memory 64M policy=deadline depth=1 stats="$tmp/merge.json"
run_fio merge --rw=write --bs=4k --iodepth=32 --size=32m --verify=crc32c --verify_fatal=1 \
	--do_verify=1
stop_server
stats_check "$tmp/merge.json" "a['merged'] > 0 and q['merged_back'] > 0 and a['errors'] == 0"
echo "merging: $(python3 -c "import json;print(json.load(open('$tmp/merge.json'))['all']['merged'])" \
	) requests merged into others, data verified"

# ---- live policy switches through control=FILE, under load ------------------------------
ctl="$tmp/control"
start_server switch --filter="$filter" memory 256M policy=deadline depth=8 control="$ctl" \
	stats="$tmp/switch.json"
touch "$tmp/switching"
(
	n=0
	while [ -e "$tmp/switching" ]; do
		for p in "${policies[@]}"; do
			printf 'policy=%s\n' "$p" >"$ctl.new" && mv "$ctl.new" "$ctl"
			sleep 0.1
		done
		n=$((n + 1))
		# One bad version: it must be refused whole and change nothing.
		if [ "$n" -eq 1 ]; then
			printf 'policy=cfq\nslice_idle=-1\n' >"$ctl"
			for _ in $(seq 1 100); do
				grep -q "slice_idle=-1: out of range" "$tmp/switch.log" && break
				sleep 0.1
			done
		fi
	done
) &
switcher=$!
verify_job switch --loops=4
rm -f "$tmp/switching"
timeout 30 tail --pid="$switcher" -f /dev/null || fail "the control-file writer hung"
wait "$switcher"
stop_server
stats_check "$tmp/switch.json" "d['policy_switches'] >= len('${policies[*]}'.split()) and
	d['control_rejected'] == 1 and q['queued'] == 0 and a['errors'] == 0"
grep -q "slice_idle=-1: out of range" "$tmp/switch.log" || fail "bad control file not reported"
echo "policy switches under load: $(python3 -c \
	"import json;print(json.load(open('$tmp/switch.json'))['policy_switches'])") switches, zero verify errors"

# ---- nbdcopy and qemu-img compare of a 64 MiB image through the filter -------------------
head -c 64M /dev/urandom >"$tmp/src.img"
start_server copy --filter="$filter" memory 64M policy=cfq
timeout 60 nbdcopy "$tmp/src.img" "$uri" || fail "nbdcopy to the server"
timeout 60 nbdcopy "$uri" "$tmp/back.img" || fail "nbdcopy from the server"
cmp "$tmp/src.img" "$tmp/back.img" || fail "nbdcopy round trip differs"
timeout 60 qemu-img compare -f raw -F raw "$tmp/src.img" "$uri" || fail "qemu-img compare"
stop_server
echo "nbdcopy and qemu-img compare: the 64 MiB image is identical through the filter"

# ---- one fio job under valgrind (file plugin: memory's own allocator registry leaks) -------
truncate -s 64M "$tmp/disk.img"
printf 'policy=cfq\n' >"$ctl"
wrap=(valgrind --leak-check=full --error-exitcode=99 --errors-for-leak-kinds=definite,indirect
	--suppressions="$ELV_ROOT/tools/ci/nbdkit.supp"
	--show-leak-kinds=definite,indirect --log-file="$tmp/valgrind.log")
# -v: the log says when the control file has been applied.
start_server vg -v --filter="$filter" file "$tmp/disk.img" policy=anticipatory \
	control="$ctl" stats="$tmp/vg.json"
wrap=()
(sleep 1 && printf 'policy=deadline\nread_expire=100\n' >"$ctl") &
changer=$!
verify_job valgrind --size=32m
wait "$changer"
for _ in $(seq 1 300); do
	grep -q "control file applied: policy deadline" "$srvlog" && break
	sleep 0.1
done
grep -q "control file applied: policy deadline" "$srvlog" || fail "control file not applied"
srvlog="$tmp/valgrind.log"
stop_server
grep -q "ERROR SUMMARY: 0 errors" "$tmp/valgrind.log" || { cat "$tmp/valgrind.log" >&2; fail "valgrind errors"; }
stats_check "$tmp/vg.json" "d['policy'] == 'deadline' and d['policy_switches'] == 2"
echo "valgrind: no error, no leak (fio verify job, two policy switches)"

# ---- a client that vanishes with requests queued: they are cancelled ---------------------
cat >"$tmp/slow.sh" <<'EOF'
#!/bin/sh
case "$1" in
	get_size) echo 64M ;;
	thread_model) echo parallel ;;
	pread) sleep 0.3; head -c "$3" /dev/zero ;;
	*) exit 2 ;;
esac
EOF
chmod +x "$tmp/slow.sh"
start_server vanish --filter="$filter" sh "$tmp/slow.sh" policy=deadline depth=1 \
	stats="$tmp/vanish.json"
# (In a subshell, so that the shell's "Killed" notice goes to the log, not the console.)
(
	timeout -s KILL 2 fio --name=vanish --ioengine=nbd --uri="$uri" --rw=randread --bs=4k \
		--iodepth=16 --size=64m
	exit $?
) >/dev/null 2>"$tmp/vanish.err" && fail "fio was meant to be killed"
timeout 20 nbdinfo "$uri" >/dev/null || fail "server unusable after a client vanished"
stop_server
stats_check "$tmp/vanish.json" "q['cancelled'] > 0 and a['cancelled'] == q['cancelled'] and
	q['queued'] == 0 and q['in_flight'] == 0"
echo "vanished client: $(python3 -c "import json;print(json.load(open('$tmp/vanish.json'))['queue']['cancelled'])" \
	) queued requests cancelled"

# ---- a plugin error goes to its own client only -----------------------------------------
start_server err --filter="$filter" --filter=error memory 64M error-pread=ENOSPC \
	error-pread-rate=100% policy=deadline stats="$tmp/err.json"
run_fio writer --rw=randwrite --bs=64k --iodepth=16 --size=32m &
writer=$!
if timeout 60 fio --name=reader --ioengine=nbd --uri="$uri" --rw=randread --bs=4k \
	--iodepth=16 --size=16m --output-format=json --output="$tmp/reader.fio.json" \
	2>"$tmp/reader.err"; then
	fail "reads through the failing plugin succeeded"
fi
wait "$writer" || fail "the writer saw an error meant for the reader"
stop_server
python3 - "$tmp/reader.fio.json" <<'PY' || fail "the reader did not get ENOSPC"
import errno, json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
sys.exit(0 if j["error"] == errno.ENOSPC else 1)
PY
stats_check "$tmp/err.json" "any(c['errors'] > 0 and c['writes'] == 0 for c in d['connections'])
	and any(c['writes'] > 0 and c['errors'] == 0 for c in d['connections'])"
echo "plugin error: ENOSPC reached the reading client only"

# ---- many short connections: the stats keep 256 and sum the older ones -------------------
start_server many --filter="$filter" memory 1M stats="$tmp/many.json"
for _ in $(seq 1 150); do
	timeout 20 nbdinfo "$uri" >/dev/null || fail "nbdinfo"
done
stop_server
# nbdinfo opens two contexts per connection and reads once.
stats_check "$tmp/many.json" "len(d['connections']) == 256 and d['earlier_connections'] == 44
	and a['reads'] == 150 and a['latency_us']['count'] == 150"
echo "stats: 300 contexts, 256 listed, 44 summed, totals intact"

# ---- bad input: nbdkit refuses to start, the message names the parameter -----------------
printf 'policy=nosuch\n' >"$tmp/bad.control"
bad_cases=(
	"policy=nosuch|policy=nosuch"
	"nosuch_tunable=1|nosuch_tunable"
	"policy=noop read_expire=5|read_expire=5"
	"policy=deadline read_expire=99999999999|read_expire=99999999999: out of range"
	"policy=deadline fifo_batch=x|fifo_batch=x"
	"depth=0|depth=0"
	"depth=70000|depth=70000"
	"stream=thread|stream=thread"
	"ioprio=urgent,2|ioprio=urgent,2"
	"rotational=maybe|rotational=maybe"
	"control=$tmp/bad.control|policy=nosuch"
	"stats=$tmp/no/such/dir/s.json|stats="
)
for c in "${bad_cases[@]}"; do
	args=${c%%|*}
	want=${c#*|}
	rc=0
	# shellcheck disable=SC2086
	timeout 20 nbdkit -U - --filter="$filter" memory 1M $args --run true 2>"$tmp/bad.log" || rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "'$args' was accepted (rc $rc)"
	grep -qF -- "$want" "$tmp/bad.log" || { cat "$tmp/bad.log" >&2; fail "'$args': message lacks '$want'"; }
	[ "$(grep -c error "$tmp/bad.log")" -eq 1 ] || { cat "$tmp/bad.log" >&2; fail "'$args': not one line"; }
done
echo "bad input: ${#bad_cases[@]} cases refused, each naming its parameter"

# ---- install: where an nbdkit of the same prefix finds it -------------------------------
cmake --install "$ELV_CI_DIR/nbdkit" --prefix "$tmp/prefix" --component nbdkit-filter >/dev/null
filterdir=$(pkg-config --variable=filterdir nbdkit)
installed="$tmp/prefix/${filterdir#"$(pkg-config --variable=prefix nbdkit)"/}/nbdkit-elevator-filter.so"
[ -f "$installed" ] || fail "not installed at $installed"
timeout 20 nbdkit -U - --filter="$installed" memory 1M --run 'nbdinfo "$uri" >/dev/null' ||
	fail "the installed filter does not load"
echo "install: ${installed#"$tmp/prefix/"}"
