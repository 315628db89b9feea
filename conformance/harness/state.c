/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * state.c - what a run says of each profile, in the words the HTML report
 * shows and `cw-conformance compare` compares: a run certifies all its
 * profiles or none, but a person reading a failed run wants to know which
 * profile failed and which passed in full, and a comparison which profile
 * got worse. The state follows from the run's profile sets and the status
 * of the profile's cases alone, so that it is the same whether computed
 * during the run or read back from its JSON report.
 */
#include "harness/report.h"

static const char *const state_keys[CWC_NSTATES] = {
    "failed", "not_declared", "not_selected", "incomplete", "passed", "certified",
};

static const char *const state_texts[CWC_NSTATES] = {
    "failed: a case of it failed or timed out",
    "not declared by the backend",
    "declared, not selected (--profile)",
    "incomplete: nothing failed, a case of it was not run",
    "passed: every applicable case passed, but the run is not certified",
    "certified",
};

enum cwc_profile_state cwc_profile_state(cwc_profiles declared, cwc_profiles selected,
                                         cwc_profiles certified, int p,
                                         const size_t counts[CWC_NSTATUS])
{
    cwc_profiles bit = (cwc_profiles)1u << p;
    if (counts[CWC_FAIL] || counts[CWC_TIMEOUT])
        return CWC_PS_FAILED;
    if (certified & bit)
        return CWC_PS_CERTIFIED;
    if (!(declared & bit))
        return CWC_PS_NOT_DECLARED;
    if (!(selected & bit))
        return CWC_PS_NOT_SELECTED;
    return counts[CWC_NOT_RUN] ? CWC_PS_INCOMPLETE : CWC_PS_PASSED;
}

enum cwc_profile_state cwc_report_profile_state(const cwc_report *r, int p)
{
    size_t counts[CWC_NSTATUS] = {0};
    for (size_t i = 0; i < r->n; i++)
        if (cwc_case_profile(r->results[i].c) == p)
            counts[r->results[i].status]++;
    return cwc_profile_state(r->declared, r->selected,
                             r->verdict == CWC_CONFORMANT ? r->selected : 0, p, counts);
}

const char *cwc_profile_state_key(enum cwc_profile_state s)
{
    return s < CWC_NSTATES ? state_keys[s] : "?";
}

const char *cwc_profile_state_text(enum cwc_profile_state s)
{
    return s < CWC_NSTATES ? state_texts[s] : "?";
}
