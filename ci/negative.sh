#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The negative corpus (conformance/mutants/): every deliberately wrong
# backend is certified by cw-conformance and must be refused, that is exit
# status 1 (NOT CONFORMANT) with at least one "not ok" case in its TAP
# report. Prints one line per mutant (name, verdict, seconds, first failing
# case) and fails when any mutant was certified or could not be run.
#
#   sh ci/negative.sh CW_CONFORMANCE OUT_DIR JOBS CONTROL.so MUTANT.so...
#
# CONTROL.so is a faithful wrapper of the reference (examples/wrap.c),
# certified on both backends under the same conditions, which must pass:
# so a refusal comes from a mutant's bug, not from the wrapping or from the
# short timeout. A wrong backend often hangs a case; the case then fails at
# its timeout, here 10 s instead of the suite's 60 s (NEGATIVE_TIMEOUT).
# The slowest case takes about 2 s on a correct backend with the machine
# to itself; two certifications at once on two loaded cores can make
# that 5 s, and a timeout near that would refuse the control. A
# mutant stops at its first failing case, so a longer timeout costs it one
# wait at most.
set -eu
timeout=${NEGATIVE_TIMEOUT:-10}

# One backend, "PATH.so" (a mutant) or "PATH.so@BACKEND" (the control
# wrapping BACKEND): writes OUT_DIR/NAME.line, and OUT_DIR/NAME.ok when the
# verdict is the one expected.
if [ "$1" = --one ]; then
  conformance=$2 out=$3 so=${4%@*} wraps=
  [ "$so" = "$4" ] || wraps=${4##*@}
  name=$(basename "$so" .so)${wraps:+-$wraps}
  # A mutant needs one failing case to be refused: it stops there. The
  # control runs every case.
  fast=--fail-fast
  [ -z "$wraps" ] || fast=
  rc=0 t0=$(date +%s)
  CWRT_PLUGIN_BACKEND=$wraps "$conformance" --backend "$so" --timeout "$timeout" --quiet \
    --certificate $fast --tap "$out/$name.tap" > "$out/$name.log" 2>&1 || rc=$?
  first=$(sed -n 's/^not ok [0-9]* - //p' "$out/$name.tap" 2>/dev/null | head -n 1)
  case "$first" in
    *cwc_test_*) first=$(echo "$first" | sed 's/.*cwc_test_\([A-Za-z0-9_]*\).*/\1/') ;;
    *) first=$(echo "$first" | sed 's/[ :#].*//') ;;
  esac
  case $rc in
    0) verdict=CONFORMANT ;;
    1) verdict="NOT CONFORMANT" ;;
    3) verdict=PARTIAL ;;
    *) verdict="ERROR (exit $rc)" ;;
  esac
  printf '%-28s %-16s %4s s  %s\n' "$name" "$verdict" $(($(date +%s) - t0)) "${first:--}" \
    > "$out/$name.line"
  if [ -n "$wraps" ] && [ "$rc" -eq 0 ]; then
    : > "$out/$name.ok"
  elif [ -z "$wraps" ] && [ "$rc" -eq 1 ] && [ -n "$first" ]; then
    : > "$out/$name.ok"
  fi
  exit 0
fi

conformance=$1 out=$2 jobs=$3 control=$4
shift 4
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
# The control on each backend of NEGATIVE_CONTROLS (by default every one of
# reference/cwrt/registry.h).
controls=${NEGATIVE_CONTROLS:-$(sed -n 's/^ *X(\([a-z0-9_]*\)).*/\1/p' "$(dirname "$0")/../reference/cwrt/registry.h")}
ncontrols=$(echo $controls | wc -w)
{
  for b in $controls; do echo "$control@$b"; done
  for so in "$@"; do echo "$so"; done
} | xargs -P "$jobs" -I{} sh "$0" --one "$conformance" "$out" {}
cat "$out"/*.line
total=$(($# + ncontrols)) passed=$(ls "$out" | grep -c '\.ok$' || true)
echo "negative corpus: $# wrong backends, $(ls "$out" | grep '\.ok$' |
  grep -vc "^$(basename "$control" .so)-" || true) refused; the control certified" \
  "$(ls "$out" | grep -c "^$(basename "$control" .so)-.*\.ok$" || true) of $ncontrols times" \
  "($(($(date +%s) - start)) s)"
if [ "$passed" -ne "$total" ]; then
  echo "negative corpus: a verdict was not the one expected; logs in $out/NAME.log"
  exit 1
fi
