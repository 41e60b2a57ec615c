#!/usr/bin/env bash
# Install the Debian packages named in tools/ci/packages/*.txt (one per line, # comments).
# Runs as root, or through sudo otherwise. Does nothing when everything is installed already.
set -euo pipefail
cd "$(dirname "$0")/../.."

mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' tools/ci/packages/*.txt |
	grep -v '^$' | LC_ALL=C sort -u)
if [ "${#pkgs[@]}" -eq 0 ]; then
	echo "deps: no packages listed"
	exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ "${#missing[@]}" -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages present (${pkgs[*]})"
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	as_root=()
elif command -v sudo >/dev/null 2>&1; then
	as_root=(sudo)
else
	echo "deps: need root or sudo to install: ${missing[*]}" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends "${pkgs[@]}"
