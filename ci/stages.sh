#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Runs the stages of `make check` or `make check-all` in order, each a make
# goal (with its variables), and prints the time each took at the end, so
# where the time goes is on the page of every run. Stops at the first stage
# that fails, and still prints the times of those that ran.
#   sh ci/stages.sh NAME "GOAL [VAR=VALUE...]"...
set -u
name=$1
shift
times=$(mktemp)
trap 'rm -f "$times"' EXIT
report() {
    echo "== $name: time per stage"
    awk -F'\t' '{ printf "  %7.1f s  %s\n", $1, $2; total += $1 }
        END { printf "  %7.1f s  in all\n", total }' "$times"
}
for stage in "$@"; do
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    ${MAKE:-make} --no-print-directory $stage
    rc=$?
    printf '%s\t%s\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')" "$stage" >> "$times"
    if [ "$rc" -ne 0 ]; then
        report
        echo "$name: stage '$stage' failed" >&2
        exit "$rc"
    fi
done
report
