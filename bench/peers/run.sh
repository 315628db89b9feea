#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Run every workload of each peer build.sh made, one process each (so that
# each sleepers figure is the peak of a fresh process), and print their
# rows; a peer left out prints its one line instead. The synced writes go
# to a directory made under $TMPDIR (default /tmp), the file system
# bench/storage.c writes to, and removed at the end.
#   sh bench/peers/run.sh OUT
set -u
[ $# -eq 1 ] || { echo "usage: run.sh OUT" >&2; exit 2; }
out=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/cw-bench-peers-XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
rc=0
for p in go tokio libuv; do
  if [ -f "$out/$p/missing" ]; then
    echo "peer $p missing: $(cat "$out/$p/missing")"
    continue
  fi
  for w in spawn pingpong timers sleepers; do
    "$out/$p/peer" "$w" || { echo "bench peers: $p $w failed" >&2; rc=1; }
  done
  "$out/$p/peer" storage "$dir" || { echo "bench peers: $p storage failed" >&2; rc=1; }
done
exit $rc
