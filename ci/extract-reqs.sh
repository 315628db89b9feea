#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Print one CWC_REQ("ID", "section") line per numbered requirement of the
# spec files given, in file order. A requirement is a line holding **[ABC-123]**.
for f in "$@"; do
  section=$(basename "$f" .md | sed 's/^[0-9]*-//')
  grep -o '\*\*\[[A-Z][A-Z0-9]*-[0-9][0-9]*\]\*\*' "$f" | tr -d '*[]' |
    while read -r id; do printf 'CWC_REQ("%s", "%s")\n' "$id" "$section"; done
done
