#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Two runs of cw-conformance on the same backend, one case at a time and
with --jobs: their reports must say the same, in the same order.

The JSON's verdict, counts, requirements and cases (name, status, and the
reason of a failure, a skip or a --repeat, with the addresses that differ
between processes masked), the JUnit XML's test cases in order with their
kinds of result, and the TAP's test points: a timeout's reason names the
time it took, so of a timed-out case only the status is compared.

    same_results.py SERIAL.json PARALLEL.json   (their .xml and .tap beside
                                                 them are compared when both exist)
"""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    sys.exit("same-results: " + msg)


def masked(reason):
    return re.sub(r"0x[0-9a-f]+", "0x?", reason)


def json_view(path):
    r = json.load(open(path, encoding="utf-8"))
    cases = [(c["name"], c["status"], "" if c["status"] == "timeout" else masked(c["reason"]))
             for c in r["cases"]]
    reqs = [(q["id"], q["status"]) for q in r["requirements"]]
    return {"verdict": r["verdict"], "partial_reason": r["partial_reason"],
            "certified": r["profiles"]["certified"], "summary": r["summary"],
            "requirements": reqs, "cases": cases}


def junit_view(path):
    root = ET.parse(path).getroot()
    return [(case.get("classname"), case.get("name"), [child.tag for child in case])
            for case in root.iter("testcase")]


def tap_view(path):
    points = []
    for line in open(path, encoding="utf-8").read().splitlines():
        m = re.match(r"^((?:not )?ok \d+ - \S+)( # (?:SKIP|TODO))?", line)
        if m:
            points.append(m.group(1) + (m.group(2) or ""))
        elif line.startswith("# verdict:"):
            points.append(line)
    return points


def differ(a, b, what, path_a, path_b):
    if a == b:
        return
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                fail("%s differs at %d: %r in %s, %r in %s" % (what, i, x, path_a, y, path_b))
        fail("%s: %d entries in %s, %d in %s" % (what, len(a), path_a, len(b), path_b))
    fail("%s differs: %r in %s, %r in %s" % (what, a, path_a, b, path_b))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = sys.argv[1], sys.argv[2]
    ja, jb = json_view(a), json_view(b)
    for key in ja:
        differ(ja[key], jb[key], key, a, b)
    compared = ["JSON"]
    for ext, view in ((".xml", junit_view), (".tap", tap_view)):
        pa, pb = a[:-5] + ext, b[:-5] + ext
        if os.path.exists(pa) and os.path.exists(pb):
            differ(view(pa), view(pb), ext[1:], pa, pb)
            compared.append(ext[1:].upper())
    print("%s = %s: %s, %d cases the same (%s)" % (os.path.basename(a), os.path.basename(b),
                                                   ja["verdict"], len(ja["cases"]),
                                                   ", ".join(compared)))


main()
