#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# A build follows the machine's configuration (issue: a make that parsed
# before liburing-dev was installed built without it, and nothing rebuilt).
# In a scratch copy of the tree: the library built with liburing hidden
# from pkg-config must refuse CW_IO_URING with CW_ERR_UNSUPPORTED (NAT-008);
# the same tree built again with liburing visible must rebuild what the
# change touched, link liburing, and run with a ring.
#   sh ci/config-test.sh SCRATCH
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
scratch=$1
rm -rf "$scratch" && mkdir -p "$scratch/src" "$scratch/no-pkgconfig"
(cd "$top" && git ls-files -z | xargs -0 tar cf -) | (cd "$scratch/src" && tar xf -)
cd "$scratch/src"

probe() {
    # -O0: what is tested is the configuration, and it compiles twice as fast.
    # B is named: a `make B=...` that runs this passes its own B down.
    make -s -j2 B=build/release OPT=-O0 build/release/lib/libcwrt.a > "$scratch/build-$1.log" 2>&1 ||
        { cat "$scratch/build-$1.log"; exit 1; }
    uring=$(pkg-config --libs liburing 2>/dev/null || true)
    cc -std=c11 -D_GNU_SOURCE -Ispec/include -Ireference/include -o "$scratch/probe-$1" \
        "$top/ci/config-probe.c" build/release/lib/libcwrt.a -lcrypto -lpthread -ldl $2
    "$scratch/probe-$1" | tee "$scratch/probe-$1.txt"
}

fail() { echo "config-test: $*" >&2; exit 1; }

echo "== configuration: liburing hidden, then visible (scratch tree $scratch)"
# pkg-config finds nothing in an empty directory: liburing is not installed
# as far as the build can tell (check and jansson have fallbacks).
PKG_CONFIG_LIBDIR="$scratch/no-pkgconfig" probe hidden ""
grep -q "unsupported by this backend): .*built without liburing" "$scratch/probe-hidden.txt" ||
    fail "a build without liburing did not refuse CW_IO_URING with CW_ERR_UNSUPPORTED"
grep -q 'with liburing\|-luring' build/release/config.stamp && fail "config.stamp names liburing"

probe visible "$(pkg-config --libs liburing)"
grep -q -- '-luring' build/release/config.stamp || fail "config.stamp does not name liburing"
nm build/release/obj/reference/native/uring.o | grep -q io_uring_queue_init ||
    fail "uring.o was not rebuilt with liburing"
# A kernel that refuses io_uring answers CW_ERR_UNSUPPORTED, for its own reason.
grep -q "status 0 (ok)\|unsupported by this backend): io_uring_queue_init" \
    "$scratch/probe-visible.txt" || fail "a build with liburing did not run with a ring"
echo "config-test: passed"
