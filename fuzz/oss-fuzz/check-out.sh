#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# check-out.sh OUT - run every fuzz binary build.sh left in OUT over its
# seed corpus once (libFuzzer's -runs=0), as an engine's first run would.
set -eu
out=$1
n=0
for bin in "$out"/*; do
    [ -f "$bin" ] && [ -x "$bin" ] || continue
    t=$(basename "$bin")
    dir=$(mktemp -d)
    python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" \
        "$out/${t}_seed_corpus.zip" "$dir"
    dict=""
    [ -f "$out/$t.dict" ] && dict="-dict=$out/$t.dict"
    if ! "$bin" -runs=0 $dict "$dir" > "$dir.log" 2>&1; then
        tail -20 "$dir.log"
        echo "oss-fuzz build: $t failed on its seed corpus"
        exit 1
    fi
    inputs=$(ls "$dir" | wc -l)
    echo "oss-fuzz build: $t ran its $inputs seed inputs"
    rm -rf "$dir" "$dir.log"
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "oss-fuzz build: no fuzz binary in $out"; exit 1; }
echo "oss-fuzz build: $n targets built by build.sh and run"
