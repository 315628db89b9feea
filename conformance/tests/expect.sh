#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# --expect FILE: a candidate that fails known cases exits 0 while each case
# gets the result the file expects, and its certificate still refuses it;
# a regression or an unexpected pass exits 1, named; a malformed file, or
# one naming a case the suite does not have, is a usage error (2) naming
# the file and line.
#   sh conformance/tests/expect.sh BUILD_DIR PYTHON
set -u
B=$1 PY=$2
CWC=$B/bin/cw-conformance
ODD=$B/lib/cwc-odd.so
MUTANT=$B/mutants/det_counter_32bit.so
OUT=$B/reports/expect
rm -rf "$OUT" && mkdir -p "$OUT"
failures=0

# odd's table is a copy, which backend_table_and_objects finds (ABI-002);
# backend_declares_whole_profiles passes.
ODD_ARGS="--backend $ODD --profile core --filter backend_"

# check NAME STATUS VERDICT PATTERN [ARGS...]: a run with --expect
# OUT/NAME.expect; its exit status, the verdict of its certificate and
# reports, and a line of its output matching PATTERN.
check() {
  check_name=$1 want=$2 verdict=$3 pattern=$4
  shift 4
  "$CWC" "$@" --quiet --certificate --expect "$OUT/$check_name.expect" --json "$OUT/$check_name.json" \
    --xml "$OUT/$check_name.xml" --tap "$OUT/$check_name.tap" > "$OUT/$check_name.txt" 2>&1
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $check_name: exit status $got, expected $want"; cat "$OUT/$check_name.txt"
    failures=$((failures + 1))
  elif ! grep -qx "verdict: *$verdict.*" "$OUT/$check_name.txt"; then
    echo "FAIL $check_name: the certificate's verdict is not $verdict"; failures=$((failures + 1))
  elif ! grep -q "$pattern" "$OUT/$check_name.txt"; then
    echo "FAIL $check_name: no line '$pattern'"; cat "$OUT/$check_name.txt"; failures=$((failures + 1))
  elif ! "$PY" ci/check-reports.py --expect "$verdict" "$OUT/$check_name.json" "$OUT/$check_name.xml" \
    "$OUT/$check_name.tap" > /dev/null; then
    failures=$((failures + 1))
  else
    echo "$check_name: exit $got, $verdict ($(grep -m1 "$pattern" "$OUT/$check_name.txt" | cut -c1-90))"
  fi
}

# outcome NAME CASE OUTCOME: the JSON's record of the case's expectation.
outcome() {
  "$PY" -c 'import json, sys
c = [c for c in json.load(open(sys.argv[1]))["cases"] if c["name"] == sys.argv[2]][0]
sys.exit(c["expected"]["outcome"] != sys.argv[3])' "$OUT/$1.json" "$2" "$3" ||
    { echo "FAIL $1: $2 is not recorded as $3"; failures=$((failures + 1)); }
}

cat > "$OUT/as-expected.expect" <<'EOF'
# The odd backend's table is a copy: the objects of its runs name the
# reference's table, not it.

backend_table_and_objects   FAIL    the table is a copy (ABI-002)
	# an indented comment, and blanks at the end of a line   
backend_declares_whole_profiles pass  whole profiles only   
EOF
check as-expected 0 "NOT CONFORMANT" "^expectations: none unexpected: 2 as expected" $ODD_ARGS
outcome as-expected backend_table_and_objects as_expected
grep -q "^not ok .* backend_table_and_objects # TODO expected FAIL: the table is a copy" "$OUT/as-expected.tap" ||
  { echo "FAIL as-expected: the known failure is no TAP TODO"; failures=$((failures + 1)); }

printf '# no failure expected\n' > "$OUT/regression.expect"
check regression 1 "NOT CONFORMANT" \
  "^unexpected:   backend_table_and_objects: a regression: FAIL (expected to pass)" $ODD_ARGS
outcome regression backend_table_and_objects regression

printf 'backend_table_and_objects FAIL copied\nbackend_declares_whole_profiles FAIL was wrong once\n' \
  > "$OUT/unexpected-pass.expect"
check unexpected-pass 1 "NOT CONFORMANT" \
  "^unexpected:   backend_declares_whole_profiles: an unexpected pass: PASS (expected FAIL at .*:2: was wrong once); update the file" \
  $ODD_ARGS
outcome unexpected-pass backend_declares_whole_profiles unexpected_pass

# Failing the other way is told, and not unexpected.
printf 'backend_table_and_objects TIMEOUT hung once\n' > "$OUT/changed.expect"
check changed 0 "NOT CONFORMANT" "^changed:      backend_table_and_objects: FAIL (expected TIMEOUT" $ODD_ARGS

# --fail-fast stops at the first failure not expected: past a known one.
printf 'backend_table_and_objects FAIL copied\n' > "$OUT/fail-fast.expect"
check fail-fast 0 "NOT CONFORMANT" "^cases: *6 passed, 1 failed" --backend "$ODD" --profile core \
  --filter _and_ --fail-fast --jobs 2

# A wrong backend of the negative corpus, the whole suite two cases at a
# time: its one failure expected, it exits 0 and is still refused.
printf '# counter_add keeps 32 bits of the amount\nmetrics_rule_sample_lines FAIL MET-011\n' \
  > "$OUT/mutant.expect"
check mutant 0 "NOT CONFORMANT" "^expectations: none unexpected" --backend "$MUTANT" --jobs 2
grep -q "^certified: *none$" "$OUT/mutant.txt" ||
  { echo "FAIL mutant: certified with a failing case"; failures=$((failures + 1)); }

# malformed NAME LINE TEXT: a file whose line LINE is wrong, refused before
# any run with status 2 and a message naming FILE:LINE.
malformed() {
  printf '# a comment\n%b\n' "$3" > "$OUT/$1.expect"
  "$CWC" --backend deterministic --expect "$OUT/$1.expect" > "$OUT/$1.txt" 2>&1
  got=$?
  if [ "$got" -ne 2 ] || ! grep -q "^cw-conformance: $OUT/$1.expect:$2: " "$OUT/$1.txt" ||
    grep -q "^verdict" "$OUT/$1.txt"; then
    echo "FAIL $1: status $got: $(head -1 "$OUT/$1.txt")"; failures=$((failures + 1))
  else
    echo "$1: refused with status 2 ($(head -1 "$OUT/$1.txt" | sed "s|$OUT/||"))"
  fi
}
malformed no-result 2 "clock_sleep"
malformed bad-result 2 "clock_sleep FAILS flaky"
malformed no-reason 2 "clock_sleep FAIL   "
malformed unknown-case 3 "clock_sleep FAIL x\nno_such_case FAIL y"
malformed twice 3 "clock_sleep FAIL x\nclock_sleep PASS y"
"$CWC" --backend deterministic --expect "$OUT/nosuch.expect" > "$OUT/missing.txt" 2>&1
got=$?
if [ "$got" -ne 2 ] || ! grep -q "^cw-conformance: $OUT/nosuch.expect: cannot read" "$OUT/missing.txt"; then
  echo "FAIL missing: status $got"; failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] && echo "== --expect: exit statuses, summaries and reports as expected"
[ "$failures" -eq 0 ]
