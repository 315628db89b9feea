#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Every source file carries the project's licence as an SPDX line within
# its first three lines (LICENSE): C, assembly, Python, shell, Rust, Go,
# make, gnuplot.
#   sh ci/spdx.sh          list the files without one; exit 1 if any
#   sh ci/spdx.sh --add    add the line to each of them
set -eu
cd "$(dirname "$0")/.."
id="SPDX-License-Identifier: Apache-2.0 OR MIT"
files=$(git ls-files '*.c' '*.h' '*.S' '*.py' '*.sh' '*.rs' '*.go' '*/go.mod' '*.gp' '*.mk' 'Makefile' '*/Makefile' '.ci/run' \
        '*/Dockerfile' | while read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done)
# One awk over every file: a process per file took seconds.
# shellcheck disable=SC2086
missing=$(awk -v id="$id" 'FNR == 1 { if (NR > 1 && !ok) print prev; ok = 0; prev = FILENAME }
    FNR <= 3 && index($0, id) { ok = 1 } END { if (NR && !ok) print prev }' $files | tr '\n' ' ')
missing=${missing% }
if [ "${1:-}" = "--add" ]; then
    for f in $missing; do
        case "$f" in
        *.c | *.h | *.S) line="/* $id */" ;;
        *.rs | *.go | */go.mod) line="// $id" ;;
        *) line="# $id" ;;
        esac
        if head -1 "$f" | grep -q '^#!'; then
            { head -1 "$f"; printf '%s\n' "$line"; tail -n +2 "$f"; } > "$f.spdx"
        else
            { printf '%s\n' "$line"; cat "$f"; } > "$f.spdx"
        fi
        chmod --reference="$f" "$f.spdx" && mv "$f.spdx" "$f"
    done
    exit 0
fi
if [ -n "$missing" ]; then
    echo "spdx: files without '$id': $missing" | fold -w 200 >&2
    exit 1
fi
echo "spdx: $(echo "$files" | wc -l) source files carry the licence"
