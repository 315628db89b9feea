/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * suiteinfo.h - what the suite says of itself in a certificate: the spec it
 * checks (version and digest) and its power (the share of mutants of the
 * reference its release run kills, and what its sanitizer runs add), both
 * fixed at build time.
 */
#ifndef CWC_SUITEINFO_H
#define CWC_SUITEINFO_H

#include <stddef.h>

typedef struct cwc_power_folder {
    const char *name;
    long long killed, survived;
    double score;
} cwc_power_folder;

/* killed and survived are the release run's (survived: every mutant it did
 * not kill, the sanitizer kills included); equivalent ones are in neither. */
typedef struct cwc_power {
    int measured; /* 0: no mutation score was there at build time */
    long long sampled, invalid, equivalent, killed, survived, seed;
    double score;
    const char *date;
    const cwc_power_folder *folders;
    size_t nfolders;
    long long sanitizer_killed;   /* killed only by the sanitizer runs; -1: not measured */
    double score_with_sanitizers; /* -1: not measured */
    const char *text;             /* the certificate's line (ci/suite-info.py) */
} cwc_power;

const char *cwc_spec_version(void);
const char *cwc_spec_sha256(void);
/* The suite's power; points at static data. */
const cwc_power *cwc_suite_power(void);
/* "95.0% of 400 mutants killed by the release suite (seed 1, 2026-12-03);
 * the sanitizer runs add ..." or "not measured". */
void cwc_power_text(char *out, size_t len);

#endif
