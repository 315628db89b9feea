/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A wake that comes before its task parks is lost: cw_park then waits for
 * another wake, where it must return at once (TASK-009). */
#define CWM_BASE "deterministic"
#include "mutant.h"

enum { REMEMBERED = 4096 };
static struct {
    cw_waker *waker;
    cw_ctx *ctx;
} seen[REMEMBERED];
static size_t nseen;
static cwm_set parked; /* the contexts in cw_park now */

static cw_waker *noting_waker(cw_ctx *ctx)
{
    cw_waker *w = cwm_base->waker_current(ctx);
    if (w && nseen < REMEMBERED)
        seen[nseen].waker = w, seen[nseen++].ctx = ctx;
    return w;
}

static cw_ctx *ctx_of(const cw_waker *w)
{
    for (size_t i = nseen; i-- > 0;)
        if (seen[i].waker == w)
            return seen[i].ctx;
    return NULL;
}

static void forgetful_wake(cw_waker *w)
{
    cw_ctx *ctx = ctx_of(w);
    if (ctx && !cwm_set_has(&parked, ctx))
        return; /* not parked yet: dropped */
    cwm_base->waker_wake(w);
}

static void noting_park(cw_ctx *ctx)
{
    cwm_set_add(&parked, ctx);
    cwm_base->park(ctx);
    cwm_set_remove(&parked, ctx);
}

static void mutate(void)
{
    cwm.waker_current = noting_waker;
    cwm.waker_wake = forgetful_wake;
    cwm.park = noting_park;
}
