/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_with_attribute on a key the context already has keeps the old value
 * instead of replacing it (CTX-004). */
#define CWM_BASE "deterministic"
#include "mutant.h"

#define SEEN_MAX 512
static struct {
    cw_ctx *ctx;
    char key[64];
} seen[SEEN_MAX];
static size_t nseen;

static bool seen_before(cw_ctx *ctx, const char *key)
{
    for (size_t i = 0; i < nseen; i++)
        if (seen[i].ctx == ctx && strcmp(seen[i].key, key) == 0)
            return true;
    size_t len = strlen(key);
    if (nseen < SEEN_MAX && len < sizeof seen[0].key) {
        seen[nseen].ctx = ctx;
        memcpy(seen[nseen++].key, key, len + 1);
    }
    return false;
}

static void first_wins_attribute(cw_ctx *ctx, const char *key, const char *value)
{
    if (!seen_before(ctx, key))
        cwm_base->with_attribute(ctx, key, value);
}

static void mutate(void)
{
    cwm.with_attribute = first_wins_attribute;
}
