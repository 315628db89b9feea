/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * clock.c - the run's clock and sleeps (spec/07-clock.md).
 *
 * The clock is the wall time read once at the start of the run plus the
 * monotonic time elapsed since: it reads like the wall clock but never goes
 * backwards when the system clock is set [CLK-005]. A sleep is a wait on the
 * run's sleeper list, which the scheduler scans for due deadlines; a sleep
 * that lost a select is unlinked with it and leaves nothing behind [SEL-002].
 */
#include <time.h>

#include "skeleton.h"

static uint64_t read_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * CW_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t sk_mono_ns(void)
{
    return read_ns(CLOCK_MONOTONIC);
}

uint64_t sk_real_ns(void)
{
    return read_ns(CLOCK_REALTIME);
}

cw_time sk_now(const sk_rt *rt)
{
    return rt->t0_real + (sk_mono_ns() - rt->t0_mono);
}

cw_time sk_current_time(cw_ctx *ctx)
{
    return sk_now(SK_CTX(ctx)->obj.rt);
}

/* CW_TIME_MAX never comes [CLK-003]. */
static bool sleep_try(cw_wait *w)
{
    if (w->arg == CW_TIME_MAX || sk_now(((sk_obj *)w->object)->rt) < w->arg)
        return false;
    w->result = CW_OK;
    return true;
}

static sk_waitlist *sleep_queue(cw_wait *w)
{
    return w->arg == CW_TIME_MAX ? NULL : &((sk_obj *)w->object)->rt->sleepers;
}

static const sk_wait_ops sleep_ops = {"sleep", sleep_try, sleep_queue};

void sk_wait_sleep_until(cw_wait *w, cw_ctx *ctx, cw_time deadline)
{
    sk_wait_fill(w, &sleep_ops, &SK_CTX(ctx)->obj, NULL, deadline);
}

void sk_expire_sleepers(sk_rt *rt, cw_time now)
{
    for (cw_wait *w = rt->sleepers.head; w; w = w->link[1])
        if (w->arg <= now)
            sk_wake(sk_wait_task(w));
}

/* The earliest armed deadline, CW_TIME_MAX when none. */
cw_time sk_next_alarm(const sk_rt *rt)
{
    cw_time next = CW_TIME_MAX;
    for (const cw_wait *w = rt->sleepers.head; w; w = w->link[1])
        if (w->arg < next)
            next = w->arg;
    return next;
}
