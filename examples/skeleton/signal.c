/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * signal.c - cw_stop and cw_stopped (spec/05-signals.md).
 *
 * The run keeps the stop state: whether a stop happened, its value, and how
 * many signals taken before it are still held. A stop happens when its wait
 * is first tried [SIG-006] and completes once that count is zero [SIG-002].
 *
 * Ownership: cw_stopped gives the caller a signal, ended by
 * cw_signal_release (or by the end of the run).
 */
#include <stdlib.h>

#include "skeleton.h"

typedef struct sk_signal {
    sk_obj obj;
    bool holds; /* taken before the stop: the stop waits for its release */
} sk_signal;

static void signal_destroy(sk_obj *o)
{
    sk_obj_unlink(o);
    free(o);
}

/* A signal that holds no claim; NULL when memory is exhausted. */
cw_signal *sk_signal_spent_new(sk_rt *rt)
{
    sk_signal *s = calloc(1, sizeof *s);
    if (s)
        sk_obj_init(&s->obj, rt, signal_destroy);
    return (cw_signal *)s;
}

/* Without memory, the run's spent signal: its waits give CW_ERR_NOMEM and
 * no stop waits for it [SIG-007]. */
cw_signal *sk_stopped(cw_ctx *ctx)
{
    sk_rt *rt = SK_CTX(ctx)->obj.rt;
    sk_signal *s = calloc(1, sizeof *s);
    if (!s)
        return rt->spent_signal;
    sk_obj_init(&s->obj, rt, signal_destroy);
    s->holds = !rt->stopping; /* [SIG-003] */
    if (s->holds)
        rt->signals_held++;
    return (cw_signal *)s;
}

void sk_signal_release(cw_signal *signal)
{
    sk_signal *s = (sk_signal *)(void *)signal;
    sk_rt *rt = s->obj.rt;
    if (signal == rt->spent_signal)
        return; /* ends with the run */
    if (s->holds && --rt->signals_held == 0)
        sk_waitlist_wake(&rt->stop_waiters);
    signal_destroy(&s->obj);
}

static bool signal_try(cw_wait *w)
{
    sk_rt *rt = ((sk_obj *)w->object)->rt;
    if (w->object == (void *)rt->spent_signal) {
        w->result = CW_ERR_NOMEM;
        return true;
    }
    if (!rt->stopping)
        return false;
    if (w->out)
        *(int32_t *)w->out = rt->stop_value;
    w->result = CW_OK;
    return true;
}

/* The first stop sets the value [SIG-004]; every stop then waits for the
 * same releases. */
static bool stop_try(cw_wait *w)
{
    sk_rt *rt = ((sk_obj *)w->object)->rt;
    if (!rt->stopping) {
        rt->stopping = true;
        rt->stop_value = (int32_t)(uint32_t)w->arg;
        sk_waitlist_wake(&rt->signal_waiters);
    }
    if (rt->signals_held > 0)
        return false;
    w->result = CW_OK;
    return true;
}

static sk_waitlist *signal_queue(cw_wait *w)
{
    return &((sk_obj *)w->object)->rt->signal_waiters;
}

static sk_waitlist *stop_queue(cw_wait *w)
{
    return &((sk_obj *)w->object)->rt->stop_waiters;
}

static const sk_wait_ops signal_ops = {"signal", signal_try, signal_queue};
static const sk_wait_ops stop_ops = {"stop", stop_try, stop_queue};

void sk_wait_signal(cw_wait *w, cw_signal *s, int32_t *value)
{
    sk_wait_fill(w, &signal_ops, (sk_obj *)(void *)s, value, 0);
}

void sk_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value)
{
    sk_wait_fill(w, &stop_ops, &SK_CTX(ctx)->obj, NULL, (uint32_t)value);
}
