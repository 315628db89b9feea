#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# cw-sweep's own test: what each kind of run ends as, the reports, every
# seed run exactly once across the shards, and replay commands that do
# replay.
#   sh tools/sweep/check.sh CW_SWEEP SWEEP_EXAMPLE WORKDIR PYTHON
set -eu
sweep=$1 example=$2 dir=$3 python=${4:-python3}
rm -rf "$dir" && mkdir -p "$dir"
fail() { echo "sweep-check: $*" >&2; exit 1; }

# 1. Outcomes: an exit status, a signal, a hang; {seed} in an argument.
prog='case $CW_SEED in 3) exit 4;; 5) kill -9 $$;; 8) sleep 30;; esac; echo "$1" >> "$2"'
status=0
"$sweep" --quiet --seeds 0..10 --jobs 2 --timeout 1 --json "$dir/one.json" --logs "$dir/logs" \
  -- sh -c "$prog" prog "s{seed}" "$dir/ran" > "$dir/one.txt" || status=$?
[ "$status" = 1 ] || fail "a sweep with failures exited $status, not 1"
"$python" - "$dir/one.json" <<'PY' || fail "the JSON report is not what the runs did"
import json, sys
r = json.load(open(sys.argv[1]))
got = [(f["seed"], f["outcome"], f["code"]) for f in r["failures"]]
assert got == [(3, "exited", 4), (5, "signaled", 9), (8, "timed_out", 0)], got
assert (r["ran"], r["passed"], r["failed"], r["stopped_early"]) == (10, 7, 3, False), r
assert r["failures"][0]["replay"].startswith("CW_SEED=3 sh -c "), r["failures"][0]["replay"]
assert "s3" in r["failures"][0]["replay"], r["failures"][0]["replay"]
PY
[ "$(sort "$dir/ran" | tr '\n' ' ')" = "s0 s1 s2 s4 s6 s7 s9 " ] || fail "{seed} not replaced: $(cat "$dir/ran")"
[ -f "$dir/logs/seed-3.log" ] && [ ! -f "$dir/logs/seed-0.log" ] || fail "logs: kept or dropped wrongly"
grep -q '^FAIL seed 8: timed out' "$dir/one.txt" || fail "the text report misses the timeout"

# 2. Shards: for every N, the shards together run each seed once.
for n in 1 2 3 7; do
  rm -f "$dir/shards"
  k=0
  while [ $k -lt $n ]; do
    "$sweep" --quiet --seeds 5..102 --shard $k/$n --jobs 2 -- sh -c 'echo $CW_SEED >> "$0"' \
      "$dir/shards" > /dev/null
    k=$((k + 1))
  done
  seq 5 101 > "$dir/want"
  sort -n "$dir/shards" | cmp -s - "$dir/want" || fail "$n shards did not run 5..101 once each"
done

# 3. Replays: every failing seed of the example fails again alone; so many passing ones pass.
"$sweep" --quiet --seeds 0..1000 --jobs 2 --json "$dir/example.json" -- "$example" > /dev/null || true
"$python" - "$dir/example.json" > "$dir/replays" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["failed"] > 0 and r["passed"] > 0, "the example should fail under some seeds only"
for f in r["failures"]:
    print(f["replay"])
PY
while read -r cmd; do
  if sh -c "$cmd" 2> /dev/null; then fail "replay passed: $cmd"; fi
done < "$dir/replays"
CW_SEED=0 "$example" || fail "seed 0 of the example should pass"

# 4. Usage errors and --max-failures.
for bad in "--shard 3/3" "--shard 1/0" "--seeds 5..5" "--seeds x" "--jobs 0" "--timeout -1"; do
  status=0
  "$sweep" $bad -- true > /dev/null 2>&1 || status=$?
  [ "$status" = 2 ] || fail "'$bad' exited $status, not 2"
done
status=0
"$sweep" --quiet > /dev/null 2>&1 || status=$?
[ "$status" = 2 ] || fail "no program: exit $status, not 2"
"$sweep" --quiet --seeds 0..50 --jobs 1 --max-failures 2 --json "$dir/max.json" -- false > /dev/null || true
"$python" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["failed"]==2 and r["stopped_early"], r' \
  "$dir/max.json" || fail "--max-failures did not stop the sweep"
echo "== cw-sweep: outcomes, reports, shards (1, 2, 3, 7), $(wc -l < "$dir/replays") replays of the example"
