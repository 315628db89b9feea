/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * compare_out.c - a comparison of two runs (compare.c) written for a person
 * (text, on standard output) and for a program (--json, described by
 * conformance/compare.schema.json, written with jansson as the reports are).
 * A candidate's name and a failure's message are printed as valid UTF-8
 * without controls, so that they cannot drive the terminal.
 */
#include <stdio.h>
#include <string.h>

#include "harness/compare.h"
#include "harness/text.h"

const char *cwc_cmp_kind_key(enum cwc_cmp_kind k)
{
    static const char *const keys[] = {"regression", "improvement", "change", "only_a", "only_b"};
    return keys[k];
}

/* The words of the text output, aligned: "only in A" for only_a. */
static const char *kind_text(enum cwc_cmp_kind k)
{
    static const char *const texts[] = {"REGRESSION", "improved", "changed", "only in A",
                                        "only in B"};
    return texts[k];
}

static const char *clean(const char *s, char *buf, size_t len)
{
    return cwc_clean_utf8(s ? s : "", 0, buf, len);
}

static void print_run(FILE *f, const char *label, const cwc_cmp_run *r)
{
    char path[1024], name[512];
    fprintf(f, "%s: %s: %s, suite %s, spec %s: %s\n", label, clean(r->path, path, sizeof path),
            clean(r->backend, name, sizeof name), r->suite_version, r->spec_version, r->verdict);
}

static size_t count_kind(const cwc_cmp_change *list, size_t n, enum cwc_cmp_kind k)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += list[i].kind == k;
    return m;
}

/* The other changes of cases and requirements (not run to not applicable,
 * the bulk of a comparison of two backends that declare different
 * profiles) counted by transition, each transition once; --json lists
 * every one. */
static void print_others(FILE *f, const cwc_cmp_change *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cwc_cmp_change *x = &list[i];
        size_t count = 0, k;
        if (x->kind != CWC_CMP_CHANGE)
            continue; /* only a change has both statuses */
        for (k = 0; k < i; k++)
            if (list[k].kind == CWC_CMP_CHANGE && !strcmp(list[k].a, x->a) &&
                !strcmp(list[k].b, x->b))
                break;
        if (k < i)
            continue; /* its transition was counted */
        for (k = i; k < n; k++)
            count += list[k].kind == CWC_CMP_CHANGE && !strcmp(list[k].a, x->a) &&
                     !strcmp(list[k].b, x->b);
        fprintf(f, "  %-11s %zu from %s to %s (--json lists each)\n", "changed", count, x->a, x->b);
    }
}

/* Each change on a line; with `summarize`, the other changes counted. */
static void print_changes(FILE *f, const char *title, const cwc_cmp_change *list, size_t n,
                          int summarize)
{
    char reason[1024];
    if (!n) {
        fprintf(f, "%-14s no change\n", title);
        return;
    }
    fprintf(f,
            "%-14s %zu changed: %zu regressed, %zu improved, %zu other, %zu only in A, "
            "%zu only in B\n",
            title, n, count_kind(list, n, CWC_CMP_REGRESSION),
            count_kind(list, n, CWC_CMP_IMPROVEMENT), count_kind(list, n, CWC_CMP_CHANGE),
            count_kind(list, n, CWC_CMP_ONLY_A), count_kind(list, n, CWC_CMP_ONLY_B));
    for (size_t i = 0; i < n; i++) {
        const cwc_cmp_change *x = &list[i];
        if (summarize && x->kind == CWC_CMP_CHANGE)
            continue;
        fprintf(f, "  %-11s %-44s %s -> %s", kind_text(x->kind), x->key, x->a ? x->a : "(none)",
                x->b ? x->b : "(none)");
        if (x->reason && *x->reason)
            fprintf(f, ": %s", clean(x->reason, reason, sizeof reason));
        fputc('\n', f);
    }
    if (summarize)
        print_others(f, list, n);
}

static void print_timing(FILE *f, const cwc_comparison *c)
{
    fprintf(f, "%-14s %zu cases slower or faster by more than %gx and %g ms (never a regression)\n",
            "timing:", c->ntiming, c->limits.factor, c->limits.delta_seconds * 1000);
    for (size_t i = 0; i < c->ntiming; i++) {
        const cwc_cmp_timing *t = &c->timing[i];
        int slower = t->b > t->a;
        double lo = slower ? t->a : t->b, hi = slower ? t->b : t->a;
        fprintf(f, "  %-11s %-44s %.3f s -> %.3f s", slower ? "slower" : "faster", t->name, t->a,
                t->b);
        if (lo > 0)
            fprintf(f, " (%.1fx)", hi / lo);
        fputc('\n', f);
    }
}

void cwc_cmp_print(FILE *f, const cwc_comparison *c)
{
    print_run(f, "A", c->a);
    print_run(f, "B", c->b);
    if (strcmp(c->a->suite_version, c->b->suite_version) != 0)
        fprintf(f,
                "note: the suite versions differ (%s, %s): a case or requirement of one suite "
                "only is listed apart, never a regression\n",
                c->a->suite_version, c->b->suite_version);
    if (strcmp(c->a->spec_version, c->b->spec_version) != 0)
        fprintf(f, "note: the spec versions differ (%s, %s)\n", c->a->spec_version,
                c->b->spec_version);
    fprintf(f, "%-14s %s -> %s%s\n", "verdict:", c->a->verdict, c->b->verdict,
            c->verdict_regressed ? " (REGRESSION)" : "");
    print_changes(f, "profiles:", c->profiles, c->nprofiles, 0);
    print_changes(f, "cases:", c->cases, c->ncases, 1);
    print_changes(f, "requirements:", c->reqs, c->nreqs, 1);
    print_timing(f, c);
    fprintf(f, "%-14s %zu\n", "regressions:", c->regressions);
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *opt_string(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *run_json(const cwc_cmp_run *r)
{
    char path[2048];
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "path", clean(r->path, path, sizeof path),
                     "backend", r->backend, "suite_version", r->suite_version, "spec_version",
                     r->spec_version, "verdict", r->verdict);
}

/* `key` names the list's key field ("name", "id", "profile"). */
static json_t *changes_json(const char *key, const cwc_cmp_change *list, size_t n, int reasons)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n && a; i++) {
        const cwc_cmp_change *x = &list[i];
        json_t *o = json_pack("{s:s, s:o, s:o, s:s}", key, x->key, "a", opt_string(x->a), "b",
                              opt_string(x->b), "kind", cwc_cmp_kind_key(x->kind));
        if (o && reasons)
            json_object_set_new(o, "reason", opt_string(x->reason));
        if (!o || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *timing_json(const cwc_comparison *c)
{
    json_t *a = json_array();
    for (size_t i = 0; i < c->ntiming && a; i++) {
        const cwc_cmp_timing *t = &c->timing[i];
        json_t *o = json_pack("{s:s, s:f, s:f, s:s}", "name", t->name, "a_seconds", t->a,
                              "b_seconds", t->b, "direction", t->b > t->a ? "slower" : "faster");
        if (!o || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *comparison_json(const cwc_comparison *c)
{
    return json_pack(
        "{s:s, s:i, s:o, s:o, s:b, s:b, s:{s:f, s:f}, s:{s:s, s:s, s:b}, s:o, s:o, s:o, s:o, "
        "s:I}",
        "kind", "cwrt-conformance-compare", "schema", 1, "a", run_json(c->a), "b", run_json(c->b),
        "suite_versions_differ", strcmp(c->a->suite_version, c->b->suite_version) != 0,
        "spec_versions_differ", strcmp(c->a->spec_version, c->b->spec_version) != 0, "limits",
        "time_factor", c->limits.factor, "time_delta_ms", c->limits.delta_seconds * 1000, "verdict",
        "a", c->a->verdict, "b", c->b->verdict, "regression", c->verdict_regressed, "profiles",
        changes_json("profile", c->profiles, c->nprofiles, 0), "cases",
        changes_json("name", c->cases, c->ncases, 1), "requirements",
        changes_json("id", c->reqs, c->nreqs, 0), "timing", timing_json(c), "regressions",
        (json_int_t)c->regressions);
}

int cwc_cmp_write_json(const char *path, const cwc_comparison *c)
{
    json_t *doc = comparison_json(c);
    if (!doc) {
        fprintf(stderr, "cw-conformance compare: %s: cannot build the JSON (out of memory)\n",
                path);
        return -1;
    }
    int rc =
        json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(doc);
    if (rc != 0)
        fprintf(stderr, "cw-conformance compare: cannot write %s\n", path);
    return rc;
}
