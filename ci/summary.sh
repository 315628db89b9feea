#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The closing line of `make check`: the cases of every conformance report
# written by this check (all variants, all backends) and the fuzz inputs
# replayed, added up. Not applicable and not run cases count as skipped.
#   sh ci/summary.sh FUZZ_REPLAYED
set -eu
cd "$(dirname "$0")/.."
/usr/bin/python3 - "${1:-0}" build/*/reports/*.json <<'EOF_PY'
import json, os, sys
passed, failed, skipped = int(sys.argv[1]), 0, 0
for path in sys.argv[2:]:
    if not os.path.isfile(path):
        continue
    s = json.load(open(path, encoding="utf-8"))["summary"]
    passed += s["passed"]
    failed += s["failed"] + s["timed_out"]
    skipped += s["not_applicable"] + s["not_run"]
print("check: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 0)
EOF_PY
