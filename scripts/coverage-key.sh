#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Print the key of what a coverage figure was measured on: a hash over the content of every
# file (committed, edited or new; not ignored) of the modules' sources, their build files and
# the tests that drive them. scripts/coverage.sh stamps its report with it; scripts/check.sh
# shows the figure only while the key is still the same. The working tree's content, not a
# commit's tree: a figure measured before an uncommitted edit is not the edited code's figure.
set -euo pipefail
cd "$(dirname "$0")/.."
files=()
while IFS= read -r -d '' f; do
	# a tracked file deleted in the working tree is no longer part of the sources
	[ -f "$f" ] && files+=("$f")
done < <(git ls-files -z -co --exclude-standard -- drivers include Kbuild scripts/features.kbuild \
	tests/vm tests/modules | sort -zu)
# the names are part of the key too: a renamed file is a different tree
sha256sum -- "${files[@]}" | sha256sum | cut -c1-16
