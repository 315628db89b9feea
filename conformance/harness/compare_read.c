/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * compare_read.c - a JSON report of cw-conformance read back for
 * `cw-conformance compare`, with jansson, the JSON library the harness
 * already writes its reports with (Debian's libjansson-dev, installed by
 * ci/deps.sh): a maintained, strict parser (it refuses invalid UTF-8,
 * duplicate keys with JSON_REJECT_DUPLICATES, and trailing text), so the
 * harness needs no reader of its own.
 *
 * A comparison is only as good as what it reads, so the reader is strict
 * about the fields it uses: a file that is not a report of schema version
 * 1 to CWC_REPORT_SCHEMA (version 2 added expectations, which compare does
 * not read, so a run of an older kit compares with a newer one), a field
 * of the wrong type, an unknown status or
 * profile, or a case named twice is refused with the place named, and
 * `compare` exits 2. Fields it does not use are not checked
 * (ci/check-reports.py validates a whole report against its schema).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/compare.h"

static const char *const case_statuses[] = {"pass",           "fail",    "timeout",
                                            "not_applicable", "not_run", NULL};
static const char *const req_statuses[] = {"pass",    "fail",      "not_applicable",
                                           "not_run", "uncovered", NULL};
static const char *const verdicts[] = {"CONFORMANT", "NOT CONFORMANT", "PARTIAL", NULL};

static int bad(const cwc_cmp_run *run, const char *what, const char *detail)
{
    fprintf(stderr, "cw-conformance compare: %s: not a cw-conformance report: %s%s%s\n", run->path,
            what, detail ? ": " : "", detail ? detail : "");
    return -1;
}

static int one_of(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(s, *set))
            return 1;
    return 0;
}

/* A list of profile names into a set; an unknown name is refused. */
static int profile_set(const cwc_cmp_run *run, const char *field, json_t *list, cwc_profiles *out)
{
    size_t i;
    json_t *v;
    *out = 0;
    if (!json_is_array(list))
        return bad(run, field, "not an array");
    json_array_foreach(list, i, v)
    {
        int p = json_is_string(v) ? cwc_profile_by_name(json_string_value(v)) : -1;
        if (p < 0)
            return bad(run, field, "holds something that is not a profile's name");
        *out |= (cwc_profiles)1u << p;
    }
    return 0;
}

static int read_case(cwc_cmp_run *run, size_t i, json_t *v)
{
    cwc_cmp_case *c = &run->cases[i];
    const char *profile;
    json_error_t err;
    char where[64];
    snprintf(where, sizeof where, "cases[%zu]", i);
    if (json_unpack_ex(v, &err, 0, "{s:s, s:s, s:s, s:F, s:s}", "name", &c->name, "profile",
                       &profile, "status", &c->status, "duration_seconds", &c->seconds, "reason",
                       &c->reason) != 0)
        return bad(run, where, err.text);
    if (!one_of(c->status, case_statuses))
        return bad(run, where, "an unknown status");
    if ((c->profile = cwc_profile_by_name(profile)) < 0)
        return bad(run, where, "an unknown profile");
    if (!(c->seconds >= 0))
        return bad(run, where, "a negative duration");
    for (size_t k = 0; k < i; k++)
        if (!strcmp(run->cases[k].name, c->name))
            return bad(run, where, "a case named twice");
    return 0;
}

static int read_req(cwc_cmp_run *run, size_t i, json_t *v)
{
    cwc_cmp_req *q = &run->reqs[i];
    json_error_t err;
    char where[64];
    snprintf(where, sizeof where, "requirements[%zu]", i);
    if (json_unpack_ex(v, &err, 0, "{s:s, s:s}", "id", &q->id, "status", &q->status) != 0)
        return bad(run, where, err.text);
    if (!one_of(q->status, req_statuses))
        return bad(run, where, "an unknown status");
    for (size_t k = 0; k < i; k++)
        if (!strcmp(run->reqs[k].id, q->id))
            return bad(run, where, "a requirement named twice");
    return 0;
}

static int read_lists(cwc_cmp_run *run, json_t *cases, json_t *reqs)
{
    if (!json_is_array(cases) || !json_is_array(reqs))
        return bad(run, "\"cases\" or \"requirements\"", "not an array");
    run->ncases = json_array_size(cases);
    run->nreqs = json_array_size(reqs);
    run->cases = calloc(run->ncases + 1, sizeof *run->cases);
    run->reqs = calloc(run->nreqs + 1, sizeof *run->reqs);
    if (!run->cases || !run->reqs) {
        fprintf(stderr, "cw-conformance compare: out of memory\n");
        return -1;
    }
    size_t i;
    json_t *v;
    json_array_foreach(cases, i, v) if (read_case(run, i, v) != 0) return -1;
    json_array_foreach(reqs, i, v) if (read_req(run, i, v) != 0) return -1;
    return 0;
}

static int read_doc(cwc_cmp_run *run)
{
    json_error_t err;
    json_int_t schema;
    json_t *declared, *selected, *certified, *cases, *reqs;
    if (json_unpack_ex(run->doc, &err, 0, "{s:I}", "schema", &schema) != 0)
        return bad(run, "no schema version", err.text);
    if (schema < 1 || schema > CWC_REPORT_SCHEMA) {
        fprintf(stderr,
                "cw-conformance compare: %s: a report of schema version %lld; this "
                "cw-conformance reads versions 1 to %d\n",
                run->path, (long long)schema, CWC_REPORT_SCHEMA);
        return -1;
    }
    if (json_unpack_ex(run->doc, &err, 0,
                       "{s:s, s:{s:s}, s:{s:s}, s:{s:o, s:o, s:o}, s:{s:s}, "
                       "s:o, s:o}",
                       "verdict", &run->verdict, "suite", "version", &run->suite_version, "spec",
                       "version", &run->spec_version, "profiles", "declared", &declared, "selected",
                       &selected, "certified", &certified, "backend", "name", &run->backend,
                       "cases", &cases, "requirements", &reqs) != 0)
        return bad(run, err.text, NULL);
    if (!one_of(run->verdict, verdicts))
        return bad(run, "verdict", "not a verdict");
    if (profile_set(run, "profiles.declared", declared, &run->declared) != 0 ||
        profile_set(run, "profiles.selected", selected, &run->selected) != 0 ||
        profile_set(run, "profiles.certified", certified, &run->certified) != 0)
        return -1;
    return read_lists(run, cases, reqs);
}

int cwc_cmp_read(const char *path, cwc_cmp_run *run)
{
    json_error_t err;
    memset(run, 0, sizeof *run);
    run->path = path;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cw-conformance compare: %s: cannot read it: %s\n", path, strerror(errno));
        return -1;
    }
    run->doc = json_loadf(f, JSON_REJECT_DUPLICATES, &err);
    fclose(f);
    if (!run->doc) {
        fprintf(stderr, "cw-conformance compare: %s: not JSON: %s (line %d, column %d)\n", path,
                err.text, err.line, err.column);
        return -1;
    }
    if (!json_is_object(run->doc))
        return bad(run, "not a JSON object", NULL);
    return read_doc(run);
}

void cwc_cmp_free(cwc_cmp_run *run)
{
    free(run->cases);
    free(run->reqs);
    json_decref(run->doc);
    memset(run, 0, sizeof *run);
}
