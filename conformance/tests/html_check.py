#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Read back an HTML report of cw-conformance (--html), or the DOM a browser
made of it (chromium --dump-dom), and check it against the JSON report of
the same run:

- its structure: a doctype, every element closed in the order opened, a
  UTF-8 charset, and nothing that runs or fetches: no script, img, iframe,
  object, embed, link, base or form element, no on* attribute, no src or
  href, and no data-owned attribute (which the odd backend's script would
  set, had it run);
- what it says: the verdict; each profile's state, computed here from the
  JSON by the rule conformance/README.md states; each failing case with its
  message exactly as the JSON has it and the words of each rule it checks,
  read here from spec/*.md; every requirement with its status; every case.

A candidate's string with markup (the odd backend's name, CWC_ODD_MARKUP's
message) then shows as text, or a check fails.

    html_check.py PAGE.html REPORT.json [SPEC_DIR]
"""
import glob
import html.parser
import json
import re
import sys

VOID = {"meta", "br", "hr", "wbr", "col", "input", "img", "link", "base", "source", "embed"}
FORBIDDEN = {"script", "img", "iframe", "object", "embed", "link", "base", "form", "frame",
             "svg", "math", "audio", "video", "source"}
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL html: " + msg)


class Page(html.parser.HTMLParser):
    """The element tree's facts the checks need: text by id, attributes by
    id, the text of elements inside an element with an id."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.doctype, self.charset = [], None, None
        self.ids = {}      # id -> attributes
        self.text = {}     # id -> text inside it
        self.parts = {}    # id -> [(tag, class, text)] of the elements inside it
        self.open_ids = []
        self.states = {}   # id of the row -> data-state of a cell in it
        self.root_attrs = None

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root_attrs = a
        if tag in FORBIDDEN:
            fail("a <%s> element" % tag)
        for k, _ in attrs:
            if k.startswith("on") or k in ("src", "href", "data-owned", "srcdoc", "action"):
                fail("a %s attribute on <%s>" % (k, tag))
        if "data-state" in a and self.open_ids:
            self.states[self.open_ids[-1]] = a["data-state"]
        if tag == "meta" and "charset" in a:
            self.charset = a["charset"].lower()
        if tag in VOID:
            return
        self.stack.append([tag, a.get("id"), a.get("class"), ""])
        if a.get("id"):
            if a["id"] in self.ids:
                fail("id %s twice" % a["id"])
            self.ids[a["id"]] = a
            self.open_ids.append(a["id"])

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            fail("</%s> closes <%s>" % (tag, self.stack[-1][0] if self.stack else "nothing"))
            return
        tag, ident, cls, text = self.stack.pop()
        if self.stack:
            self.stack[-1][3] += text
        for i in self.open_ids:
            self.parts.setdefault(i, []).append((tag, cls, text))
        if ident:
            self.open_ids.remove(ident)
            self.text[ident] = text

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][3] += data


def shown(s):
    """A string as the page must show it: controls (but tab and newline),
    which HTML cannot hold, as U+FFFD; the JSON keeps them."""
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "\ufffd", s)


def rule_texts(spec_dir):
    """Each rule's words: the list item that begins **[ID]**, its indented
    lines joined by spaces (spec/README.md's convention)."""
    rules, current = {}, None
    for f in sorted(glob.glob(spec_dir + "/*.md")):
        for line in open(f, encoding="utf-8"):
            line = line.rstrip("\n")
            m = re.match(r"^- \*\*\[([A-Z][A-Z0-9]*-\d+)\]\*\* *(.*)$", line)
            if m:
                current = m.group(1)
                rules[current] = m.group(2)
            elif current and re.match(r"^  +\S", line):
                rules[current] += " " + line.strip()
            else:
                current = None
    return rules


def profile_state(report, profile):
    """The state conformance/README.md defines, from the JSON alone."""
    statuses = [c["status"] for c in report["cases"] if c["profile"] == profile]
    p = report["profiles"]
    if "fail" in statuses or "timeout" in statuses:
        return "failed"
    if profile in p["certified"]:
        return "certified"
    if profile not in p["declared"]:
        return "not_declared"
    if profile not in p["selected"]:
        return "not_selected"
    return "incomplete" if "not_run" in statuses else "passed"


def check(page_path, report_path, spec_dir):
    raw = open(page_path, encoding="utf-8").read()
    report = json.load(open(report_path, encoding="utf-8"))
    page = Page()
    page.feed(raw)
    page.close()
    if page.stack:
        fail("elements left open: %s" % [e[0] for e in page.stack])
    if (page.doctype or "").lower() != "doctype html":
        fail("no <!DOCTYPE html>")
    if page.charset != "utf-8":
        fail("no <meta charset=\"utf-8\">")
    if page.root_attrs is None:
        fail("no <html> element")
    if not page.text.get("verdict", "").startswith(report["verdict"]):
        fail("verdict %r, the JSON says %s" % (page.text.get("verdict"), report["verdict"]))
    if shown(report["backend"]["name"]) not in page.text.get("identity", ""):
        fail("the backend's name %r is not shown as text" % report["backend"]["name"])
    for profile in ["core", "strategy", "ratelimit", "buffers", "metrics", "storage", "network",
                    "deterministic", "audit", "parallel", "persistent-storage", "recover"]:
        want = profile_state(report, profile)
        state = page.states.get("profile-" + profile)
        if state != want:
            fail("profile %s is %s, the JSON makes it %s" % (profile, state, want))
    rules = rule_texts(spec_dir)
    failing = [c for c in report["cases"] if c["status"] in ("fail", "timeout")]
    for c in failing:
        parts = page.parts.get("failure-" + c["name"])
        if parts is None:
            fail("failing case %s is not shown" % c["name"])
            continue
        messages = [t for tag, cls, t in parts if tag == "pre" and cls == "message"]
        if messages != [shown(c["reason"])]:
            fail("case %s: message %r, the JSON has %r" % (c["name"], messages, c["reason"]))
        terms = [t for tag, _, t in parts if tag == "dt"]
        words = [t for tag, _, t in parts if tag == "dd"]
        if terms != c["requirements"] or words != [rules.get(r) for r in c["requirements"]]:
            fail("case %s: rules %r with texts that are not the spec's" % (c["name"], terms))
    n_shown = len([i for i in page.ids if i.startswith("failure-")])
    if n_shown != len(failing):
        fail("%d failures shown, the JSON has %d" % (n_shown, len(failing)))
    keys = {"n/a": "not_applicable", "not run": "not_run"}
    for q in report["requirements"]:
        cells = [t for tag, _, t in page.parts.get("req-" + q["id"], []) if tag == "td"]
        if len(cells) != 5 or keys.get(cells[2], cells[2]) != q["status"] or \
                cells[4] != rules.get(q["id"]):
            fail("requirement %s: row %r, the JSON says %s" % (q["id"], cells[:3], q["status"]))
            break
    rows = [t for tag, _, t in page.parts.get("cases", []) if tag == "tr"]
    if len(rows) != len(report["cases"]) + 1:  # and the head's row
        fail("%d case rows for %d cases" % (len(rows) - 1, len(report["cases"])))
    return report, failing


def main():
    spec_dir = sys.argv[3] if len(sys.argv) > 3 else "spec"
    report, failing = check(sys.argv[1], sys.argv[2], spec_dir)
    if failures:
        sys.exit("html: %s: %d check(s) failed" % (sys.argv[1], len(failures)))
    print("html: %s: %s, %d failures with their messages and rules, %d requirements, "
          "nothing that runs or fetches" % (sys.argv[1], report["verdict"], len(failing),
                                            len(report["requirements"])))


main()
