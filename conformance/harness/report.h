/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * report.h - one run of the suite: what was selected, each case's result,
 * the verdict, and the writers of each report format.
 */
#ifndef CWC_REPORT_H
#define CWC_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "harness/cwc.h"
#include "harness/profile.h"
#include "harness/progress.h"

#define CWC_SUITE_VERSION "0.2.0"
/* The version of the JSON report's shape (conformance/report.schema.json). */
#define CWC_REPORT_SCHEMA 2

/* Exit statuses of cw-conformance and cwc_main (include/cwconformance.h). */
enum cwc_verdict {
    CWC_CONFORMANT = 0,
    CWC_NOT_CONFORMANT = 1,
    CWC_USAGE = 2,
    CWC_PARTIAL = 3,
};

typedef struct cwc_options {
    const char *backend, *filter, *json, *tap, *xml, *profiles;
    const char *html; /* --html: the report as one self-contained page */
    unsigned timeout;
    int list, requirements, certificate, quiet;
    int fail_fast;          /* stop at the first case that fails or times out */
    unsigned repeat;        /* run each case this many times, seed + 0 .. (--repeat) */
    const char *time_scale; /* "auto", or the factor of every real-time limit */
    unsigned jobs;          /* cases at once, each in a process of its own (jobs.c) */
    const char *expect;     /* the file of the results expected (expect.c) */
} cwc_options;

enum cwc_status { CWC_PASS, CWC_FAIL, CWC_TIMEOUT, CWC_NA, CWC_NOT_RUN, CWC_NSTATUS };

/* What an --expect file says of a case (expect.c): a case it does not
 * list is expected to pass. */
enum cwc_expected { CWC_EXPECT_PASS, CWC_EXPECT_FAIL, CWC_EXPECT_TIMEOUT, CWC_EXPECT_SKIP };

/* A case's result against its expectation: only a regression (a failure
 * not expected) and an unexpected pass make the run's exit status 1. */
enum cwc_outcome {
    CWC_AS_EXPECTED,
    CWC_REGRESSION,      /* failed or timed out, expected to pass or be skipped */
    CWC_UNEXPECTED_PASS, /* passed, expected to fail or time out */
    CWC_CHANGED,         /* failed the other way, or ran and passed, expected skipped */
    CWC_UNCHECKED,       /* not run: its expectation of a result was not put to the test */
    CWC_NOUTCOMES
};

typedef struct cwc_expectation {
    const cwc_case *c;
    enum cwc_expected expected;
    unsigned line; /* of the file */
    char *reason;
} cwc_expectation;

typedef struct cwc_expectations {
    const char *path;
    cwc_expectation *lines;
    size_t n;
} cwc_expectations;

typedef struct cwc_result {
    const cwc_case *c;
    int selected; /* applicable and chosen: it runs */
    enum cwc_status status;
    double seconds;
    char reason[512];
    int left;                      /* processes its runs left behind, killed (reaper.c) */
    const cwc_expectation *expect; /* its line of --expect; NULL: expected to pass */
    enum cwc_outcome outcome;      /* with --expect, once it has run */
} cwc_result;

typedef struct cwc_report {
    const cw_backend *backend;
    const char *path;   /* the shared object it came from, or NULL */
    char so_sha256[65]; /* of that file; "" when not loaded from one */
    cwc_profiles declared, selected;
    const char *filter;
    char env_selection[256]; /* the CK_* selections honoured, "" if none */
    unsigned timeout;
    cwc_result *results;
    size_t n;
    size_t counts[CWC_NSTATUS];
    size_t reqs_uncovered; /* requirements of the selected profiles no case names */
    enum cwc_verdict verdict;
    char partial_why[512];
    time_t started;
    double seconds;
    /* The storage and network cases ran with CW_IO_URING and again with
     * CW_IO_THREADS (NAT-008); false: once, with CW_IO_AUTO. */
    bool each_io;
    const cwc_expectations *expect; /* --expect, or NULL */
    size_t outcomes[CWC_NOUTCOMES];
} cwc_report;

/* The requirements of the spec, generated from the spec files at build time. */
typedef struct cwc_req {
    const char *id;
    const char *section;
    const char *text; /* the rule's words, as Markdown (ci/extract-reqs.sh) */
} cwc_req;
extern const cwc_req cwc_requirements[];
extern const size_t cwc_nrequirements;

/* Whole-word match of `id` in a space-separated list. */
int cwc_has_req(const char *list, const char *id);
/* A requirement's status over the report's results ("pass", "fail", "n/a",
 * "not run", "uncovered"); with report NULL, "covered" or "uncovered". */
const char *cwc_req_status(const cwc_report *r, const char *id);
const char *cwc_status_name(enum cwc_status s);
const char *cwc_verdict_name(enum cwc_verdict v);

/* Select and run the cases; fill the report and its verdict. Non-zero on
 * exhausted memory. */
int cwc_run_suite(const cwc_options *opt, cwc_report *r);
/* One selected case, with its --repeat and I/O modes, in this process
 * (run.c); then what it left behind, said on stderr. */
void cwc_run_case(const cwc_options *opt, const cwc_report *r, cwc_result *x);
void cwc_say_leftovers(const cwc_result *x);
/* With --fail-fast, whether the run stops after this case: it failed, and
 * (with --expect) was not expected to. */
bool cwc_stops_run(const cwc_options *opt, const cwc_result *x);
/* The selected cases, opt->jobs at once, each in a process of its own
 * (jobs.c); starts none after case `*stop`, which it lowers to the first
 * that failed with --fail-fast. Non-zero on exhausted memory. */
int cwc_run_jobs(const cwc_options *opt, cwc_report *r, cwc_progress *pg, size_t *stop);
void cwc_report_free(cwc_report *r);

/* --expect (expect.c): read and check the whole file, or say on stderr
 * where it is wrong and return -1 (a usage error). */
int cwc_read_expectations(const char *path, cwc_expectations *e);
void cwc_free_expectations(cwc_expectations *e);
/* The file's line for case `c`, or NULL. */
const cwc_expectation *cwc_expectation_of(const cwc_expectations *e, const cwc_case *c);
/* Each result's outcome against its expectation, and their counts. */
void cwc_judge(cwc_report *r);
/* "PASS", "FAIL", "TIMEOUT", "SKIP"; a result's status in the same words. */
const char *cwc_expected_name(enum cwc_expected x);
const char *cwc_status_word(enum cwc_status s);
const char *cwc_outcome_name(enum cwc_outcome o);
/* The unexpected results, one a line, and the count of each outcome. */
void cwc_print_expectations(FILE *f, const cwc_report *r);
/* The run's exit status under --expect: 1 on an unexpected result, else 0. */
int cwc_expectation_status(const cwc_report *r);

/* `t` as ISO 8601 in UTC: "2026-12-03T08:41:09Z". */
void cwc_timestamp(time_t t, char out[32]);

int cwc_list(const cwc_options *opt);
int cwc_print_requirements(const cwc_report *r);
void cwc_print_summary(FILE *f, const cwc_report *r);
void cwc_print_certificate(FILE *f, const cwc_report *r);
int cwc_write_json(const char *path, const cwc_report *r);
int cwc_write_junit(const char *path, const cwc_report *r);
int cwc_write_tap(const char *path, const cwc_report *r);
int cwc_write_html(const char *path, const cwc_report *r);

/* What a run says of one profile (state.c), worst first: the HTML report
 * shows it, `cw-conformance compare` compares it. */
enum cwc_profile_state {
    CWC_PS_FAILED,       /* a case of it failed or timed out */
    CWC_PS_NOT_DECLARED, /* the backend does not declare it */
    CWC_PS_NOT_SELECTED, /* declared, left out by --profile */
    CWC_PS_INCOMPLETE,   /* nothing failed, a case of it was not run */
    CWC_PS_PASSED,       /* every applicable case passed; the run is not certified */
    CWC_PS_CERTIFIED,
    CWC_NSTATES
};
/* From the run's sets (`certified` is empty unless the run is CONFORMANT)
 * and the statuses of the cases of profile `p`, counted. */
enum cwc_profile_state cwc_profile_state(cwc_profiles declared, cwc_profiles selected,
                                         cwc_profiles certified, int p,
                                         const size_t counts[CWC_NSTATUS]);
enum cwc_profile_state cwc_report_profile_state(const cwc_report *r, int p);
/* "not_declared" (as in compare's JSON), and a sentence for a person. */
const char *cwc_profile_state_key(enum cwc_profile_state s);
const char *cwc_profile_state_text(enum cwc_profile_state s);

/* `cw-conformance compare A.json B.json`: argv[0] is "compare". Returns
 * 0 (no regression), 1 (regressions) or 2 (usage, unreadable input). */
int cwc_compare_main(int argc, char **argv);

#endif
