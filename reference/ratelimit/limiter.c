/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * limiter.c - the direct limiter: one TAT, updated with compare-and-swap so
 * that checks from several threads never take the same cell twice.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "cw/clock.h"
#include "ratelimit/gcra.h"

struct cw_limiter {
    cw_gcra gcra;
    _Atomic cw_time tat;
};

int cw_limiter_new(const cw_quota *q, cw_limiter **out)
{
    *out = NULL;
    if (!cw_quota_valid(q))
        return CW_ERR_INVALID;
    cw_limiter *l = malloc(sizeof *l);
    if (!l)
        return CW_ERR_NOMEM;
    l->gcra = cw_gcra_of(q);
    atomic_init(&l->tat, 0);
    *out = l;
    return CW_OK;
}

void cw_limiter_free(cw_limiter *l)
{
    free(l);
}

int cw_limiter_check_at(cw_limiter *l, cw_time now, cw_time *next)
{
    cw_time seen = atomic_load(&l->tat);
    for (;;) {
        cw_time tat = seen;
        if (!cw_gcra_check(&l->gcra, &tat, now, next))
            return CW_ERR_WOULD_BLOCK;
        if (atomic_compare_exchange_weak(&l->tat, &seen, tat))
            return CW_OK;
    }
}

int cw_limiter_check(cw_limiter *l, cw_ctx *ctx, cw_time *next)
{
    return cw_limiter_check_at(l, cw_current(ctx), next);
}

int cw_limiter_until_ready(cw_limiter *l, cw_ctx *ctx)
{
    cw_time next = 0;
    while (cw_limiter_check(l, ctx, &next) != CW_OK)
        cw_sleep_until(ctx, next);
    return CW_OK;
}
