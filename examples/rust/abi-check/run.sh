#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Compare the layout of the C structs (from the kit's headers) with their
# #[repr(C)] mirrors in src/ffi.rs: build layout.c with cc and layout.rs
# with cargo, run both, diff. Exit 1 on any difference.
# Usage: abi-check/run.sh [KIT_INCLUDE_DIR]  (default: ../../kit/include)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
crate=$(dirname "$here")
inc=${1:-$crate/../../kit/include}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -std=gnu11 -Wall -Werror -I "$inc" -o "$tmp/layout-c" "$here/layout.c"
"$tmp/layout-c" > "$tmp/c.txt"
(cd "$crate" && ${CARGO:-cargo} build --release --offline --quiet --bin abi-layout)
"$crate/target/release/abi-layout" > "$tmp/rust.txt"
if diff -u "$tmp/c.txt" "$tmp/rust.txt"; then
    echo "abi-check: $(wc -l < "$tmp/c.txt") layout lines identical"
else
    echo "abi-check: the Rust mirrors differ from the C headers" >&2
    exit 1
fi
