#!/usr/bin/env bash
# Doxygen HTML of the public headers and docs/*.md; any warning fails the stage.
source "$(dirname "$0")/common.sh"
command -v doxygen >/dev/null || { echo "doxygen is not installed" >&2; exit 1; }
ci_configure docs -DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF
if ! ci_build docs --target docs; then
	# WARN_AS_ERROR=YES stops at the first warning; list all of them for whoever fixes them.
	echo "docs: every warning:" >&2
	sed 's/^WARN_AS_ERROR .*/WARN_AS_ERROR = NO/' "$ELV_CI_DIR/docs/Doxyfile" |
		doxygen - 2>&1 >/dev/null | grep -v '^$' >&2 || true
	exit 1
fi
test -s "$ELV_CI_DIR/docs/docs/html/index.html"
echo "docs: $(find "$ELV_CI_DIR/docs/docs/html" -name '*.html' | wc -l) HTML pages"
