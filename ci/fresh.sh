#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The README's promise, tested: a fresh clone of this repository runs the
# commands of the README's "Two commands" block, in the README's order, and
# each passes. As root, liburing-dev is removed first (unless
# FRESH_KEEP_PACKAGES is set), so the first command meets a machine without
# it, as a newcomer's does, and must install it and build with it.
#   sh ci/fresh.sh SCRATCH
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
scratch=$1
rm -rf "$scratch"
git clone -q --no-hardlinks "$top" "$scratch"
commands=$(awk '/^## Two commands/ { block = 1 } block && /^```sh/ { code = 1; next }
    code && /^```/ { exit } code { sub(/[ \t]*#.*/, ""); if ($0 != "") print }' "$top/README.md")
[ -n "$commands" ] || { echo "fresh: no commands found in README.md" >&2; exit 1; }
if [ "$(id -u)" -eq 0 ] && [ -z "${FRESH_KEEP_PACKAGES:-}" ] &&
    dpkg-query -W -f='${Status}' liburing-dev 2>/dev/null | grep -q "install ok installed"; then
    echo "== fresh: liburing-dev removed, as on a new machine"
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq liburing-dev > /dev/null
fi
cd "$scratch"
echo "$commands" | while IFS= read -r cmd; do
    echo "== fresh clone: $cmd"
    t0=$(date +%s)
    sh -c "$cmd" > "$scratch.$(echo "$cmd" | tr -c 'a-z0-9' '_').log" 2>&1 ||
        { tail -40 "$scratch.$(echo "$cmd" | tr -c 'a-z0-9' '_').log"; echo "fresh: '$cmd' failed" >&2; exit 1; }
    echo "fresh: '$cmd' passed in $(($(date +%s) - t0)) s"
done
