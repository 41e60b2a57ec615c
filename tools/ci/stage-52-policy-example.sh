#!/usr/bin/env bash
# A policy written outside the library can do what a built-in one does:
# - install libelevator into a temporary prefix, then build examples/out-of-tree-policy (the
#   sstf policy of docs/adding-a-policy.md) against the installed headers and library through
#   find_package(), and run it: it checks its own dispatch orders and exits non-zero when one
#   is wrong;
# - compile every built-in policy against the installed headers alone: none may include a
#   header of the library's tree or ask for private access.
source "$(dirname "$0")/common.sh"
example=examples/out-of-tree-policy
prefix="$ELV_CI_DIR/policy-example-prefix"
rm -rf "$prefix" "$ELV_CI_DIR/policy-example" "$ELV_CI_DIR/policy-example-objs"

for f in CMakeLists.txt main.c sstf.c sstf.h; do
	test -f "$example/$f" || { echo "missing: $example/$f" >&2; exit 1; }
done
test -f docs/adding-a-policy.md || { echo "missing: docs/adding-a-policy.md" >&2; exit 1; }

# gcc by name, as stage 10 builds Release: the compiler cache then holds these objects.
ci_configure policy-install -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Release \
	-DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF -DELV_BUILD_SIM=OFF \
	-DELV_BUILD_NBDKIT=OFF
ci_build policy-install
echo "+ cmake --install build-ci/policy-install --prefix build-ci/policy-example-prefix"
cmake --install "$ELV_CI_DIR/policy-install" --prefix "$prefix" >"$ELV_CI_DIR/policy-install.log"
test -f "$prefix/include/elevator/policy.h" || { echo "policy.h was not installed" >&2; exit 1; }

echo "+ cmake -S $example -B build-ci/policy-example -DCMAKE_PREFIX_PATH=<prefix>"
cmake -S "$example" -B "$ELV_CI_DIR/policy-example" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_BUILD_TYPE=Release >"$ELV_CI_DIR/policy-example.configure.log" ||
	{ cat "$ELV_CI_DIR/policy-example.configure.log"; exit 1; }
cmake --build "$ELV_CI_DIR/policy-example" -j"$ELV_JOBS"
# The include path must be the installed one, not the source tree's.
if grep -rqF -e "$ELV_ROOT/include" "$ELV_CI_DIR/policy-example/CMakeFiles"; then
	echo "the example was compiled with the source tree's include directory" >&2
	exit 1
fi
"$ELV_CI_DIR/policy-example/out-of-tree-policy"

echo "+ built-in policies against the installed headers alone"
mkdir -p "$ELV_CI_DIR/policy-example-objs"
n=0
for src in lib/policies/*.c; do
	[ "$(basename "$src")" = registry.c ] && continue # the table of policies, not one
	# Of the library's headers, only "elevator/policy.h"; no private access.
	if grep -nE '#[[:space:]]*include[[:space:]]*"' "$src" | grep -vF '#include "elevator/policy.h"' ||
		grep -n 'ELV_ALLOW_PRIVATE_ACCESS' "$src"; then
		echo "$src includes a header other than elevator/policy.h or asks for private access" >&2
		exit 1
	fi
	cc -std=c11 -Wall -Wextra -Werror -I"$prefix/include" -c "$src" \
		-o "$ELV_CI_DIR/policy-example-objs/$(basename "$src" .c).o"
	echo "  $src: ok"
	n=$((n + 1))
done
if [ "$n" -lt 4 ]; then
	echo "only $n built-in policies were compiled, expected at least 4" >&2
	exit 1
fi
echo "policy example: built against the install and ran; $n built-in policies need only policy.h"
