#!/usr/bin/env bash
# Doxygen HTML of the public headers and docs/*.md; any warning fails the stage.
source "$(dirname "$0")/common.sh"
command -v doxygen >/dev/null || { echo "doxygen is not installed" >&2; exit 1; }
ci_configure docs -DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF
ci_build docs --target docs
test -s "$ELV_CI_DIR/docs/docs/html/index.html"
echo "docs: $(find "$ELV_CI_DIR/docs/docs/html" -name '*.html' | wc -l) HTML pages"
