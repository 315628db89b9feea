#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Build the peers of `make bench` (README.md): Go's, tokio's and libuv's
# programs, each into OUT/NAME/. A peer that cannot be built (its
# toolchain or library missing, or its build failing) leaves OUT/NAME/missing,
# one line saying why, which run.sh prints in its place; the others go on.
# Nothing is fetched: Go builds with GOPROXY=off, cargo from Debian's
# crate directory (tokio/.cargo/config.toml).
#   sh bench/peers/build.sh OUT
set -u
[ $# -eq 1 ] || { echo "usage: build.sh OUT" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1" && out=$(cd "$1" && pwd)
CC=${CC:-cc}

# missing NAME REASON: the peer is left out, and why.
missing() {
  echo "$2" > "$out/$1/missing"
  echo "bench peers: $1 left out: $2"
}

# A failed build's reason: its log's last line, and where the log is.
failed() {
  last=$(tail -n 1 "$2")
  missing "$1" "build failed (${last:-no output}); see $2"
}

build_go() {
  d=$out/go
  command -v go > /dev/null 2>&1 || { missing go "no go (ci/deps.sh bench installs golang-go)"; return; }
  # The caches live in the build tree; GOTOOLCHAIN=local keeps a newer go
  # from fetching another toolchain.
  (cd "$here/go" && GOCACHE=$d/cache GOPATH=$d/path GOPROXY=off GOTOOLCHAIN=local GOFLAGS='' \
     go build -o "$d/peer" .) > "$d/build.log" 2>&1 || failed go "$d/build.log"
}

build_tokio() {
  d=$out/tokio
  command -v cargo > /dev/null 2>&1 || { missing tokio "no cargo (ci/deps.sh installs Debian's)"; return; }
  ls -d /usr/share/cargo/registry/tokio-1.* > /dev/null 2>&1 ||
    { missing tokio "no tokio in /usr/share/cargo/registry (ci/deps.sh bench installs librust-tokio-dev)"; return; }
  # Built from a copy in the build tree, so that the Cargo.lock cargo
  # writes (whose format depends on cargo's version) stays out of git; -p
  # keeps the times, so that an unchanged peer is not rebuilt.
  mkdir -p "$d/tree"
  cp -pR "$here/tokio/Cargo.toml" "$here/tokio/src" "$here/tokio/.cargo" "$d/tree/"
  (cd "$d/tree" && CARGO_TARGET_DIR=$d/target cargo build --release --quiet) > "$d/build.log" 2>&1 ||
    { failed tokio "$d/build.log"; return; }
  cp "$d/target/release/peer" "$d/peer"
}

build_libuv() {
  d=$out/libuv
  [ -f /usr/include/uv.h ] || { missing libuv "no uv.h (ci/deps.sh bench installs libuv1-dev)"; return; }
  $CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o "$d/peer" "$here/libuv/peer.c" -luv \
    > "$d/build.log" 2>&1 || failed libuv "$d/build.log"
}

for p in go tokio libuv; do
  mkdir -p "$out/$p"
  rm -f "$out/$p/missing" "$out/$p/peer"
  case $p in
    go) build_go ;;
    tokio) build_tokio ;;
    libuv) build_libuv ;;
  esac
done
exit 0
