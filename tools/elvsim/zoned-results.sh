#!/usr/bin/env bash
# The "Zoned storage" section of docs/results.md: the zoned-writers scenario on the smr and
# zns presets under every policy, seed 1, with the zone write plugging stage, without it,
# and without it on a device that keeps write order (zone_ordered=1).
#
#   tools/elvsim/zoned-results.sh [BUILD_DIR]
#
# Builds elvsim (Release) in BUILD_DIR (default build-results/), writes the JSON reports to
# BUILD_DIR/results/zoned/, and puts the section (tools/elvsim/zoned_md.py) into
# docs/results.md: in place of the old one, else before "## Real traces", else at the end.
# tools/elvsim/make-results.sh runs it after regenerating the rest.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-results}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DELV_BUILD_TESTS=OFF \
	-DELV_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target elvsim -j2 >/dev/null
elvsim="$build/tools/elvsim/elvsim"
out="$build/results/zoned"
mkdir -p "$out"
for dev in smr zns; do
	"$elvsim" run zoned-writers --device "$dev" --policy all --seed 1 --quiet \
		--json "$out/$dev-stage.json"
	"$elvsim" run zoned-writers --device "$dev" --policy all --seed 1 --quiet \
		--no-zone-stage --json "$out/$dev-nostage.json"
	"$elvsim" run zoned-writers --device "$dev" --policy all --seed 1 --quiet \
		--no-zone-stage --dev-set zone_ordered=1 --json "$out/$dev-ordered-nostage.json"
done
section=$(python3 "$root/tools/elvsim/zoned_md.py" "$out")
python3 - "$root/docs/results.md" "$section" <<'PY'
import sys
path, section = sys.argv[1], sys.argv[2].rstrip("\n") + "\n"
lines = open(path).read().splitlines(keepends=True)
start = next((i for i, l in enumerate(lines) if l.startswith("## Zoned storage")), None)
if start is not None:
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    new = lines[:start] + [section, "\n"] + lines[end:]
else:
    at = next((i for i, l in enumerate(lines) if l.startswith("## Real traces")), len(lines))
    new = lines[:at] + [section, "\n"] + lines[at:]
open(path, "w").write("".join(new).rstrip("\n") + "\n")
PY
echo "wrote the Zoned storage section of docs/results.md"
