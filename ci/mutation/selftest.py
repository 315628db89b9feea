#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""A fast self-test of the mutation harness (no build): which mutants a small
C text yields, that nothing inside comments, literals or directives is ever
touched, that a unary operator is never taken for a binary one, and how the
runner reads the reviewed list and counts its three figures."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutants as gen  # noqa: E402
import run  # noqa: E402

SOURCE = r'''#include <stdio.h>
#define LIMIT(a, b) ((a) < (b) && (b) > 2)
/* a < b && c || d ++ 7 */
static int table[16];

static bool f(int a, int b)
{
    // a <= b
    const char *s = "x < y && 3";
    char c = '<';
    if (a < b && b != 4)
        a++;
    puts(s);
    cw_fatal("never");
    free(s);
    a = b * 2;
    if (c == 0)
        return CW_OK;
    a += b - 1;
    a = -b + (int)-a + (long)&c[0];
    a = b & 3 | (a << 1);
    if (!a)
        g(a, b);
    return false;
}
'''


def expect(cond, what):
    if not cond:
        sys.exit("mutation self-test: " + what)


def main():
    masked = gen.mask(SOURCE)
    expect(len(masked) == len(SOURCE), "the mask changes offsets")
    expect("LIMIT" not in masked and "stdio" not in masked, "a directive left unmasked")
    expect("x < y" not in masked and "a <= b" not in masked, "a literal or comment left unmasked")
    got = {(SOURCE[a:b], rep, op) for a, b, rep, op, _ in gen.ops_for_file(SOURCE)}
    want = {
        ("<", "<=", "relational"), ("&&", "||", "logical"), ("!=", "==", "equality"),
        ("4", "(4 + 1)", "constant+1"), ("4", "(4 - 1)", "constant-1"), ("4", "0", "constant"),
        ("++", "--", "increment"), ("puts(s);", ";", "delete-call"),
        ("b * 2", "(b * 2) + 1", "expression+1"), ("b * 2", "(b * 2) - 1", "expression-1"),
        ("CW_OK", "CW_ERR_CLOSED", "return-flip"), ("false", "true", "return-flip"),
        ("==", "!=", "equality"), ("0", "(0 + 1)", "constant+1"), ("0", "(-1)", "constant"),
    }
    want |= {
        ("+=", "-=", "compound-assignment"), ("-", "+", "arithmetic"), ("&", "|", "arithmetic"),
        ("|", "&", "arithmetic"), ("<<", ">>", "arithmetic"), ("!", "", "negation"),
        ("!a", "1", "condition-true"), ("!a", "0", "condition-false"),
        ("a < b && b != 4", "0", "condition-false"), ("a, b", "b, a", "swap-arguments"),
    }
    expect(want <= got, "missing mutants: %s" % sorted(want - got))
    # `-b`, `(int)-a` and `(long)&c[0]` are unary: only `b - 1` and `b & 3` are binary.
    arith = [before for _, _, _, op, before in gen.ops_for_file(SOURCE) if op == "arithmetic"]
    expect(arith.count("-") == 1 and arith.count("&") == 1,
           "a unary minus or address-of mutated as a binary operator: %s" % arith)
    texts = {m[0] for m in got}
    expect("16" not in texts, "an array size was mutated")
    expect(not any("cw_fatal" in t or "free" in t for t in texts), "an impossible-path call deleted")
    expect(all(SOURCE.count(t) for t in texts), "a mutant of text that is not there")
    ms = gen.all_mutants(os.path.join(os.path.dirname(__file__), "..", ".."))
    expect(len(ms) > 1000, "the reference yields only %d mutants" % len(ms))
    expect(len({m["id"] for m in ms}) == len(ms), "two mutants share an identifier")
    expect(not any(m["file"].startswith("reference/tests/") for m in ms), "a unit test mutated")
    a, b = gen.sample(ms, 50, 1), gen.sample(ms, 50, 1)
    expect(a == b and gen.sample(ms, 50, 2) != a, "sampling is not a function of the seed")
    fewer = [m for m in ms if m is not a[0]]
    kept = [m["id"] for m in gen.sample(fewer, 50, 1)]
    expect(len(set(kept) & set(m["id"] for m in a)) == 49,
           "one mutant gone redraws more of the sample than its own place")
    big = gen.sample(ms, gen.FLOOR_FROM, 1)
    for folder in {m["folder"] for m in ms}:
        has = sum(m["folder"] == folder for m in ms)
        drawn = sum(m["folder"] == folder for m in big)
        expect(drawn >= min(has, gen.FOLDER_FLOOR),
               "a sample of %d draws %d of %s's %d mutants" % (len(big), drawn, folder, has))
    check_reviewed_list()
    check_figures()
    check_sanitizer_logs()
    print("mutation self-test: %d mutants of reference/, generator, reviewed list and "
          "figures ok" % len(ms))


def check_reviewed_list():
    """equivalent.txt's parser: categories, and a bad entry refused."""
    import tempfile
    good = ("# a comment\n"
            "reference/a.c\tx = 1;\t1 => 0\tequivalent\tno reader\n"
            "reference/a.c\t\ty\t= 2;\t2 => 0\tsanitizer:asan,valgrind\ta leak\n"
            "reference/b.c\tf(x);\tf(x); => ;\tunreachable-oom\ta leak after NOMEM\n"
            "reference/b.c\tg(x);\tg(x); => ;\tsurvivor\tcase h should\n")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "eq.txt")
        with open(path, "w") as f:
            f.write(good)
        eq = run.load_equivalent(path)
        expect(eq["reference/a.c\t\ty\t= 2;\t2 => 0"]["sanitizers"] == ["asan", "valgrind"],
               "a line text with tabs, or a sanitizer list, misread")
        got = [run.listed_verdict(e) for e in eq.values()]
        expect([g and g[0] for g in got] == ["equivalent", None, "survived", None],
               "a category counted in the wrong figure: %s" % got)
        # A sanitizer entry is run; only a release survivor takes its verdict.
        got = [run.survivor_verdict(e) for e in eq.values()]
        expect([g and g[0] for g in got] == [None, "sanitizer", None, None],
               "a release survivor's reviewed verdict wrong: %s" % got)
        # A rescore keeps the verdict a sanitizer entry gave; it withdraws
        # only what no entry says any more.
        san_id = "reference/a.c\t\ty\t= 2;\t2 => 0"
        given = {"id": san_id, "status": "sanitizer", "why": "listed: a leak"}
        expect(not run.withdrawn(given, eq), "a rescore withdrew a sanitizer entry's verdict")
        expect(run.withdrawn(dict(given, id="reference/c.c\tz;\t1 => 0"), eq),
               "a verdict whose entry is gone was kept")
        for bad in ("reference/a.c\tx;\t1 => 0\tno reason\n",
                    "reference/a.c\tx;\t1 => 0\tsanitizer:msan\twhy\n",
                    "reference/a.c\tx;\t1 => 0\tequivalent:asan\twhy\n",
                    "reference/a.c\tx;\t1 => 0\tmaybe\twhy\n"):
            with open(path, "w") as f:
                f.write(bad)
            try:
                run.load_equivalent(path)
            except SystemExit:
                continue
            expect(False, "a bad entry accepted: %r" % bad)
    real = run.load_equivalent()
    expect(real and all(e["category"] != "equivalent" or not any(
        w in e["reason"].lower() for w in ("leak", "overrun", "uninitiali", " race"))
        for e in real.values()), "an entry called equivalent whose reason names a leak, "
           "an overrun, an uninitialised read or a race")


def check_figures():
    """A sanitizer kill, listed or measured, counts in (b), never in (c)
    nor in the release kills; an unreachable-oom entry is a survivor."""
    def r(status, why="", sans=(), folder="core"):
        return {"status": status, "why": why, "sanitizers": list(sans), "folder": folder}
    results = [r("killed", "deterministic: FAILED"), r("killed", "native: FAILED"),
               r("sanitizer", "listed: a leak", ["asan"]), r("sanitizer", "tsan on native", ["tsan"]),
               r("equivalent", "same object code"), r("equivalent", "no reader"),
               r("survived", "listed unreachable-oom: x"), r("survived"), r("invalid", "error")]
    t, fig, folders = run.tally(results)
    expect(fig["release"] == {"killed": 2, "of": 6, "score": round(2 / 6, 4)},
           "release figure %s" % fig["release"])
    expect(fig["sanitizer"]["killed"] == 2 and fig["sanitizer"]["listed"] == 1
           and fig["sanitizer"]["by"]["asan"] == 1 and fig["sanitizer"]["by"]["tsan"] == 1
           and fig["sanitizer"]["score_with"] == round(4 / 6, 4),
           "sanitizer figure %s" % fig["sanitizer"])
    expect(fig["equivalent"] == {"total": 2, "same_object_code": 1, "listed": 1},
           "equivalent figure %s" % fig["equivalent"])
    expect(fig["survived"] == {"total": 2, "listed": 1}, "survivors %s" % fig["survived"])
    expect(folders["core"]["score"] == round(2 / 6, 4), "a folder's release score")



def check_sanitizer_logs():
    """A sanitizer's finding is told from its warnings, and a run's first
    failure is named by its case."""
    asan_warning = "==1==WARNING: AddressSanitizer failed to allocate 0x4000000000000020 bytes\n"
    finding = ("==2==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6\n",
               "==3==ERROR: LeakSanitizer: detected memory leaks\n",
               "x.c:3:5: runtime error: signed integer overflow\n",
               "WARNING: ThreadSanitizer: data race (pid=4)\n",
               "==5== Invalid read of size 8\n")
    expect(not run.SANITIZER_REPORT.search(asan_warning + "FAILED: a case\n"),
           "an allocation warning taken for a sanitizer's finding")
    expect(all(run.SANITIZER_REPORT.search(asan_warning + f) for f in finding),
           "a sanitizer's finding not recognised")
    expect(run.first_failure(asan_warning + "FAILED:  c: x.c:1: no\n", 1) == "FAILED:  c: x.c:1: no",
           "a warning named instead of the failing case")
    expect(run.first_failure(asan_warning + finding[0], 1) == finding[0].strip(),
           "a sanitizer's report not named when no case failed")


if __name__ == "__main__":
    main()
