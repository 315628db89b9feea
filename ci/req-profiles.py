#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Give every requirement of the spec its conformance profile, read from the
profile table of spec/10-backend.md, so that the suite and the spec cannot
disagree.

    ci/req-profiles.py spec/10-backend.md REQS.INC > req-profiles.inc

The table's second column lists, separated by commas and semicolons: an
area (`NET`: all its rules), an area with exceptions (`NET but NET-007,
NET-017`, up to the next semicolon or area), a rule (`MET-018`) or a range
(`DET-008 to DET-011`). A rule named on its own wins over its area. Every
rule must end in exactly one profile; the script fails otherwise.
"""
import re
import sys

ROW = re.compile(r"^\| `([a-z-]+)` \| ([^|]*) \|")
TOKEN = re.compile(r"[A-Z][A-Z0-9]*-\d+|[A-Z][A-Z0-9]*|\bbut\b|\bto\b|;")


def ids_of(token_list):
    """Rule IDs and ranges ("A-1 to A-4") in a list of tokens."""
    out, i = [], 0
    while i < len(token_list):
        t = token_list[i]
        if i + 2 < len(token_list) and token_list[i + 1] == "to":
            area, lo = t.rsplit("-", 1)
            hi = int(token_list[i + 2].rsplit("-", 1)[1])
            out += [(area, n) for n in range(int(lo), hi + 1)]
            i += 3
        else:
            area, n = t.rsplit("-", 1)
            out.append((area, int(n)))
            i += 1
    return out


def parse_row(text):
    """(areas with their exceptions, rules named) of one profile's cell."""
    areas, named, tokens = {}, [], TOKEN.findall(text)
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == ";":
            i += 1
        elif "-" not in t:
            j = i + 1
            if j < len(tokens) and tokens[j] == "but":
                j += 1
                while j < len(tokens) and tokens[j] != ";" and ("-" in tokens[j] or tokens[j] == "to"):
                    j += 1
                areas[t] = set(ids_of(tokens[i + 2:j]))
            else:
                areas[t] = set()
            i = j
        else:
            j = i
            while j < len(tokens) and ("-" in tokens[j] or tokens[j] == "to"):
                j += 1
            named += ids_of(tokens[i:j])
            i = j
    return areas, named


def main():
    table = {}
    for line in open(sys.argv[1], encoding="utf-8"):
        m = ROW.match(line)
        if m:
            table[m.group(1)] = parse_row(m.group(2))
    reqs = re.findall(r'CWC_REQ\("([A-Z][A-Z0-9]*)-(\d+)"', open(sys.argv[2]).read())
    bad = []
    for area, num in reqs:
        key = (area, int(num))
        named = [p for p, (_, ids) in table.items() if key in ids]
        by_area = [p for p, (areas, _) in table.items() if area in areas and key not in areas[area]]
        found = named or by_area
        if len(found) != 1:
            bad.append("%s-%s: %s" % (area, num, ", ".join(found) or "no profile"))
            continue
        print('CWC_REQ_PROFILE("%s-%s", "%s")' % (area, num, found[0]))
    if bad:
        sys.exit("req-profiles: spec/10-backend.md places these rules in no or several "
                 "profiles:\n  " + "\n  ".join(bad))


main()
