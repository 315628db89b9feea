#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The installed kit as a third party uses it: pkg-config only, no
# LD_LIBRARY_PATH, nothing from the source tree but examples/.
#   sh ci/kit-check.sh KIT_PREFIX PYTHON
set -eu
KIT=$1 PY=$2
export PKG_CONFIG_PATH="$KIT/lib/pkgconfig"
unset LD_LIBRARY_PATH
CC=${CC:-cc}
W=$KIT/work
rm -rf "$W" && mkdir -p "$W/metrics"
ROOT=$(pwd)

soname=$(readelf -d "$KIT/lib/libcwrt.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libcwrt.so.1 ] || { echo "kit: libcwrt.so has SONAME '$soname'"; exit 1; }

# A plugin built against the installed library, loaded as "plugin.so" (a
# file in the working directory, not a library search).
# shellcheck disable=SC2046
$CC -shared -fPIC -o "$W/plugin.so" examples/plugin.c $(pkg-config --cflags --libs cwrt)
readelf -d "$W/plugin.so" | grep -q 'NEEDED.*libcwrt.so.1' ||
  { echo "kit: the plugin does not need libcwrt.so.1"; exit 1; }
(cd "$W" && CWRT_PLUGIN_BACKEND=deterministic "$KIT/bin/cw-conformance" plugin.so \
  --certificate --json plugin.json --xml plugin.xml --tap plugin.tap > plugin.txt) ||
  { cat "$W/plugin.txt"; exit 1; }
"$PY" "$KIT/share/cwrt/check-reports.py" --expect CONFORMANT "$W/plugin.json" "$W/plugin.xml" "$W/plugin.tap"
grep -q "^object: *$W/plugin.so (sha256 $(sha256sum "$W/plugin.so" | cut -c1-64))" "$W/plugin.txt" ||
  { echo "kit: the certificate does not name the plugin's SHA-256"; exit 1; }

# The suite in a binary of one's own.
# shellcheck disable=SC2046
$CC -o "$W/own_suite" examples/own_suite.c $(pkg-config --cflags --libs cwconformance)
(cd "$W" && CWC_METRICS_DIR="$W/metrics" ./own_suite --json own.json > own.txt) ||
  { cat "$W/own.txt"; exit 1; }
"$PY" "$KIT/share/cwrt/check-reports.py" --expect CONFORMANT "$W/own.json"
"$PY" "$KIT/share/cwrt/openmetrics.py" "$W/metrics"
if "$W/own_suite" --backend native > /dev/null 2>&1; then
  echo "kit: own_suite accepted --backend"; exit 1
fi

# Every long option is in --help and in the man page.
"$KIT/bin/cw-conformance" --help > "$W/help.txt"
for opt in $(grep -o '{"[a-z-]*", [a-z_]*_argument' "$ROOT/conformance/harness/cli.c" | cut -d'"' -f2); do
  grep -q -- "--$opt" "$W/help.txt" || { echo "kit: --$opt not in --help"; exit 1; }
  grep -q -- "-$opt" "$KIT/share/man/man1/cw-conformance.1" ||
    { echo "kit: --$opt not in the man page"; exit 1; }
done
# compare's own options are in its --help and in the man page too.
"$KIT/bin/cw-conformance" compare --help > "$W/compare-help.txt"
for opt in $(grep -o '{"[a-z-]*", [a-z_]*_argument' "$ROOT/conformance/harness/compare.c" | cut -d'"' -f2); do
  grep -q -- "--$opt" "$W/compare-help.txt" || { echo "kit: compare --$opt not in its --help"; exit 1; }
  grep -q -- "-$opt" "$KIT/share/man/man1/cw-conformance.1" ||
    { echo "kit: compare --$opt not in the man page"; exit 1; }
done
# The comparison of two runs of the plugin: nothing regressed; its schema
# is installed beside the report's.
"$KIT/bin/cw-conformance" compare "$W/plugin.json" "$W/own.json" --json "$W/compare.json" \
  > "$W/compare.txt" || { cat "$W/compare.txt"; echo "kit: compare found a regression"; exit 1; }
"$PY" -c 'import json, sys, jsonschema
jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))' \
  "$KIT/share/cwrt/compare.schema.json" "$W/compare.json"
# The coverage script is beside the suite, and runs.
"$KIT/bin/cw-conformance-coverage" --help | grep -q -- "--objects" ||
  { echo "kit: cw-conformance-coverage --help fails"; exit 1; }
"$KIT/bin/cw-conformance" --version | head -1
echo "== kit: installed in $KIT; a plugin and a test binary built with pkg-config alone, certified"
