#!/usr/bin/env bash
# Install with `cmake --install --prefix DIR` into a DIR that is not the configured prefix,
# then build and run the consumer examples against it: the library through
# find_package(libelevator CONFIG) and through pkg-config (shared and static), the simulator
# library through its CMake target and its .pc file. Then move the whole install elsewhere
# and build the pkg-config and CMake consumers again: the .pc files and the CMake package
# find their prefix from where they are. The installed elvsim and elvbench must run.
source "$(dirname "$0")/common.sh"
base="$ELV_CI_DIR/prefix"
prefix="$base/opt/libelevator"
rm -rf "$base" "$ELV_CI_DIR"/consumer-*

# The configured prefix stays the default (/usr/local): the install picks another one.
# gcc by name, as stage 10 builds Release: the compiler cache then holds these objects.
ci_configure install -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Release -DELV_BUILD_TESTS=OFF \
	-DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=ON -DELV_BUILD_SIM=ON
configured=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$ELV_CI_DIR/install/CMakeCache.txt")
ci_build install
echo "+ cmake --install build-ci/install --prefix build-ci/prefix/opt/libelevator" \
	"(configured prefix: $configured)"
cmake --install "$ELV_CI_DIR/install" --prefix "$prefix" >"$ELV_CI_DIR/install.log"
pcfile=$(cd "$prefix" && find . -path '*/pkgconfig/libelevator.pc' | head -n1)
test -n "$pcfile" || { echo "no libelevator.pc installed" >&2; exit 1; }
libdir=$(dirname "$(dirname "${pcfile#./}")")
echo "installed ($libdir):"
(cd "$prefix" && find . -type f -o -type l | LC_ALL=C sort | sed 's/^/  /')

for f in "$libdir/pkgconfig/libelevator-sim.pc" "$libdir/libelevator-sim.a" \
	"$libdir/libelevator.a" bin/elvsim bin/elvbench include/elevator/sim.h; do
	test -e "$prefix/$f" || { echo "not installed: $f" >&2; exit 1; }
done
# Nothing installed for builds may name the configured prefix or the build machine's tree.
stale=$(grep -rlF -e "$configured" -e "$ELV_ROOT" "$prefix/$libdir/pkgconfig" \
	"$prefix/$libdir/cmake" || true)
if [ -n "$stale" ]; then
	echo "installed files name $configured or $ELV_ROOT:" >&2
	grep -rnF -e "$configured" -e "$ELV_ROOT" $stale >&2
	exit 1
fi

echo "+ installed programs"
version=$(sed -n 's/^project(libelevator VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
for tool in elvbench elvsim; do
	out=$("$prefix/bin/$tool" --version)
	echo "  bin/$tool --version: $out"
	case "$out" in
	*" $version") ;;
	*) echo "bin/$tool --version does not end with the version $version" >&2; exit 1 ;;
	esac
	"$prefix/bin/$tool" --help >/dev/null
done
"$prefix/bin/elvsim" list >/dev/null
echo "  bin/elvbench and bin/elvsim: --version, --help and elvsim list: ok"

# consumers <prefix> <tag>: build and run every consumer against the install at <prefix>.
consumers() {
	local at=$1 tag=$2 out flags pdir
	echo "+ [$tag] find_package consumers (CMAKE_PREFIX_PATH=${at#"$ELV_ROOT"/})"
	for ex in cmake-consumer sim-consumer; do
		cmake -S "examples/$ex" -B "$ELV_CI_DIR/consumer-$tag-$ex" -DCMAKE_PREFIX_PATH="$at" \
			-DCMAKE_BUILD_TYPE=Release >"$ELV_CI_DIR/consumer-$tag-$ex.configure.log" ||
			{ cat "$ELV_CI_DIR/consumer-$tag-$ex.configure.log"; return 1; }
		cmake --build "$ELV_CI_DIR/consumer-$tag-$ex" -j"$ELV_JOBS" >/dev/null
		"$ELV_CI_DIR/consumer-$tag-$ex/$ex"
	done

	echo "+ [$tag] pkg-config consumers (PKG_CONFIG_PATH=${at#"$ELV_ROOT"/}/$libdir/pkgconfig)"
	export PKG_CONFIG_PATH="$at/$libdir/pkgconfig"
	pdir=$(cd "$(pkg-config --variable=prefix libelevator)" && pwd -P)
	if [ "$pdir" != "$(cd "$at" && pwd -P)" ]; then
		echo "libelevator.pc resolves its prefix to $pdir, not $at" >&2
		return 1
	fi
	mkdir -p "$ELV_CI_DIR/consumer-$tag-pc"
	out="$ELV_CI_DIR/consumer-$tag-pc/pkgconfig-consumer"
	flags=$(pkg-config --cflags --libs libelevator)
	echo "  pkg-config --cflags --libs libelevator: $flags"
	# shellcheck disable=SC2086
	cc -std=c11 -Wall -Wextra -Werror -o "$out" examples/pkgconfig-consumer/main.c $flags
	LD_LIBRARY_PATH="$at/$libdir" "$out"
	# The same program linked against libelevator.a, as firmware would.
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Wextra -Werror -o "$out-static" examples/pkgconfig-consumer/main.c \
		$(pkg-config --cflags libelevator) \
		"$(pkg-config --variable=libdir libelevator)/libelevator.a"
	"$out-static"
	flags=$(pkg-config --cflags --libs libelevator-sim)
	echo "  pkg-config --cflags --libs libelevator-sim: $flags"
	# shellcheck disable=SC2086
	cc -std=c11 -Wall -Wextra -Werror -o "$out-sim" examples/sim-consumer/main.c $flags
	LD_LIBRARY_PATH="$at/$libdir" "$out-sim"
}

consumers "$prefix" installed
moved="$base/moved/elsewhere"
mkdir -p "$(dirname "$moved")"
mv "$prefix" "$moved"
echo "+ mv build-ci/prefix/opt/libelevator build-ci/prefix/moved/elsewhere"
consumers "$moved" moved

# The .pc file must stay correct when the libdir is absolute (then it is not relocatable).
ci_configure abs-libdir -DCMAKE_INSTALL_PREFIX=/opt/elv -DCMAKE_INSTALL_LIBDIR=/opt/elv/lib64 \
	-DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF
grep -qx 'libdir=/opt/elv/lib64' "$ELV_CI_DIR/abs-libdir/libelevator.pc" ||
	{ echo "absolute libdir is wrong in libelevator.pc:" >&2; cat "$ELV_CI_DIR/abs-libdir/libelevator.pc"; exit 1; }
echo "consumers: installed with --prefix and moved, the find_package and pkg-config routes"
echo "consumers: work for the library and the simulator; .pc copes with an absolute libdir"
