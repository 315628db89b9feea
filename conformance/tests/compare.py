#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""`cw-conformance compare`, checked: two real runs (the deterministic
backend, and the odd backend of odd_backend.c failing every run), reports
derived from them with one thing changed each, and files that are not
reports. Each comparison's exit status, text and JSON (validated against
conformance/compare.schema.json) must say what changed, and only that.

    compare.py BUILD_DIR
"""
import copy
import json
import os
import subprocess
import sys

import jsonschema

B = sys.argv[1]
CWC = os.path.join(B, "bin", "cw-conformance")
OUT = os.path.join(B, "reports", "compare")
SCHEMA = json.load(open("conformance/compare.schema.json", encoding="utf-8"))
jsonschema.Draft202012Validator.check_schema(SCHEMA)
failures = []


def fail(name, msg):
    failures.append(name)
    print("FAIL %s: %s" % (name, msg))


def path(name):
    return os.path.join(OUT, name)


def run_suite(name, env, *args):
    """A run of the suite; its JSON report, read."""
    subprocess.run([CWC, *args, "-q", "--json", path(name + ".json")], env={**os.environ, **env},
                   stdout=subprocess.DEVNULL, check=False)
    return json.load(open(path(name + ".json"), encoding="utf-8"))


def write(name, report):
    with open(path(name), "w", encoding="utf-8") as f:
        json.dump(report, f)
    return path(name)


def compare(name, a, b, *opts, want):
    """compare A B: its status must be `want`; returns (text, JSON or None)."""
    out = path(name + ".out.json")
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run([CWC, "compare", a, b, "--json", out, *opts], capture_output=True,
                       text=True, check=False)
    if p.returncode != want:
        fail(name, "exit status %d, expected %d\n%s%s" % (p.returncode, want, p.stdout, p.stderr))
        return p.stdout + p.stderr, None
    if want == 2:
        return p.stderr, None
    doc = json.load(open(out, encoding="utf-8"))
    try:
        jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    except jsonschema.ValidationError as e:
        fail(name, "the JSON breaks compare.schema.json: %s" % e.message)
    if (want == 1) != (doc["regressions"] > 0):
        fail(name, "%d regressions with exit status %d" % (doc["regressions"], want))
    return p.stdout, doc


def changes(doc, field, key):
    return {x[key]: (x["a"], x["b"], x["kind"]) for x in doc[field]}


def expect_equal(name, what, got, want):
    if got != want:
        fail(name, "%s: %r, expected %r" % (what, got, want))


# What changed between two reports, computed here from the rule the help
# states: a regression is a case or requirement failing in B and not in A,
# or passing in A and not in B.
def expected_changes(a, b, field, key):
    failing = {"fail", "timeout"}
    sa = {x[key]: x["status"] for x in a[field]}
    sb = {x[key]: x["status"] for x in b[field]}
    out = {}
    for k in sa.keys() | sb.keys():
        x, y = sa.get(k), sb.get(k)
        if x == y:
            continue
        if y is None:
            kind = "only_a"
        elif x is None:
            kind = "regression" if y in failing else "only_b"
        elif (y in failing and x not in failing) or (x == "pass" and y != "pass"):
            kind = "regression"
        elif y == "pass":
            kind = "improvement"
        else:
            kind = "change"
        out[k] = (x, y, kind)
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    odd = os.path.join(B, "lib", "cwc-odd.so")
    det = run_suite("det", {}, "--backend", "deterministic", "--profile", "core",
                    "--filter", "clock_sleep")
    bad = run_suite("markup", {"CWC_ODD_MARKUP": "1"}, "--backend", odd, "--profile", "core",
                    "--filter", "clock_sleep")
    d, m = path("det.json"), path("markup.json")

    # The same report twice: nothing changed.
    _, doc = compare("same", d, d, want=0)
    if doc and (doc["cases"] or doc["requirements"] or doc["profiles"] or doc["timing"]):
        fail("same", "changes found between a report and itself")

    # Every run of B fails: its failing cases and their rules are regressions.
    text, doc = compare("regressed", d, m, want=1)
    if doc:
        expect_equal("regressed", "cases", changes(doc, "cases", "name"),
                     expected_changes(det, bad, "cases", "name"))
        expect_equal("regressed", "requirements", changes(doc, "requirements", "id"),
                     expected_changes(det, bad, "requirements", "id"))
        expect_equal("regressed", "profiles", changes(doc, "profiles", "profile"),
                     {"core": ("incomplete", "failed", "regression")})
        expect_equal("regressed", "verdict", doc["verdict"],
                     {"a": "PARTIAL", "b": "NOT CONFORMANT", "regression": True})
        reasons = {x["name"]: x["reason"] for x in doc["cases"]}
        want = {c["name"]: c["reason"] for c in bad["cases"] if c["status"] == "fail"}
        expect_equal("regressed", "the reasons in B", reasons, want)
        if not want or "REGRESSION  clock_sleep " not in text:
            fail("regressed", "the text does not name clock_sleep a regression:\n" + text)
    # The other way round, nothing regressed.
    _, doc = compare("improved", m, d, want=0)
    if doc:
        kinds = {x["kind"] for x in doc["cases"] + doc["requirements"] + doc["profiles"]}
        expect_equal("improved", "kinds of change", kinds, {"improvement"})

    # One change at a time, in a copy of the deterministic run.
    passed = [c for c in det["cases"] if c["status"] == "pass"]
    not_run = [c for c in det["cases"] if c["status"] == "not_run"]
    if len(passed) < 4 or not not_run:
        fail("fixtures", "the deterministic run has too few cases to derive reports from")
        return

    b = copy.deepcopy(det)
    by_name = {c["name"]: c for c in b["cases"]}
    by_name[passed[0]["name"]]["status"] = "not_run"
    _, doc = compare("stopped-passing", d, write("stopped.json", b), want=1)
    if doc:
        expect_equal("stopped-passing", "cases", changes(doc, "cases", "name"),
                     {passed[0]["name"]: ("pass", "not_run", "regression")})

    b = copy.deepcopy(det)
    next(c for c in b["cases"] if c["name"] == not_run[0]["name"])["status"] = "not_applicable"
    _, doc = compare("other-change", d, write("other.json", b), want=0)
    if doc:
        expect_equal("other-change", "cases", changes(doc, "cases", "name"),
                     {not_run[0]["name"]: ("not_run", "not_applicable", "change")})

    b = copy.deepcopy(det)
    b["cases"].append(dict(passed[0], name="a_new_case", status="fail", reason="new and wrong"))
    _, doc = compare("new-failing", d, write("new.json", b), want=1)
    if doc:
        expect_equal("new-failing", "cases", changes(doc, "cases", "name"),
                     {"a_new_case": (None, "fail", "regression")})

    # Another version of the suite: said, and what one suite alone has is
    # listed apart, never a regression.
    b = copy.deepcopy(det)
    b["suite"]["version"] = "0.3.0"
    b["cases"][0]["name"] = "renamed_case"
    dropped = b["requirements"].pop()
    # and another change, listed before the rest (its text counts it)
    other = next(c for c in b["cases"][1:] if c["status"] == "not_run")
    other["status"] = "not_applicable"
    text, doc = compare("suite-versions", d, write("suite.json", b), want=0)
    if doc:
        expect_equal("suite-versions", "suite_versions_differ", doc["suite_versions_differ"], True)
        first = det["cases"][0]
        expect_equal("suite-versions", "cases", changes(doc, "cases", "name"),
                     {first["name"]: (first["status"], None, "only_a"),
                      "renamed_case": (None, first["status"], "only_b"),
                      other["name"]: ("not_run", "not_applicable", "change")})
        expect_equal("suite-versions", "requirements", changes(doc, "requirements", "id"),
                     {dropped["id"]: (dropped["status"], None, "only_a")})
        if "note: the suite versions differ (0.2.0, 0.3.0)" not in text:
            fail("suite-versions", "the text does not say the versions differ:\n" + text)

    # Time: listed past both limits (3x and 50 ms by default), never a
    # regression.
    a, b = copy.deepcopy(det), copy.deepcopy(det)
    times = {passed[0]["name"]: (0.010, 0.500),   # 50x, 490 ms: slower
             passed[1]["name"]: (0.010, 0.050),   # 5x, 40 ms: no
             passed[2]["name"]: (0.200, 0.500),   # 2.5x, 300 ms: no
             passed[3]["name"]: (0.600, 0.150)}   # 4x, 450 ms: faster
    for r, side in ((a, 0), (b, 1)):
        for c in r["cases"]:
            if c["name"] in times:
                c["duration_seconds"] = times[c["name"]][side]
    ta, tb = write("time-a.json", a), write("time-b.json", b)
    for name, opts, want in (
            ("timing", (), {passed[0]["name"]: "slower", passed[3]["name"]: "faster"}),
            ("timing-factor", ("--time-factor", "2"),
             {passed[0]["name"]: "slower", passed[2]["name"]: "slower",
              passed[3]["name"]: "faster"}),
            ("timing-delta", ("--time-delta", "460"), {passed[0]["name"]: "slower"})):
        _, doc = compare(name, ta, tb, *opts, want=0)
        if doc:
            expect_equal(name, "timing", {t["name"]: t["direction"] for t in doc["timing"]}, want)

    # A report of schema version 1 (an older kit's, without expectations)
    # compares with one of today's: nothing compare reads changed.
    old = {k: v for k, v in det.items() if k != "expectations"}
    old["cases"] = [{k: v for k, v in c.items() if k != "expected"} for c in det["cases"]]
    compare("old-schema", d, write("schema1.json", dict(old, schema=1)), want=0)

    # Not reports, or not readable: status 2, the file named.
    with open(path("text.json"), "w") as f:
        f.write("TAP version 13\n")
    with open(path("dupkey.json"), "w") as f:
        f.write('{"schema": 1, "schema": 1}')
    junk = {"missing": path("no-such-report.json"), "not-json": path("text.json"),
            "duplicate-key": path("dupkey.json"),
            "array": write("array.json", [det]),
            "schema-future": write("schema99.json", dict(det, schema=99)),
            "no-cases": write("nocases.json", {k: v for k, v in det.items() if k != "cases"}),
            "bad-status": write("status.json", dict(det, cases=[dict(det["cases"][0], status="ok")])),
            "twice": write("twice.json", dict(det, cases=[det["cases"][0]] * 2)),
            "bad-profile": write("profile.json", dict(det, profiles=dict(det["profiles"],
                                                                          declared=["core", "nosuch"]))),
            "bad-duration": write("duration.json", dict(det, cases=[dict(det["cases"][0],
                                                                         duration_seconds="1")]))}
    for name, bad_path in junk.items():
        text, _ = compare("bad-" + name, d, bad_path, want=2)
        if not text.startswith("cw-conformance compare: " + bad_path):
            fail("bad-" + name, "the message does not name the file: %r" % text)
        else:
            print("bad-%s: refused with status 2 (%s)" % (name, text.splitlines()[0]))
    for name, args in (("one-report", [d]), ("three-reports", [d, d, d]),
                       ("bad-factor", [d, d, "--time-factor", "0.5"]),
                       ("unwritable", [d, d, "--json", "/nonexistent/dir/c.json"])):
        p = subprocess.run([CWC, "compare", *args], capture_output=True, text=True, check=False)
        if p.returncode != 2 or not p.stderr.startswith("cw-conformance compare: "):
            fail(name, "exit status %d: %s" % (p.returncode, p.stderr))


main()
if failures:
    sys.exit("compare: %d check(s) failed: %s" % (len(failures), ", ".join(failures)))
print("== compare: regressions, improvements, other versions, timing and bad input as expected")
