/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/clock.h - the runtime clock: reading it, sleeping, and deadlines.
 * Rules: spec/07-clock.md.
 */
#ifndef CW_CLOCK_H
#define CW_CLOCK_H

#include <stdbool.h>
#include <time.h>

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
 * ran out first. When both are ready, `w` wins (it is tried first). A
 * sleep with no memory for its alarm ends at once with CW_ERR_NOMEM, and so
 * does this [CLK-008]. */
static inline int cw_timeout(cw_ctx *ctx, cw_duration d, cw_wait *w)
{
    cw_wait both[2] = {*w, cw_wait_sleep(ctx, d)};
    int i = cw_select(both, 2);
    *w = both[0];
    if (i < 0)
        return i;
    if (i == 1 && both[1].result == CW_ERR_NOMEM)
        return CW_ERR_NOMEM;
    return i == 0 ? both[0].result : CW_ERR_TIMEOUT;
}

/* ---- Pacing [CLK-006, CLK-007] --------------------------------------------------- */

/* Whether work done outside the run is finished: called on the task's
 * thread, any number of times; it must not call into the runtime. */
typedef bool (*cw_done_fn)(void *arg);

/* Wait for outside work as if it took exactly `latency` on the runtime
 * clock: on a deterministic backend the call returns at the time of the
 * call plus `latency`, and if `done(arg)` is still false then, the whole
 * run waits for it, its clock standing still. Elsewhere it returns once
 * `done(arg)` is true, checking at least every millisecond. CW_OK, or the
 * sleep's error (CW_ERR_CLOSED while the task is being unwound). */
static inline int cw_pace(cw_ctx *ctx, cw_duration latency, cw_done_fn done, void *arg)
{
    if (cw__backend_of(ctx)->capabilities & CW_CAP_DETERMINISTIC) {
        int rc = cw_sleep(ctx, latency);
        if (rc != CW_OK)
            return rc;
        /* The run's one thread waits here: nothing else happens meanwhile. */
        struct timespec step = {0, 20 * 1000};
        while (!done(arg))
            nanosleep(&step, NULL);
        return CW_OK;
    }
    while (!done(arg)) {
        int rc = cw_sleep(ctx, CW_MSEC);
        if (rc != CW_OK)
            return rc;
    }
    return CW_OK;
}

#ifdef __cplusplus
}
#endif
#endif
