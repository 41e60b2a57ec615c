#!/usr/bin/env bash
# gcc at -Os, warnings as errors: the whole host suite against a library built for size.
# The library picks other code paths under __OPTIMIZE_SIZE__ (shared out-of-line helpers
# instead of inline fast paths); Cortex-M3 firmware runs those, and this stage runs them on
# the host too, with assertions on (no NDEBUG), as tests/embedded/run.sh builds them.
# No other stage compiles with these flags: the compiler cache would only add its own cost.
ELV_NO_CCACHE=1
source "$(dirname "$0")/common.sh"
ci_configure minsize -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=MinSizeRel \
	-DCMAKE_C_FLAGS_MINSIZEREL=-Os -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
	-DELV_BUILD_TOOLS=OFF -DELV_BUILD_EXAMPLES=OFF
ci_build minsize
# Every library object must really have been compiled at -Os (a cache or toolchain setting
# that overrides the flags would test the fast paths a second time instead).
python3 - "$ELV_CI_DIR/minsize/compile_commands.json" <<'PY'
import json, sys
lib = [c for c in json.load(open(sys.argv[1]))
       if "/lib/core/" in c["file"] or "/lib/policies/" in c["file"]]
args = lambda c: c.get("command") or " ".join(c["arguments"])
bad = [c["file"] for c in lib if " -Os" not in args(c) or " -O2" in args(c) or " -O3" in args(c)]
assert len(lib) >= 10, f"only {len(lib)} library objects in the build"
assert not bad, f"not compiled at -Os: {bad}"
print(f"minsize: {len(lib)} library compilations, all at -Os")
PY
ci_expect_suite minsize
ci_ctest minsize
