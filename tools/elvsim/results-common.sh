# Sourced by the scripts that write docs/results.md (make-results.sh, bfq-results.sh,
# zoned-results.sh): the repository root, elvsim built once per build directory, and the
# replacement of one section of docs/results.md.
# shellcheck shell=bash
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# results_build BUILD_DIR: configure BUILD_DIR (Release, without tests and examples) and build
# elvsim there; sets $elvsim.
results_build() {
	cmake -S "$root" -B "$1" -DCMAKE_BUILD_TYPE=Release -DELV_BUILD_TESTS=OFF \
		-DELV_BUILD_EXAMPLES=OFF >/dev/null
	cmake --build "$1" --target elvsim -j2 >/dev/null
	# shellcheck disable=SC2034 # for the script that sourced this
	elvsim="$1/tools/elvsim/elvsim"
}

# results_section HEADING SECTION: SECTION (Markdown that starts with its own "## " line)
# replaces the section of docs/results.md whose heading starts with "## HEADING"; when there
# is none it goes before "## Real traces", else at the end.
results_section() {
	python3 - "$root/docs/results.md" "$1" "$2" <<'PY'
import sys
path, heading, section = sys.argv[1], "## " + sys.argv[2], sys.argv[3].rstrip("\n") + "\n"
lines = open(path).read().splitlines(keepends=True)
start = next((i for i, l in enumerate(lines) if l.startswith(heading)), None)
if start is not None:
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    new = lines[:start] + [section, "\n"] + lines[end:]
else:
    at = next((i for i, l in enumerate(lines) if l.startswith("## Real traces")), len(lines))
    new = lines[:at] + [section, "\n"] + lines[at:]
open(path, "w").write("".join(new).rstrip("\n") + "\n")
PY
	echo "wrote the $1 section of docs/results.md"
}
