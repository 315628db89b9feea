/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * json.c - the JSON report, built with jansson and described by
 * conformance/report.schema.json (version CWC_REPORT_SCHEMA).
 *
 * jansson escapes what JSON requires but refuses bytes that are not UTF-8,
 * so every string from the backend or a failure passes cwc_clean_utf8 first.
 */
#include <jansson.h>
#include <string.h>

#include "harness/report.h"
#include "harness/suiteinfo.h"
#include "harness/text.h"

static json_t *str(const char *s)
{
    char clean[2048];
    return json_string(cwc_clean_utf8(s ? s : "", 1, clean, sizeof clean));
}

static json_t *opt_str(const char *s)
{
    return s ? str(s) : json_null();
}

/* A space-separated list as an array of strings. */
static json_t *words(const char *list)
{
    json_t *a = json_array();
    char word[128];
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " ");
        snprintf(word, sizeof word, "%.*s", (int)n, p);
        if (n)
            json_array_append_new(a, str(word));
        p += n + (p[n] != '\0');
    }
    return a;
}

static json_t *profile_list(cwc_profiles set)
{
    char text[256];
    cwc_profiles_text(set, " ", text, sizeof text);
    return words(set ? text : "");
}

static json_t *backend_json(const cwc_report *r)
{
    char caps[128], abi[16];
    cwc_caps_text(r->backend->capabilities, caps, sizeof caps);
    snprintf(abi, sizeof abi, "%u.%u", CW_ABI_MAJOR(r->backend->abi_version),
             r->backend->abi_version & 0xffff);
    return json_pack("{s:o, s:s, s:o, s:o, s:o}", "name", str(r->backend->name), "abi", abi,
                     "capabilities", words(caps), "path", opt_str(r->path), "sha256",
                     r->path ? str(r->so_sha256) : json_null());
}

static json_t *suite_json(void)
{
    char abi[16];
    snprintf(abi, sizeof abi, "%u.%u", CW_ABI_MAJOR(CW_ABI_VERSION), CW_ABI_VERSION & 0xffff);
    return json_pack("{s:s, s:s, s:s}", "name", "cwrt-conformance", "version", CWC_SUITE_VERSION,
                     "abi", abi);
}

static json_t *power_json(void)
{
    const cwc_power *p = cwc_suite_power();
    char text[320];
    cwc_power_text(text, sizeof text);
    if (!p->measured)
        return json_pack("{s:b, s:s}", "measured", 0, "text", text);
    json_t *folders = json_object();
    for (size_t i = 0; i < p->nfolders; i++)
        json_object_set_new(folders, p->folders[i].name,
                            json_pack("{s:I, s:I, s:f}", "killed", p->folders[i].killed, "survived",
                                      p->folders[i].survived, "score", p->folders[i].score));
    json_t *o = json_pack("{s:b, s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:o}", "measured", 1,
                          "text", text, "score", p->score, "killed", p->killed, "survived",
                          p->survived, "sampled", p->sampled, "invalid", p->invalid, "equivalent",
                          p->equivalent, "seed", p->seed, "date", p->date, "folders", folders);
    /* What the sanitizer runs add, where the score measured it. */
    if (o && p->sanitizer_killed >= 0 &&
        json_object_update_new(o, json_pack("{s:I, s:f}", "sanitizer_killed", p->sanitizer_killed,
                                            "score_with_sanitizers", p->score_with_sanitizers)) !=
            0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *selection_json(const cwc_report *r)
{
    return json_pack("{s:o, s:o, s:o}", "profiles", profile_list(r->selected), "filter",
                     opt_str(r->filter), "environment",
                     opt_str(r->env_selection[0] ? r->env_selection : NULL));
}

static const char *status_key(enum cwc_status s)
{
    static const char *const keys[CWC_NSTATUS] = {"pass", "fail", "timeout", "not_applicable",
                                                  "not_run"};
    return keys[s];
}

/* What --expect said of the case and how it came out; null without it.
 * A case the file does not list is expected to pass, with no line. */
static json_t *expected_json(const cwc_report *r, const cwc_result *x)
{
    if (!r->expect)
        return json_null();
    char want[16];
    snprintf(want, sizeof want, "%s",
             cwc_expected_name(x->expect ? x->expect->expected : CWC_EXPECT_PASS));
    for (char *p = want; *p; p++)
        *p = (char)(*p - 'A' + 'a');
    return json_pack("{s:s, s:o, s:o, s:s}", "status", want, "line",
                     x->expect ? json_integer(x->expect->line) : json_null(), "reason",
                     opt_str(x->expect ? x->expect->reason : NULL), "outcome",
                     cwc_outcome_name(x->outcome));
}

static json_t *case_json(const cwc_report *r, const cwc_result *x)
{
    return json_pack("{s:o, s:s, s:s, s:o, s:s, s:f, s:o, s:o}", "name", str(x->c->name), "profile",
                     cwc_profile_name(cwc_case_profile(x->c)), "group", x->c->group, "requirements",
                     words(x->c->reqs), "status", status_key(x->status), "duration_seconds",
                     x->seconds, "reason", str(x->reason), "expected", expected_json(r, x));
}

static json_t *cases_json(const cwc_report *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n; i++)
        json_array_append_new(a, case_json(r, &r->results[i]));
    return a;
}

/* The counts of --expect's outcomes, and its file; null without it. */
static json_t *expectations_json(const cwc_report *r)
{
    if (!r->expect)
        return json_null();
    const size_t *o = r->outcomes;
    return json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I}", "file", str(r->expect->path), "listed",
                     (json_int_t)r->expect->n, "as_expected", (json_int_t)o[CWC_AS_EXPECTED],
                     "regressions", (json_int_t)o[CWC_REGRESSION], "unexpected_passes",
                     (json_int_t)o[CWC_UNEXPECTED_PASS], "changed", (json_int_t)o[CWC_CHANGED],
                     "unchecked", (json_int_t)o[CWC_UNCHECKED]);
}

static const char *req_key(const char *status)
{
    return !strcmp(status, "n/a")       ? "not_applicable"
           : !strcmp(status, "not run") ? "not_run"
                                        : status;
}

static json_t *requirements_json(const cwc_report *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < cwc_nrequirements; i++) {
        const char *id = cwc_requirements[i].id;
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s}", "id", id, "section",
                                           cwc_requirements[i].section, "profile",
                                           cwc_profile_name(cwc_req_profile(id)), "status",
                                           req_key(cwc_req_status(r, id))));
    }
    return a;
}

static json_t *summary_json(const cwc_report *r)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "total", (json_int_t)r->n, "passed",
                     (json_int_t)r->counts[CWC_PASS], "failed", (json_int_t)r->counts[CWC_FAIL],
                     "timed_out", (json_int_t)r->counts[CWC_TIMEOUT], "not_applicable",
                     (json_int_t)r->counts[CWC_NA], "not_run", (json_int_t)r->counts[CWC_NOT_RUN]);
}

static json_t *report_json(const cwc_report *r)
{
    char when[32], seed[24];
    cwc_timestamp(r->started, when);
    /* A string: a 64-bit seed does not fit every reader's numbers. */
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)cwc_seed);
    json_t *certified = profile_list(r->verdict == CWC_CONFORMANT ? r->selected : 0);
    return json_pack(
        "{s:i, s:s, s:o, s:o, s:{s:s, s:s}, s:{s:o, s:o, s:o}, s:o, s:s, s:f, "
        "s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o}",
        "schema", CWC_REPORT_SCHEMA, "verdict", cwc_verdict_name(r->verdict), "partial_reason",
        opt_str(r->verdict == CWC_PARTIAL ? r->partial_why : NULL), "suite", suite_json(), "spec",
        "version", cwc_spec_version(), "sha256", cwc_spec_sha256(), "profiles", "declared",
        profile_list(r->declared), "selected", profile_list(r->selected), "certified", certified,
        "backend", backend_json(r), "timestamp", when, "duration_seconds", r->seconds, "seed", seed,
        "timeout_seconds", (int)r->timeout, "selection", selection_json(r), "suite_power",
        power_json(), "summary", summary_json(r), "expectations", expectations_json(r), "cases",
        cases_json(r), "requirements", requirements_json(r));
}

int cwc_write_json(const char *path, const cwc_report *r)
{
    json_t *doc = report_json(r);
    if (!doc) {
        fprintf(stderr, "cw-conformance: %s: cannot build the report (out of memory)\n", path);
        return -1;
    }
    int rc =
        json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(doc);
    if (rc != 0)
        fprintf(stderr, "cw-conformance: cannot write %s\n", path);
    return rc;
}
