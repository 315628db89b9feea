#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Write the C header the conformance suite quotes in its certificate: the
spec's version and digest, and the suite's power from the last mutation run:
the share of mutants the release suite kills, and what the sanitizer runs add
(ci/mutation/run.py writes the three figures).

    ci/suite-info.py SPEC_DIR [MUTATION_SCORE_JSON] > suiteinfo.h

The spec digest is the SHA-256 of the normative text, exactly as
spec/00-conventions.md defines it: the bytes of every spec/*.md and
spec/include/cw/*.h, concatenated in the byte order of their paths relative
to spec/ (`LC_ALL=C sort`). The version is the one 00-conventions.md states,
and must head spec/CHANGELOG.md: a changed rule bumps both.
"""
import hashlib
import json
import os
import re
import sys


def spec_files(spec):
    names = [n for n in os.listdir(spec) if n.endswith(".md")]
    inc = os.path.join("include", "cw")
    names += [os.path.join(inc, n) for n in os.listdir(os.path.join(spec, inc)) if n.endswith(".h")]
    return sorted(names, key=lambda n: n.encode())


def digest(spec):
    h = hashlib.sha256()
    for name in spec_files(spec):
        with open(os.path.join(spec, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def version(spec):
    text = open(os.path.join(spec, "00-conventions.md"), encoding="utf-8").read()
    m = re.search(r"^Spec version (\d+\.\d+)", text, re.M)
    if not m:
        sys.exit("suite-info: spec/00-conventions.md states no 'Spec version X.Y'")
    log = open(os.path.join(spec, "CHANGELOG.md"), encoding="utf-8").read()
    top = re.search(r"^## (\d+\.\d+)", log, re.M)
    if not top or top.group(1) != m.group(1):
        sys.exit("suite-info: spec version %s is not the first entry of spec/CHANGELOG.md"
                 % m.group(1))
    return m.group(1)


def c_string(s):
    # Octal escapes end after three digits, whatever follows them.
    return '"' + "".join(chr(b) if b < 128 and (chr(b).isalnum() or chr(b) in " -_.:") else "\\%03o" % b
                         for b in str(s).encode("utf-8")) + '"'


def power_text(p):
    """The certificate's line: the release figure first (what a third
    party's run gives), then what the sanitizer runs add, then the
    equivalents left out of both."""
    rel, san, eq = p["release"], p["sanitizer"], p["equivalent"]
    head = "%.1f%% of %d mutants killed by the release suite (seed %d, %s)" % (
        100 * rel["score"], rel["of"], p["seed"], p["date"])
    if not san.get("measured", True):
        return "%s; %s" % (head, p["basis"])
    by = ", ".join("%s %d" % (n, k) for n, k in sorted(san["by"].items()) if k)
    return "%s; the sanitizer runs add %d%s: %.1f%%; %d equivalent not counted" % (
        head, san["killed"], " (%s)" % by if by else "", 100 * san["score_with"], eq["total"])


def power(path):
    if not path or not os.path.exists(path):
        return ["#define CWC_POWER_MEASURED 0"]
    p = json.load(open(path, encoding="utf-8"))
    if p.get("schema") != 2:
        sys.exit("suite-info: %s: schema %r, want 2 (the three figures of ci/mutation/run.py)"
                 % (path, p.get("schema")))
    try:
        rel, san, eq = p["release"], p["sanitizer"], p["equivalent"]
        if rel["of"] <= 0 or not 0 <= rel["score"] <= 1 or rel["killed"] > rel["of"]:
            sys.exit("suite-info: %s: the release figure %r is not a share" % (path, rel))
        measured = san.get("measured", True)
        if not measured and not p.get("basis"):
            sys.exit("suite-info: %s: sanitizer kills not measured, and no basis says why" % path)
        lines = ["#define CWC_POWER_MEASURED 1"]
        values = {"sampled": p["sampled"], "invalid": p["invalid"], "equivalent": eq["total"],
                  "killed": rel["killed"], "survived": rel["of"] - rel["killed"], "seed": p["seed"],
                  "sanitizer_killed": san["killed"] if measured else -1}
        for key, v in values.items():
            lines.append("#define CWC_POWER_%s %dLL" % (key.upper(), int(v)))
        lines.append("#define CWC_POWER_SCORE %.6f" % float(rel["score"]))
        lines.append("#define CWC_POWER_SCORE_WITH_SANITIZERS %.6f"
                     % float(san["score_with"] if measured else -1))
        lines.append("#define CWC_POWER_DATE %s" % c_string(p["date"]))
        lines.append("#define CWC_POWER_TEXT %s" % c_string(power_text(p)))
        folders = ", ".join("{%s, %dLL, %dLL, %.6f}" % (
            c_string(k), int(v["killed"]), int(v.get("sanitizer", 0)) + int(v["survived"]),
            float(v["score"])) for k, v in sorted(p.get("folders", {}).items()))
    except (KeyError, TypeError, ValueError) as e:
        sys.exit("suite-info: %s: not a mutation score of schema 2 (%r)" % (path, e))
    # C has no empty initializer: an unused entry stands in for none.
    lines.append("#define CWC_POWER_FOLDERS {%s}" % (folders or "{0, 0LL, 0LL, 0.0}"))
    lines.append("#define CWC_POWER_NFOLDERS %d" % len(p.get("folders", {})))
    return lines


def main():
    spec = sys.argv[1]
    out = ["/* Generated by ci/suite-info.py: do not edit. */",
           "#define CWC_SPEC_VERSION %s" % c_string(version(spec)),
           "#define CWC_SPEC_SHA256 %s" % c_string(digest(spec))]
    out += power(sys.argv[2] if len(sys.argv) > 2 else None)
    print("\n".join(out))


main()
