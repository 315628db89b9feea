/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * compare.c - `cw-conformance compare A.json B.json`: what changed between
 * two runs, of one implementation over time or of two implementations, read
 * from their JSON reports.
 *
 * A regression is anything that makes B a worse answer than A:
 *   - a case or requirement that fails (or times out) in B and did not in
 *     A, or that passed in A and does not pass in B (not run, not
 *     applicable, uncovered);
 *   - a profile whose state (state.c) is worse in B: certified, passed,
 *     incomplete, then not declared or not selected (alike), then failed;
 *   - a verdict worse in B: CONFORMANT, PARTIAL, then NOT CONFORMANT.
 * A case or requirement in one report only (the reports of two versions of
 * the suite) is listed apart and is never a regression. Neither is a change
 * of time: a verdict never depends on how fast the machine was
 * (conformance/README.md), so a case that got slower or faster by more
 * than --time-factor (3) and by more than --time-delta ms (50) is only
 * listed, to be looked at.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "harness/compare.h"

static int failing(const char *s)
{
    return s && (!strcmp(s, "fail") || !strcmp(s, "timeout"));
}

static int passing(const char *s)
{
    return s && !strcmp(s, "pass");
}

/* How a status changed from a to b (both present, different). */
static enum cwc_cmp_kind kind_of(const char *a, const char *b)
{
    if ((failing(b) && !failing(a)) || (passing(a) && !passing(b)))
        return CWC_CMP_REGRESSION;
    if (passing(b))
        return CWC_CMP_IMPROVEMENT;
    return CWC_CMP_CHANGE;
}

/* Record a change if there is one; a new key that fails in B is a
 * regression (a new case of the suite that B fails). */
static void note(cwc_cmp_change *list, size_t *n, const char *key, const char *a, const char *b,
                 const char *reason)
{
    enum cwc_cmp_kind kind;
    if (a && b && !strcmp(a, b))
        return;
    if (!b)
        kind = CWC_CMP_ONLY_A;
    else if (!a)
        kind = failing(b) ? CWC_CMP_REGRESSION : CWC_CMP_ONLY_B;
    else
        kind = kind_of(a, b);
    list[(*n)++] = (cwc_cmp_change){key, a, b, failing(b) ? reason : NULL, kind};
}

static const cwc_cmp_case *find_case(const cwc_cmp_run *r, const char *name)
{
    for (size_t i = 0; i < r->ncases; i++)
        if (!strcmp(r->cases[i].name, name))
            return &r->cases[i];
    return NULL;
}

static const cwc_cmp_req *find_req(const cwc_cmp_run *r, const char *id)
{
    for (size_t i = 0; i < r->nreqs; i++)
        if (!strcmp(r->reqs[i].id, id))
            return &r->reqs[i];
    return NULL;
}

static int ran(const char *status)
{
    return passing(status) || failing(status);
}

/* A case that ran in both whose time changed past both limits. */
static void time_case(cwc_comparison *c, const cwc_cmp_case *x, const cwc_cmp_case *y)
{
    double lo = x->seconds < y->seconds ? x->seconds : y->seconds;
    double hi = x->seconds < y->seconds ? y->seconds : x->seconds;
    if (!ran(x->status) || !ran(y->status) || hi - lo <= c->limits.delta_seconds ||
        hi <= lo * c->limits.factor)
        return;
    c->timing[c->ntiming++] = (cwc_cmp_timing){x->name, x->seconds, y->seconds};
}

static void compare_cases(cwc_comparison *c)
{
    const cwc_cmp_run *a = c->a, *b = c->b;
    for (size_t i = 0; i < a->ncases; i++) {
        const cwc_cmp_case *y = find_case(b, a->cases[i].name);
        note(c->cases, &c->ncases, a->cases[i].name, a->cases[i].status, y ? y->status : NULL,
             y ? y->reason : NULL);
        if (y)
            time_case(c, &a->cases[i], y);
    }
    for (size_t i = 0; i < b->ncases; i++)
        if (!find_case(a, b->cases[i].name))
            note(c->cases, &c->ncases, b->cases[i].name, NULL, b->cases[i].status,
                 b->cases[i].reason);
}

static void compare_reqs(cwc_comparison *c)
{
    const cwc_cmp_run *a = c->a, *b = c->b;
    for (size_t i = 0; i < a->nreqs; i++) {
        const cwc_cmp_req *y = find_req(b, a->reqs[i].id);
        note(c->reqs, &c->nreqs, a->reqs[i].id, a->reqs[i].status, y ? y->status : NULL, NULL);
    }
    for (size_t i = 0; i < b->nreqs; i++)
        if (!find_req(a, b->reqs[i].id))
            note(c->reqs, &c->nreqs, b->reqs[i].id, NULL, b->reqs[i].status, NULL);
}

static enum cwc_profile_state run_state(const cwc_cmp_run *r, int p)
{
    size_t counts[CWC_NSTATUS] = {0};
    static const char *const keys[CWC_NSTATUS] = {"pass", "fail", "timeout", "not_applicable",
                                                  "not_run"};
    for (size_t i = 0; i < r->ncases; i++)
        for (int k = 0; k < CWC_NSTATUS; k++)
            counts[k] += r->cases[i].profile == p && !strcmp(r->cases[i].status, keys[k]);
    return cwc_profile_state(r->declared, r->selected, r->certified, p, counts);
}

/* Not declared and not selected are alike: no claim either way. */
static int state_rank(enum cwc_profile_state s)
{
    return s == CWC_PS_NOT_SELECTED ? CWC_PS_NOT_DECLARED : (int)s;
}

static void compare_profiles(cwc_comparison *c)
{
    for (int p = 0; p < CWC_NPROFILES; p++) {
        enum cwc_profile_state sa = run_state(c->a, p), sb = run_state(c->b, p);
        if (sa == sb)
            continue;
        enum cwc_cmp_kind kind = state_rank(sb) < state_rank(sa)   ? CWC_CMP_REGRESSION
                                 : state_rank(sb) > state_rank(sa) ? CWC_CMP_IMPROVEMENT
                                                                   : CWC_CMP_CHANGE;
        c->profiles[c->nprofiles++] = (cwc_cmp_change){
            cwc_profile_name(p), cwc_profile_state_key(sa), cwc_profile_state_key(sb), NULL, kind};
    }
}

static int verdict_rank(const char *v)
{
    return !strcmp(v, "CONFORMANT") ? 2 : !strcmp(v, "PARTIAL") ? 1 : 0;
}

static size_t count_regressions(const cwc_cmp_change *list, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += list[i].kind == CWC_CMP_REGRESSION;
    return k;
}

int cwc_cmp_compare(const cwc_cmp_run *a, const cwc_cmp_run *b, cwc_cmp_limits limits,
                    cwc_comparison *out)
{
    memset(out, 0, sizeof *out);
    *out = (cwc_comparison){.a = a, .b = b, .limits = limits};
    out->cases = calloc(a->ncases + b->ncases + 1, sizeof *out->cases);
    out->reqs = calloc(a->nreqs + b->nreqs + 1, sizeof *out->reqs);
    out->profiles = calloc(CWC_NPROFILES, sizeof *out->profiles);
    out->timing = calloc(a->ncases + 1, sizeof *out->timing);
    if (!out->cases || !out->reqs || !out->profiles || !out->timing) {
        cwc_cmp_release(out);
        return -1;
    }
    compare_cases(out);
    compare_reqs(out);
    compare_profiles(out);
    out->verdict_regressed = verdict_rank(b->verdict) < verdict_rank(a->verdict);
    out->regressions = out->verdict_regressed + count_regressions(out->cases, out->ncases) +
                       count_regressions(out->reqs, out->nreqs) +
                       count_regressions(out->profiles, out->nprofiles);
    return 0;
}

void cwc_cmp_release(cwc_comparison *c)
{
    free(c->cases);
    free(c->reqs);
    free(c->profiles);
    free(c->timing);
    memset(c, 0, sizeof *c);
}

/* ---- the command ---------------------------------------------------------- */

static const char compare_usage[] =
    "usage: cw-conformance compare [OPTION]... A.json B.json\n"
    "What changed from run A to run B, read from their --json reports: cases and\n"
    "requirements that began or stopped passing or failing, profiles whose state\n"
    "changed (certified, passed, incomplete, not declared, not selected, failed),\n"
    "the verdict, and the cases whose time changed a lot. Reports of two versions\n"
    "of the suite may be compared: it is said, and what one suite alone has is\n"
    "listed apart.\n"
    "\n"
    "      --json=FILE          also write the comparison as JSON\n"
    "                           (conformance/compare.schema.json)\n"
    "      --time-factor=F      list a case whose time grew or shrank more than F\n"
    "                           times (default 3) ...\n"
    "      --time-delta=MS      ... and by more than MS milliseconds (default 50)\n"
    "  -h, --help               print this help and exit\n"
    "\n"
    "A regression: a case or requirement that fails in B and did not in A, or that\n"
    "passed in A and does not in B; a profile whose state is worse; a worse verdict\n"
    "(CONFORMANT, PARTIAL, NOT CONFORMANT). A change of time is never one. The text\n"
    "lists each regression and improvement and counts the other changes (not run\n"
    "to not applicable...) by kind; --json lists every change.\n"
    "\n"
    "Exit status: 0 no regression, 1 regressions, 2 a usage error, or a file that\n"
    "cannot be read or is not a report of this schema version (or --json unwritable).\n";

static const struct option compare_options[] = {
    {"json", required_argument, NULL, 'J'},
    {"time-factor", required_argument, NULL, 'F'},
    {"time-delta", required_argument, NULL, 'D'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int take_limit(const char *name, const char *text, double lo, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= lo && v <= 1e9)) {
        fprintf(stderr, "cw-conformance compare: bad number '%s' for --%s\n", text, name);
        return -1;
    }
    *out = v;
    return 0;
}

/* The options; 1 to exit 0 (--help), -1 on a usage error. */
static int compare_args(int argc, char **argv, const char **json, cwc_cmp_limits *limits)
{
    int ch;
    double ms = 50;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", compare_options, NULL)) != -1) {
        int bad = 0;
        if (ch == 'J')
            *json = optarg;
        else if (ch == 'F')
            bad = take_limit("time-factor", optarg, 1, &limits->factor);
        else if (ch == 'D')
            bad = take_limit("time-delta", optarg, 0, &ms);
        else if (ch == 'h') {
            fputs(compare_usage, stdout);
            return 1;
        } else
            bad = -1; /* getopt said why */
        if (bad)
            return -1;
    }
    limits->delta_seconds = ms / 1000;
    if (argc - optind == 2)
        return 0;
    fprintf(stderr, "cw-conformance compare: %s\n",
            argc - optind < 2 ? "two reports are needed, A.json and B.json"
                              : "more than two reports given");
    return -1;
}

int cwc_compare_main(int argc, char **argv)
{
    const char *json = NULL;
    cwc_cmp_limits limits = {.factor = 3};
    int rc = compare_args(argc, argv, &json, &limits);
    if (rc != 0) {
        if (rc < 0)
            fputs("usage: cw-conformance compare [--json=OUT] A.json B.json (--help for more)\n",
                  stderr);
        return rc > 0 ? 0 : CWC_USAGE;
    }
    cwc_cmp_run a, b;
    cwc_comparison c = {0};
    rc = CWC_USAGE;
    int read_a = cwc_cmp_read(argv[optind], &a);
    int read_b = cwc_cmp_read(argv[optind + 1], &b);
    if (read_a == 0 && read_b == 0 && cwc_cmp_compare(&a, &b, limits, &c) != 0)
        fputs("cw-conformance compare: out of memory\n", stderr);
    else if (read_a == 0 && read_b == 0) {
        cwc_cmp_print(stdout, &c);
        rc = json && cwc_cmp_write_json(json, &c) != 0 ? CWC_USAGE : c.regressions ? 1 : 0;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "cw-conformance compare: cannot write to standard output\n");
            rc = CWC_USAGE;
        }
    }
    cwc_cmp_release(&c);
    cwc_cmp_free(&a);
    cwc_cmp_free(&b);
    return rc;
}
