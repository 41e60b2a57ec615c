# Sourced by tools/abi/update-baseline.sh and tools/ci/stage-56-abi.sh: how an ABI baseline
# is named, built and written, in one place so that a baseline and the CI check of a tree
# are always produced the same way.
# shellcheck shell=bash

# elv_abi_key <elevator.h>: the ABI version the header promises. From 1.0 on it is the major
# version; in 0.x the minor acts as the major (0.1 and 0.2 are incompatible), so it is
# "0.MINOR". The SONAME is libelevator.so.<key> and a baseline is libelevator-<key>.xml.
elv_abi_key() {
	local major minor
	major=$(sed -n 's/^#define ELV_VERSION_MAJOR \([0-9][0-9]*\)$/\1/p' "$1")
	minor=$(sed -n 's/^#define ELV_VERSION_MINOR \([0-9][0-9]*\)$/\1/p' "$1")
	if [ -z "$major" ] || [ -z "$minor" ]; then
		echo "abi: no ELV_VERSION_MAJOR/MINOR in $1" >&2
		return 1
	fi
	if [ "$major" -eq 0 ]; then
		echo "0.$minor"
	else
		echo "$major"
	fi
}

# elv_abi_build <source dir> <build dir>: configure and build the shared library with debug
# information (abidw reads the types from DWARF); prints the path of the built library.
elv_abi_build() {
	local src=$1 build=$2 so
	rm -rf "$build"
	cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DELV_BUILD_SHARED=ON \
		-DELV_BUILD_SIM=OFF -DELV_BUILD_TESTS=OFF -DELV_BUILD_TOOLS=OFF \
		-DELV_BUILD_EXAMPLES=OFF >"$build.configure.log" 2>&1 ||
		{ cat "$build.configure.log" >&2; return 1; }
	cmake --build "$build" -j"${ELV_JOBS:-2}" --target elevator >"$build.build.log" 2>&1 ||
		{ cat "$build.build.log" >&2; return 1; }
	so=$(find "$build" -maxdepth 1 -type f -name 'libelevator.so.*' | head -n1)
	if [ -z "$so" ]; then
		echo "abi: no libelevator.so built in $build" >&2
		return 1
	fi
	echo "$so"
}

# elv_abi_dump <library> <public headers dir> <out.xml>: the library's ABI as abidw XML,
# limited to the types of the installed headers and free of build paths, so that two
# checkouts of the same source give the same file.
elv_abi_dump() {
	abidw --headers-dir "$2" --no-corpus-path --no-comp-dir-path --short-locs \
		--type-id-style hash --drop-private-types --drop-undefined-syms --out-file "$3" "$1"
	# A dump without functions means abidw found no debug information: never a baseline.
	if ! grep -q '<function-decl ' "$3"; then
		echo "abi: $3 lists no function (no debug information in $1?)" >&2
		return 1
	fi
}

# elv_abi_tools_present: abidw and abidiff (Debian abigail-tools) are required, never skipped.
elv_abi_tools_present() {
	local t
	for t in abidw abidiff; do
		if ! command -v "$t" >/dev/null 2>&1; then
			echo "abi: $t is not installed (Debian package abigail-tools)" >&2
			return 1
		fi
	done
}

# elv_abi_count <abi.xml> <func|object>: exported functions or variables listed in a dump.
elv_abi_count() {
	grep -c "<elf-symbol name='[^']*'[^>]* type='$2-type'" "$1" || true
}
