#!/bin/sh
# Fetch cmocka's source from Debian (the version the host's libcmocka-dev comes from) into DIR
# and print the path of the unpacked tree. Nothing is installed and /etc/apt is not touched:
# a private deb-src list and list cache live under DIR. Re-running reuses what is there.
#
# Usage: tests/embedded/fetch-cmocka.sh DIR
set -eu

dir=${1:?usage: fetch-cmocka.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

found=$(ls -d "$dir"/cmocka-*/src 2>/dev/null | head -n 1 || true)
if [ -n "$found" ] && [ -f "$found/cmocka.c" ]; then
	dirname "$found"
	exit 0
fi

suite=${ELV_DEBIAN_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")}
# The machine's own Debian mirror when it names one (deb822 sources), else the default.
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources \
	2>/dev/null | grep -v -e security -e '^$' | grep '/debian/*$' | head -n 1 || true)
mirror=${ELV_DEBIAN_MIRROR:-${mirror:-http://deb.debian.org/debian}}
apt_dir=$dir/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/parts"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
	>"$apt_dir/sources.list"
set -- -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/parts" \
	-o "Dir::State::Lists=$apt_dir/lists" -o APT::Sandbox::User=root
apt-get -qq "$@" update >&2
(cd "$dir" && apt-get -qq "$@" source --download-only cmocka >&2)

orig=$(ls "$dir"/cmocka_*.orig.tar.* | head -n 1)
tar -C "$dir" -xf "$orig"
found=$(ls -d "$dir"/cmocka-*/src | head -n 1)
test -f "$found/cmocka.c"
dirname "$found"
