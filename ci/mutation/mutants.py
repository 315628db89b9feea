# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Mutant generation: one-operator mutants of the reference's C sources.

A source file is first masked: comments, string and character literals and
preprocessor lines (with their continuations) become blanks, so no operator
ever fires inside them and every offset still points into the original text.
The masked text is tokenised and each operator walks the tokens.

A mutant is (path, start, end, replacement): the bytes [start, end) of the
file replaced. Its identifier is stable across runs that move lines around:
path, the mutated line's text, the mutation, and an occurrence number when
the same mutation of the same line text appears more than once in a file.
"""

import hashlib
import os
import re

ROOT_DIRS = ("reference",)
EXCLUDED_DIRS = ("reference/tests",)
# Files of reference/ that no backend implements, so the conformance suite,
# which certifies backends, has nothing to say about them; their unit tests
# cover them.
EXCLUDED_FILES = {
    # cw_check_determinism: a tool over the public interface (the event log
    # of DET-016), tested by reference/tests/test_determinism.c.
    "reference/cwrt/determinism.c",
    # cw_trace: the event log written as Chrome trace JSON, checked by
    # make trace-check (tools/trace/).
    "reference/cwrt/trace.c",
    # cw_tree_dump: a view of the supervision tree for people, tested by
    # reference/tests/test_tree.c; no rule of spec/ is about it. The core's
    # walk serves it alone.
    "reference/cwrt/tree_dump.c",
    "reference/core/tree_walk.c",
    # cw_backend_derive: tables made from the reference's (the negative
    # corpus of conformance/mutants/, the kit's skeleton). Certifying the
    # reference's own tables never calls it; reference/tests/test_derive.c
    # tests it, and make check certifies every derived table of the corpus.
    "reference/cwrt/derive.c",
}

# Calls whose deletion only matters on an impossible path (cw_fatal ends the
# process on a broken invariant or exhausted memory) or only leaks memory,
# which no in-process case can observe (valgrind and ASan in `make check` do).
NO_DELETE_CALLS = {"cw_fatal", "abort", "free", "assert", "static_assert", "_Static_assert"}

KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "_Bool", "_Atomic", "_Alignof",
    "_Thread_local", "_Noreturn", "_Static_assert", "_Generic", "bool", "true", "false", "NULL",
}

TOKEN_RE = re.compile(
    r"""(?P<float>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?[fFlL]?|\d+[eE][+-]?\d+[fFlL]?)
      | (?P<int>0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*)
      | (?P<ident>[A-Za-z_]\w*)
      | (?P<op>\.\.\.|<<=|>>=|->|\+\+|--|&&|\|\||<=|>=|==|!=|<<|>>|\+=|-=|\*=|/=|%=|&=|\|=|\^=
              |[-+*/%&|^!~<>=?:;,.(){}\[\]])""",
    re.X,
)

ROR = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
EQ = {"==": "!=", "!=": "=="}
LOR = {"&&": "||", "||": "&&"}
INC = {"++": "--", "--": "++"}
# The error a flipped `return CW_OK` returns instead: any error would do.
FLIP_ERROR = "CW_ERR_CLOSED"


def mask(text):
    """The text with comments, literals and preprocessor lines blanked."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if line_start and c in " \t":
            i += 1
            continue
        if line_start and c == "#":
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                if text.startswith("/*", j):  # a comment inside a directive
                    e = text.find("*/", j + 2)
                    j = n if e < 0 else e + 2
                    continue
                j += 1
            blank(i, j)
            i = j
            continue
        line_start = False
        if c == "\n":
            line_start = True
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)  # keep the quotes: a literal is still a token
            i = j + 1
        else:
            i += 1
    return "".join(out)


class Tok:
    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind, text, start, end):
        self.kind, self.text, self.start, self.end = kind, text, start, end


def tokenize(masked):
    toks = []
    pos, n = 0, len(masked)
    while pos < n:
        c = masked[pos]
        if c.isspace():
            pos += 1
            continue
        if c in "\"'":
            e = masked.index(c, pos + 1)
            toks.append(Tok("lit", masked[pos:e + 1], pos, e + 1))
            pos = e + 1
            continue
        m = TOKEN_RE.match(masked, pos)
        if not m:
            toks.append(Tok("op", c, pos, pos + 1))
            pos += 1
            continue
        toks.append(Tok(m.lastgroup, m.group(), m.start(), m.end()))
        pos = m.end()
    return toks


def matching(toks, i, open_, close):
    """Index of the token closing the bracket at toks[i]."""
    depth = 0
    for k in range(i, len(toks)):
        if toks[k].text == open_:
            depth += 1
        elif toks[k].text == close:
            depth -= 1
            if depth == 0:
                return k
    return None


def int_value(lit):
    s = lit.rstrip("uUlL")
    return int(s, 16) if s[:2].lower() == "0x" else int(s, 8) if len(s) > 1 and s[0] == "0" else int(s)


def is_array_size(toks, i):
    """Whether toks[i] sits in the brackets of an array declarator."""
    k = i - 1
    while k >= 0 and toks[k].text not in "[;{}":
        k -= 1
    if k < 2 or toks[k].text != "[":
        return False
    name, before = toks[k - 1], toks[k - 2]
    return name.kind == "ident" and (
        (before.kind == "ident" and before.text not in ("return", "sizeof", "case"))
        or before.text == "*")


def statement_starts(toks):
    """Indices of tokens that begin a statement (after ; { } or a control header)."""
    starts = []
    for i, t in enumerate(toks):
        if i == 0:
            continue
        p = toks[i - 1]
        if p.text in (";", "{", "}") or p.text in ("else", "do"):
            starts.append(i)
        elif p.text == ")":
            # a control header's closing paren: if (...) stmt
            depth, k = 0, i - 1
            while k >= 0:
                if toks[k].text == ")":
                    depth += 1
                elif toks[k].text == "(":
                    depth -= 1
                    if depth == 0:
                        break
                k -= 1
            if k > 0 and toks[k - 1].text in ("if", "while", "for"):
                starts.append(i)
    return starts


def statement_end(toks, i):
    """Index of the `;` ending the statement at toks[i] (paren depth 0), or None."""
    depth = 0
    for k in range(i, len(toks)):
        t = toks[k].text
        if t in "({[":
            depth += 1
        elif t in ")}]":
            depth -= 1
            if depth < 0:
                return None
        elif t == ";" and depth == 0:
            return k
    return None


def in_function(toks):
    """Per token: whether it is inside a function body (brace depth > 0 below a `)`)."""
    inside = [False] * len(toks)
    depth, fn_depth = 0, None
    for i, t in enumerate(toks):
        if t.text == "{":
            if depth == 0 and i > 0 and toks[i - 1].text == ")":
                fn_depth = 1
            depth += 1
        elif t.text == "}":
            depth -= 1
            if depth == 0:
                fn_depth = None
        inside[i] = fn_depth is not None and depth > 0
    return inside


def ops_for_file(text):
    """(start, end, replacement, operator, before) for every mutant of a file."""
    masked = mask(text)
    toks = tokenize(masked)
    inside = in_function(toks)
    out = []
    starts = set(statement_starts(toks))

    def add(a, b, rep, op):
        out.append((a, b, rep, op, text[a:b]))

    for i, t in enumerate(toks):
        if not inside[i]:
            continue
        s = t.text
        if s in ROR:
            add(t.start, t.end, ROR[s], "relational")
        elif s in EQ:
            add(t.start, t.end, EQ[s], "equality")
        elif s in LOR:
            add(t.start, t.end, LOR[s], "logical")
        elif s in INC:
            add(t.start, t.end, INC[s], "increment")
        elif s in ("true", "false"):
            prev = toks[i - 1].text
            op = "return-flip" if prev == "return" else "constant"
            add(t.start, t.end, "false" if s == "true" else "true", op)
        elif s == "return" and i + 2 < len(toks) and toks[i + 2].text == ";":
            v = toks[i + 1].text
            if v == "CW_OK":
                add(toks[i + 1].start, toks[i + 1].end, FLIP_ERROR, "return-flip")
            elif v.startswith("CW_ERR_"):
                add(toks[i + 1].start, toks[i + 1].end, "CW_OK", "return-flip")
        if t.kind == "int" and not is_array_size(toks, i):
            v = int_value(s)
            if toks[i - 1].text == "return" and toks[i + 1].text == ";" and v in (0, 1):
                add(t.start, t.end, "1" if v == 0 else "0", "return-flip")
            add(t.start, t.end, "(%s + 1)" % s, "constant+1")
            if v != 0:
                add(t.start, t.end, "(%s - 1)" % s, "constant-1")
            if v not in (0, 1):
                add(t.start, t.end, "0", "constant")
            elif v == 0:
                add(t.start, t.end, "(-1)", "constant")
    for i in sorted(starts):
        if not inside[i]:
            continue
        end = statement_end(toks, i)
        if end is None:
            continue
        body = toks[i:end]
        if toks[i].text == "return" and len(body) > 1:
            expr = body[1:]
            if len(expr) == 1 and (expr[0].kind == "int" or expr[0].text in KEYWORDS
                                   or expr[0].text.startswith("CW_")):
                continue
            if expr[0].text == "{" or expr[0].kind == "lit" or not arithmetic(expr):
                continue
            a, b = expr[0].start, expr[-1].end
            add(a, b, "(%s) + 1" % text[a:b], "expression+1")
            add(a, b, "(%s) - 1" % text[a:b], "expression-1")
            continue
        eq = [k for k in range(i, end) if toks[k].text == "=" and depth_at(toks, i, k) == 0]
        if eq and toks[i].text not in ("for", "if", "while", "switch", "return"):
            k = eq[0]
            expr = toks[k + 1:end]
            if expr and expr[0].text != "{" and arithmetic(expr):
                a, b = expr[0].start, expr[-1].end
                add(a, b, "(%s) + 1" % text[a:b], "expression+1")
                add(a, b, "(%s) - 1" % text[a:b], "expression-1")
            continue
        call = call_statement(toks, i, end)
        if call and call not in NO_DELETE_CALLS:
            a, b = toks[i].start, toks[end].end
            add(a, b, ";" + "\n" * text.count("\n", a, b), "delete-call")
    # The operators added later come last, so the occurrence numbers of the
    # earlier ones' ids (which equivalent.txt keys on) stay as they were.
    for i, t in enumerate(toks):
        if inside[i]:
            for a, b, rep, op in later_ops(toks, i, text):
                add(a, b, rep, op)
    return out


# Binary operators swapped: only where the token follows a value, so a
# unary minus, an address-of or a dereference is never taken for one.
BINARY = {"+": "-", "-": "+", "<<": ">>", ">>": "<<", "&": "|", "|": "&"}
COMPOUND = {"+=": "-=", "-=": "+=", "|=": "&=", "&=": "|=", "<<=": ">>=", ">>=": "<<="}
# Words that may precede a parenthesised type in a cast.
TYPE_WORDS = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
              "const", "volatile", "struct", "union", "enum", "_Bool", "bool", "_Atomic"}


def later_ops(toks, i, text):
    """The mutants of binary arithmetic, compound assignment, condition
    deletion, removed negation and swapped arguments at toks[i]."""
    t, s = toks[i], toks[i].text
    if s in BINARY and i > 0 and follows_value(toks, i):
        yield t.start, t.end, BINARY[s], "arithmetic"
    elif s in COMPOUND:
        yield t.start, t.end, COMPOUND[s], "compound-assignment"
    elif s == "!" and i + 1 < len(toks):
        yield t.start, t.end, "", "negation"
    elif s == "if" and i + 1 < len(toks) and toks[i + 1].text == "(":
        close = matching(toks, i + 1, "(", ")")
        if close is not None and close > i + 2:
            a, b = toks[i + 2].start, toks[close - 1].end
            if not (close == i + 3 and toks[i + 2].kind == "int"):
                yield a, b, "1", "condition-true"
                yield a, b, "0", "condition-false"
    elif t.kind == "ident" and s not in KEYWORDS and i + 5 < len(toks):
        args = toks[i + 1:i + 6]
        if ([x.text for x in args[::2]] == ["(", ",", ")"] and args[1].kind == args[3].kind == "ident"
                and args[1].text != args[3].text and not {args[1].text, args[3].text} & KEYWORDS):
            yield (args[1].start, args[3].end, "%s, %s" % (args[3].text, args[1].text),
                   "swap-arguments")


def follows_value(toks, i):
    """Whether toks[i] follows an operand, which makes it a binary operator."""
    p = toks[i - 1]
    if p.kind in ("int", "float", "lit"):
        return True
    if p.kind == "ident":
        return p.text not in KEYWORDS or p.text in ("true", "false", "NULL")
    if p.text == "]":
        return True
    if p.text != ")":
        return False
    # `(type)-x` is a cast of a unary operand; `f(x) - y` and `(a) - b` are not.
    k = i - 1
    depth = 0
    while k >= 0:
        depth += toks[k].text == ")"
        depth -= toks[k].text == "("
        if depth == 0:
            break
        k -= 1
    return not is_cast(toks, k, i - 1)


def is_cast(toks, open_, close):
    """Whether toks[open_:close+1] is a parenthesised type name before an operand."""
    if open_ <= 0 or toks[open_ - 1].kind == "ident" and toks[open_ - 1].text not in KEYWORDS:
        return False  # a call's argument list, or sizeof(...)'s
    if toks[open_ - 1].text in (")", "]", "sizeof"):
        return False
    inner = toks[open_ + 1:close]
    if not inner or not all(x.kind == "ident" or x.text == "*" for x in inner):
        return False
    return (inner[-1].text == "*" or any(x.text in TYPE_WORDS for x in inner)
            or (len(inner) == 1 and (inner[0].text.endswith("_t") or inner[0].text.startswith("cw_"))))


ARITH = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "sizeof"}


def arithmetic(expr):
    """Whether an expression computes a value (a binary arithmetic operator or
    sizeof outside any call): the expressions where an off-by-one means
    something. A bare name or call is left to the other operators, which keeps
    pointer arithmetic (a crash, not a subtle bug) out of the sample."""
    depth = 0
    for k, t in enumerate(expr):
        if t.text in "([":
            depth += 1
        elif t.text in ")]":
            depth -= 1
        elif depth == 0 and t.text in ARITH and k > 0 and (
                t.text == "sizeof" or expr[k - 1].kind in ("ident", "int")
                or expr[k - 1].text in (")", "]")):
            return True
    return False


def depth_at(toks, i, k):
    depth = 0
    for j in range(i, k):
        if toks[j].text in "({[":
            depth += 1
        elif toks[j].text in ")}]":
            depth -= 1
    return depth


def call_statement(toks, i, end):
    """The called name when toks[i:end] is `[(void)] a.b->c(args)`, else None."""
    k = i
    if toks[k].text == "(" and k + 2 < end and toks[k + 1].text == "void" and toks[k + 2].text == ")":
        k += 3
    if k >= end or toks[k].kind != "ident" or toks[k].text in KEYWORDS:
        return None
    name = toks[k].text
    k += 1
    while k + 1 < end and toks[k].text in (".", "->") and toks[k + 1].kind == "ident":
        name = toks[k + 1].text
        k += 2
    if k >= end or toks[k].text != "(":
        return None
    close = matching(toks, k, "(", ")")
    return name if close == end - 1 else None


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def line_text(text, offset):
    a = text.rfind("\n", 0, offset) + 1
    b = text.find("\n", offset)
    return text[a:len(text) if b < 0 else b]


def source_files(root):
    files = []
    for d in ROOT_DIRS:
        for dirpath, dirnames, names in os.walk(os.path.join(root, d)):
            rel = os.path.relpath(dirpath, root)
            if any(rel == x or rel.startswith(x + "/") for x in EXCLUDED_DIRS):
                dirnames[:] = []
                continue
            dirnames.sort()
            files += [os.path.join(rel, f) for f in sorted(names)
                      if f.endswith(".c") and os.path.join(rel, f) not in EXCLUDED_FILES]
    return sorted(files)


def describe(before, after):
    if not after.strip():
        return "%s => (removed)" % " ".join(before.split())
    if after.startswith(";") and after.strip() == ";":
        return "%s => ;" % " ".join(before.split())
    return "%s => %s" % (" ".join(before.split()), " ".join(after.split()))


def all_mutants(root):
    """Every mutant of the tree at root, in a fixed order, each a dict."""
    result = []
    for path in source_files(root):
        with open(os.path.join(root, path)) as f:
            text = f.read()
        seen = set()
        counts = {}
        for a, b, rep, op, before in ops_for_file(text):
            if (a, b, rep) in seen:
                continue
            seen.add((a, b, rep))
            lt = line_text(text, a).strip()
            mut = describe(before, rep)
            key = (lt, mut)
            counts[key] = counts.get(key, 0) + 1
            ident = "%s\t%s\t%s" % (path, lt, mut)
            if counts[key] > 1:
                ident += " #%d" % counts[key]
            result.append({
                "id": ident, "file": path, "line": line_of(text, a), "start": a, "end": b,
                "replacement": rep, "operator": op, "mutation": mut, "text": lt,
                "folder": path.split("/")[1],
            })
    return result


def sample_key(m, seed):
    """A mutant's place in the draw: a hash of the seed and its id alone, so
    an edit elsewhere in reference/ leaves the rest of the sample as it was
    (drawing by index would redraw all of it whenever a mutant came or went)."""
    return hashlib.sha256(("%d\t%s" % (seed, m["id"])).encode()).digest()


# Each folder of reference/ has at least this many mutants in a sample of
# FLOOR_FROM or more (or all of its own, when it has fewer): a uniform draw
# of 400 takes none of a folder of a dozen and a handful of a small one,
# whose figure is then no measure at all. 30, not fewer: a folder's figure
# is held to 90%, and with a dozen scored mutants one survivor alone moves
# it by 8 points, so the bar would measure the draw more than the suite.
FOLDER_FLOOR = 30
FLOOR_FROM = 400


def sample(mutants, n, seed):
    """`n` mutants drawn uniformly (by sample_key), then, for a sample of
    FLOOR_FROM or more, each folder's next ones in the same order until it
    has FOLDER_FLOOR."""
    if n >= len(mutants):
        return list(mutants)
    order = sorted(mutants, key=lambda m: sample_key(m, seed))
    picked = set(id(m) for m in order[:n])
    if n >= FLOOR_FROM:
        count = {}
        for m in order[:n]:
            count[m["folder"]] = count.get(m["folder"], 0) + 1
        for m in order[n:]:
            if count.get(m["folder"], 0) < FOLDER_FLOOR:
                count[m["folder"]] = count.get(m["folder"], 0) + 1
                picked.add(id(m))
    return [m for m in mutants if id(m) in picked]


def apply(text, m):
    return text[:m["start"]] + m["replacement"] + text[m["end"]:]
