#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# cw-conformance-coverage on the skeleton built with --coverage, as a third
# party would use it on their own backend: the lines of the skeleton's own
# sources the suite reaches, printed, and the script held to what it
# promises. A report that named the suite's files, a filtered run that
# covered as much as a full one, a backend without counters that gave a
# number, or a --fail-under that did not fail, would each fail here.
#   sh examples/skeleton/coverage-check.sh BUILD_DIR COVERAGE_DIR PYTHON
set -u
B=$1 COV=$2 PY=$3
TOOL=$B/bin/cw-conformance-coverage
OUT=$COV/report
rm -rf "$OUT" && mkdir -p "$OUT"
fail() { echo "FAIL skeleton coverage: $*"; exit 1; }

# The whole suite: CONFORMANT, a report of examples/skeleton/ alone.
"$TOOL" --objects "$COV/obj" --filter examples/skeleton/ --html "$OUT/index.html" \
  --xml "$OUT/coverage.xml" --json "$OUT/summary.json" -- "$COV/libskeleton.so" -q --certificate \
  > "$OUT/full.txt" 2>&1 || { cat "$OUT/full.txt"; fail "status $? for a CONFORMANT run"; }
grep '^verdict:' "$OUT/full.txt"
full=$(sed -n 's/^line coverage: \([0-9.]*\)% .*/\1/p' "$OUT/full.txt")
[ -n "$full" ] || fail "no line coverage printed"
"$PY" - "$OUT/coverage.xml" "$full" <<'PYEOF' || exit 1
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
files = sorted({c.get("filename") for c in root.iter("class")})
if not files or any(not f.startswith("examples/skeleton/") for f in files):
    sys.exit("FAIL skeleton coverage: the report names files not the skeleton's: %s" % files)
rate = 100 * float(root.get("line-rate"))
if not 0 < rate <= 100 or abs(rate - float(sys.argv[2])) > 0.1:
    sys.exit("FAIL skeleton coverage: Cobertura says %.1f%%, the script printed %s%%" % (rate, sys.argv[2]))
print("skeleton coverage: %d files of examples/skeleton/, Cobertura agrees (%.1f%%)" % (len(files), rate))
PYEOF
[ -s "$OUT/index.html" ] || fail "no HTML report"

# A run of a few cases reaches fewer lines; its status (PARTIAL) is the
# suite's, and --fail-under holds the number.
"$TOOL" --objects "$COV/obj" --filter examples/skeleton/ -- "$COV/libskeleton.so" -q \
  --filter clock_sleep > "$OUT/filtered.txt" 2>&1
got=$?
[ $got -eq 3 ] || { cat "$OUT/filtered.txt"; fail "status $got for a PARTIAL run, expected 3"; }
part=$(sed -n 's/^line coverage: \([0-9.]*\)% .*/\1/p' "$OUT/filtered.txt")
awk -v p="$part" -v f="$full" 'BEGIN { exit !(p > 0 && p < f) }' ||
  fail "a run of the clock_sleep cases covers $part%, the whole suite $full%"
"$TOOL" --objects "$COV/obj" --filter examples/skeleton/ --fail-under "$full" -- \
  "$COV/libskeleton.so" -q --filter clock_sleep > "$OUT/under.txt" 2>&1
got=$?
[ $got -eq 4 ] || fail "--fail-under $full gave status $got for $part%, expected 4"

# A backend built without --coverage leaves no counters: an error, not 0%.
mkdir -p "$OUT/empty"
"$TOOL" --objects "$OUT/empty" -- "$B/lib/libskeleton.so" -q --filter clock_sleep \
  > "$OUT/none.txt" 2>&1
got=$?
if [ $got -ne 2 ] || ! grep -q "no coverage data" "$OUT/none.txt"; then
  cat "$OUT/none.txt"; fail "a backend without --coverage gave status $got"
fi

echo "skeleton line coverage: $full% with the whole suite ($part% with --filter clock_sleep);" \
  "$OUT/index.html"
