/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * expect.c - --expect FILE: the results a candidate is known to get, so
 * that a run of one not yet conformant answers the question a CI job asks
 * of it: did anything change?
 *
 * The file is plain text, reviewed like code, one case a line:
 *
 *     # comment (a line whose first non-blank character is '#')
 *     backend_table_and_objects  FAIL     the table is a copy (ABI-002)
 *     network_duplex_connections TIMEOUT  the ring stalls under four tasks
 *
 * a case of the suite, the result expected of it (PASS, FAIL, TIMEOUT or
 * SKIP, in any case of letters) and why, which is required. A case the
 * file does not list is expected to pass. The file is read whole before
 * the run: a line that breaks these rules, or names a case the suite does
 * not have, is a usage error naming the file and line.
 *
 * The verdict and the certificate do not change: a run with a case that
 * fails is NOT CONFORMANT, expected or not. What changes is the exit
 * status: 1 only on a regression (a failure the file does not expect) or
 * an unexpected pass (a case expected to fail that passes, the file to be
 * updated), 0 otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "harness/report.h"

static const char *const expected_names[] = {"PASS", "FAIL", "TIMEOUT", "SKIP"};

const char *cwc_expected_name(enum cwc_expected x)
{
    return expected_names[x];
}

const char *cwc_status_word(enum cwc_status s)
{
    return s == CWC_PASS ? "PASS" : s == CWC_FAIL ? "FAIL" : s == CWC_TIMEOUT ? "TIMEOUT" : "SKIP";
}

const char *cwc_outcome_name(enum cwc_outcome o)
{
    static const char *const names[CWC_NOUTCOMES] = {"as_expected", "regression", "unexpected_pass",
                                                     "changed", "unchecked"};
    return names[o];
}

/* ---- Reading the file -------------------------------------------------------------------- */

static const cwc_case *case_named(const char *name)
{
    for (const cwc_case *c = cwc_cases(); c; c = c->next)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

static int bad_line(const char *path, unsigned line, const char *what, const char *word)
{
    fprintf(stderr, "cw-conformance: %s:%u: %s%s%s%s\n", path, line, what, word ? " '" : "",
            word ? word : "", word ? "'" : "");
    return -1;
}

/* The next word of `*p`, cut off in place; "" at the line's end. */
static char *next_word(char **p)
{
    char *w = *p + strspn(*p, " \t");
    char *end = w + strcspn(w, " \t");
    *p = end + (*end != '\0');
    *end = '\0';
    return w;
}

/* One line that is not a comment: its case, expectation and reason. */
static int take_line(const char *path, unsigned line, char *text, cwc_expectations *e)
{
    char *p = text, *name = next_word(&p), *word = next_word(&p);
    const cwc_case *c = case_named(name);
    if (!c)
        return bad_line(path, line, "no case of the suite (--list shows them) is named", name);
    if (!*word)
        return bad_line(path, line, "no result after the case (NAME PASS|FAIL|TIMEOUT|SKIP WHY)",
                        NULL);
    size_t x = 0;
    while (x < 4 && strcasecmp(word, expected_names[x]) != 0)
        x++;
    if (x == 4)
        return bad_line(path, line, "not PASS, FAIL, TIMEOUT or SKIP:", word);
    char *why = p + strspn(p, " \t"), *end = why + strlen(why);
    while (end > why && (end[-1] == ' ' || end[-1] == '\t'))
        *--end = '\0';
    if (!*why)
        return bad_line(path, line, "no reason after the result: say why it is expected", NULL);
    const cwc_expectation *before = cwc_expectation_of(e, c);
    if (before) {
        char first[64];
        snprintf(first, sizeof first, "listed twice (first at line %u):", before->line);
        return bad_line(path, line, first, name);
    }
    cwc_expectation *grown = realloc(e->lines, (e->n + 1) * sizeof *grown);
    char *reason = strdup(why);
    if (!grown || !reason) {
        free(reason);
        e->lines = grown ? grown : e->lines;
        return bad_line(path, line, "out of memory", NULL);
    }
    e->lines = grown;
    e->lines[e->n++] = (cwc_expectation){c, (enum cwc_expected)x, line, reason};
    return 0;
}

int cwc_read_expectations(const char *path, cwc_expectations *e)
{
    *e = (cwc_expectations){.path = path};
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "cw-conformance: %s: cannot read the --expect file: %s\n", path,
                strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t size = 0;
    ssize_t len;
    unsigned line = 0;
    int rc = 0;
    while (rc == 0 && (len = getline(&text, &size, f)) >= 0) {
        line++;
        if ((size_t)len != strlen(text))
            rc = bad_line(path, line, "holds a NUL byte", NULL);
        while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
            text[--len] = '\0';
        const char *first = text + strspn(text, " \t");
        if (rc == 0 && *first && *first != '#')
            rc = take_line(path, line, text, e);
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "cw-conformance: %s: cannot read the --expect file\n", path);
        rc = -1;
    }
    free(text);
    fclose(f);
    if (rc != 0)
        cwc_free_expectations(e);
    return rc;
}

void cwc_free_expectations(cwc_expectations *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->lines[i].reason);
    free(e->lines);
    e->lines = NULL;
    e->n = 0;
}

const cwc_expectation *cwc_expectation_of(const cwc_expectations *e, const cwc_case *c)
{
    for (size_t i = 0; e && i < e->n; i++)
        if (e->lines[i].c == c)
            return &e->lines[i];
    return NULL;
}

/* ---- Judging the results ------------------------------------------------------------------ */

static enum cwc_outcome judge_one(enum cwc_expected want, enum cwc_status got)
{
    bool failed = got == CWC_FAIL || got == CWC_TIMEOUT;
    bool skipped = got == CWC_NA || got == CWC_NOT_RUN;
    if (want == CWC_EXPECT_PASS || want == CWC_EXPECT_SKIP) {
        if (failed)
            return CWC_REGRESSION;
        if (want == CWC_EXPECT_SKIP)
            return skipped ? CWC_AS_EXPECTED : CWC_CHANGED;
        return skipped ? CWC_UNCHECKED : CWC_AS_EXPECTED;
    }
    if (got == CWC_PASS)
        return CWC_UNEXPECTED_PASS;
    if (skipped)
        return CWC_UNCHECKED;
    bool same = (want == CWC_EXPECT_FAIL) == (got == CWC_FAIL);
    return same ? CWC_AS_EXPECTED : CWC_CHANGED;
}

void cwc_judge(cwc_report *r)
{
    if (!r->expect)
        return;
    for (size_t i = 0; i < r->n; i++) {
        cwc_result *x = &r->results[i];
        x->outcome = judge_one(x->expect ? x->expect->expected : CWC_EXPECT_PASS, x->status);
        r->outcomes[x->outcome]++;
    }
}

int cwc_expectation_status(const cwc_report *r)
{
    return r->outcomes[CWC_REGRESSION] || r->outcomes[CWC_UNEXPECTED_PASS] ? 1 : 0;
}

/* ---- Saying so ---------------------------------------------------------------------------- */

/* " (expected FAIL at FILE:3: why)", or " (expected to pass)" for a case
 * the file does not list. */
static void print_expected(FILE *f, const cwc_report *r, const cwc_result *x)
{
    if (!x->expect) {
        fputs(" (expected to pass)", f);
        return;
    }
    fprintf(f, " (expected %s at %s:%u: %.200s)", cwc_expected_name(x->expect->expected),
            r->expect->path, x->expect->line, x->expect->reason);
}

void cwc_print_expectations(FILE *f, const cwc_report *r)
{
    static const char *const labels[CWC_NOUTCOMES] = {
        NULL, "a regression: ", "an unexpected pass: ", "", NULL};
    static const char *const tails[CWC_NOUTCOMES] = {NULL, "", "; update the file",
                                                     "; not counted as unexpected", NULL};
    for (size_t i = 0; i < r->n; i++) {
        const cwc_result *x = &r->results[i];
        if (!labels[x->outcome])
            continue;
        fprintf(f, "%s%s: %s%s",
                x->outcome == CWC_CHANGED ? "changed:      " : "unexpected:   ", x->c->name,
                labels[x->outcome], cwc_status_word(x->status));
        print_expected(f, r, x);
        fprintf(f, "%s\n", tails[x->outcome]);
    }
    size_t bad = r->outcomes[CWC_REGRESSION] + r->outcomes[CWC_UNEXPECTED_PASS];
    if (bad)
        fprintf(f,
                "expectations: %zu unexpected (%zu regression(s), %zu unexpected pass(es)):", bad,
                r->outcomes[CWC_REGRESSION], r->outcomes[CWC_UNEXPECTED_PASS]);
    else
        fputs("expectations: none unexpected:", f);
    fprintf(f, " %zu as expected, %zu changed, %zu not run (%s lists %zu case(s))\n",
            r->outcomes[CWC_AS_EXPECTED], r->outcomes[CWC_CHANGED], r->outcomes[CWC_UNCHECKED],
            r->expect->path, r->expect->n);
}
