#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Run the workloads of each peer build.sh made, one process each (so that
# each sleepers figure is the peak of a fresh process), and print their
# rows; a peer left out prints its one line instead. The synced writes are
# not here: bench/storage.c runs them (--peer) in turn with its own.
#   sh bench/peers/run.sh OUT
set -u
[ $# -eq 1 ] || { echo "usage: run.sh OUT" >&2; exit 2; }
out=$1
rc=0
for p in go tokio libuv; do
  if [ -f "$out/$p/missing" ]; then
    echo "peer $p missing: $(cat "$out/$p/missing")"
    continue
  fi
  for w in spawn pingpong timers sleepers; do
    "$out/$p/peer" "$w" || { echo "bench peers: $p $w failed" >&2; rc=1; }
  done
done
exit $rc
