#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Build the library and the suite for other architectures with Debian's
# cross compilers, run the suite there under qemu-user, and require every
# golden digest to be the one the host computes. Installed by
# `sh ci/deps.sh cross`; see ci/README.md for what runs under emulation.
#   sh ci/cross-check.sh [aarch64|s390x ...]      (default: both)
set -eu

archs=${*:-"aarch64 s390x"}
host_bin=build/release/bin/cw-conformance
jobs=${JOBS:-2}
CROSS_ROOT=/opt/cwrt-cross

# debian-arch triplet qemu
arch_info() {
  case "$1" in
    aarch64) echo "arm64 aarch64-linux-gnu qemu-aarch64-static" ;;
    s390x) echo "s390x s390x-linux-gnu qemu-s390x-static" ;;
    *) echo "ci/cross-check.sh: unknown architecture '$1'" >&2; exit 2 ;;
  esac
}

# The suite on the deterministic backend; its golden cases write
# "<case> <digest>" lines to $CWC_GOLDEN_LOG, kept sorted in `out`.
deterministic() {
  out=$1 known=$2; shift 2
  rm -f "$out"
  CWC_GOLDEN_LOG=$PWD/$out "$@" --backend deterministic > build/cross-det.txt 2>&1 || true
  [ -f "$out" ] && sort -o "$out" "$out"
  forgive build/cross-det.txt "$known"
}

# Cases that count the threads of the process in /proc/self/task: under
# qemu-user that list also holds the emulator's own threads, and a guest
# thread that pthread_join has already seen end may still be listed for a
# moment, so the counts are off by one either way (ci/README.md).
EMULATION_KNOWN="native_run_end_waits_for_every_task_and_thread
strategy_work_runs_on_pool_while_task_suspends
strategy_pool_ends_with_run_or_maker
strategy_deterministic_runs_inline"

# Cases that make memory run out with RLIMIT_AS (conformance/cases/memory.c):
# qemu-user maps the guest's memory inside the address space it reserved
# when it started, so the limit does not stop a guest allocation and the
# call the case starves succeeds. They run, and pass, on the host.
EMULATION_NO_LIMIT="memory_child_without_memory
memory_attribute_without_memory
memory_register_without_memory
memory_encode_without_memory
memory_sleep_without_memory
memory_signal_without_memory
memory_send_without_memory
memory_resolver_register_without_memory
memory_stack_without_memory"

# A run's report in file $1: only failures of the cases listed in $2 are
# forgiven, and they are listed; anything else, or a timeout, fails.
forgive() {
  out=$1 known=$2
  grep -v '^ok ' "$out" | grep -v '^FAILED:' || true
  rc=0
  for name in $(sed -n 's/^FAILED: *\([a-z0-9_]*\):.*/\1/p' "$out"); do
    if echo "$known" | grep -qx "$name"; then
      echo "known under emulation: $name"
    else
      grep "^FAILED: *$name:" "$out"; rc=1
    fi
  done
  grep -q '^cases: .* 0 timed out' "$out" || rc=1
  return $rc
}

# The suite on the native backend: thread counts and the memory limit.
native() {
  out=build/cross-native.txt
  "$@" --backend native > "$out" 2>&1 || true
  forgive "$out" "$EMULATION_KNOWN
$EMULATION_NO_LIMIT"
}

build_for() {
  arch=$1 deb=$2 triplet=$3
  b=build/cross-$arch
  ssl=$CROSS_ROOT/$deb/usr
  # The cross compilers search /usr/include last, after their own
  # headers: that is where the (arch-independent) check.h is found.
  make -s -j"$jobs" B="$b" CC="$triplet-gcc" \
    CFLAGS="-I$ssl/include -I$ssl/include/$triplet" \
    CHECK_LIBS="/usr/lib/$triplet/libcheck.a /usr/lib/$triplet/libsubunit.a -lrt -lm" \
    JSON_LIBS="/usr/lib/$triplet/libjansson.a" URING_LIBS= \
    LIBS="-L$ssl/lib/$triplet -Wl,-rpath,$ssl/lib/$triplet -lcrypto -lpthread -ldl" \
    "$b/lib/libcwrt.a" "$b/lib/libcwrt.so" "$b/bin/cw-conformance"
}

make -s "$host_bin"
deterministic build/goldens-x86_64.txt "" "$host_bin" >/dev/null ||
  { echo "the suite fails on $(uname -m): fix that first"; exit 1; }
echo "== golden digests on $(uname -m)"
cat build/goldens-x86_64.txt

status=0
for arch in $archs; do
  set -- $(arch_info "$arch")
  deb=$1 triplet=$2 qemu=$3
  start=$(date +%s)
  echo "== building for $arch ($triplet-gcc)"
  build_for "$arch" "$deb" "$triplet"
  bin="$qemu build/cross-$arch/bin/cw-conformance"
  echo "== conformance on deterministic, $arch under $qemu"
  # shellcheck disable=SC2086
  deterministic "build/goldens-$arch.txt" "$EMULATION_NO_LIMIT" $bin || status=1
  echo "== golden digests on $arch"
  cat "build/goldens-$arch.txt"
  if ! cmp -s build/goldens-x86_64.txt "build/goldens-$arch.txt"; then
    echo "golden digests on $arch differ from $(uname -m)"; status=1
  fi
  echo "== conformance on native, $arch under $qemu"
  # shellcheck disable=SC2086
  native $bin || status=1
  echo "== $arch: $(($(date +%s) - start)) s"
done
exit $status
