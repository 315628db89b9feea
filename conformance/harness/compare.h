/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * compare.h - `cw-conformance compare`: two runs read back from their JSON
 * reports (compare_read.c), what changed between them (compare.c), and that
 * written as text and as JSON (conformance/compare.schema.json).
 */
#ifndef CWC_COMPARE_H
#define CWC_COMPARE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "harness/report.h"

/* One case of a report. Strings point into the report's document. */
typedef struct cwc_cmp_case {
    const char *name, *status, *reason;
    int profile;
    double seconds;
} cwc_cmp_case;

/* One requirement of a report and its status ("pass", "uncovered"...). */
typedef struct cwc_cmp_req {
    const char *id, *status;
} cwc_cmp_req;

/* A run as its JSON report states it. */
typedef struct cwc_cmp_run {
    const char *path;
    json_t *doc; /* owns every string below */
    const char *verdict, *suite_version, *spec_version, *backend;
    cwc_profiles declared, selected, certified;
    cwc_cmp_case *cases;
    size_t ncases;
    cwc_cmp_req *reqs;
    size_t nreqs;
} cwc_cmp_run;

/* Read and check a report: 0, or -1 with the reason printed. */
int cwc_cmp_read(const char *path, cwc_cmp_run *run);
void cwc_cmp_free(cwc_cmp_run *run);

enum cwc_cmp_kind {
    CWC_CMP_REGRESSION,  /* began failing, or stopped passing */
    CWC_CMP_IMPROVEMENT, /* began passing, or stopped failing and passes */
    CWC_CMP_CHANGE,      /* another change of status (not_run to not_applicable...) */
    CWC_CMP_ONLY_A,      /* in the first report only: another suite's case or rule */
    CWC_CMP_ONLY_B,
};

/* A case, requirement or profile whose status differs; a or b NULL when
 * absent from that report. `reason`: the case's reason in B, if any. */
typedef struct cwc_cmp_change {
    const char *key, *a, *b, *reason;
    enum cwc_cmp_kind kind;
} cwc_cmp_change;

/* A case whose duration changed past both thresholds. */
typedef struct cwc_cmp_timing {
    const char *name;
    double a, b;
} cwc_cmp_timing;

typedef struct cwc_cmp_limits {
    double factor;        /* --time-factor: slower or faster by more than this */
    double delta_seconds; /* --time-delta (in ms): and by more than this */
} cwc_cmp_limits;

typedef struct cwc_comparison {
    const cwc_cmp_run *a, *b;
    cwc_cmp_limits limits;
    bool verdict_regressed;
    cwc_cmp_change *profiles, *cases, *reqs;
    size_t nprofiles, ncases, nreqs;
    cwc_cmp_timing *timing;
    size_t ntiming;
    size_t regressions;
} cwc_comparison;

/* Compare: 0, or -1 on exhausted memory. */
int cwc_cmp_compare(const cwc_cmp_run *a, const cwc_cmp_run *b, cwc_cmp_limits limits,
                    cwc_comparison *out);
void cwc_cmp_release(cwc_comparison *c);

const char *cwc_cmp_kind_key(enum cwc_cmp_kind k);
void cwc_cmp_print(FILE *f, const cwc_comparison *c);
int cwc_cmp_write_json(const char *path, const cwc_comparison *c);

#endif
