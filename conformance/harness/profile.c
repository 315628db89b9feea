/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * profile.c - the profiles of spec/10-backend.md as tables: how a backend
 * declares each, which groups of cases belong to it, and what it depends
 * on. Which requirements belong to it comes from the spec's own table.
 */
#include <stdio.h>
#include <string.h>

#include "harness/profile.h"

#define BIT(p) ((cwc_profiles)1u << (p))

typedef struct profile_def {
    const char *name;
    const char *groups;   /* space-separated case groups */
    cwc_profiles depends; /* declaring it without these is an inconsistent table */
} profile_def;

static const profile_def profiles[CWC_NPROFILES] = {
    [CWC_P_CORE] = {"core",
                    "errors runner context tasks signals panics clock select channels "
                    "backend",
                    0},
    [CWC_P_STRATEGY] = {"strategy", "parallel", 0},
    [CWC_P_RATELIMIT] = {"ratelimit", "ratelimit", 0},
    [CWC_P_BUFFERS] = {"buffers", "buffers", 0},
    [CWC_P_METRICS] = {"metrics", "metrics", 0},
    [CWC_P_STORAGE] = {"storage", "storage", BIT(CWC_P_BUFFERS)},
    [CWC_P_NETWORK] = {"network", "network", BIT(CWC_P_BUFFERS)},
    [CWC_P_DETERMINISTIC] = {"deterministic", "deterministic", BIT(CWC_P_AUDIT)},
    [CWC_P_AUDIT] = {"audit", "audit", 0},
    [CWC_P_PARALLEL] = {"parallel", "native", 0},
    [CWC_P_PERSISTENT] = {"persistent-storage", "persistent-storage", BIT(CWC_P_STORAGE)},
    [CWC_P_RECOVER] = {"recover", "recover", BIT(CWC_P_DETERMINISTIC)},
};

/* Each requirement's profile, read from the profile table of
 * spec/10-backend.md at build time (ci/req-profiles.py). */
static const struct {
    const char *id, *profile;
} req_profiles[] = {
#define CWC_REQ_PROFILE(id, profile) {id, profile},
#include "req-profiles.inc"
#undef CWC_REQ_PROFILE
};

/* The capability bits and case needs that stand for a profile. */
static const struct {
    uint64_t bit;
    int profile;
} need_bits[] = {
    {CW_CAP_DETERMINISTIC, CWC_P_DETERMINISTIC},
    {CW_CAP_AUDIT, CWC_P_AUDIT},
    {CW_CAP_PARALLEL, CWC_P_PARALLEL},
    {CW_CAP_PERSISTENT_STORAGE, CWC_P_PERSISTENT},
    {CW_CAP_RECOVER, CWC_P_RECOVER},
    {CWC_NEEDS_BUFFERS, CWC_P_BUFFERS},
    {CWC_NEEDS_METRICS, CWC_P_METRICS},
    {CWC_NEEDS_STORAGE, CWC_P_STORAGE},
    {CWC_NEEDS_NETWORK, CWC_P_NETWORK},
};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *cwc_profile_name(int p)
{
    return p >= 0 && p < CWC_NPROFILES ? profiles[p].name : "?";
}

int cwc_profile_by_name(const char *name)
{
    for (int p = 0; p < CWC_NPROFILES; p++)
        if (!strcmp(profiles[p].name, name))
            return p;
    return -1;
}

static cwc_profiles from_bits(uint64_t bits)
{
    cwc_profiles set = 0;
    for (size_t i = 0; i < NELEM(need_bits); i++)
        if (bits & need_bits[i].bit)
            set |= BIT(need_bits[i].profile);
    return set;
}

static int has_recover_entries(const cw_backend *b)
{
    return CW_BACKEND_HAS(b, start_checkpoint) && CW_BACKEND_HAS(b, recover) &&
           CW_BACKEND_HAS(b, checkpoint_free);
}

cwc_profiles cwc_profiles_declared(const cw_backend *b)
{
    cwc_profiles set = BIT(CWC_P_CORE) | BIT(CWC_P_STRATEGY) | BIT(CWC_P_RATELIMIT);
    set |= CW_BACKEND_HAS(b, buffers) ? BIT(CWC_P_BUFFERS) : 0;
    set |= CW_BACKEND_HAS(b, metrics) ? BIT(CWC_P_METRICS) : 0;
    set |= CW_BACKEND_HAS(b, storage) ? BIT(CWC_P_STORAGE) : 0;
    set |= CW_BACKEND_HAS(b, network) ? BIT(CWC_P_NETWORK) : 0;
    set |= from_bits(b->capabilities);
    /* A capability without its entries declares nothing (ABI-004). */
    if (!has_recover_entries(b))
        set &= ~BIT(CWC_P_RECOVER);
    return set;
}

cwc_profiles cwc_profiles_missing_deps(cwc_profiles set)
{
    cwc_profiles missing = 0;
    for (int p = 0; p < CWC_NPROFILES; p++)
        if (set & BIT(p))
            missing |= profiles[p].depends & ~set;
    return missing;
}

/* Whole-word match of `word` in a space-separated list. */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return 1;
    return 0;
}

int cwc_case_profile(const cwc_case *c)
{
    for (int p = 0; p < CWC_NPROFILES; p++)
        if (has_word(profiles[p].groups, c->group))
            return p;
    return -1;
}

cwc_profiles cwc_case_excludes(const cwc_case *c)
{
    return ((c->needs & CWC_UNLESS_DETERMINISTIC) ? BIT(CWC_P_DETERMINISTIC) : 0) |
           ((c->needs & CWC_UNLESS_PARALLEL) ? BIT(CWC_P_PARALLEL) : 0);
}

cwc_profiles cwc_case_needs(const cwc_case *c)
{
    int own = cwc_case_profile(c);
    cwc_profiles set = from_bits(c->needs) | (own >= 0 ? BIT(own) : 0);
    /* A profile's dependencies are needed with it. */
    for (int p = 0; p < CWC_NPROFILES; p++)
        if (set & BIT(p))
            set |= profiles[p].depends;
    return set;
}

int cwc_req_profile(const char *id)
{
    for (size_t i = 0; i < NELEM(req_profiles); i++)
        if (!strcmp(req_profiles[i].id, id))
            return cwc_profile_by_name(req_profiles[i].profile);
    return -1;
}

int cwc_profiles_parse(const char *list, cwc_profiles *out, char *why, size_t whylen)
{
    *out = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ", ");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        int found = n ? cwc_profile_by_name(name) : -2;
        if (found == -1) {
            snprintf(why, whylen, "unknown profile '%s'", name);
            return -1;
        }
        if (found >= 0)
            *out |= BIT(found);
        p += n + (p[n] != '\0');
    }
    if (!*out) {
        snprintf(why, whylen, "no profile named in '%s'", list);
        return -1;
    }
    return 0;
}

void cwc_profiles_text(cwc_profiles set, const char *sep, char *out, size_t len)
{
    out[0] = '\0';
    for (int p = 0; p < CWC_NPROFILES; p++)
        if (set & BIT(p)) {
            if (out[0])
                strncat(out, sep, len - strlen(out) - 1);
            strncat(out, profiles[p].name, len - strlen(out) - 1);
        }
    if (!out[0])
        snprintf(out, len, "none");
}

void cwc_caps_text(uint64_t caps, char *out, size_t len)
{
    static const struct {
        uint64_t bit;
        const char *name;
    } names[] = {{CW_CAP_DETERMINISTIC, "deterministic"},
                 {CW_CAP_AUDIT, "audit"},
                 {CW_CAP_PARALLEL, "parallel"},
                 {CW_CAP_PERSISTENT_STORAGE, "persistent-storage"},
                 {CW_CAP_RECOVER, "recover"}};
    out[0] = '\0';
    for (size_t i = 0; i < NELEM(names); i++)
        if (caps & names[i].bit) {
            if (out[0])
                strncat(out, " ", len - strlen(out) - 1);
            strncat(out, names[i].name, len - strlen(out) - 1);
        }
}
