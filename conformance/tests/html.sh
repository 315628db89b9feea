#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The --html report, checked on two runs: the odd backend failing every run
# with a message made of markup (CWC_ODD_MARKUP: an element's end, a script,
# an img with onerror), and a partial run of the deterministic backend.
# html_check.py reads each page back against its run's JSON report (make
# report-check); with "browser", Debian's chromium also renders the first
# headless and the same checks run on the DOM it made, which shows that a
# real browser took the candidate's markup as text and ran nothing
# (make html-browser, in make check-all).
#   sh conformance/tests/html.sh BUILD_DIR PYTHON [browser]
set -u
B=$1 PY=$2 MODE=${3:-}
CWC=$B/bin/cw-conformance
OUT=$(cd "$B" && pwd)/reports/html
rm -rf "$OUT" && mkdir -p "$OUT"
failures=0

# run NAME STATUS [ENV=VALUE] -- ARGS: a run that must end with STATUS.
run() {
  name=$1 want=$2
  shift 2
  envs=""
  while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
  shift
  # shellcheck disable=SC2086
  env $envs "$CWC" "$@" -q --json "$OUT/$name.json" --html "$OUT/$name.html" > "$OUT/$name.txt" 2>&1
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL html $name: exit status $got, expected $want"; cat "$OUT/$name.txt"
    failures=$((failures + 1))
  elif ! "$PY" conformance/tests/html_check.py "$OUT/$name.html" "$OUT/$name.json" spec; then
    failures=$((failures + 1))
  fi
}

run markup 1 CWC_ODD_MARKUP=1 -- --backend "$B/lib/cwc-odd.so" --profile core --filter clock_sleep
run partial 3 -- --backend deterministic --filter clock_sleep_until
# A page that cannot be written is refused before the run, as the others are.
"$CWC" --backend deterministic --filter clock_sleep_until --html /nonexistent/dir/r.html \
  > "$OUT/unwritable.txt" 2>&1
if [ $? -ne 2 ] || ! grep -q "^cw-conformance: cannot write the --html report" "$OUT/unwritable.txt"; then
  echo "FAIL html unwritable: an --html file that cannot be written was not refused"
  failures=$((failures + 1))
fi

if [ "$MODE" = browser ] && [ "$failures" -eq 0 ]; then
  sh ci/deps.sh browser || exit 1
  # Root has no user namespace sandbox to drop into: chromium refuses to
  # start as root without --no-sandbox.
  sandbox=""
  [ "$(id -u)" -eq 0 ] && sandbox=--no-sandbox
  timeout 180 chromium --headless $sandbox --disable-gpu --no-first-run \
    --user-data-dir="$OUT/chromium" --dump-dom "file://$OUT/markup.html" \
    > "$OUT/markup.dom.html" 2> "$OUT/chromium.log"
  rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$OUT/markup.dom.html" ]; then
    echo "FAIL html browser: chromium --dump-dom gave status $rc"; tail -5 "$OUT/chromium.log"
    failures=$((failures + 1))
  elif "$PY" conformance/tests/html_check.py "$OUT/markup.dom.html" "$OUT/markup.json" spec; then
    echo "html browser: chromium $(chromium --version 2>/dev/null | awk '{print $2}') rendered" \
      "the page; the candidate's <script> is text in its DOM, and nothing ran"
  else
    failures=$((failures + 1))
  fi
fi

[ "$failures" -eq 0 ] && echo "== html: the pages hold what their JSON says, as text, and run nothing"
[ "$failures" -eq 0 ]
