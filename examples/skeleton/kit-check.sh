#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The skeleton as a third party builds and certifies it: from an installed
# kit, with pkg-config alone (no -I into this tree, no LD_LIBRARY_PATH), and
# the installed cw-conformance, which must say CONFORMANT with core among
# the certified profiles.
#   sh examples/skeleton/kit-check.sh KIT_PREFIX PYTHON
set -eu
KIT=$1 PY=$2
export PKG_CONFIG_PATH="$KIT/lib/pkgconfig"
unset LD_LIBRARY_PATH
CC=${CC:-cc}
W=$KIT/skeleton
rm -rf "$W" && mkdir -p "$W"

# Headers only: the skeleton links nothing of cwrt.
# shellcheck disable=SC2046
$CC -std=c11 -D_GNU_SOURCE -O2 -fPIC -fvisibility=hidden -Wall -Wextra -Werror \
  $(pkg-config --cflags cwrt) -shared -o "$W/libskeleton.so" examples/skeleton/*.c -lpthread
if readelf -d "$W/libskeleton.so" | grep -q 'NEEDED.*libcwrt'; then
  echo "skeleton: linked against libcwrt"; exit 1
fi
exported=$(nm -D --defined-only "$W/libskeleton.so" | awk '{print $3}')
[ "$exported" = cw_backend_entry ] ||
  { echo "skeleton: exports more than cw_backend_entry:" $exported; exit 1; }

(cd "$W" && "$KIT/bin/cw-conformance" ./libskeleton.so --certificate -q \
  --json skeleton.json --xml skeleton.xml --tap skeleton.tap > certificate.txt) ||
  { cat "$W/certificate.txt"; echo "skeleton: not certified"; exit 1; }
"$PY" "$KIT/share/cwrt/check-reports.py" --expect CONFORMANT \
  "$W/skeleton.json" "$W/skeleton.xml" "$W/skeleton.tap"
grep -q '^verdict: *CONFORMANT for profiles core\b' "$W/certificate.txt" ||
  { cat "$W/certificate.txt"; echo "skeleton: core is not certified"; exit 1; }
sed -n '/====/,/====/p' "$W/certificate.txt"
echo "== skeleton: built from the installed headers with pkg-config, certified for core"
