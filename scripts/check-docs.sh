#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every reStructuredText file under Documentation/ parses without a docutils warning (a
# malformed table, a broken block quote, an unknown target): what a reader's renderer or the
# kernel's Sphinx would print instead of the text. Debian's python3-docutils, not a
# virtualenv's, so a fresh machine checks with what install-deps.sh installed.
# And every `make TARGET` the README or Documentation names has a rule in the Makefile (a
# target lost in a merge once left `make coverage` printing "Nothing to be done"); the kernel
# tree's own targets the documents mention are listed in kernel_targets.
# Usage: check-docs.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

kernel_targets=" dtbs_check "
missing=0
for t in $(grep -oh '`make [a-z][a-z0-9_-]*' README.md Documentation/*.rst | sed 's/.*`make //' |
	   sort -u); do
	[[ $kernel_targets == *" $t "* ]] && continue
	# a rule line: the target, alone or among others, before the colon (not a recipe line)
	grep -Eq "^([^:#=[:space:]]+ )*$t( [^:#=[:space:]]+)*:" Makefile && continue
	echo "docs: \`make $t\` is documented but the Makefile has no rule for it"
	missing=$((missing + 1))
done
[ $missing = 0 ] || exit 1
mapfile -t files < <(git ls-files -co --exclude-standard -- 'Documentation/*.rst' | sort -u)
/usr/bin/python3 - "${files[@]}" <<'PY'
import sys
import docutils.core
import docutils.utils

bad = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        src = f.read()
    # halt_level 2: a file's first warning or error stops its parse and is printed here,
    # with the file's name and line
    try:
        docutils.core.publish_doctree(src, source_path=path, settings_overrides={
            "report_level": 2, "halt_level": 2, "file_insertion_enabled": False,
            "raw_enabled": False})
    except docutils.utils.SystemMessage as e:
        print(f"{e}")
        bad += 1
if bad:
    print(f"docs: {bad} of {len(sys.argv) - 1} files have docutils warnings")
    sys.exit(1)
print(f"docs: {len(sys.argv) - 1} reStructuredText files parse clean")
PY
