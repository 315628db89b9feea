#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Read back what cw-conformance wrote, with independent readers, and check
that the reports agree with each other and with their schema.

The JSON is validated against report.schema.json (found beside this script
when installed, in share/cwrt, and in conformance/ in the source tree) with
python3-jsonschema; the JUnit XML is read by python3-junitparser, and every
case of the JSON must be there once, with a <failure> exactly when it failed
or timed out and a <skipped> exactly when it was not applicable or not run;
the TAP must have one test point per case, "# SKIP" for the same cases and
"# TODO" for those --expect says fail. With --expect, each case's outcome
must follow from its status and expectation, and the counts from them.
"""
import argparse
import json
import os
import re
import sys

import jsonschema
import junitparser

HERE = os.path.dirname(os.path.abspath(__file__))


def schema_path():
    """Installed, the schema is beside this script (share/cwrt); in the
    source tree, in conformance/."""
    for p in (os.path.join(HERE, "report.schema.json"),
              os.path.join(os.path.dirname(HERE), "conformance", "report.schema.json")):
        if os.path.exists(p):
            return p
    fail("no report.schema.json beside %s or in its tree" % HERE)


SKIPPED = {"not_applicable", "not_run"}
FAILED = {"fail", "timeout"}


def fail(msg):
    sys.exit("check-reports: " + msg)


def check_json(path, expect):
    schema = json.load(open(schema_path(), encoding="utf-8"))
    with open(path, "rb") as f:
        report = json.loads(f.read().decode("utf-8", errors="strict"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(report)
    counts = {}
    for c in report["cases"]:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    s = report["summary"]
    want = {"passed": "pass", "failed": "fail", "timed_out": "timeout",
            "not_applicable": "not_applicable", "not_run": "not_run"}
    for key, status in want.items():
        if s[key] != counts.get(status, 0):
            fail("%s: summary %s is %d, the cases say %d" % (path, key, s[key], counts.get(status, 0)))
    if s["total"] != len(report["cases"]):
        fail("%s: total %d for %d cases" % (path, s["total"], len(report["cases"])))
    v = report["verdict"]
    if (s["failed"] or s["timed_out"]) and v != "NOT CONFORMANT":
        fail("%s: a case failed, yet the verdict is %s" % (path, v))
    if v == "CONFORMANT" and (s["not_run"] or not s["passed"]
                              or report["profiles"]["certified"] != report["profiles"]["declared"]):
        fail("%s: CONFORMANT for an incomplete run" % path)
    if (v == "PARTIAL") != (report["partial_reason"] is not None):
        fail("%s: partial_reason and verdict %s disagree" % (path, v))
    if expect and v != expect:
        fail("%s: verdict %s, expected %s" % (path, v, expect))
    check_expectations(path, report)
    return report


def outcome(want, got):
    """What --expect's FILE said of a case (want) against its status (got),
    as conformance/cw-conformance.1 defines it."""
    failed, skipped = got in FAILED, got in SKIPPED
    if want in ("pass", "skip"):
        if failed:
            return "regression"
        if want == "skip":
            return "as_expected" if skipped else "changed"
        return "unchecked" if skipped else "as_expected"
    if got == "pass":
        return "unexpected_pass"
    if skipped:
        return "unchecked"
    return "as_expected" if want == got else "changed"


def check_expectations(path, report):
    """Each case's outcome follows from its expectation and status, and
    the counts of the run's expectations are theirs."""
    e = report["expectations"]
    if e is None:
        if any(c["expected"] is not None for c in report["cases"]):
            fail("%s: a case has an expectation, the run none" % path)
        return
    counts = {}
    for c in report["cases"]:
        x = c["expected"]
        if x is None:
            fail("%s: case %s has no expectation in a run with --expect" % (path, c["name"]))
        if (x["line"] is None) != (x["reason"] is None) or (x["line"] is None and x["status"] != "pass"):
            fail("%s: case %s: an expectation without its line, or a line without reason" % (path, c["name"]))
        if x["outcome"] != outcome(x["status"], c["status"]):
            fail("%s: case %s expected %s, got %s: outcome %s" % (path, c["name"], x["status"],
                                                                  c["status"], x["outcome"]))
        counts[x["outcome"]] = counts.get(x["outcome"], 0) + 1
    keys = {"as_expected": "as_expected", "regressions": "regression",
            "unexpected_passes": "unexpected_pass", "changed": "changed", "unchecked": "unchecked"}
    for key, name in keys.items():
        if e[key] != counts.get(name, 0):
            fail("%s: expectations say %d %s, the cases %d" % (path, e[key], key, counts.get(name, 0)))
    if e["listed"] != sum(c["expected"]["line"] is not None for c in report["cases"]):
        fail("%s: expectations list %d cases, the cases have other lines" % (path, e["listed"]))


def check_junit(path, report):
    xml = junitparser.JUnitXml.fromfile(path)
    seen = {}
    for suite in xml:
        for case in suite:
            if case.name in seen:
                fail("%s: case %s twice" % (path, case.name))
            kinds = {type(r).__name__ for r in case.result}
            seen[case.name] = kinds
        props = {p.name: p.value for p in suite.properties()}
        if props.get("verdict") != report["verdict"]:
            fail("%s: suite %s says verdict %s" % (path, suite.name, props.get("verdict")))
    for c in report["cases"]:
        kinds = seen.pop(c["name"], None)
        if kinds is None:
            fail("%s: case %s missing" % (path, c["name"]))
        want = {"Failure"} if c["status"] in FAILED else {"Skipped"} if c["status"] in SKIPPED else set()
        if kinds != want:
            fail("%s: case %s (%s) has %s" % (path, c["name"], c["status"], sorted(kinds) or "no result"))
    if seen:
        fail("%s: cases not in the JSON: %s" % (path, ", ".join(sorted(seen))))
    totals = (xml.tests, xml.failures, xml.skipped)
    s = report["summary"]
    want = (s["total"], s["failed"] + s["timed_out"], s["not_applicable"] + s["not_run"])
    if totals != want:
        fail("%s: totals %s, the JSON says %s" % (path, totals, want))


def check_tap(path, report):
    lines = open(path, encoding="utf-8").read().splitlines()
    if lines[:2] != ["TAP version 13", "1..%d" % len(report["cases"])]:
        fail("%s: bad header %r" % (path, lines[:2]))
    points = [l for l in lines if re.match(r"^(not )?ok \d+ - ", l)]
    if len(points) != len(report["cases"]):
        fail("%s: %d test points for %d cases" % (path, len(points), len(report["cases"])))
    for line, c in zip(points, report["cases"]):
        ok = not line.startswith("not ")
        skip = " # SKIP " in line
        if ok == (c["status"] in FAILED) or skip != (c["status"] in SKIPPED):
            fail("%s: %r for a case that is %s" % (path, line, c["status"]))
        # A failure --expect expects is a TAP TODO, and nothing else is.
        todo = " # TODO " in line
        known = (c["expected"] or {}).get("status") in FAILED and c["status"] not in SKIPPED
        if todo != known:
            fail("%s: %r for a case expected %s" % (path, line, (c["expected"] or {}).get("status")))


def main():
    parser = argparse.ArgumentParser(
        prog="check-reports.py",
        description="Read back the reports of one cw-conformance run (--json, and its "
                    "--xml and --tap if given) and require them to agree with each "
                    "other and with report.schema.json. Exit 0 when they do.")
    parser.add_argument("--expect", metavar="VERDICT",
                        help="also require this verdict (CONFORMANT, NOT CONFORMANT, PARTIAL)")
    parser.add_argument("json", metavar="REPORT.json")
    parser.add_argument("others", metavar="REPORT.xml|REPORT.tap", nargs="*")
    args = parser.parse_args()
    report = check_json(args.json, args.expect)
    for path in args.others:
        (check_junit if path.endswith(".xml") else check_tap)(path, report)
    args = [args.json]
    s = report["summary"]
    print("%s: %s, %d cases (%d passed, %d failed, %d timed out, %d n/a, %d not run): "
          "schema, JUnit and TAP agree" % (os.path.basename(args[0]), report["verdict"], s["total"],
                                           s["passed"], s["failed"], s["timed_out"],
                                           s["not_applicable"], s["not_run"]))


main()
