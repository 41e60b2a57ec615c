#!/usr/bin/env bash
# The BFQ section of docs/results.md: BFQ's published claims (start-up latency against ten
# sequential readers, with the idle-disk figure; throughput of sequential readers) and its
# weights and groups, under every Linux elevator, seed 1, on the ide2003 disk model.
#
#   tools/elvsim/bfq-results.sh [BUILD_DIR]
#
# Builds elvsim (Release) in BUILD_DIR (default build-results/), writes the JSON reports to
# BUILD_DIR/results/bfq/, and puts the section (tools/elvsim/bfq_md.py) into
# docs/results.md: in place of the old one, else before "## Real traces", else at the end.
# tools/elvsim/make-results.sh runs it after regenerating the rest.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-results}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DELV_BUILD_TESTS=OFF \
	-DELV_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target elvsim -j2 >/dev/null
elvsim="$build/tools/elvsim/elvsim"
out="$build/results/bfq"
mkdir -p "$out"
"$elvsim" list | grep -q '^  bfq ' || { echo "bfq-results: bfq is not built in" >&2; exit 1; }
for s in startup seq-readers; do
	"$elvsim" run "$s" --policy linux --seed 1 --quiet --json "$out/$s.json"
done
for j in weights groups one-reader; do
	"$elvsim" job "$root/tools/elvsim/bfq-$j.job" --policy linux --seed 1 --quiet \
		--json "$out/$j.json"
done
section=$(python3 "$root/tools/elvsim/bfq_md.py" "$out")
python3 - "$root/docs/results.md" "$section" <<'PY'
import sys
path, section = sys.argv[1], sys.argv[2].rstrip("\n") + "\n"
text = open(path).read()
lines = text.splitlines(keepends=True)
start = next((i for i, l in enumerate(lines) if l.startswith("## BFQ")), None)
if start is not None:
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    new = lines[:start] + [section, "\n"] + lines[end:]
else:
    at = next((i for i, l in enumerate(lines) if l.startswith("## Real traces")), len(lines))
    new = lines[:at] + [section, "\n"] + lines[at:]
out = "".join(new).rstrip("\n") + "\n"
open(path, "w").write(out)
PY
echo "wrote the BFQ section of docs/results.md"
