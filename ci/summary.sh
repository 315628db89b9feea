#!/bin/sh
# The closing line of `make check`: the cases of every conformance report
# written by this check (all variants, all backends) and the fuzz inputs
# replayed, added up.
#   sh ci/summary.sh FUZZ_REPLAYED
set -eu
cd "$(dirname "$0")/.."
passed=${1:-0} failed=0 skipped=0
for r in build/*/reports/*.json; do
  [ -f "$r" ] || continue
  line=$(grep -o '"summary": {[^}]*}' "$r")
  p=$(echo "$line" | sed 's/.*"passed": \([0-9]*\).*/\1/')
  f=$(echo "$line" | sed 's/.*"failed": \([0-9]*\).*/\1/')
  s=$(echo "$line" | sed 's/.*"skipped": \([0-9]*\).*/\1/')
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "check: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
