/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * profile.h - conformance profiles (spec/10-backend.md, ABI-004): named
 * parts of the spec a backend declares through its table, and the profiles
 * each case needs.
 */
#ifndef CWC_PROFILE_H
#define CWC_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "harness/cwc.h"

enum cwc_profile {
    CWC_P_CORE,
    CWC_P_STRATEGY,
    CWC_P_RATELIMIT,
    CWC_P_BUFFERS,
    CWC_P_METRICS,
    CWC_P_STORAGE,
    CWC_P_NETWORK,
    CWC_P_DETERMINISTIC,
    CWC_P_AUDIT,
    CWC_P_PARALLEL,
    CWC_P_PERSISTENT,
    CWC_P_RECOVER,
    CWC_NPROFILES
};

/* A set of profiles, one bit per enum cwc_profile. */
typedef uint32_t cwc_profiles;
#define CWC_ALL_PROFILES ((cwc_profiles)((1u << CWC_NPROFILES) - 1))

const char *cwc_profile_name(int p);
/* The profile named `name`, or -1. */
int cwc_profile_by_name(const char *name);
/* What the table declares, dependencies not yet checked. */
cwc_profiles cwc_profiles_declared(const cw_backend *b);
/* The profiles each profile of `set` depends on, and are missing from it. */
cwc_profiles cwc_profiles_missing_deps(cwc_profiles set);
/* The profile a case belongs to (by its group), or -1 for an unknown group. */
int cwc_case_profile(const cwc_case *c);
/* Every profile a case needs to apply: its own and those its needs name. */
cwc_profiles cwc_case_needs(const cwc_case *c);
/* The profiles whose declaration makes a case not applicable (its rule is
 * stated for backends without them), 0 for most cases. */
cwc_profiles cwc_case_excludes(const cwc_case *c);
/* The profile a requirement ID belongs to (by its area), or -1. */
int cwc_req_profile(const char *id);
/* Parse "core,buffers" into a set; -1 with a message for an unknown name. */
int cwc_profiles_parse(const char *list, cwc_profiles *out, char *why, size_t whylen);
/* "core strategy ..." (or "none") into `out`, separated by `sep`. */
void cwc_profiles_text(cwc_profiles set, const char *sep, char *out, size_t len);

/* The CW_CAP_* bits of `caps` by name, space-separated ("" for none). */
void cwc_caps_text(uint64_t caps, char *out, size_t len);

#endif
