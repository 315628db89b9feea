#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The harness's verdicts, exit statuses and reports, each run checked.
#   sh conformance/tests/reports.sh BUILD_DIR PYTHON
set -u
B=$1 PY=$2
CWC=$B/bin/cw-conformance
OUT=$B/reports/harness
rm -rf "$OUT" && mkdir -p "$OUT"
failures=0

# expect STATUS NAME [ENV=VALUE...] -- ARGS: run the suite, require its exit
# status, and read its three reports back (verdict from the status).
expect() {
  want=$1 name=$2
  shift 2
  envs=""
  while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
  shift
  # shellcheck disable=SC2086
  env $envs "$CWC" "$@" --json "$OUT/$name.json" --xml "$OUT/$name.xml" --tap "$OUT/$name.tap" \
    > "$OUT/$name.txt" 2>&1
  got=$?
  case $want in 0) v=CONFORMANT ;; 1) v="NOT CONFORMANT" ;; 3) v=PARTIAL ;; esac
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit status $got, expected $want"; cat "$OUT/$name.txt"
    failures=$((failures + 1))
  elif ! "$PY" ci/check-reports.py --expect "$v" "$OUT/$name.json" "$OUT/$name.xml" "$OUT/$name.tap"; then
    failures=$((failures + 1))
  fi
}

# usage STATUS NAME ARGS: a run refused before it starts.
usage() {
  name=$1
  shift
  "$CWC" "$@" > "$OUT/$name.txt" 2>&1
  got=$?
  if [ "$got" -ne 2 ]; then
    echo "FAIL $name: exit status $got, expected 2"; failures=$((failures + 1))
  else
    echo "$name: refused with status 2 ($(head -1 "$OUT/$name.txt"))"
  fi
}

expect 3 filtered -- --backend deterministic --filter clock
expect 3 ck-run-case CK_RUN_CASE=clock_sleep -- --backend deterministic
expect 3 ck-run-suite CK_RUN_SUITE=other -- --backend deterministic
expect 3 ck-tags CK_INCLUDE_TAGS=CLK-001 -- --backend deterministic
expect 3 profile-core -- --backend deterministic --profile core
expect 1 odd-name -- --backend "$B/lib/cwc-odd.so" --profile core --filter backend_
expect 1 exit0 CWC_ODD_EXIT=1 -- --backend "$B/lib/cwc-odd.so" --filter clock_sleep
expect 1 hang CWC_ODD_HANG=1 -- --backend "$B/lib/cwc-odd.so" --filter clock_sleep_until --timeout 1
expect 1 hang-scaled CWC_ODD_HANG=1 -- --backend "$B/lib/cwc-odd.so" --filter clock_sleep_until --timeout 1 --time-scale 2
expect 1 flaky CWC_ODD_FLAKY=1 -- --backend "$B/lib/cwc-odd.so" --profile core --filter clock_sleep_until --repeat 4
expect 1 fail-fast CWC_ODD_HANG=1 -- --backend "$B/lib/cwc-odd.so" --filter clock_sleep --timeout 1 --fail-fast
usage unknown-backend --backend nosuchbackend
usage bad-timeout --backend deterministic --timeout 0
usage bad-profile --backend deterministic --profile nosuchprofile
usage undeclared-profile --backend native --profile recover
usage missing-object --backend ./nosuch.so

# The name that is not UTF-8 reaches the JSON as U+FFFD, the rest exactly.
"$PY" - "$OUT/odd-name.json" <<'PYEOF' || failures=$((failures + 1))
import json, sys
name = json.load(open(sys.argv[1], encoding="utf-8"))["backend"]["name"]
want = ("\ufffd\ufffd odd \ufffd\ufffd \ufffd\ufffd\ufffd \ufffd\ufffd \U0001F600 \x01"
        " <b>&amp;\"'\\")
if name != want:
    sys.exit("FAIL odd-name: backend name %r, expected %r" % (name, want))
print("odd-name: the backend's name survives as %r" % name)
PYEOF
grep -q "ended with status 0 before the case did" "$OUT/exit0.json" ||
  { echo "FAIL exit0: a case ended by exit(0) was not failed"; failures=$((failures + 1)); }
grep -q '"status": "timeout"' "$OUT/hang.json" || { echo "FAIL hang: no timeout"; failures=$((failures + 1)); }
# A timeout says which limit it met (--timeout times the time scale) and
# tells a blocked case from a busy one by the CPU its process used.
grep -q 'no result after 2 s (--timeout x time scale 2.00).*blocked, the case hangs' "$OUT/hang-scaled.json" ||
  { echo "FAIL hang-scaled: the timeout was not scaled, or the hang not named"; failures=$((failures + 1)); }
# --repeat: a case that passes under some seeds and fails under others.
grep -q 'FLAKY: passed with seeds 42,44, failed with 43,45' "$OUT/flaky.json" ||
  { echo "FAIL flaky: --repeat did not name the case FLAKY with its seeds"; failures=$((failures + 1)); }
usage nosuchcase --backend deterministic --filter nosuchcase
usage unwritable-json --backend deterministic --filter clock_sleep --json /nonexistent/dir/r.json
grep -q "^cw-conformance: cannot write the --json report" "$OUT/unwritable-json.txt" ||
  { echo "FAIL unwritable-json: not refused before the run, with the prefix"; failures=$((failures + 1)); }
# A certificate that cannot be written is an error, not a silent pass.
"$CWC" --backend deterministic --filter clock_sleep_until --certificate > /dev/full 2> "$OUT/full.txt"
got=$?
if [ "$got" -ne 2 ] || ! grep -q "cannot write to standard output" "$OUT/full.txt"; then
  echo "FAIL full: a certificate written to /dev/full gave status $got"; failures=$((failures + 1))
else
  echo "full: a certificate that cannot be written is status 2"
fi
# A candidate whose runs leave a process in a session of its own: the
# suite kills it, so that a pipe on the suite's output ends with the suite.
(CWC_ODD_ESCAPE=1 timeout 60 "$CWC" --backend "$B/lib/cwc-odd.so" --profile core \
  --filter clock_sleep_until 2> "$OUT/escape.err" | cat > "$OUT/escape.txt")
if [ $? -ne 0 ] || ! grep -q "left .* running; killed" "$OUT/escape.err"; then
  echo "FAIL escape: a process that left the case's session outlived the suite"; failures=$((failures + 1))
else
  echo "escape: the processes a case left behind were killed ($(head -1 "$OUT/escape.err"))"
fi
# A table with a NULL core entry is refused at load, the entry named.
CWC_ODD_NULL_ENTRY=1 "$CWC" --backend "$B/lib/cwc-odd.so" > "$OUT/null-entry.txt" 2>&1
if [ $? -ne 2 ] || ! grep -q "leaves the core entry 'yield' NULL" "$OUT/null-entry.txt"; then
  echo "FAIL null-entry: a NULL core entry was not refused at load"; failures=$((failures + 1))
else
  echo "null-entry: refused with status 2 ($(head -1 "$OUT/null-entry.txt"))"
fi
# A runaway candidate meets the per-case ceiling on memory, and fails with
# its own error, long before the timeout or the machine's OOM killer.
expect 1 runaway CWC_ODD_RUNAWAY=1 -- --backend "$B/lib/cwc-odd.so" --profile core --filter clock_sleep_until --memory-limit 256
grep -q 'runaway: no memory left after [0-9]* MiB' "$OUT/runaway.json" && ! grep -q '"status": "timeout"' "$OUT/runaway.json" ||
  { echo "FAIL runaway: the case's memory was not bounded"; failures=$((failures + 1)); }
usage bad-memory-limit --backend deterministic --memory-limit lots
usage bad-time-scale --backend deterministic --time-scale 0.5
usage bad-repeat --backend deterministic --repeat 0
# --fail-fast: one case timed out, and every later one was left out.
"$PY" -c 'import json,sys; c=[x["status"] for x in json.load(open(sys.argv[1]))["cases"] if x["status"] != "not_applicable"]; ran=[s for s in c if s != "not_run"]; sys.exit(not (ran == ["timeout"] and len(c) > 1))' "$OUT/fail-fast.json" ||
  { echo "FAIL fail-fast: the run went on after a timeout"; failures=$((failures + 1)); }

# The suite's power, as a build with a mutation score states it.
"$B/bin/cw-conformance-power" --backend deterministic --filter clock_sleep --certificate \
  --json "$OUT/power.json" > "$OUT/power.txt"
line="suite power:  95.0% of 400 mutants killed by the release suite (seed 1, 2026-12-03); the sanitizer runs add 12 (asan 9, tsan 3): 98.0%; 9 equivalent not counted"
if grep -qxF "$line" "$OUT/power.txt" &&
  "$PY" ci/check-reports.py --expect PARTIAL "$OUT/power.json" &&
  "$PY" -c 'import json,sys; p=json.load(open(sys.argv[1]))["suite_power"]; sys.exit(not (p["measured"] and p["killed"] == 380 and p["sanitizer_killed"] == 12 and p["equivalent"] == 9 and p["folders"]["storage"]["survived"] == 15))' "$OUT/power.json"; then
  echo "power: $line"
else
  echo "FAIL power: the certificate or the JSON misstates the suite's power"; failures=$((failures + 1))
fi
"$CWC" --backend deterministic --filter clock_sleep --certificate > "$OUT/own-power.txt"
if [ -f conformance/mutation-score.json ]; then
  grep -q "^suite power:  [0-9.]*% of [0-9]* mutants killed by the release suite" "$OUT/own-power.txt"
else
  grep -qxF "suite power:  not measured" "$OUT/own-power.txt"
fi || { echo "FAIL power: the build's own power is misstated"; failures=$((failures + 1)); }

# The digest quoted is the spec's, computed as spec/00-conventions.md says.
want=$(cd spec && cat $(ls ./*.md include/cw/*.h | sed 's|^\./||' | LC_ALL=C sort) | sha256sum | cut -c1-64)
if "$CWC" --version | grep -q "(sha256 $want)"; then
  echo "spec digest: $want"
else
  echo "FAIL spec digest: --version does not quote $want"; failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] && echo "== harness: verdicts, exit statuses and reports as expected"
[ "$failures" -eq 0 ]
