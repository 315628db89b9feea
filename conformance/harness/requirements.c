/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * requirements.c - the spec's numbered rules, the cases that name them, and
 * the listings of both.
 */
#include <stdio.h>
#include <string.h>

#include "harness/report.h"

/* Generated from the spec files by the build: every numbered requirement. */
const cwc_req cwc_requirements[] = {
#define CWC_REQ(id, section, text) {id, section, text},
#include "reqs.inc"
#undef CWC_REQ
};
const size_t cwc_nrequirements = sizeof cwc_requirements / sizeof cwc_requirements[0];

int cwc_has_req(const char *list, const char *id)
{
    size_t n = strlen(id);
    if (!n)
        return 0;
    for (const char *p = list; (p = strstr(p, id)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return 1;
    return 0;
}

const char *cwc_status_name(enum cwc_status s)
{
    static const char *const names[CWC_NSTATUS] = {"pass", "fail", "timeout", "n/a", "not run"};
    return s < CWC_NSTATUS ? names[s] : "?";
}

const char *cwc_verdict_name(enum cwc_verdict v)
{
    return v == CWC_CONFORMANT       ? "CONFORMANT"
           : v == CWC_NOT_CONFORMANT ? "NOT CONFORMANT"
           : v == CWC_PARTIAL        ? "PARTIAL"
                                     : "ERROR";
}

static int covered(const char *id)
{
    for (const cwc_case *c = cwc_cases(); c; c = c->next)
        if (cwc_has_req(c->reqs, id))
            return 1;
    return 0;
}

/* Failure outranks everything; a requirement is passed only by cases that
 * ran, and is "n/a" when every case naming it was not applicable. */
const char *cwc_req_status(const cwc_report *r, const char *id)
{
    if (!covered(id))
        return "uncovered";
    if (!r)
        return "covered";
    size_t seen[CWC_NSTATUS] = {0};
    for (size_t i = 0; i < r->n; i++)
        if (cwc_has_req(r->results[i].c->reqs, id))
            seen[r->results[i].status]++;
    if (seen[CWC_FAIL] || seen[CWC_TIMEOUT])
        return "fail";
    if (seen[CWC_PASS])
        return "pass";
    return seen[CWC_NOT_RUN] ? "not run" : "n/a";
}

/* Requirements of an area and cases of a group that no profile holds: the
 * suite could never certify them, so `make requirements` refuses them. */
static int unplaced(void)
{
    int n = 0;
    for (size_t i = 0; i < cwc_nrequirements; i++)
        if (cwc_req_profile(cwc_requirements[i].id) < 0) {
            printf("%s belongs to no profile (spec/10-backend.md)\n", cwc_requirements[i].id);
            n++;
        }
    for (const cwc_case *c = cwc_cases(); c; c = c->next)
        if (cwc_case_profile(c) < 0) {
            printf("case %s: group '%s' belongs to no profile\n", c->name, c->group);
            n++;
        }
    return n;
}

int cwc_print_requirements(const cwc_report *r)
{
    int uncovered = 0;
    for (size_t i = 0; i < cwc_nrequirements; i++) {
        const cwc_req *q = &cwc_requirements[i];
        const char *status = cwc_req_status(r, q->id);
        uncovered += !strcmp(status, "uncovered");
        printf("%-10s %-14s %-10s", q->id, cwc_profile_name(cwc_req_profile(q->id)), status);
        for (const cwc_case *c = cwc_cases(); c; c = c->next)
            if (cwc_has_req(c->reqs, q->id))
                printf(" %s", c->name);
        putchar('\n');
    }
    if (uncovered)
        printf("%d requirement(s) have no case\n", uncovered);
    int misplaced = r ? 0 : unplaced();
    return uncovered || misplaced ? 1 : 0;
}

/* Every case with its profile, group, requirements and further needs. An
 * unknown group or requirement area is an error of the suite itself. */
int cwc_list(const cwc_options *opt)
{
    int bad = 0;
    for (const cwc_case *c = cwc_cases(); c; c = c->next) {
        if (opt->filter && !strstr(c->name, opt->filter) && !strstr(c->group, opt->filter) &&
            !cwc_has_req(c->reqs, opt->filter))
            continue;
        int own = cwc_case_profile(c);
        cwc_profiles more = cwc_case_needs(c) & ~(own >= 0 ? (cwc_profiles)1u << own : 0);
        char needs[160];
        cwc_profiles_text(more, " ", needs, sizeof needs);
        char unless[160];
        cwc_profiles_text(cwc_case_excludes(c), " ", unless, sizeof unless);
        printf("%-48s %-14s %-13s [%s]%s%s%s%s\n", c->name, cwc_profile_name(own), c->group,
               c->reqs, more ? " needs: " : "", more ? needs : "",
               cwc_case_excludes(c) ? " unless: " : "", cwc_case_excludes(c) ? unless : "");
        bad += own < 0;
    }
    if (bad)
        fprintf(stderr, "cw-conformance: %d case(s) of a group no profile holds\n", bad);
    return bad ? 1 : 0;
}
