#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# No false refusals (conformance/README.md, "Time in cases"): the
# reference's two backends and the skeleton, all correct, certified
# FLAKE_N times each (default 10, each under its own seed) while stress-ng
# keeps four times as many CPU hogs as the machine has cores busy, then
# once each under valgrind (deterministic, skeleton) and TSan (both
# backends, skeleton). Prints each one's refusals and slowest case; fails on any
# refusal. FLAKE_ARGS adds options to every certification: FLAKE_ARGS="--jobs 2"
# runs two cases at once beside the hogs.
#   sh ci/flake-check.sh BUILD_DIR   (build/release; build/tsan for TSan)
set -u
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
n=${FLAKE_N:-10}
out=$B/flake
rm -rf "$out" && mkdir -p "$out"
refusals=0
VALGRIND="valgrind -q --error-exitcode=9 --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --suppressions=conformance/valgrind.supp"

# certify LABEL RUNNER CWC BACKEND SEED: one certification, one line.
certify() {
    label=$1 runner=$2 cwc=$3 backend=$4 seed=$5
    json=$out/$label-$seed.json
    t0=$(date +%s)
    # shellcheck disable=SC2086
    $runner "$cwc" --backend "$backend" --seed "$seed" --quiet --certificate --json "$json" ${FLAKE_ARGS:-} \
        > "$out/$label-$seed.txt" 2>&1
    rc=$?
    slowest=$(/usr/bin/python3 -c 'import json,sys
c=json.load(open(sys.argv[1]))["cases"]
t=max(c, key=lambda x: x.get("duration_seconds") or 0)
print("%.1f s %s" % (t.get("duration_seconds") or 0, t["name"]))' "$json" 2>/dev/null || echo "-")
    scale=$(sed -n 's/.*x time scale \([0-9.]*\).*/\1/p' "$out/$label-$seed.txt" | head -1)
    verdict=$(sed -n 's/^verdict: *//p' "$out/$label-$seed.txt" | cut -c1-40)
    printf '%-34s seed %-3s %-4s s  scale %-5s  slowest %-44s %s\n' "$label" "$seed" \
        $(($(date +%s) - t0)) "${scale:-?}" "$slowest" "${verdict:-exit $rc}"
    if [ "$rc" -ne 0 ]; then
        refusals=$((refusals + 1))
        grep -E '^(FAILED|TIMEOUT)' "$out/$label-$seed.txt" | head -5
    fi
}

command -v stress-ng > /dev/null || { echo "flake-check: stress-ng missing (sh ci/deps.sh flake)"; exit 1; }
make -s all skeleton > /dev/null || exit 1
hogs=$(($(nproc) * 4))
echo "== flake-check: $n certifications of each correct backend beside $hogs CPU hogs"
stress-ng --cpu "$hogs" --timeout 0 --quiet > /dev/null 2>&1 &
hog=$!
trap 'kill $hog 2> /dev/null' EXIT INT TERM
sleep 2
i=1
while [ "$i" -le "$n" ]; do
    certify "deterministic, oversubscribed" "" "$B/bin/cw-conformance" deterministic "$i"
    certify "native, oversubscribed" "" "$B/bin/cw-conformance" native "$i"
    certify "skeleton, oversubscribed" "" "$B/bin/cw-conformance" "$B/lib/libskeleton.so" "$i"
    i=$((i + 1))
done
kill "$hog" 2> /dev/null
wait "$hog" 2> /dev/null
if [ -z "${FLAKE_QUICK:-}" ]; then
    echo "== flake-check: under valgrind and TSan"
    certify "deterministic, valgrind" "$VALGRIND" "$B/bin/cw-conformance" deterministic 1
    certify "skeleton, valgrind" "$VALGRIND" "$B/bin/cw-conformance" "$B/lib/libskeleton.so" 1
    make -s VARIANT=tsan CC=clang all skeleton > /dev/null || exit 1
    certify "native, TSan" "" build/tsan/bin/cw-conformance native 1
    certify "deterministic, TSan" "" build/tsan/bin/cw-conformance deterministic 1
    certify "skeleton, TSan" "" build/tsan/bin/cw-conformance build/tsan/lib/libskeleton.so 1
fi
echo "flake-check: $refusals refusals of correct backends"
[ "$refusals" -eq 0 ]
