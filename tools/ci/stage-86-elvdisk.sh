#!/usr/bin/env bash
# The elvdisk nbdkit plugin and the io_uring example driver, checked with real clients.
#
# elvdisk (served by nbdkit over a Unix socket in a temporary directory): data written by
# nbdcopy, qemu-io and fio reads back identical, in memory and in a backing file; random 4 KiB
# reads take the device model's time in real time (barracuda at timescale 1 and 0.1), the
# model's queue depth holds (ide2003 takes one command at a time), null is fast; bad
# parameters stop nbdkit with one line naming the parameter.
# uring-driver: every policy over a temporary file through io_uring and through the forced
# thread-pool fallback, every read verified; under ASan and UBSan, and the thread pool under
# valgrind. nbdkit with elvdisk runs one fio verify job under valgrind. A small run of
# tools/nbdkit-morton.sh checks that the experiment script works end to end.
# Every tool is required; every wait is bounded; servers are killed by pid, also on failure.
source "$(dirname "$0")/common.sh"

for tool in nbdkit nbdcopy nbdinfo qemu-io fio python3 timeout cmp valgrind pkg-config; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "FAIL: $tool not found (tools/ci/packages/uring.txt)" >&2
		exit 1
	fi
done
if ! fio --enghelp 2>/dev/null | grep -qx '[[:space:]]*nbd'; then
	echo "FAIL: this fio has no nbd ioengine" >&2
	exit 1
fi

ci_configure elvdisk -DCMAKE_BUILD_TYPE=RelWithDebInfo -DELV_BUILD_TESTS=OFF \
	-DELV_BUILD_NBDKIT=ON -DELV_URING=ON
ci_build elvdisk --target nbdkit-elvdisk-plugin nbdkit-elevator-filter uring-driver
plugin="$ELV_CI_DIR/elvdisk/nbdkit/nbdkit-elvdisk-plugin.so"
driver="$ELV_CI_DIR/elvdisk/examples/uring-driver/uring-driver"

source "$ELV_ROOT/tools/ci/nbdkit.sh"
nbd_init elvdisk

# serve NAME ARGS...: elvdisk on $tmp/NAME.sock (start_server); its URI in $uri.
serve() {
	echo "+ nbdkit -U $1.sock elvdisk ${*:2}"
	start_server "$1" "$plugin" "${@:2}"
}

# fio_nbd NAME ARGS...: one fio job against $uri, JSON in $tmp/NAME.json.
fio_nbd() {
	local name=$1
	shift
	echo "+ fio --ioengine=nbd $*"
	timeout 120 fio --name="$name" --ioengine=nbd --uri="$uri" --verify_state_save=0 \
		--output-format=json \
		--output="$tmp/$name.json" "$@"
}

# ---- data ------------------------------------------------------------------------------

head -c 64M /dev/urandom >"$tmp/in.img"

serve mem model=ssd size=64M timescale=0.05
timeout 60 nbdcopy "$tmp/in.img" "$uri"
timeout 60 nbdcopy "$uri" "$tmp/out.img"
cmp "$tmp/in.img" "$tmp/out.img"
echo "memory store: 64 MiB copied in and out with nbdcopy, identical"

fio_nbd verify --rw=randwrite --bsrange=4k-1M --iodepth=32 --size=64M --verify=crc32c \
	--do_verify=1 --verify_fatal=1
python3 - "$tmp/verify.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["error"]
w, r = j["write"]["total_ios"], j["read"]["total_ios"]
assert w > 0 and r > 0, (w, r)
print(f"fio randwrite 4k-1M, iodepth 32, verify=crc32c: {w} writes, {r} verifying reads, error 0")
PY

# Zero and trim: the bytes they cover read back as zeros, their neighbours stay.
echo "+ qemu-io: write, discard, write -z, read -P"
timeout 60 qemu-io -f raw "$uri" -c 'write -P 0xab 0 4M' -c 'discard 0 1M' \
	-c 'write -z 2M 64k' -c 'read -P 0 0 1M' -c 'read -P 0xab 1M 1M' \
	-c 'read -P 0 2M 64k' -c 'read -P 0xab 2162688 1984k' >"$tmp/qemu-io.out"
if grep -qi 'pattern verification failed\|error\|failed' "$tmp/qemu-io.out"; then
	cat "$tmp/qemu-io.out"
	echo "FAIL: zero or trim changed the wrong bytes" >&2
	exit 1
fi
[ "$(grep -c '^read ' "$tmp/qemu-io.out")" -eq 4 ] ||
	{ cat "$tmp/qemu-io.out"; echo "FAIL: qemu-io did not run every read" >&2; exit 1; }
echo "qemu-io: trim and write-zeroes read back as zeros, the bytes around them unchanged"
stop_server

serve file model=null file="$tmp/back.img" size=64M
timeout 60 nbdcopy "$tmp/in.img" "$uri"
stop_server
cmp "$tmp/in.img" "$tmp/back.img"
serve file2 model=null file="$tmp/back.img"
timeout 60 nbdcopy "$uri" "$tmp/out2.img"
stop_server
cmp "$tmp/in.img" "$tmp/out2.img"
echo "backing file: holds what was written, serves it again after a restart"

# Under valgrind, one fio verify job: no memory error, no definite or indirect leak at exit.
vg=(valgrind -q --leak-check=full --error-exitcode=9 --errors-for-leak-kinds=definite,indirect
	--suppressions="$ELV_ROOT/tools/ci/nbdkit.supp"
	--show-leak-kinds=definite,indirect)
echo "+ valgrind nbdkit -f -U vg.sock elvdisk model=ssd size=64M timescale=0.05"
wrap=("${vg[@]}" --log-file="$tmp/valgrind.log")
start_server vg "$plugin" model=ssd size=64M timescale=0.05
wrap=()
fio_nbd vgverify --rw=randwrite --bsrange=4k-1M --iodepth=32 --size=64M --verify=crc32c \
	--do_verify=1 --verify_fatal=1
# valgrind's exit status says whether it found errors or leaks; its log is shown if it did.
srvlog="$tmp/valgrind.log"
stop_server
python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; assert j["error"] == 0 and j["read"]["total_ios"] > 0' \
	"$tmp/vgverify.json"
echo "valgrind: nbdkit with elvdisk served a verified fio job, no error, no leak"

# ---- timing ----------------------------------------------------------------------------

# timing NAME MIN_MS MAX_MS: fio's mean completion latency against the model's own time.
timing() {
	python3 - "$tmp/$1.json" "$tmp/$1.report" "$2" "$3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["read"]
rep = json.load(open(sys.argv[2]))
lo, hi = float(sys.argv[3]), float(sys.argv[4])
n, mean = j["total_ios"], j["clat_ns"]["mean"] / 1e6
model = rep["busy_ms"] * rep["timescale"] / rep["commands"]
print(f'{rep["model"]} timescale {rep["timescale"]}: {n} random 4 KiB reads, mean '
      f'{mean:.3f} ms measured, {model:.3f} ms modelled (busy {rep["busy_ms"]:.1f} ms)')
assert rep["commands"] == n, (rep["commands"], n)
assert lo <= mean <= hi, f"mean {mean} ms outside [{lo}, {hi}]"
# Real time follows the model: never early, late by the NBD round trip and thread wake-ups
# only (up to a millisecond or more on a loaded machine).
assert mean >= 0.97 * model and mean <= 1.15 * model + 1.5, (mean, model)
PY
}

serve bar1 model=barracuda size=1G report="$tmp/bar1.report"
fio_nbd bar1 --rw=randread --bs=4k --iodepth=1 --size=1G --number_ios=150 --randseed=7
stop_server
timing bar1 8 20

# A parameter file: the same drive at 3600 rpm waits longer for the platter (half a turn is
# 8.3 ms instead of 4.2 ms on average).
printf '# barracuda with a slower spindle\npreset = barracuda\nrpm = 3600\n' >"$tmp/slow.conf"
serve slow model="$tmp/slow.conf" size=1G report="$tmp/slow.report"
fio_nbd slow --rw=randread --bs=4k --iodepth=1 --size=1G --number_ios=150 --randseed=7
stop_server
timing slow 10 25
python3 - "$tmp/bar1.json" "$tmp/slow.json" <<'PY'
import json, sys
fast, slow = (json.load(open(f))["jobs"][0]["read"]["clat_ns"]["mean"] / 1e6 for f in sys.argv[1:])
print(f"model file, rpm 3600: {slow:.2f} ms per random read against {fast:.2f} ms at 7200 rpm")
assert slow - fast > 2.5, (fast, slow)
PY

serve bar01 model=barracuda size=1G timescale=0.1 report="$tmp/bar01.report"
fio_nbd bar01 --rw=randread --bs=4k --iodepth=1 --size=1G --number_ios=300 --randseed=7
stop_server
timing bar01 0.8 4

serve null model=null size=1G report="$tmp/null.report"
fio_nbd null --rw=randread --bs=4k --iodepth=1 --size=1G --number_ios=3000
stop_server
timing null 0 2

# ide2003 holds one command at a time: with 4 in flight from the client, the reads queue at
# the drive and the run lasts at least the sum of the service times.
serve ide model=ide2003 size=4G report="$tmp/ide.report"
fio_nbd ide --rw=randread --bs=4k --iodepth=4 --size=4G --number_ios=120 --randseed=3
stop_server
python3 - "$tmp/ide.json" "$tmp/ide.report" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
rep = json.load(open(sys.argv[2]))
runtime, busy = j["read"]["runtime"], rep["busy_ms"]
lat = j["read"]["clat_ns"]["mean"] / 1e6
per = busy / rep["commands"]
print(f"ide2003, iodepth 4: run {runtime} ms, drive busy {busy:.0f} ms, "
      f"mean latency {lat:.1f} ms = {lat / per:.2f} service times")
assert runtime >= 0.95 * busy, (runtime, busy)
assert lat >= 3.0 * per, (lat, per)  # each read waits behind about three others
PY

# ---- install: where an nbdkit of the same prefix finds it -------------------------------

cmake --install "$ELV_CI_DIR/elvdisk" --prefix "$tmp/prefix" --component nbdkit-plugin >/dev/null
plugindir=$(pkg-config --variable=plugindir nbdkit)
installed="$tmp/prefix/${plugindir#"$(pkg-config --variable=prefix nbdkit)"/}/nbdkit-elvdisk-plugin.so"
if [ ! -f "$installed" ]; then
	echo "FAIL: not installed at $installed" >&2
	exit 1
fi
timeout 20 nbdkit -U - "$installed" model=null size=1M --run 'nbdinfo "$uri" >/dev/null'
echo "install: ${installed#"$tmp/prefix/"} loads"

# ---- bad parameters --------------------------------------------------------------------

printf 'preset = ide2003\nrpm = fast\n' >"$tmp/bad.conf"
bad=("model=nope|model" "model=$tmp/bad.conf|model" "size=0|size" "size=12x|size"
	"size=1000|size" "model=barracuda size=3G|size" "timescale=0|timescale"
	"timescale=abc|timescale" "timescale=-1|timescale" "colour=red|colour"
	"file=/nonexistent/dir/x|file")
for case in "${bad[@]}"; do
	args=${case%|*}
	key=${case##*|}
	# shellcheck disable=SC2086
	if timeout 20 nbdkit -U "$tmp/bad.sock" "$plugin" $args --run true 2>"$tmp/bad.err"; then
		echo "FAIL: nbdkit started with $args" >&2
		exit 1
	fi
	if [ "$(wc -l <"$tmp/bad.err")" -ne 1 ] || ! grep -q "$key" "$tmp/bad.err"; then
		cat "$tmp/bad.err"
		echo "FAIL: $args: expected one line naming $key" >&2
		exit 1
	fi
	echo "refused $args: $(cat "$tmp/bad.err")"
done

# ---- Morton's experiment, small: the script runs and every setup gives a row -------------

echo "+ tools/nbdkit-morton.sh (8 MiB stream, 10 small reads, timescale 0.5, two policies)"
STREAM=8m SMALL_IOS=10 TIMESCALE=0.5 POLICIES="noop anticipatory" \
	timeout 300 tools/nbdkit-morton.sh "$ELV_CI_DIR/elvdisk" >"$tmp/morton.md" 2>/dev/null
cat "$tmp/morton.md"
python3 - "$tmp/morton.md" <<'PY'
import sys
rows = {}
for l in open(sys.argv[1]):
    f = [c.strip() for c in l.strip().strip("|").split("|")]
    if len(f) == 6 and f[1].replace(".", "").isdigit():
        rows[f[0]] = [float(x) for x in f[1:]]
assert set(rows) == {"no filter", "noop", "anticipatory"}, rows
assert all(v > 0 for r in rows.values() for v in (r[0], r[1], r[3], r[4])), rows
print("morton: 3 setups, every figure measured")
PY

# ---- uring-driver ----------------------------------------------------------------------

# drive NAME ARGS...: every policy over a fresh file; every policy must show a row, no errors.
drive() {
	local name=$1
	shift
	echo "+ uring-driver --file $name.dat $*"
	timeout 300 "$driver" --file "$tmp/$name.dat" --size 64M --policy all "$@" \
		| tee "$tmp/$name.out"
	python3 - "$tmp/$name.out" "$name" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
rows = {}
seen = False
for l in lines:
    f = l.split()
    if f[:1] == ["policy"]:
        seen = True
        continue
    if seen and len(f) == 10 and f[1].isdigit():
        rows[f[0]] = f
run = [l for l in lines if l.startswith("policies run:")]
assert run, "no summary line"
nr = int(run[0].split(":")[1].split(",")[0])
bad = int(run[0].rsplit(":", 1)[1])
for p in ("noop", "deadline", "anticipatory", "cfq"):
    assert p in rows, f"{p} did not run"
assert len(rows) == nr, (len(rows), nr)
assert bad == 0 and all(r[9] == "0" for r in rows.values()), "verify errors"
if sys.argv[2].startswith("seq"):
    # noop merges whatever it can (fcfs, for one, never merges, by design).
    assert int(rows["noop"][8]) > 0, "noop merged nothing in a sequential run"
print(f"{sys.argv[2]}: {nr} policies, every read verified")
PY
}

drive uring --ios 1500
if ! grep -q '^I/O path: io_uring' "$tmp/uring.out"; then
	if [ "${ELV_CI_ALLOW_NO_URING:-0}" != 1 ]; then
		echo "FAIL: io_uring was refused here; set ELV_CI_ALLOW_NO_URING=1 to accept" >&2
		exit 1
	fi
	echo "NOTE: io_uring refused on this machine; only the fallback path ran"
fi
drive pool --ios 1500 --no-uring
grep -q '^I/O path: pread/pwrite thread pool .*(--no-uring)' "$tmp/pool.out"
drive seq-uring --ios 800 --sequential --depth 2
drive seq-pool --ios 800 --sequential --depth 2 --no-uring

# Memory checking of the driver: valgrind 3.19 holds its thread lock across a blocking
# io_uring_enter, so the io_uring path runs under ASan and UBSan instead; the thread pool
# runs under both.
ci_configure elvdisk-asan -DCMAKE_BUILD_TYPE=Debug -DELV_SANITIZE=ON -DELV_BUILD_TESTS=OFF \
	-DELV_BUILD_TOOLS=OFF -DELV_BUILD_NBDKIT=OFF -DELV_URING=ON
ci_build elvdisk-asan --target uring-driver
driver="$ELV_CI_DIR/elvdisk-asan/examples/uring-driver/uring-driver"
drive asan-uring --ios 400
drive asan-seq-pool --ios 300 --sequential --depth 2 --no-uring
echo "+ valgrind uring-driver --no-uring"
timeout 600 "${vg[@]}" "$ELV_CI_DIR/elvdisk/examples/uring-driver/uring-driver" --file "$tmp/vg.dat" --size 8M --ios 100 --no-uring --policy all \
	>"$tmp/vg-driver.out"
grep -q '^policies run: [1-9][0-9]*, sectors failing verification or I/O errors: 0$' \
	"$tmp/vg-driver.out"
echo "valgrind: uring-driver thread pool under every policy, no error, no leak"

echo "elvdisk and uring-driver: all checks passed"
