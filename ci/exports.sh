#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The shared library exports its public surface and nothing else: what a
# user can link against is API, so an internal function exported by
# accident would become one. Three lists must be equal:
#   - the functions the installed headers declare (gcc -aux-info on a file
#     that includes them all; static inline ones excluded),
#   - the names in the symbol map reference/libcwrt.map,
#   - the dynamic symbols libcwrt.so defines (nm -D --defined-only).
#
#   sh ci/exports.sh [LIBDIR]    LIBDIR: build/release/lib
set -eu
cd "$(dirname "$0")/.."
lib=${1:-build/release/lib}/libcwrt.so
[ -e "$lib" ] || { echo "exports: $lib not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
    echo '#include "cw/cw.h"'
    for h in reference/include/cwrt/*.h; do echo "#include \"cwrt/${h##*/}\""; done
} > "$tmp/all.c"
${CC:-cc} -std=c11 -D_GNU_SOURCE -Ispec/include -Ireference/include \
    -aux-info "$tmp/aux" -fsyntax-only "$tmp/all.c"
# A line of -aux-info: /* FILE:LINE:NC */ extern TYPE NAME (ARGS);
awk '/^\/\* (spec|reference)\// && / extern / && !/ static / {
        sub(/ \(.*/, ""); n = split($0, w, /[ *]+/); print w[n] }' "$tmp/aux" |
    sort -u > "$tmp/headers"
sed -n 's/^[[:space:]]*\(cw_[a-z0-9_]*\);.*/\1/p' reference/libcwrt.map | sort -u > "$tmp/map"
nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $NF); print $NF }' | sort -u > "$tmp/exported"

bad=0
differ() { # NAME_A FILE_A NAME_B FILE_B
    if ! cmp -s "$2" "$4"; then
        echo "exports: $1 and $3 differ (< only in $1, > only in $3):" >&2
        diff "$2" "$4" | grep '^[<>]' >&2
        bad=1
    fi
}
differ "the installed headers" "$tmp/headers" "reference/libcwrt.map" "$tmp/map"
differ "the installed headers" "$tmp/headers" "$lib" "$tmp/exported"
[ "$bad" = 0 ] || exit 1
echo "exports: $(wc -l < "$tmp/exported") symbols, each declared in an installed header and in the map"
