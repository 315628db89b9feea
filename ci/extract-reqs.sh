#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Print one CWC_REQ("ID", "section", "text") line per numbered requirement
# of the spec files given, in file order, so that the suite lists every rule
# and its reports (the --html page) can quote each one's words. A
# requirement is a list item that begins with **[ABC-123]**; its text is the
# rest of the item (the lines indented under it, joined by spaces), as
# Markdown, written as a C string literal. An ID given to two requirements
# fails the build: each rule's cases and verdict are found by its ID.
extract() {
for f in "$@"; do
  section=$(basename "$f" .md | sed 's/^[0-9]*-//')
  awk -v section="$section" '
    # A C string literal of s: backslash, quote and "?" (trigraphs) escaped,
    # a character at a time (what gsub makes of a backslash in its
    # replacement differs between awks).
    function literal(s,    out, i, c) {
      out = ""
      for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        out = out (c == "\\" || c == "\"" || c == "?" ? "\\" : "") c
      }
      return "\"" out "\""
    }
    function flush() {
      if (id != "")
        printf "CWC_REQ(\"%s\", \"%s\", %s)\n", id, section, literal(text)
      id = ""
    }
    /^- \*\*\[[A-Z][A-Z0-9]*-[0-9]+\]\*\*/ {
      flush()
      id = $0
      sub(/^- \*\*\[/, "", id)
      sub(/\]\*\*.*/, "", id)
      text = $0
      sub(/^- \*\*\[[^]]*\]\*\* */, "", text)
      next
    }
    id != "" && /^  +[^ ]/ {
      line = $0
      sub(/^ +/, "", line)
      text = text " " line
      next
    }
    { flush() }
    END { flush() }
  ' "$f"
done
}

out=$(extract "$@") || exit 1
twice=$(printf '%s\n' "$out" | sed -n 's/^CWC_REQ("\([^"]*\)".*/\1/p' | sort | uniq -d)
if [ -n "$twice" ]; then
  echo "extract-reqs: requirement IDs given twice in spec/: $twice" >&2
  exit 1
fi
printf '%s\n' "$out"
