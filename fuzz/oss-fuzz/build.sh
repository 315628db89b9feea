#!/bin/bash -eu
# SPDX-License-Identifier: Apache-2.0 OR MIT
# build.sh - the fuzz targets built the way OSS-Fuzz and ClusterFuzzLite
# build a project: the engine chooses the compiler, the flags and the
# fuzzing engine ($CC, $CXX, $CFLAGS, $CXXFLAGS, $LIB_FUZZING_ENGINE,
# $SANITIZER), the project's sources are in $SRC/cwrt, scratch space is
# $WORK, and everything the engine runs goes to $OUT: one binary per
# target, <target>_seed_corpus.zip, <target>.dict and <target>.options.
#
# The runtime is compiled here with the engine's flags, not taken from the
# project's own build: a fuzzer needs its coverage instrumentation in the
# library as much as in the target.
#
# MemorySanitizer is refused: the runtime links libcrypto (SHA-256 of the
# audit digest), which is not built with MSan, so every run would report
# its memory as uninitialised. project.yaml asks only for address and
# undefined.

ROOT=${CWRT_ROOT:-$SRC/cwrt}
WORK=${WORK:-$(mktemp -d)}
if [ "${SANITIZER:-address}" = memory ]; then
    echo "build.sh: MemorySanitizer is not supported (libcrypto is not instrumented)" >&2
    exit 1
fi

FLAGS="-std=c11 -D_GNU_SOURCE -I$ROOT/spec/include -I$ROOT/reference -I$ROOT/reference/include \
-I$ROOT/fuzz"
mkdir -p "$WORK/obj" "$OUT"

# The runtime: every source of reference/ but its tests.
objs=()
for src in "$ROOT"/reference/*/*.c "$ROOT"/reference/*/*.S; do
    case "$src" in "$ROOT"/reference/tests/*) continue ;; esac
    obj="$WORK/obj/$(basename "$(dirname "$src")")_$(basename "$src").o"
    $CC $CFLAGS $FLAGS -c "$src" -o "$obj"
    objs+=("$obj")
done
rm -f "$WORK/libcwrt.a"
ar rcs "$WORK/libcwrt.a" "${objs[@]}"

# Each target, its seed corpus, dictionary and options.
for src in "$ROOT"/fuzz/targets/*.c; do
    t=$(basename "$src" .c)
    $CC $CFLAGS $FLAGS -c "$src" -o "$WORK/$t.o"
    $CXX $CXXFLAGS "$WORK/$t.o" "$WORK/libcwrt.a" $LIB_FUZZING_ENGINE -lcrypto -lpthread -ldl \
        -o "$OUT/$t"
    python3 - "$ROOT/fuzz/corpus/$t" "$OUT/${t}_seed_corpus.zip" <<'PY'
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        z.write(os.path.join(src, name), name)
PY
    if [ -f "$ROOT/fuzz/dict/$t.dict" ]; then
        cp "$ROOT/fuzz/dict/$t.dict" "$OUT/$t.dict"
        printf '[libfuzzer]\ndict = %s.dict\n' "$t" > "$OUT/$t.options"
    fi
done
