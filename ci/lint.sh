#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Static analysis: clang-tidy over every C file of the library, the suite,
# the skeleton backend and the tools, then cppcheck. Fails on any finding.
set -eu
cd "$(dirname "$0")/.."
sh ci/deps.sh lint
flags="-std=c11 -D_GNU_SOURCE -Ispec/include -Ireference -Ireference/include -Iconformance -Iconformance/include -Ibuild/release/gen"
make -s build/release/gen/reqs.inc build/release/gen/suiteinfo.inc \
  build/release/gen/req-profiles.inc >/dev/null
files=$(git ls-files 'reference/*.c' 'conformance/*.c' 'examples/skeleton/*.c' 'tools/*.c')
# Checks left out, and why: sizeof-expression flags `sizeof *p` on arrays of
# pointers, which is the project's idiom; not-null-terminated-result flags
# copies of byte strings that are never meant to be C strings;
# implicit-widening flags size arithmetic on small constants.
checks='-*,bugprone-*,clang-analyzer-*,-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier,-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling,-bugprone-assignment-in-if-condition,-bugprone-narrowing-conversions,-clang-analyzer-valist.Uninitialized,-bugprone-sizeof-expression,-bugprone-not-null-terminated-result,-bugprone-implicit-widening-of-multiplication-result'
echo "== clang-tidy"
# shellcheck disable=SC2086
clang-tidy --quiet --warnings-as-errors='*' --checks="$checks" $files -- $flags
echo "== cppcheck"
# shellcheck disable=SC2086
cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
  --suppress=missingIncludeSystem --std=c11 -D_GNU_SOURCE -D__x86_64__ \
  "-D_Noreturn=__attribute__((noreturn))" \
  -Ispec/include -Ireference -Ireference/include -Iconformance -Iconformance/include $files
echo "lint: clean"
