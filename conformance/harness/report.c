/*
 * report.c - build a Check suite of the cases a backend can run, run it,
 * and write the JSON report and the certificate.
 *
 * A case is skipped only when it needs a capability the backend declares
 * absent; the report names that capability, so a skip is never silent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cwc.h"
#include "harness/report.h"

typedef struct cwc_req {
    const char *id;
    const char *section;
} cwc_req;

/* Generated from the spec files by the build: every numbered requirement. */
static const cwc_req requirements[] = {
#define CWC_REQ(id, section) {id, section},
#include "reqs.inc"
#undef CWC_REQ
};
#define NREQS (sizeof requirements / sizeof requirements[0])

enum outcome { SKIP, PASS, FAIL };

typedef struct result {
    const cwc_case *c;
    enum outcome outcome;
    char reason[512];
} result;

static const struct {
    uint64_t bit;
    const char *name;
} capability_names[] = {
    {CW_CAP_DETERMINISTIC, "deterministic"},
    {CW_CAP_AUDIT, "audit"},
    {CW_CAP_PARALLEL, "parallel"},
    {CW_CAP_PERSISTENT_STORAGE, "persistent-storage"},
    {CW_CAP_RECOVER, "recover"},
};
#define NCAPS (sizeof capability_names / sizeof capability_names[0])

static void caps_text(uint64_t caps, char *out, size_t len)
{
    out[0] = '\0';
    for (size_t i = 0; i < NCAPS; i++)
        if (caps & capability_names[i].bit) {
            if (out[0])
                strncat(out, " ", len - strlen(out) - 1);
            strncat(out, capability_names[i].name, len - strlen(out) - 1);
        }
}

/* Whole-word match of `id` in a space-separated list. */
static int has_req(const char *list, const char *id)
{
    size_t n = strlen(id);
    for (const char *p = list; (p = strstr(p, id)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return 1;
    return 0;
}

static int selected(const cwc_options *opt, const cwc_case *c)
{
    return !opt->filter || strstr(c->name, opt->filter) || strstr(c->group, opt->filter) ||
           has_req(c->reqs, opt->filter);
}

int cwc_list(const cwc_options *opt)
{
    for (const cwc_case *c = cwc_cases(); c; c = c->next) {
        if (!selected(opt, c))
            continue;
        char needs[128];
        caps_text(c->needs, needs, sizeof needs);
        printf("%-48s %-12s [%s]%s%s\n", c->name, c->group, c->reqs, needs[0] ? " needs: " : "",
               needs);
    }
    return 0;
}

static const char *outcome_name(enum outcome o)
{
    return o == PASS ? "pass" : o == FAIL ? "fail" : "skip";
}

typedef struct run {
    result *results;
    size_t n;
} run;

/* A requirement's status over the cases that cover it. */
static const char *req_status(const run *r, const char *id)
{
    int covered = 0, pass = 0, fail = 0;
    for (const cwc_case *c = cwc_cases(); c; c = c->next)
        if (has_req(c->reqs, id))
            covered = 1;
    if (!covered)
        return "uncovered";
    if (!r)
        return "covered";
    for (size_t i = 0; i < r->n; i++)
        if (has_req(r->results[i].c->reqs, id)) {
            pass += r->results[i].outcome == PASS;
            fail += r->results[i].outcome == FAIL;
        }
    return fail ? "fail" : pass ? "pass" : "skip";
}

int cwc_print_requirements(const void *results)
{
    const run *r = results;
    int uncovered = 0;
    for (size_t i = 0; i < NREQS; i++) {
        const char *status = req_status(r, requirements[i].id);
        uncovered += !strcmp(status, "uncovered");
        printf("%-10s %-10s %-10s", requirements[i].id, requirements[i].section, status);
        for (const cwc_case *c = cwc_cases(); c; c = c->next)
            if (has_req(c->reqs, requirements[i].id))
                printf(" %s", c->name);
        putchar('\n');
    }
    if (uncovered)
        printf("%d requirement(s) have no case\n", uncovered);
    return uncovered ? 1 : 0;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_words(FILE *f, const char *list)
{
    fputc('[', f);
    const char *p = list;
    int first = 1;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (!n)
            break;
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)n, p);
        fprintf(f, "%s", first ? "" : ",");
        json_string(f, word);
        first = 0;
        p += n;
    }
    fputc(']', f);
}

static int write_json(const char *path, const run *r, size_t counts[3])
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    char caps[128];
    caps_text(cwc_backend->capabilities, caps, sizeof caps);
    fprintf(f, "{\n  \"suite\": \"cwrt-conformance\",\n  \"suite_version\": \"%s\",\n",
            CWC_SUITE_VERSION);
    fprintf(f, "  \"spec_version\": \"%s\",\n  \"backend\": ", CWC_SPEC_VERSION);
    json_string(f, cwc_backend->name);
    fprintf(f, ",\n  \"abi_version\": \"%u.%u\",\n  \"capabilities\": ",
            CW_ABI_MAJOR(cwc_backend->abi_version), cwc_backend->abi_version & 0xffff);
    json_words(f, caps);
    fprintf(f,
            ",\n  \"seed\": %llu,\n  \"summary\": {\"passed\": %zu, \"failed\": %zu, "
            "\"skipped\": %zu},\n  \"cases\": [\n",
            (unsigned long long)cwc_seed, counts[PASS], counts[FAIL], counts[SKIP]);
    for (size_t i = 0; i < r->n; i++) {
        const result *x = &r->results[i];
        fprintf(f, "    {\"name\": ");
        json_string(f, x->c->name);
        fprintf(f, ", \"group\": ");
        json_string(f, x->c->group);
        fprintf(f, ", \"requirements\": ");
        json_words(f, x->c->reqs);
        fprintf(f, ", \"status\": \"%s\", \"reason\": ", outcome_name(x->outcome));
        json_string(f, x->reason);
        fprintf(f, "}%s\n", i + 1 < r->n ? "," : "");
    }
    fprintf(f, "  ],\n  \"requirements\": [\n");
    for (size_t i = 0; i < NREQS; i++) {
        fprintf(f, "    {\"id\": ");
        json_string(f, requirements[i].id);
        fprintf(f, ", \"status\": \"%s\"}%s\n", req_status(r, requirements[i].id),
                i + 1 < NREQS ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f);
}

static void print_certificate(const run *r, size_t counts[3])
{
    size_t req_pass = 0, req_fail = 0, req_skip = 0, req_none = 0;
    for (size_t i = 0; i < NREQS; i++) {
        const char *s = req_status(r, requirements[i].id);
        req_pass += !strcmp(s, "pass");
        req_fail += !strcmp(s, "fail");
        req_skip += !strcmp(s, "skip");
        req_none += !strcmp(s, "uncovered");
    }
    char caps[128];
    caps_text(cwc_backend->capabilities, caps, sizeof caps);
    int ok = counts[FAIL] == 0 && req_fail == 0 && req_none == 0;
    printf("\n==== cwrt conformance certificate ====\n");
    printf("backend:      %s (ABI %u.%u; capabilities: %s)\n", cwc_backend->name,
           CW_ABI_MAJOR(cwc_backend->abi_version), cwc_backend->abi_version & 0xffff,
           caps[0] ? caps : "none");
    printf("suite:        %s for spec %s, seed %llu\n", CWC_SUITE_VERSION, CWC_SPEC_VERSION,
           (unsigned long long)cwc_seed);
    printf("cases:        %zu passed, %zu failed, %zu skipped\n", counts[PASS], counts[FAIL],
           counts[SKIP]);
    printf("requirements: %zu of %zu passed, %zu failed, %zu skipped, %zu without a case\n",
           req_pass, (size_t)NREQS, req_fail, req_skip, req_none);
    for (size_t i = 0; i < r->n; i++)
        if (r->results[i].outcome == SKIP)
            printf("skipped:      %s (%s)\n", r->results[i].c->name, r->results[i].reason);
        else if (r->results[i].outcome == FAIL)
            printf("FAILED:       %s: %s\n", r->results[i].c->name, r->results[i].reason);
    printf("verdict:      %s\n", ok ? "CONFORMANT" : "NOT CONFORMANT");
    printf("======================================\n");
}

int cwc_run_suite(const cwc_options *opt)
{
    size_t total = 0;
    for (const cwc_case *c = cwc_cases(); c; c = c->next)
        total += selected(opt, c);
    run r = {calloc(total ? total : 1, sizeof(result)), 0};
    if (!r.results) {
        fputs("cw-conformance: out of memory\n", stderr);
        return 2;
    }

    Suite *suite = suite_create(cwc_backend->name);
    for (const cwc_case *c = cwc_cases(); c; c = c->next) {
        if (!selected(opt, c))
            continue;
        result *x = &r.results[r.n++];
        x->c = c;
        uint64_t missing = c->needs & ~cwc_backend->capabilities;
        if (missing) {
            char names[128];
            caps_text(missing, names, sizeof names);
            snprintf(x->reason, sizeof x->reason, "capability absent: %s", names);
            continue;
        }
        TCase *tc = tcase_create(c->name);
        tcase_set_tags(tc, c->reqs);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, c->test);
        suite_add_tcase(suite, tc);
    }

    SRunner *sr = srunner_create(suite);
    srunner_set_fork_status(sr, CK_FORK);
    if (opt->tap)
        srunner_set_tap(sr, opt->tap);
    if (opt->xml)
        srunner_set_xml(sr, opt->xml);
    srunner_run_all(sr, CK_NORMAL);

    TestResult **tr = srunner_results(sr);
    int ntr = srunner_ntests_run(sr);
    for (int i = 0; i < ntr; i++)
        for (size_t j = 0; j < r.n; j++)
            if (!strcmp(tr_tcname(tr[i]), r.results[j].c->name)) {
                int pass = tr_rtype(tr[i]) == CK_PASS;
                r.results[j].outcome = pass ? PASS : FAIL;
                if (!pass)
                    snprintf(r.results[j].reason, sizeof r.results[j].reason, "%s:%d: %s",
                             tr_lfile(tr[i]) ? tr_lfile(tr[i]) : "?", tr_lno(tr[i]),
                             tr_msg(tr[i]) ? tr_msg(tr[i]) : "");
            }
    free(tr);

    size_t counts[3] = {0, 0, 0};
    for (size_t i = 0; i < r.n; i++)
        counts[r.results[i].outcome]++;
    int rc = counts[FAIL] ? 1 : 0;
    if (opt->json && write_json(opt->json, &r, counts) != 0)
        rc = 2;
    if (opt->requirements)
        cwc_print_requirements(&r);
    if (opt->certificate)
        print_certificate(&r, counts);
    srunner_free(sr);
    free(r.results);
    return rc;
}
