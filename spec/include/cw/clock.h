/*
 * cw/clock.h - the runtime clock: reading it, sleeping, and deadlines.
 * Rules: spec/07-clock.md.
 */
#ifndef CW_CLOCK_H
#define CW_CLOCK_H

#include "cw/select.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's current time: virtual on a deterministic backend. */
static inline cw_time cw_current(cw_ctx *ctx)
{
    return cw__backend_of(ctx)->current(ctx);
}

/* Completes once the clock reaches `deadline` (at once if it has). */
static inline cw_wait cw_wait_sleep_until(cw_ctx *ctx, cw_time deadline)
{
    cw_wait w;
    cw__backend_of(ctx)->wait_sleep_until(&w, ctx, deadline);
    return w;
}

/* `d` from now; a sum past CW_TIME_MAX saturates to it [CLK-003]. */
static inline cw_time cw_deadline_after(cw_ctx *ctx, cw_duration d)
{
    cw_time now = cw_current(ctx);
    return d > CW_TIME_MAX - now ? CW_TIME_MAX : now + d;
}

static inline cw_wait cw_wait_sleep(cw_ctx *ctx, cw_duration d)
{
    return cw_wait_sleep_until(ctx, cw_deadline_after(ctx, d));
}

static inline int cw_sleep_until(cw_ctx *ctx, cw_time deadline)
{
    cw_wait w = cw_wait_sleep_until(ctx, deadline);
    return cw_wait_one(&w);
}

static inline int cw_sleep(cw_ctx *ctx, cw_duration d)
{
    return cw_sleep_until(ctx, cw_deadline_after(ctx, d));
}

/* Wait for `w` for at most `d`: its result, or CW_ERR_TIMEOUT when the time
 * ran out first. When both are ready, `w` wins (it is tried first). */
static inline int cw_timeout(cw_ctx *ctx, cw_duration d, cw_wait *w)
{
    cw_wait both[2] = {*w, cw_wait_sleep(ctx, d)};
    int i = cw_select(both, 2);
    *w = both[0];
    if (i < 0)
        return i;
    return i == 0 ? both[0].result : CW_ERR_TIMEOUT;
}

#ifdef __cplusplus
}
#endif
#endif
