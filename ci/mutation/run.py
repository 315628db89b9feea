#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Mutation testing of the conformance suite: how many wrong references it rejects.

    run.py [--n N] [--seed S] [--jobs J] [--timeout SECONDS] [--rerun] [--filter SUBSTR]
           [--since REV] [--asan] [--tsan] [--valgrind]

Samples N one-operator mutants of reference/ (mutants.py), builds each in a
scratch copy of the tree under build/mutation/jobK (one per parallel job,
built once, then only the mutated object, the library and cw-conformance are
remade), and runs the release cw-conformance on the deterministic and the
native backend. One that does not compile is invalid (not counted).

Three figures, never one:
  (a) killed by the release suite: a case failed or outlived the time limit
      in the plain runs, what a third party's certification gives;
  (b) killed only by the suite's sanitizer runs, each named: a survivor of
      the release runs that --asan (the suite built with ASan+UBSan, make
      VARIANT=asan), --tsan (built with ThreadSanitizer, both backends, make
      VARIANT=tsan CC=clang) or --valgrind (the release suite on the
      deterministic backend under valgrind, make valgrind) fails, and the
      entries of ci/mutation/equivalent.txt categorised sanitizer:NAMES;
  (c) equivalent: compiled to the very object code of the original, or
      categorised equivalent in ci/mutation/equivalent.txt.
"Equivalent" means no program using the public API can tell, misuse that
the spec defines included; a leak, a race or an overrun is a sanitizer kill
or a survivor, never equivalent. Release score = (a) / (a + b + survived);
with the sanitizer runs = (a + b) / (a + b + survived); (c) is in neither.
The sanitizer passes are optional and run for survivors only (each costs a
build of that variant and a slower run); without them (b) holds only the
reviewed entries. A sanitizer run's failure without a report of the
sanitizer's own counts only if the same case fails a second run.

Writes build/mutation/report.json, report.tsv and summary.txt; a run of at
least 400 mutants of the whole sample also writes
conformance/mutation-score.json (the three figures, which the certificate
quotes) and conformance/mutation-report.tsv (every mutant's verdict, for
review), both committed.
--rerun runs again only the survivors of the last report (after new cases),
and writes rerun.json and rerun.txt instead; --rescore applies the reviewed
list to the last report again, without running.
--since REV keeps only the mutants of lines changed since the git revision
REV: with a large N, every mutant of a change, before it is committed.
"""

import argparse
import datetime
import filecmp
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutants as gen  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "build", "mutation")
EQUIVALENT = os.path.join(ROOT, "ci", "mutation", "equivalent.txt")
SCORE = os.path.join(ROOT, "conformance", "mutation-score.json")
SCORE_REPORT = os.path.join(ROOT, "conformance", "mutation-report.tsv")
TREE = ("Makefile", "spec", "reference", "conformance", "ci", "examples", "tools")
BIN = "build/release/bin/cw-conformance"
# Seconds a case may take before it counts as hung: several times the
# slowest case of a correct backend on a loaded machine.
CASE_TIMEOUT = 10
LIB = "build/release/lib/libcwrt.a"
# Warnings are not errors here: a wrong implementation need not be warning-free.
MAKE = ["make", "-s", "CFLAGS=-Wno-error", BIN]


class Sanitizer:
    """One of the suite's sanitizer runs, as make check-all makes it: the
    variant built (None: the release build), the command the binary runs
    under, the backends it certifies and how much slower a case runs."""

    def __init__(self, name, variant, make_args, backends, slower, wrapper=()):
        self.name, self.variant, self.backends = name, variant, backends
        self.slower, self.wrapper = slower, list(wrapper)
        self.bin = "build/%s/bin/cw-conformance" % variant if variant else BIN
        self.lib = "build/%s/lib/libcwrt.a" % variant if variant else LIB
        self.make = (["make", "-s", "CFLAGS=-Wno-error", "VARIANT=" + variant] + make_args + [self.bin]
                     if variant else None)

    def object_of(self, path):
        return "build/%s/obj/%s.o" % (self.variant, path[:-2])


VALGRIND = ["valgrind", "-q", "--error-exitcode=9", "--leak-check=full",
            "--show-leak-kinds=definite", "--errors-for-leak-kinds=definite",
            "--suppressions=conformance/valgrind.supp"]
# In the order a survivor meets them: the cheaper first; the first that
# fails it names the kill.
SANITIZERS = {
    "asan": Sanitizer("asan", "asan", [], None, 4),
    "tsan": Sanitizer("tsan", "tsan", ["CC=clang"], ("native", "deterministic"), 4),
    "valgrind": Sanitizer("valgrind", None, [], ("deterministic",), 20, VALGRIND),
}
# What a sanitizer prints when it finds something (ASan, LSan, UBSan, TSan,
# and valgrind's -q error lines): a sanitizer run's failure without one may be
# a case too slow under the sanitizer, so it must fail again to count.
SANITIZER_REPORT = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error:|"
                              r"WARNING: ThreadSanitizer|^==\d+== \S", re.M)
# The categories of equivalent.txt (its header says what each means).
CATEGORIES = ("equivalent", "sanitizer", "unreachable-oom", "survivor")


def reference_backends():
    """The backends of reference/cwrt/registry.h, one X(name) a line."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "reference", "cwrt", "registry.h")
    with open(path) as f:
        return tuple(re.findall(r"^\s*X\((\w+)\)", f.read(), re.M))


BACKENDS = reference_backends()
MIN_SCORED_SAMPLE = 400


def parse_category(text):
    """(category, sanitizer names) of an entry's category field, or None."""
    kind, _, names = text.partition(":")
    if kind not in CATEGORIES:
        return None
    if kind != "sanitizer":
        return (kind, ()) if not names else None
    names = tuple(n for n in names.split(",") if n)
    if not names or any(n not in SANITIZERS for n in names):
        return None
    return kind, names


def load_equivalent(path=EQUIVALENT):
    """id -> {"category", "sanitizers", "reason"} from the reviewed list
    (file, line text, mutation, category, reason; tabs)."""
    eq = {}
    if not os.path.exists(path):
        return eq
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            # The line text may hold tabs of its own (a file indented with
            # them): the file is the first field, the mutation, the category
            # and the reason the last three, the line text whatever is between.
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5 or not parts[-1].strip():
                sys.exit("%s:%d: want file<TAB>line text<TAB>mutation<TAB>category<TAB>reason"
                         % (path, n))
            cat = parse_category(parts[-2].strip())
            if cat is None:
                sys.exit("%s:%d: unknown category %r (want one of %s, sanitizer:NAMES of %s)"
                         % (path, n, parts[-2], ", ".join(CATEGORIES), ",".join(SANITIZERS)))
            ident = "\t".join(parts[:-2])
            if ident in eq:
                sys.exit("%s:%d: a second entry for %s" % (path, n, ident.replace("\t", " | ")))
            eq[ident] = {"category": cat[0], "sanitizers": list(cat[1]), "reason": parts[-1].strip()}
    return eq


def listed_verdict(entry):
    """What a reviewed entry makes of its mutant without running it:
    (status, sanitizers, why, should be caught by), or None to run it.
    A sanitizer entry is run: the release suite may kill it (RUN-008 sees
    many leaks), and only a release survivor takes the entry's verdict."""
    cat, why = entry["category"], entry["reason"]
    if cat == "equivalent":
        return "equivalent", [], why, ""
    if cat == "unreachable-oom":
        return "survived", [], "listed unreachable-oom: " + why, "an allocation failure at this point"
    return None


def survivor_verdict(entry):
    """What a reviewed entry makes of a mutant the release suite did not
    kill: a sanitizer entry's verdict, or None (a survivor)."""
    if entry and entry["category"] == "sanitizer":
        return "sanitizer", entry["sanitizers"], "listed: " + entry["reason"], ""
    return None


def tree_files(root):
    for entry in TREE:
        p = os.path.join(root, entry)
        if os.path.isfile(p):
            yield entry
            continue
        for dirpath, _, names in os.walk(p):
            for name in names:
                yield os.path.relpath(os.path.join(dirpath, name), root)


def sync_tree(job):
    """Make job's copy of the sources equal to the worktree's, touching only what differs."""
    want = set(tree_files(ROOT))
    for rel in want:
        src, dst = os.path.join(ROOT, rel), os.path.join(job, rel)
        if os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
        os.utime(dst)  # newer than any object built from the old copy
    for rel in set(tree_files(job)) - want:
        os.remove(os.path.join(job, rel))


class Job:
    """One scratch tree, built once; each mutant is applied, built, run, reverted."""

    def __init__(self, k, timeout, sanitizers=()):
        self.dir = os.path.join(OUT, "job%d" % k)
        self.pristine = os.path.join(self.dir, "pristine")
        self.timeout = timeout
        self.sanitizers = [SANITIZERS[n] for n in sanitizers]

    def prepare(self):
        """Build the scratch tree; on failure self.error says why (this runs
        in a thread, where sys.exit would end only the thread)."""
        self.error = None
        os.makedirs(self.dir, exist_ok=True)
        sync_tree(self.dir)
        r = subprocess.run(MAKE, cwd=self.dir, capture_output=True, text=True)
        if r.returncode != 0:
            self.error = "building %s failed:\n%s%s" % (self.dir, r.stdout, r.stderr)
            return
        for san in self.sanitizers:
            if not san.make:
                continue
            r = subprocess.run(san.make, cwd=self.dir, capture_output=True, text=True)
            if r.returncode != 0:
                self.error = "building %s for %s failed:\n%s%s" % (self.dir, san.name, r.stdout,
                                                                  r.stderr)
                return
        shutil.rmtree(self.pristine, ignore_errors=True)
        for rel in self.artifacts():
            dst = os.path.join(self.pristine, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(self.dir, rel), dst)
            if rel.endswith(".o"):
                self.strip(dst, dst + ".stripped")

    def variants(self):
        """The build directories this job keeps: release and each sanitizer's."""
        return ["release"] + [s.variant for s in self.sanitizers if s.variant]

    def artifacts(self):
        objs = []
        for variant in self.variants():
            base = os.path.join(self.dir, "build", variant, "obj", "reference")
            for dirpath, _, names in os.walk(base):
                objs += [os.path.relpath(os.path.join(dirpath, n), self.dir)
                         for n in names if n.endswith(".o")]
        for san in self.sanitizers:
            if san.variant:
                objs += [san.lib, san.bin]
        return objs + [LIB, BIN]

    @staticmethod
    def strip(src, dst):
        subprocess.run(["strip", "--strip-debug", "-o", dst, src], check=True)

    def object_of(self, path):
        return "build/release/obj/" + path[:-2] + ".o"

    def restore(self, m, text, st):
        src = os.path.join(self.dir, m["file"])
        with open(src, "w") as f:
            f.write(text)
        os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
        rels = [self.object_of(m["file"]), LIB, BIN]
        for san in self.sanitizers:
            if san.variant:
                rels += [san.object_of(m["file"]), san.lib, san.bin]
        for rel in rels:
            pristine = os.path.join(self.pristine, rel)
            if os.path.exists(pristine):
                shutil.copy2(pristine, os.path.join(self.dir, rel))

    def run_backend(self, backend, san=None):
        env = dict(os.environ)
        tag = "-" + san.name if san else ""
        log = os.path.join(self.dir, "run-%s%s.txt" % (backend, tag))
        slower = san.slower if san else 1
        binary = san.bin if san else BIN
        # One failing case kills the mutant: the run stops there. A case
        # that hangs fails after CASE_TIMEOUT seconds; `self.timeout` bounds
        # the whole run.
        args = (san.wrapper if san else []) + [
            os.path.join(self.dir, binary), "--backend", backend, "--fail-fast",
            "--timeout", str(CASE_TIMEOUT * slower)]
        with open(log, "w") as out:
            p = subprocess.Popen(args,
                                 cwd=self.dir, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, env=env)
            try:
                p.wait(timeout=self.timeout * slower)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
                return "timeout after %ds" % (self.timeout * slower)
            finally:
                self.kill_strays(binary)
        if p.returncode == 0:
            return None
        with open(log, errors="replace") as f:
            text = f.read()
        return first_failure(text, p.returncode)

    def kill_strays(self, binary):
        """End what a run left behind: a case's process may have a process
        group of its own, so only its executable says it is this job's
        (under valgrind, the tool's own executable runs it: the process
        group, ended above, holds those)."""
        exe = os.path.realpath(os.path.join(self.dir, binary))
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                if os.readlink("/proc/%s/exe" % pid) == exe:
                    os.kill(int(pid), 9)
            except OSError:
                pass

    def test(self, m, entry=None):
        """The mutant's (status, sanitizers that killed it, why); `entry`,
        its reviewed entry if any, stands for the sanitizer runs."""
        src = os.path.join(self.dir, m["file"])
        st = os.stat(src)
        with open(src) as f:
            text = f.read()
        try:
            with open(src, "w") as f:
                f.write(gen.apply(text, m))
            r = subprocess.run(MAKE, cwd=self.dir, capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                err = [l for l in r.stderr.splitlines() if "error" in l] or r.stderr.splitlines()
                return "invalid", [], (err[0] if err else "build failed")[:300]
            obj = os.path.join(self.dir, self.object_of(m["file"]))
            self.strip(obj, obj + ".stripped")
            same = filecmp.cmp(obj + ".stripped",
                               os.path.join(self.pristine, self.object_of(m["file"])) + ".stripped",
                               shallow=False)
            if same:
                return "equivalent", [], "same object code"
            for b in backends_reaching(m["folder"]):
                why = self.run_backend(b)
                if why:
                    return "killed", [], "%s: %s" % (b, why)
            reviewed = survivor_verdict(entry)
            return reviewed[:3] if reviewed else self.under_sanitizers(m)
        finally:
            self.restore(m, text, st)

    def under_sanitizers(self, m):
        """A survivor of the release runs certified again by each sanitizer
        run asked for, on the backends it runs and the mutant reaches."""
        for san in self.sanitizers:
            backends = [b for b in backends_reaching(m["folder"])
                        if san.backends is None or b in san.backends]
            if not backends:
                continue
            if san.make:
                r = subprocess.run(san.make, cwd=self.dir, capture_output=True, text=True,
                                   timeout=900)
                if r.returncode != 0:
                    continue  # a variant that does not build says nothing of the mutant
            for b in backends:
                why = self.run_backend(b, san)
                if why and not self.sanitizer_reported(b, san):
                    # No report of the sanitizer's own: only a second failure
                    # of the same case tells a kill from a case the slower
                    # build made miss its time.
                    again = self.run_backend(b, san)
                    why = why if again == why else None
                if why:
                    return "sanitizer", [san.name], "%s on %s: %s" % (san.name, b, why)
        return "survived", [], None

    def sanitizer_reported(self, backend, san):
        """Whether the last run of `san` on `backend` printed a finding."""
        log = os.path.join(self.dir, "run-%s-%s.txt" % (backend, san.name))
        with open(log, errors="replace") as f:
            return SANITIZER_REPORT.search(f.read()) is not None


def first_failure(text, status):
    """What a failed run's log says first: the failing case, else the line
    of a sanitizer's report, else the exit status."""
    failed = [line for line in text.splitlines()
              if line.startswith("FAILED:") or ":F:" in line or ":E:" in line]
    m = SANITIZER_REPORT.search(text)
    if not failed and m:
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        failed = [text[start:len(text) if end < 0 else end]]
    return (failed[0] if failed else "exit status %d" % status)[:300]


def backends_reaching(folder):
    """The backends whose runs can execute code of this folder of reference/.
    A backend's own folder is linked into the library but reached only
    through that backend's tables, so the other backend's run cannot kill
    its mutants: skipping it changes no verdict and halves a survivor's cost."""
    if folder in BACKENDS:
        return (folder,)
    return BACKENDS


def baseline(job):
    for b in BACKENDS:
        why = job.run_backend(b)
        if why:
            sys.exit("the suite fails on the unmutated tree (%s): %s" % (b, why))
    for san in job.sanitizers:
        for b in BACKENDS if san.backends is None else san.backends:
            why = job.run_backend(b, san)
            if why:
                sys.exit("the suite fails on the unmutated tree (%s under %s): %s"
                         % (b, san.name, why))


def score(k, s):
    return round(k / (k + s), 4) if k + s else None


def tally(results):
    """The three figures of a list of results, overall and by folder."""
    t = {"killed": 0, "sanitizer": 0, "survived": 0, "invalid": 0, "equivalent": 0}
    by_sanitizer = {n: 0 for n in SANITIZERS}
    listed = {"sanitizer": 0, "equivalent": 0, "survived": 0}
    folders = {}
    for r in results:
        t[r["status"]] += 1
        for n in r.get("sanitizers") or ():
            by_sanitizer[n] += 1
        if (r.get("why") or "").startswith("listed") or (
                r["status"] == "equivalent" and r["why"] != "same object code"):
            listed[r["status"]] += 1
        f = folders.setdefault(r["folder"], {"killed": 0, "sanitizer": 0, "survived": 0})
        if r["status"] in f:
            f[r["status"]] += 1
    for f in folders.values():
        f["score"] = score(f["killed"], f["sanitizer"] + f["survived"])
    figures = {
        "release": {"killed": t["killed"], "of": t["killed"] + t["sanitizer"] + t["survived"],
                    "score": score(t["killed"], t["sanitizer"] + t["survived"])},
        "sanitizer": {"killed": t["sanitizer"], "listed": listed["sanitizer"],
                      "by": by_sanitizer,
                      "score_with": score(t["killed"] + t["sanitizer"], t["survived"])},
        "equivalent": {"total": t["equivalent"], "same_object_code": t["equivalent"] - listed["equivalent"],
                       "listed": listed["equivalent"]},
        "survived": {"total": t["survived"], "listed": listed["survived"]},
    }
    return t, figures, dict(sorted(folders.items()))


def figure_lines(figures, ran):
    """The three figures, as the summary and the demonstration print them."""
    rel, san, eq = figures["release"], figures["sanitizer"], figures["equivalent"]
    names = ", ".join("%s %d" % (n, k) for n, k in san["by"].items() if k) or "none"
    return [
        "(a) killed by the release suite: %d of %d, %s" % (rel["killed"], rel["of"],
                                                          fmt(rel["score"])),
        "(b) killed only by the suite's sanitizer runs: %d (%s; %d by review in "
        "ci/mutation/equivalent.txt, the rest measured by the runs asked for: %s); "
        "with them %s" % (san["killed"], names, san["listed"], ran or "none",
                          fmt(san["score_with"])),
        "(c) equivalent: %d (%d same object code, %d reviewed in ci/mutation/equivalent.txt)"
        % (eq["total"], eq["same_object_code"], eq["listed"]),
    ]


def summary(args, results, elapsed, stale):
    t, figures, folders = tally(results)
    lines = [
        "mutation: seed %d, %d mutants sampled of %d, %d jobs, %.0f s"
        % (args.seed, len(results), args.population, args.jobs, elapsed),
    ] + figure_lines(figures, ",".join(args.sanitizers)) + [
        "survived %d (%d listed unreachable-oom), invalid %d (did not compile)"
        % (t["survived"], figures["survived"]["listed"], t["invalid"]),
        "",
        "%-14s %7s %9s %8s %8s" % ("folder", "killed", "sanitizer", "survived", "release"),
    ]
    for name, f in folders.items():
        lines.append("%-14s %7d %9d %8d %8s" % (name, f["killed"], f["sanitizer"], f["survived"],
                                                fmt(f["score"])))
    for status, title in (("sanitizer", "killed only by a sanitizer run"),
                          ("survived", "survivors")):
        rows = [r for r in results if r["status"] == status]
        lines += ["", "%s (%d):" % (title, len(rows))]
        lines += ["%s:%d: %s    [%s]%s%s" % (r["file"], r["line"], r["mutation"], r["text"],
                                            " (%s)" % ",".join(r["sanitizers"])
                                            if r.get("sanitizers") else "",
                                            "  should be caught by: " + r["should"]
                                            if r.get("should") else "") for r in rows]
    if stale:
        lines += ["", "equivalent.txt entries no mutant matches any more (%d):" % len(stale)]
        lines += ["  " + s.replace("\t", " | ") for s in stale]
    return "\n".join(lines) + "\n"


def fmt(s):
    return "n/a" if s is None else "%.1f%%" % (100 * s)


def changed_lines(rev):
    """The lines of reference/ added or changed since the revision `rev`,
    by file, as the mutants name them (1-based)."""
    diff = subprocess.run(["git", "diff", "-U0", rev, "--", "reference/"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout
    lines, path = {}, None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@") and path:
            start, _, count = line.split()[2][1:].partition(",")
            first, n = int(start), int(count) if count else 1
            lines.setdefault(path, set()).update(range(first, first + n))
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per backend run")
    ap.add_argument("--rerun", action="store_true", help="only the survivors of the last report")
    ap.add_argument("--filter", default="", help="only mutants whose file contains this")
    ap.add_argument("--since", default="", help="only mutants of lines changed since this revision")
    ap.add_argument("--list", action="store_true", help="print the sample and stop")
    ap.add_argument("--category", default="", choices=("",) + CATEGORIES,
                    help="instead of a sample, every mutant ci/mutation/equivalent.txt puts in "
                         "this category (an audit of the entries)")
    for name, what in (("asan", "built with ASan+UBSan"),
                       ("tsan", "both backends, built with TSan"),
                       ("valgrind", "the deterministic backend, under valgrind")):
        ap.add_argument("--" + name, action="store_true",
                        help="certify release survivors again: %s" % what)
    ap.add_argument("--rescore", action="store_true",
                    help="apply equivalent.txt to the last report again, without running")
    args = ap.parse_args()
    args.sanitizers = [n for n in SANITIZERS if getattr(args, n)]
    # The filter the report's sample was cut with: a rerun or a rescore of a
    # filtered report is no score of the whole sample either.
    args.sample_filter = " ".join(f for f in (args.filter, args.since and "since " + args.since) if f)
    if args.category and args.rerun:
        sys.exit("--category audits the reviewed entries; it is not a rerun")
    if args.rescore:
        return rescore(args)

    population = gen.all_mutants(ROOT)
    args.population = len(population)
    picked = gen.sample(population, args.n, args.seed)
    if args.rerun:
        with open(os.path.join(OUT, "report.json")) as f:
            last = json.load(f)
        args.seed, args.n = last["seed"], last.get("n", last["sampled"])
        args.sample_filter = last.get("filter", "")
        # Found by id (file, line text, mutation), not sampled again: the
        # population changes with the code, the survivors' ids do not.
        by_id = {m["id"]: m for m in population}
        listed = load_equivalent()
        # Survivors and what only a sanitizer killed: new cases may kill
        # either in the release runs.
        keep = [r["id"] for r in last["mutants"]
                if (r["status"] in ("survived", "sanitizer") and r["id"] not in listed)
                or withdrawn(r, listed)
                or (r["id"] in listed and r["status"] in ("survived", "sanitizer")
                    and listed[r["id"]]["category"] in ("survivor", "sanitizer"))]
        # And what the sampler draws now for the same seed that the last
        # report lacks (a folder's floor added since it was made).
        ran = {r["id"] for r in last["mutants"]}
        keep += [m["id"] for m in gen.sample(population, args.n, args.seed) if m["id"] not in ran]
        picked = [by_id[i] for i in keep if i in by_id]
        args.gone = len(keep) - len(picked)
        args.last = last
    if args.category:
        # Every mutant of the population a reviewed entry puts in this
        # category, sampled or not: an audit of the entries.
        listed = load_equivalent()
        picked = [m for m in population
                  if m["id"] in listed and listed[m["id"]]["category"] == args.category]
        args.sample_filter = "category " + args.category
    if args.filter:
        picked = [m for m in picked if args.filter in m["file"]]
    if args.since:
        changed = changed_lines(args.since)
        picked = [m for m in picked if m["line"] in changed.get(m["file"], ())]
    if args.list:
        for m in picked:
            print("%s:%d: %s [%s]" % (m["file"], m["line"], m["mutation"], m["operator"]))
        return
    equivalent = load_equivalent()
    generated = {m["id"] for m in population}
    stale = sorted(set(equivalent) - generated)

    start = time.time()
    os.makedirs(OUT, exist_ok=True)
    jobs = [Job(k, args.timeout, args.sanitizers) for k in range(max(1, args.jobs))]
    threads = [threading.Thread(target=j.prepare) for j in jobs]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for j in jobs:
        if j.error:
            sys.exit(j.error)
    baseline(jobs[0])

    todo = queue.Queue()
    results = []
    for m in picked:
        entry = equivalent.get(m["id"])
        verdict = listed_verdict(entry) if entry else None
        if verdict:
            status, sans, why, should = verdict
            results.append(dict(m, status=status, sanitizers=sans, why=why, should=should,
                                seconds=0))
        else:
            todo.put(m)
    total, lock = todo.qsize(), threading.Lock()

    def worker(job):
        while True:
            try:
                m = todo.get_nowait()
            except queue.Empty:
                return
            t0 = time.time()
            try:
                status, sans, why = job.test(m, equivalent.get(m["id"]))
            except Exception as e:  # noqa: BLE001 - a harness failure must not lose the mutant
                status, sans, why = "invalid", [], ("harness error: %r" % e)[:300]
            entry = equivalent.get(m["id"])
            should = entry["reason"] if entry and status == "survived" else ""
            with lock:
                results.append(dict(m, status=status, sanitizers=sans, why=why, should=should,
                                    seconds=round(time.time() - t0, 1)))
                done = sum(1 for r in results if r.get("seconds"))
                tag = " (%s)" % ",".join(sans) if sans else ""
                print("[%d/%d] %-10s %s:%d: %s%s" % (done, total, status, m["file"], m["line"],
                                                     m["mutation"], tag), flush=True)

    threads = [threading.Thread(target=worker, args=(j,)) for j in jobs]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    elapsed = time.time() - start
    order = {m["id"]: k for k, m in enumerate(picked)}
    results.sort(key=lambda r: order[r["id"]])
    write_reports(args, results, elapsed, stale)


def withdrawn(r, equivalent):
    """A mutant counted by a reviewed entry that is no longer in the list, or
    no longer says so (the code it relied on changed, or a review found it
    observable): it must be run again."""
    if not (r.get("why") or "").startswith("listed") and not (
            r["status"] == "equivalent" and r["why"] != "same object code"):
        return False
    entry = equivalent.get(r["id"])
    return entry is None or (listed_verdict(entry) is None and survivor_verdict(entry) is None)


def rescored(r, equivalent):
    """A report row with the reviewed list as it is now."""
    entry = equivalent.get(r["id"])
    verdict = listed_verdict(entry) if entry else None
    if withdrawn(r, equivalent):
        return dict(r, status="survived", sanitizers=[],
                    why="its reviewed entry was withdrawn: run it again",
                    should=entry["reason"] if entry else "")
    if verdict and r["status"] in ("survived", "equivalent", "sanitizer"):
        if r["status"] == "survived" or (r["why"] or "").startswith("listed") or (
                r["status"] == "equivalent" and r["why"] != "same object code"):
            status, sans, why, should = verdict
            return dict(r, status=status, sanitizers=sans, why=why, should=should)
        return r
    if r["status"] == "survived" and survivor_verdict(entry):
        status, sans, why, should = survivor_verdict(entry)
        return dict(r, status=status, sanitizers=sans, why=why, should=should)
    if entry and r["status"] == "survived":
        return dict(r, should=entry["reason"])
    return r


def rescore(args):
    """The last report again, with the reviewed list as it is now."""
    with open(os.path.join(OUT, "report.json")) as f:
        last = json.load(f)
    if last.get("schema") != 2:
        sys.exit("%s: a report of schema %r; run again" % (os.path.join(OUT, "report.json"),
                                                          last.get("schema")))
    equivalent = load_equivalent()
    args.seed, args.jobs, args.population = last["seed"], last["jobs"], last["population"]
    args.n = last.get("n", last["sampled"])
    args.rerun, args.filter = False, ""
    args.sample_filter = last.get("filter", "")
    args.sanitizers = last.get("sanitizer_runs", [])
    results = [rescored(r, equivalent) for r in last["mutants"]]
    generated = {m["id"] for m in gen.all_mutants(ROOT)}
    write_reports(args, results, last["seconds"], sorted(set(equivalent) - generated))


def merge_rerun(args, rerun, elapsed, stale):
    """The last full report with its survivors' new verdicts: the sample's
    score with the suite and the reviewed list as they are now (cases are
    only ever added, so what an older suite killed stays killed).
    Survivors whose code is gone are left as they were."""
    now = {r["id"]: r for r in rerun}
    keys = ("status", "sanitizers", "why", "should", "seconds")
    # Rows not run again take the reviewed list as it is now, as --rescore
    # gives them: an entry written since the last report counts here too.
    equivalent = load_equivalent()
    merged = [dict(r, **{k: now[r["id"]][k] for k in keys})
              if r["id"] in now else rescored(r, equivalent) for r in args.last["mutants"]]
    ran = {r["id"] for r in args.last["mutants"]}
    added = [r for r in rerun if r["id"] not in ran]
    merged += added
    print("rerun: %d survivors run again, %d drawn now that the last report lacked, %d no "
          "longer generated (their code changed)" % (len(rerun) - len(added), len(added), args.gone))
    args.rerun = False
    write_reports(args, merged, args.last["seconds"] + elapsed, stale)


TSV_COLUMNS = ("verdict", "sanitizers", "file", "line", "operator", "mutation", "line_text",
               "why", "should_be_caught_by")


def tsv_field(v):
    """A value as one TSV field: tabs, newlines and backslashes escaped."""
    return str(v if v is not None else "").replace("\\", "\\\\").replace("\t", "\\t").replace(
        "\n", "\\n")


def write_tsv(path, args, results, figures):
    """Every mutant's verdict, one a line, for anyone to audit the figures
    (a mutant's id is its file, line text and mutation)."""
    rel, san, eq = figures["release"], figures["sanitizer"], figures["equivalent"]
    with open(path, "w") as f:
        f.write("# cwrt mutation report: seed %d, %d of %d mutants (ci/mutation/run.py; "
                "ci/mutation/README.md says what each verdict means)\n"
                % (args.seed, len(results), args.population))
        f.write("# (a) release %d of %d killed; (b) sanitizer %d (runs: %s); (c) equivalent %d\n"
                % (rel["killed"], rel["of"], san["killed"], ",".join(args.sanitizers) or "none",
                   eq["total"]))
        f.write("\t".join(TSV_COLUMNS) + "\n")
        for r in results:
            row = (r["status"], ",".join(r.get("sanitizers") or ()), r["file"], r["line"],
                   r["operator"], r["mutation"], r["text"], r.get("why"), r.get("should"))
            f.write("\t".join(tsv_field(v) for v in row) + "\n")


def write_reports(args, results, elapsed, stale):
    t, figures, folders = tally(results)
    today = datetime.date.today().isoformat()
    report = {"schema": 2, "date": today, "seed": args.seed, "n": args.n, "sampled": len(results),
              "population": args.population, "jobs": args.jobs, "seconds": round(elapsed),
              "filter": args.sample_filter, "sanitizer_runs": args.sanitizers,
              **t, "figures": figures, "folders": folders,
              "mutants": [dict({k: r[k] for k in ("id", "file", "line", "operator", "mutation",
                                                  "text", "folder", "status", "why", "seconds")},
                               sanitizers=r.get("sanitizers") or [], should=r.get("should") or "")
                          for r in results]}
    name = "rerun" if args.rerun else "report"
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(report, f, indent=1)
    write_tsv(os.path.join(OUT, name + ".tsv"), args, results, figures)
    if args.rerun and not args.filter and not args.since:
        return merge_rerun(args, results, elapsed, stale)
    text = summary(args, results, elapsed, stale)
    with open(os.path.join(OUT, ("rerun" if args.rerun else "summary") + ".txt"), "w") as f:
        f.write(text)
    sys.stdout.write("\n" + text)
    if not args.rerun and not args.sample_filter and args.n >= MIN_SCORED_SAMPLE:
        short = {"schema": 2, "date": today, "seed": args.seed, "sampled": len(results),
                 "invalid": t["invalid"], "sanitizer_runs": args.sanitizers, **figures,
                 "folders": folders}
        with open(SCORE, "w") as f:
            json.dump(short, f, indent=1)
            f.write("\n")
        write_tsv(SCORE_REPORT, args, results, figures)
        print("wrote %s and %s" % (os.path.relpath(SCORE, ROOT), os.path.relpath(SCORE_REPORT, ROOT)))


if __name__ == "__main__":
    main()
