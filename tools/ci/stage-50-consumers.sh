#!/usr/bin/env bash
# Install into a staging prefix, then build and run the two consumer examples against it:
# one through find_package(libelevator CONFIG), one through pkg-config.
source "$(dirname "$0")/common.sh"
stage="$ELV_CI_DIR/stage"
rm -rf "$stage" "$ELV_CI_DIR/cmake-consumer" "$ELV_CI_DIR/pkgconfig-consumer"

ci_configure install -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$stage" \
	-DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF
ci_build install
cmake --install "$ELV_CI_DIR/install" >/dev/null
pcfile=$(cd "$stage" && find . -path '*/pkgconfig/libelevator.pc' | head -n1)
libdir=$(dirname "$(dirname "${pcfile#./}")")
echo "installed into build-ci/stage ($libdir):"
(cd "$stage" && find . -type f -o -type l | LC_ALL=C sort | sed 's/^/  /')

echo "+ find_package consumer"
cmake -S examples/cmake-consumer -B "$ELV_CI_DIR/cmake-consumer" -DCMAKE_PREFIX_PATH="$stage" \
	-DCMAKE_BUILD_TYPE=Release >"$ELV_CI_DIR/cmake-consumer.configure.log" ||
	{ cat "$ELV_CI_DIR/cmake-consumer.configure.log"; exit 1; }
cmake --build "$ELV_CI_DIR/cmake-consumer" -j"$ELV_JOBS"
"$ELV_CI_DIR/cmake-consumer/cmake-consumer"

echo "+ pkg-config consumer"
export PKG_CONFIG_PATH="$stage/$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs libelevator)
echo "  pkg-config --cflags --libs libelevator: $flags"
mkdir -p "$ELV_CI_DIR/pkgconfig-consumer"
out="$ELV_CI_DIR/pkgconfig-consumer/pkgconfig-consumer"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -o "$out" examples/pkgconfig-consumer/main.c $flags
LD_LIBRARY_PATH="$stage/$libdir" "$out"
# The same program linked against libelevator.a, as firmware would.
echo "+ pkg-config consumer, linked with libelevator.a"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$out-static" examples/pkgconfig-consumer/main.c \
	$(pkg-config --cflags libelevator) "$(pkg-config --variable=libdir libelevator)/libelevator.a"
"$out-static"

# The .pc file must stay correct when the libdir is absolute.
ci_configure abs-libdir -DCMAKE_INSTALL_PREFIX=/opt/elv -DCMAKE_INSTALL_LIBDIR=/opt/elv/lib64 \
	-DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF
grep -qx 'libdir=/opt/elv/lib64' "$ELV_CI_DIR/abs-libdir/libelevator.pc" ||
	{ echo "absolute libdir is wrong in libelevator.pc:" >&2; cat "$ELV_CI_DIR/abs-libdir/libelevator.pc"; exit 1; }
echo "consumers: find_package and pkg-config routes work, .pc copes with an absolute libdir"
