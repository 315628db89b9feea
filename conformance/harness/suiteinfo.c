/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * suiteinfo.c - the generated facts of suiteinfo.inc (ci/suite-info.py)
 * behind functions, so that only this file is rebuilt when they change.
 */
#include <stdio.h>

#include "harness/suiteinfo.h"
#include "suiteinfo.inc"

const char *cwc_spec_version(void)
{
    return CWC_SPEC_VERSION;
}

const char *cwc_spec_sha256(void)
{
    return CWC_SPEC_SHA256;
}

#if CWC_POWER_MEASURED
static const cwc_power_folder folders[] = CWC_POWER_FOLDERS;
static const cwc_power power = {1,
                                CWC_POWER_SAMPLED,
                                CWC_POWER_INVALID,
                                CWC_POWER_EQUIVALENT,
                                CWC_POWER_KILLED,
                                CWC_POWER_SURVIVED,
                                CWC_POWER_SEED,
                                CWC_POWER_SCORE,
                                CWC_POWER_DATE,
                                folders,
                                CWC_POWER_NFOLDERS,
                                CWC_POWER_SANITIZER_KILLED,
                                CWC_POWER_SCORE_WITH_SANITIZERS,
                                CWC_POWER_TEXT};
#else
static const cwc_power power = {0, 0, 0, 0, 0, 0, 0, 0.0, "", NULL, 0, -1, -1.0, "not measured"};
#endif

const cwc_power *cwc_suite_power(void)
{
    return &power;
}

void cwc_power_text(char *out, size_t len)
{
    snprintf(out, len, "%s", power.text);
}
