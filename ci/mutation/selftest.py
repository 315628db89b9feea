#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 OR MIT
"""A fast self-test of the mutant generator (no build): which mutants a small
C text yields, and that nothing inside comments, literals or directives is
ever touched."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutants as gen  # noqa: E402

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
    expect(want <= got, "missing mutants: %s" % sorted(want - got))
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
    print("mutation self-test: %d mutants of reference/, generator ok" % len(ms))


if __name__ == "__main__":
    main()
