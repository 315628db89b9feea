/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * gcra.h - the arithmetic of spec/15-ratelimit.md, shared by the direct
 * and the keyed limiter. Every operation saturates instead of wrapping.
 */
#ifndef CW_GCRA_H
#define CW_GCRA_H

#include <stdbool.h>

#include "cw/ratelimit.h"

typedef struct cw_gcra {
    cw_duration t;   /* the interval between cells */
    cw_duration tau; /* how far ahead of the clock the TAT may run: t × (burst − 1) */
} cw_gcra;

static inline bool cw_quota_valid(const cw_quota *q)
{
    return q && q->interval > 0 && q->burst > 0;
}

static inline cw_gcra cw_gcra_of(const cw_quota *q)
{
    cw_gcra g = {q->interval, 0};
    uint64_t cells = q->burst - 1u;
    g.tau = cells && g.t > CW_TIME_MAX / cells ? CW_TIME_MAX : g.t * cells;
    return g;
}

/* One check of the state `*tat` at `now`. Accepting moves *tat; refusing
 * leaves it and says when the next cell comes (`next` may be NULL). */
static inline bool cw_gcra_check(const cw_gcra *g, cw_time *tat, cw_time now, cw_time *next)
{
    cw_time earliest = *tat > g->tau ? *tat - g->tau : 0;
    if (now < earliest) {
        if (next)
            *next = earliest;
        return false;
    }
    cw_time base = *tat > now ? *tat : now;
    *tat = base > CW_TIME_MAX - g->t ? CW_TIME_MAX : base + g->t;
    return true;
}

/* Idle: the key acts exactly like one never seen (TAT 0). */
static inline bool cw_gcra_idle(cw_time tat, cw_time now)
{
    return tat <= now;
}

#endif
