#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Mutation testing of the conformance suite: how many wrong references it rejects.

    run.py [--n N] [--seed S] [--jobs J] [--timeout SECONDS] [--rerun] [--filter SUBSTR]
           [--since REV]

Samples N one-operator mutants of reference/ (mutants.py), builds each in a
scratch copy of the tree under build/mutation/jobK (one per parallel job,
built once, then only the mutated object, the library and cw-conformance are
remade), and runs the release cw-conformance on the deterministic and the
native backend. A mutant is killed when either run fails or outlives the
time limit; one that does not compile is invalid; one that compiles to the
very object code of the original, or that ci/mutation/equivalent.txt lists,
is equivalent. Neither invalid nor equivalent mutants count in the score.

Writes build/mutation/report.json and summary.txt; a run of at least 400
mutants of the whole sample also writes conformance/mutation-score.json.
--rerun runs again only the survivors of the last report (after new cases),
and writes rerun.json and rerun.txt instead; --rescore applies the reviewed
list of equivalent mutants to the last report again, without running.
--since REV keeps only the mutants of lines changed since the git revision
REV: with a large N, every mutant of a change, before it is committed.
--tsan certifies every survivor the native backend can reach once more,
built with ThreadSanitizer, as make check does: a lock dropped or taken
wrongly survives a plain run but not that one. The score stays that of
the plain runs (a certificate is made without a sanitizer); the summary
says how many survivors the TSan run caught, and each report entry why.
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
TREE = ("Makefile", "spec", "reference", "conformance", "ci", "examples", "tools")
BIN = "build/release/bin/cw-conformance"
# Seconds a case may take before it counts as hung: several times the
# slowest case of a correct backend on a loaded machine.
CASE_TIMEOUT = 10
LIB = "build/release/lib/libcwrt.a"
# Warnings are not errors here: a wrong implementation need not be warning-free.
MAKE = ["make", "-s", "CFLAGS=-Wno-error", BIN]
TSAN_BIN = "build/tsan/bin/cw-conformance"
TSAN_LIB = "build/tsan/lib/libcwrt.a"
TSAN_MAKE = ["make", "-s", "CFLAGS=-Wno-error", "VARIANT=tsan", "CC=clang", TSAN_BIN]
# A case under TSan runs several times slower.
TSAN_CASE_TIMEOUT = 40
def reference_backends():
    """The backends of reference/cwrt/registry.h, one X(name) a line."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "reference", "cwrt", "registry.h")
    with open(path) as f:
        return tuple(re.findall(r"^\s*X\((\w+)\)", f.read(), re.M))


BACKENDS = reference_backends()
MIN_SCORED_SAMPLE = 400


def load_equivalent():
    """id -> reason, from the reviewed list (file, line text, mutation, reason; tabs)."""
    eq = {}
    if not os.path.exists(EQUIVALENT):
        return eq
    with open(EQUIVALENT) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            # The line text may hold tabs of its own (a file indented with
            # them): the file is the first field, the mutation and the
            # reason the last two, the line text whatever is between.
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 4 or not parts[-1].strip():
                sys.exit("%s:%d: want file<TAB>line text<TAB>mutation<TAB>reason" % (EQUIVALENT, n))
            eq["\t".join(parts[:-1])] = parts[-1].strip()
    return eq


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

    def __init__(self, k, timeout, tsan=False):
        self.dir = os.path.join(OUT, "job%d" % k)
        self.pristine = os.path.join(self.dir, "pristine")
        self.timeout = timeout
        self.tsan = tsan

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
        if self.tsan:
            r = subprocess.run(TSAN_MAKE, cwd=self.dir, capture_output=True, text=True)
            if r.returncode != 0:
                self.error = "building %s with TSan failed:\n%s%s" % (self.dir, r.stdout, r.stderr)
                return
        shutil.rmtree(self.pristine, ignore_errors=True)
        for rel in self.artifacts():
            dst = os.path.join(self.pristine, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(self.dir, rel), dst)
            if rel.endswith(".o"):
                self.strip(dst, dst + ".stripped")

    def artifacts(self):
        objs = []
        base = os.path.join(self.dir, "build/release/obj/reference")
        for dirpath, _, names in os.walk(base):
            objs += [os.path.relpath(os.path.join(dirpath, n), self.dir)
                     for n in names if n.endswith(".o")]
        if self.tsan:
            base = os.path.join(self.dir, "build/tsan/obj/reference")
            for dirpath, _, names in os.walk(base):
                objs += [os.path.relpath(os.path.join(dirpath, n), self.dir)
                         for n in names if n.endswith(".o")]
            objs += [TSAN_LIB, TSAN_BIN]
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
        if self.tsan:
            rels += [self.object_of(m["file"]).replace("/release/", "/tsan/"), TSAN_LIB, TSAN_BIN]
        for rel in rels:
            shutil.copy2(os.path.join(self.pristine, rel), os.path.join(self.dir, rel))

    def run_backend(self, backend, tsan=False):
        env = dict(os.environ)
        log = os.path.join(self.dir, "run-%s%s.txt" % (backend, "-tsan" if tsan else ""))
        # One failing case kills the mutant: the run stops there. A case
        # that hangs fails after CASE_TIMEOUT seconds; `self.timeout` bounds
        # the whole run.
        args = [os.path.join(self.dir, TSAN_BIN if tsan else BIN), "--backend", backend,
                "--fail-fast", "--timeout", str(TSAN_CASE_TIMEOUT if tsan else CASE_TIMEOUT)]
        with open(log, "w") as out:
            p = subprocess.Popen(args,
                                 cwd=self.dir, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, env=env)
            try:
                p.wait(timeout=self.timeout * (4 if tsan else 1))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
                return "timeout after %ds" % (self.timeout * (4 if tsan else 1))
            finally:
                self.kill_strays(TSAN_BIN if tsan else BIN)
        if p.returncode == 0:
            return None
        with open(log, errors="replace") as f:
            failed = [line for line in f.read().splitlines()
                      if line.startswith("FAILED:") or ":F:" in line or ":E:" in line]
        return (failed[0] if failed else "exit status %d" % p.returncode)[:300]

    def kill_strays(self, binary):
        """End what a run left behind: a case's process may have a process
        group of its own, so only its executable says it is this job's."""
        exe = os.path.realpath(os.path.join(self.dir, binary))
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                if os.readlink("/proc/%s/exe" % pid) == exe:
                    os.kill(int(pid), 9)
            except OSError:
                pass

    def test(self, m):
        """The mutant's status and, when killed, by what."""
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
                return "invalid", (err[0] if err else "build failed")[:300]
            obj = os.path.join(self.dir, self.object_of(m["file"]))
            self.strip(obj, obj + ".stripped")
            same = filecmp.cmp(obj + ".stripped",
                               os.path.join(self.pristine, self.object_of(m["file"])) + ".stripped",
                               shallow=False)
            if same:
                return "equivalent", "same object code"
            for b in backends_reaching(m["folder"]):
                why = self.run_backend(b)
                if why:
                    return "killed", "%s: %s" % (b, why)
            return "survived", self.under_tsan(m)
        finally:
            self.restore(m, text, st)

    def under_tsan(self, m):
        """For a survivor: what the native run built with TSan says of it
        (None: it passes that too, or --tsan was not asked for)."""
        if not self.tsan or "native" not in backends_reaching(m["folder"]):
            return None
        r = subprocess.run(TSAN_MAKE, cwd=self.dir, capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            return None
        why = self.run_backend("native", tsan=True)
        return "caught under TSan: %s" % why if why else None


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
    why = job.run_backend("native", tsan=True) if job.tsan else None
    if why:
        sys.exit("the suite fails on the unmutated tree (native under TSan): %s" % why)


def score(k, s):
    return round(k / (k + s), 4) if k + s else None


def tally(results):
    t = {"killed": 0, "survived": 0, "invalid": 0, "equivalent": 0}
    folders = {}
    for r in results:
        t[r["status"]] += 1
        f = folders.setdefault(r["folder"], {"killed": 0, "survived": 0})
        if r["status"] in f:
            f[r["status"]] += 1
    for f in folders.values():
        f["score"] = score(f["killed"], f["survived"])
    return t, dict(sorted(folders.items()))


def summary(args, results, elapsed, stale):
    t, folders = tally(results)
    same = sum(1 for r in results if r["status"] == "equivalent" and r["why"] == "same object code")
    lines = [
        "mutation: seed %d, %d mutants sampled of %d, %d jobs, %.0f s"
        % (args.seed, len(results), args.population, args.jobs, elapsed),
        "killed %d, survived %d, invalid %d (did not compile), equivalent %d "
        "(%d same object code, %d listed in ci/mutation/equivalent.txt)"
        % (t["killed"], t["survived"], t["invalid"], t["equivalent"], same, t["equivalent"] - same),
        "score %s" % fmt(score(t["killed"], t["survived"])),
        "",
        "%-14s %7s %8s %7s" % ("folder", "killed", "survived", "score"),
    ]
    for name, f in folders.items():
        lines.append("%-14s %7d %8d %7s" % (name, f["killed"], f["survived"], fmt(f["score"])))
    surv = [r for r in results if r["status"] == "survived"]
    caught = [r for r in surv if (r.get("why") or "").startswith("caught under TSan")]
    if args.tsan:
        lines += ["", "survivors the native run under TSan caught (as make check runs it): %d of %d"
                  % (len(caught), len(surv))]
    lines += ["", "survivors (%d):" % len(surv)]
    lines += ["%s:%d: %s    [%s]%s" % (r["file"], r["line"], r["mutation"], r["text"],
                                        " (TSan)" if r in caught else "") for r in surv]
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
    ap.add_argument("--tsan", action="store_true",
                    help="certify survivors the native backend reaches again, built with TSan")
    ap.add_argument("--rescore", action="store_true",
                    help="apply equivalent.txt to the last report again, without running")
    args = ap.parse_args()
    # The filter the report's sample was cut with: a rerun or a rescore of a
    # filtered report is no score of the whole sample either.
    args.sample_filter = " ".join(f for f in (args.filter, args.since and "since " + args.since) if f)
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
        keep = [r["id"] for r in last["mutants"]
                if r["status"] == "survived" or withdrawn(r, listed)]
        picked = [by_id[i] for i in keep if i in by_id]
        args.gone = len(keep) - len(picked)
        args.last = last
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
    jobs = [Job(k, args.timeout, args.tsan) for k in range(max(1, args.jobs))]
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
        if m["id"] in equivalent:
            results.append(dict(m, status="equivalent", why=equivalent[m["id"]], seconds=0))
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
                status, why = job.test(m)
            except Exception as e:  # noqa: BLE001 - a harness failure must not lose the mutant
                status, why = "invalid", ("harness error: %r" % e)[:300]
            with lock:
                results.append(dict(m, status=status, why=why, seconds=round(time.time() - t0, 1)))
                done = sum(1 for r in results if r.get("seconds"))
                tsan = " (caught under TSan)" if (why or "").startswith("caught under TSan") else ""
                print("[%d/%d] %-10s %s:%d: %s%s" % (done, total, status, m["file"], m["line"],
                                                     m["mutation"], tsan), flush=True)

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
    """A mutant counted equivalent by a reviewed entry that is no longer in
    the list (the code it relied on changed): it must be run again."""
    return (r["status"] == "equivalent" and r["why"] != "same object code"
            and r["id"] not in equivalent)


def rescore(args):
    """The last report again, with the reviewed list as it is now."""
    with open(os.path.join(OUT, "report.json")) as f:
        last = json.load(f)
    equivalent = load_equivalent()
    args.seed, args.jobs, args.population = last["seed"], last["jobs"], last["population"]
    args.n = last.get("n", last["sampled"])
    args.rerun, args.filter = False, ""
    args.sample_filter = last.get("filter", "")
    results = []
    for r in last["mutants"]:
        if r["id"] in equivalent and r["status"] == "survived":
            r = dict(r, status="equivalent", why=equivalent[r["id"]])
        elif withdrawn(r, equivalent):
            r = dict(r, status="survived", why="its equivalence was withdrawn: run it again")
        results.append(r)
    generated = {m["id"] for m in gen.all_mutants(ROOT)}
    write_reports(args, results, last["seconds"], sorted(set(equivalent) - generated))


def merge_rerun(args, rerun, elapsed, stale):
    """The last full report with its survivors' new verdicts: the sample's
    score with the suite as it is now (cases are only ever added, so what
    an older suite killed stays killed). Survivors whose code is gone are
    left as they were."""
    now = {r["id"]: r for r in rerun}
    merged = [dict(r, **{k: now[r["id"]][k] for k in ("status", "why", "seconds")})
              if r["id"] in now else r for r in args.last["mutants"]]
    print("rerun: %d survivors run again, %d no longer generated (their code changed)"
          % (len(rerun), args.gone))
    args.rerun = False
    write_reports(args, merged, args.last["seconds"] + elapsed, stale)


def write_reports(args, results, elapsed, stale):
    t, folders = tally(results)
    today = datetime.date.today().isoformat()
    report = {"schema": 1, "date": today, "seed": args.seed, "n": args.n, "sampled": len(results),
              "population": args.population, "jobs": args.jobs, "seconds": round(elapsed),
              "filter": args.sample_filter,
              **t, "score": score(t["killed"], t["survived"]), "folders": folders,
              "mutants": [{k: r[k] for k in ("id", "file", "line", "operator", "mutation",
                                             "text", "folder", "status", "why", "seconds")}
                          for r in results]}
    name = "rerun" if args.rerun else "report"
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(report, f, indent=1)
    if args.rerun and not args.filter and not args.since:
        return merge_rerun(args, results, elapsed, stale)
    text = summary(args, results, elapsed, stale)
    with open(os.path.join(OUT, ("rerun" if args.rerun else "summary") + ".txt"), "w") as f:
        f.write(text)
    sys.stdout.write("\n" + text)
    if not args.rerun and not args.sample_filter and args.n >= MIN_SCORED_SAMPLE:
        short = {"schema": 1, "date": today, "seed": args.seed, "sampled": len(results),
                 "invalid": t["invalid"], "equivalent": t["equivalent"], "killed": t["killed"],
                 "survived": t["survived"], "score": score(t["killed"], t["survived"]),
                 "folders": folders}
        with open(SCORE, "w") as f:
            json.dump(short, f, indent=1)
            f.write("\n")
        print("wrote %s" % os.path.relpath(SCORE, ROOT))


if __name__ == "__main__":
    main()
