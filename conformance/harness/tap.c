/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * tap.c - the TAP version 13 report: one test point per case of the suite,
 * "# SKIP" with the reason for a case not applicable or not run, "# TODO"
 * for one --expect says fails, and the verdict as a closing comment.
 */
#include <stdio.h>
#include <string.h>

#include "harness/report.h"
#include "harness/text.h"

/* TAP reads a description up to '#' and a line up to its end. */
static void one_line(FILE *f, const char *s)
{
    char clean[2048];
    for (const char *p = cwc_clean_utf8(s, 0, clean, sizeof clean); *p; p++)
        fputc(*p == '\n' || *p == '#' ? ' ' : *p, f);
}

/* A case --expect says fails is a TAP "TODO": a known failure, which a
 * TAP consumer does not count (and whose pass it reports as a bonus). */
static bool todo(const cwc_result *x)
{
    return x->expect && x->status != CWC_NA && x->status != CWC_NOT_RUN &&
           (x->expect->expected == CWC_EXPECT_FAIL || x->expect->expected == CWC_EXPECT_TIMEOUT);
}

static void point(FILE *f, size_t i, const cwc_result *x)
{
    int ok = x->status != CWC_FAIL && x->status != CWC_TIMEOUT;
    fprintf(f, "%sok %zu - %s", ok ? "" : "not ", i + 1, x->c->name);
    if (x->status == CWC_NA || x->status == CWC_NOT_RUN) {
        fputs(" # SKIP ", f);
        one_line(f, x->reason);
    } else if (todo(x)) {
        fprintf(f, " # TODO expected %s: ", cwc_expected_name(x->expect->expected));
        one_line(f, x->expect->reason);
    }
    fputc('\n', f);
    if (!ok) {
        fputs("  ---\n  message: '", f);
        char clean[2048];
        for (const char *p = cwc_clean_utf8(x->reason, 0, clean, sizeof clean); *p; p++)
            fputs(*p == '\'' ? "''" : (char[2]){*p == '\n' ? ' ' : *p, 0}, f);
        fprintf(f, "'\n  severity: %s\n  ...\n", x->status == CWC_TIMEOUT ? "timeout" : "fail");
    }
}

int cwc_write_tap(const char *path, const cwc_report *r)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "TAP version 13\n1..%zu\n", r->n);
    for (size_t i = 0; i < r->n; i++)
        point(f, i, &r->results[i]);
    fprintf(f, "# verdict: %s", cwc_verdict_name(r->verdict));
    if (r->verdict == CWC_PARTIAL) {
        fputs(" (", f);
        one_line(f, r->partial_why);
        fputc(')', f);
    }
    fputc('\n', f);
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "cw-conformance: cannot write %s\n", path);
        return -1;
    }
    return 0;
}
