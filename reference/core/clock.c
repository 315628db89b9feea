/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * clock.c - reading the runtime clock, sleeping, and randomness, through
 * the scheduler that owns time.
 */
#include "core/internal.h"

cw_time cw_core_current(cw_ctx *ctx)
{
    return ctx->rt->sched->now(ctx->rt);
}

static bool sleep_try(cw_wait *w)
{
    cw_rt *rt = cw_wait_rt(w);
    if (w->result == CW_ERR_NOMEM) /* its alarm could not be armed */
        return true;
    if (rt->sched->now(rt) < cw_waitv_of(w)->deadline)
        return false;
    w->result = CW_OK;
    return true;
}

/* Without memory for the alarm the sleep cannot end on time, so it ends
 * now: its result is set for the next try, and the task is woken so the
 * select does not park for good [CLK-008]. */
static void sleep_arm(cw_wait *w, cw_task *t)
{
    cw_rt *rt = cw_wait_rt(w);
    if (rt->sched->alarm_arm(rt, w, t))
        return;
    w->result = CW_ERR_NOMEM;
    rt->sched->wake(t);
}

static void sleep_disarm(cw_wait *w)
{
    cw_rt *rt = cw_wait_rt(w);
    rt->sched->alarm_disarm(rt, w);
}

/* A sleep touches only its own wait and the scheduler's alarms, which a
 * scheduler guards itself (cw_sched_ops): it needs none of the locks. */
static const cw_wait_ops sleep_ops = {sleep_try, sleep_arm, sleep_disarm, cw_guard_none};

void cw_wait_sleep_at(cw_wait *w, cw_rt *rt, const cw_backend *b, cw_time deadline)
{
    cw_wait_init(w, b, &sleep_ops, NULL);
    cw_waitv_of(w)->rt = rt;
    cw_waitv_of(w)->deadline = deadline;
}

void cw_core_wait_sleep_until(cw_wait *w, cw_ctx *ctx, cw_time deadline)
{
    cw_wait_sleep_at(w, ctx->rt, ctx->hdr.backend, deadline);
}

void cw_core_random(cw_ctx *ctx, void *buf, size_t len)
{
    ctx->rt->sched->random(ctx->rt, buf, len);
}
