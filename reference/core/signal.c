/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * signal.c - the stop signal.
 *
 * A signal from cw_stopped before any stop is a claim: stopping waits until
 * every such claim is released, which is how tasks get time to clean up.
 * After a stop, cw_stopped hands out signals that are already resolved and
 * hold nothing back. The first stop's value is the one everyone sees.
 */
#include <stdlib.h>

#include "core/internal.h"

struct cw_signal {
    cw_object hdr;
    cw_rt *rt;
    bool holds;   /* counted in rt->stop_outstanding */
    cw_list link; /* rt->signals */
};

/* With rt->lock held, or before the run's first task. */
static cw_signal *signal_new(cw_rt *rt)
{
    cw_signal *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->hdr.backend = rt->backend;
    s->rt = rt;
    cw_list_push_back(&rt->signals, &s->link);
    return s;
}

cw_signal *cw_signal_spent_new(cw_rt *rt)
{
    return signal_new(rt); /* holds nothing: a stop never waits for it */
}

/* Without memory for a signal, the run's spent one, which holds no claim
 * and whose waits complete with CW_ERR_NOMEM [SIG-007]. */
cw_signal *cw_core_stopped(cw_ctx *ctx)
{
    cw_rt *rt = ctx->rt;
    cw_rt_lock(rt);
    cw_audit(rt, "stopped", NULL, 0);
    cw_signal *s = signal_new(rt);
    if (!s) {
        cw_rt_unlock(rt);
        return rt->spent_signal;
    }
    s->holds = !rt->stop_called;
    if (s->holds)
        rt->stop_outstanding++;
    cw_rt_unlock(rt);
    return s;
}

static void signal_free(cw_signal *s)
{
    cw_list_remove(&s->link);
    free(s);
}

void cw_core_signal_release(cw_signal *s)
{
    cw_rt *rt = s->rt;
    if (s == rt->spent_signal)
        return; /* ends with the run */
    cw_rt_lock(rt);
    if (s->holds && --rt->stop_outstanding == 0 && rt->stop_called)
        cw_waiters_wake(rt, &rt->stop_waiters);
    signal_free(s);
    cw_rt_unlock(rt);
}

static bool signal_try(cw_wait *w)
{
    cw_signal *s = w->object;
    if (s == s->rt->spent_signal) {
        w->result = CW_ERR_NOMEM;
        return true;
    }
    if (!s->rt->stop_called)
        return false;
    if (w->out)
        *(int32_t *)w->out = s->rt->stop_value;
    w->result = CW_OK;
    return true;
}

static void signal_arm(cw_wait *w, cw_task *t)
{
    cw_signal *s = w->object;
    cw_waiters_add(&s->rt->signal_waiters, w, t);
}

static const cw_wait_ops signal_ops = {signal_try, signal_arm, cw_waiters_remove, cw_guard_rt};

void cw_core_wait_signal(cw_wait *w, cw_signal *s, int32_t *value)
{
    cw_wait_init(w, s->hdr.backend, &signal_ops, s);
    cw_waitv_of(w)->rt = s->rt;
    w->out = value;
}

/* A signal wait earlier in the select making this stop was tried before
 * the stop took effect, and is not armed yet: the waiters just woken miss
 * it. Waking the caller makes its select try again instead of parking
 * (SEL-001); a park may return early, so a wake it turns out not to need
 * is harmless. */
static void wake_own_select(cw_rt *rt)
{
    cw_task *self = rt->sched->current(rt);
    if (self && rt->stop_outstanding)
        rt->sched->wake(self);
}

/* The stop takes effect the first time its wait is tried, not when the wait
 * is made, so a wait that is never selected stops nothing. */
static bool stop_try(cw_wait *w)
{
    cw_rt *rt = w->object;
    cw_waitv *v = cw_waitv_of(w);
    if (!v->done) {
        v->done = 1;
        int32_t value = (int32_t)(uint32_t)v->value;
        uint8_t be[8];
        cw_be64(be, (uint32_t)value);
        cw_field f = {be + 4, 4};
        cw_audit(rt, "stop", &f, 1);
        if (!rt->stop_called) {
            rt->stop_called = true;
            rt->stop_value = value;
            cw_waiters_wake(rt, &rt->signal_waiters);
            wake_own_select(rt);
        }
    }
    if (rt->stop_outstanding)
        return false;
    w->result = CW_OK;
    return true;
}

static void stop_arm(cw_wait *w, cw_task *t)
{
    cw_rt *rt = w->object;
    cw_waiters_add(&rt->stop_waiters, w, t);
}

static const cw_wait_ops stop_ops = {stop_try, stop_arm, cw_waiters_remove, cw_guard_rt};

void cw_core_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value)
{
    cw_wait_init(w, ctx->hdr.backend, &stop_ops, ctx->rt);
    cw_waitv_of(w)->rt = ctx->rt;
    cw_waitv_of(w)->value = (uint32_t)value;
}

void cw_signal_free_all(cw_list *head)
{
    for (cw_list *it = head->next, *next; it != head; it = next) {
        next = it->next;
        signal_free(cw_container_of(it, cw_signal, link));
    }
}
