#!/bin/sh
# The negative corpus (conformance/mutants/): every deliberately wrong
# backend is certified by cw-conformance and must be refused, that is exit
# status 1 (NON-CONFORMANT) with at least one "not ok" case in its TAP
# report. Prints one line per mutant (name, verdict, first failing case)
# and fails when any mutant was certified or could not be run.
#   sh ci/negative.sh CW_CONFORMANCE OUT_DIR JOBS MUTANT.so...
# A wrong backend often hangs a case; it then fails at Check's timeout,
# here a tenth of the suite's 60 s (CK_TIMEOUT_MULTIPLIER), which is still
# far above what any case takes on a correct backend.
set -eu
export CK_TIMEOUT_MULTIPLIER="${CK_TIMEOUT_MULTIPLIER:-0.1}"

# One mutant: writes OUT_DIR/NAME.line and OUT_DIR/NAME.ok when refused.
if [ "$1" = --one ]; then
  conformance=$2 out=$3 so=$4
  name=$(basename "$so" .so)
  rc=0 t0=$(date +%s)
  "$conformance" --backend "$so" --tap "$out/$name.tap" > "$out/$name.log" 2>&1 || rc=$?
  first=$(sed -n 's/^not ok [0-9]* - //p' "$out/$name.tap" 2>/dev/null | head -n 1)
  case "$first" in
    *cwc_test_*) first=$(echo "$first" | sed 's/.*cwc_test_\([A-Za-z0-9_]*\).*/\1/') ;;
    *) first=$(echo "$first" | sed 's/[ :#].*//') ;;
  esac
  case $rc in
    0) verdict=CONFORMANT ;;
    1) verdict=NON-CONFORMANT ;;
    3) verdict=PARTIAL ;;
    *) verdict="ERROR (exit $rc)" ;;
  esac
  printf '%-28s %-16s %4s s  %s\n' "$name" "$verdict" $(( $(date +%s) - t0 )) "${first:--}" \
    > "$out/$name.line"
  if [ "$rc" -eq 1 ] && [ -n "$first" ]; then
    : > "$out/$name.ok"
  fi
  exit 0
fi

conformance=$1 out=$2 jobs=$3
shift 3
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
for so in "$@"; do echo "$so"; done |
  xargs -P "$jobs" -I{} sh "$0" --one "$conformance" "$out" {}
cat "$out"/*.line
total=$# refused=$(ls "$out" | grep -c '\.ok$' || true)
echo "negative corpus: $refused of $total wrong backends refused ($(( $(date +%s) - start )) s)"
if [ "$refused" -ne "$total" ]; then
  echo "negative corpus: a wrong backend was not refused; its log is in $out/NAME.log"
  exit 1
fi
