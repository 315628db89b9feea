#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# --jobs: cases run two at a time must give what one at a time gives, the
# same verdict and the same reports in the same order, on the reference's
# two backends, the skeleton and candidates that fail, hang, flake, run
# away with memory or leave processes behind; and --jobs 0 is refused.
#   sh conformance/tests/jobs.sh BUILD_DIR PYTHON
# The serial reports of the reference and the skeleton are those `make
# conformance-run` and `make skeleton-run` left, when they are newer than
# cw-conformance and the backend; otherwise they are made here.
set -u
B=$1 PY=$2
CWC=$B/bin/cw-conformance
ODD=$B/lib/cwc-odd.so
OUT=$B/reports/jobs
rm -rf "$OUT" && mkdir -p "$OUT"
failures=0

# run NAME JOBS [ENV=VALUE...] -- ARGS: one run with its three reports;
# its exit status in NAME.rc, its stdout and stderr apart.
run() {
  run_name=$1 jobs=$2
  shift 2
  envs=""
  while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
  shift
  # shellcheck disable=SC2086
  t0=$(date +%s)
  env $envs "$CWC" --jobs "$jobs" --quiet "$@" --json "$OUT/$run_name.json" --xml "$OUT/$run_name.xml" \
    --tap "$OUT/$run_name.tap" > "$OUT/$run_name.txt" 2> "$OUT/$run_name.err"
  echo $? > "$OUT/$run_name.rc"
  echo "$run_name: $(($(date +%s) - t0)) s" >> "$OUT/times.txt"
}

# compare NAME: NAME-1 and NAME-2 exit alike, their reports agree with
# themselves and with each other.
compare() {
  if ! cmp -s "$OUT/$1-1.rc" "$OUT/$1-2.rc"; then
    echo "FAIL $1: exit status $(cat "$OUT/$1-1.rc") one at a time, $(cat "$OUT/$1-2.rc") with --jobs 2"
    cat "$OUT/$1-2.txt" "$OUT/$1-2.err"
    failures=$((failures + 1))
    return
  fi
  for j in 1 2; do
    others="$OUT/$1-$j.xml $OUT/$1-$j.tap"
    [ -f "$OUT/$1-$j.xml" ] || others=""
    # shellcheck disable=SC2086
    "$PY" ci/check-reports.py "$OUT/$1-$j.json" $others > /dev/null || { failures=$((failures + 1)); return; }
  done
  "$PY" conformance/tests/same_results.py "$OUT/$1-1.json" "$OUT/$1-2.json" || failures=$((failures + 1))
}

# same NAME [ENV=VALUE...] -- ARGS: the run one case at a time and two at a time.
same() {
  same_name=$1
  shift
  run "$same_name-1" 1 "$@"
  run "$same_name-2" 2 "$@"
  compare "$same_name"
}

# certified NAME BACKEND [ENV=VALUE...]: a correct backend, certified two
# cases at a time, as it was one at a time.
certified() {
  cert_name=$1 backend=$2
  shift 2
  made=$B/reports/$cert_name.json
  if [ -f "$made" ] && [ "$made" -nt "$CWC" ] && { [ ! -f "$backend" ] || [ "$made" -nt "$backend" ]; }; then
    for ext in json xml tap; do
      [ -f "$B/reports/$cert_name.$ext" ] && cp "$B/reports/$cert_name.$ext" "$OUT/$cert_name-1.$ext"
    done
    echo 0 > "$OUT/$cert_name-1.rc"
  else
    run "$cert_name-1" 1 "$@" -- --backend "$backend"
  fi
  run "$cert_name-2" 2 "$@" -- --backend "$backend"
  compare "$cert_name"
}

certified deterministic deterministic
certified native native "CWRT_NATIVE_IO=${CWRT_NATIVE_IO:-}"
certified skeleton "$B/lib/libskeleton.so"

# Every case hangs: each meets its own timeout, times the time scale.
same hang CWC_ODD_HANG=1 -- --backend "$ODD" --filter clock_sleep --timeout 1 --time-scale 2
grep -c 'no result after 2 s (--timeout x time scale 2.00)' "$OUT/hang-2.json" | grep -qx 4 ||
  { echo "FAIL hang: with --jobs 2, not four cases timed out at their own scaled limit"; failures=$((failures + 1)); }
# --fail-fast: the first case times out, the three after it are not run,
# though with --jobs 2 the second had started.
same fail-fast CWC_ODD_HANG=1 -- --backend "$ODD" --filter clock_sleep --timeout 1 --fail-fast
# --repeat: each case under four seeds in its job, FLAKY with the same seeds.
same flaky CWC_ODD_FLAKY=1 -- --backend "$ODD" --profile core --filter clock_sleep --repeat 4
grep -q 'FLAKY: passed with seeds 42,44, failed with 43,45' "$OUT/flaky-2.json" ||
  { echo "FAIL flaky: --repeat under --jobs 2 did not name the seeds"; failures=$((failures + 1)); }
# The ceiling on memory is set in each case's process.
same runaway CWC_ODD_RUNAWAY=1 -- --backend "$ODD" --profile core --filter clock_sleep --memory-limit 256
grep -c 'runaway: no memory left after [0-9]* MiB' "$OUT/runaway-2.json" | grep -qx 4 ||
  { echo "FAIL runaway: with --jobs 2, a case's memory was not bounded"; failures=$((failures + 1)); }
# A failing candidate: the same failure, the same report.
same odd -- --backend "$ODD" --profile core --filter _and_

# Processes that leave their case's session are killed, each case's said
# in the suite's order, and a pipe on the suite's output ends with it.
for j in 1 2; do
  # The reader gives up after 90 s: a process left behind would hold the
  # pipe for ever, and the test is to fail, not hang.
  (CWC_ODD_ESCAPE=1 timeout 60 "$CWC" --jobs "$j" --backend "$ODD" --profile core \
    --filter clock_sleep 2> "$OUT/escape-$j.err" | timeout 90 cat > "$OUT/escape-$j.txt")
  echo $? > "$OUT/escape-$j.rc"
done
# (How many processes a case left depends on when it ended: its child may
# not yet have forked the one that sleeps.)
for j in 1 2; do
  sed 's/ left [0-9]* process\(es\)* running/ left some running/' "$OUT/escape-$j.err" > "$OUT/escape-$j.said"
done
if [ "$(cat "$OUT/escape-2.rc")" -ne 0 ] || [ "$(grep -c 'left some running; killed' "$OUT/escape-2.said")" -ne 4 ] ||
  ! cmp -s "$OUT/escape-1.said" "$OUT/escape-2.said"; then
  echo "FAIL escape: with --jobs 2, the leftovers were not killed, or not said in order:"
  cat "$OUT/escape-2.err"; failures=$((failures + 1))
else
  echo "escape: --jobs 2 killed what each case left, said in order ($(head -1 "$OUT/escape-2.err"))"
fi

for bad in 0 two -1 ""; do
  "$CWC" --backend deterministic --jobs "$bad" > "$OUT/bad-jobs.txt" 2>&1
  got=$?
  if [ "$got" -ne 2 ] || ! grep -q "^cw-conformance: bad number '$bad' for --jobs" "$OUT/bad-jobs.txt"; then
    echo "FAIL bad-jobs: --jobs '$bad' gave status $got"; failures=$((failures + 1))
  fi
done
echo "bad-jobs: --jobs 0, two, -1 and '' refused with status 2"

[ "$failures" -eq 0 ] && echo "== --jobs: the same verdicts and reports as one case at a time"
[ "$failures" -eq 0 ]
