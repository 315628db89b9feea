/*
 * select.c - waiting for the first of several operations.
 *
 * The loop is the classic one: try every wait in order and take the first
 * that can complete; otherwise arm them all, park, disarm, and try again.
 * Trying in order is what makes the lowest index win, and completing only
 * inside "try" is what guarantees that a losing wait has no effect (a
 * message is never taken by a receive that lost).
 *
 * A wait's link words: [0..1] its node in a waiter list, [2] the waiting
 * task, [3] the runtime it belongs to.
 */
#include <string.h>

#include "core/internal.h"

void cw_wait_init(cw_wait *w, const cw_backend *b, const cw_wait_ops *ops, void *object)
{
    memset(w, 0, sizeof *w);
    w->backend = b;
    w->ops = ops;
    w->object = object;
}

cw_rt *cw_wait_rt(const cw_wait *w)
{
    return w->link[3];
}

static cw_list *wait_node(cw_wait *w)
{
    return (cw_list *)(void *)&w->link[0];
}

cw_task *cw_wait_task(cw_wait *w)
{
    return w->link[2];
}

void cw_waiters_add(cw_list *waiters, cw_wait *w, cw_task *t)
{
    w->link[2] = t;
    cw_list_push_back(waiters, wait_node(w));
}

void cw_waiters_remove(cw_wait *w)
{
    cw_list *node = wait_node(w);
    if (node->next)
        cw_list_remove(node);
    w->link[2] = NULL;
}

void cw_waiters_wake(cw_rt *rt, cw_list *waiters)
{
    for (cw_list *it = waiters->next; it != waiters; it = it->next) {
        cw_wait *w = (cw_wait *)(void *)((char *)it - offsetof(cw_wait, link));
        rt->sched->wake(cw_wait_task(w));
    }
}

/* What a wait becomes when its object ends under it: done, with the result
 * it was given, and nothing to arm or disarm. */
static bool ended_try(cw_wait *w)
{
    (void)w;
    return true;
}

static void ended_arm(cw_wait *w, cw_task *t)
{
    (void)w;
    (void)t;
}

static void ended_disarm(cw_wait *w)
{
    (void)w;
}

static const cw_wait_ops ended_ops = {ended_try, ended_arm, ended_disarm};

void cw_waiters_end(cw_rt *rt, cw_list *waiters, int result)
{
    while (waiters->next != waiters) {
        cw_wait *w = (cw_wait *)(void *)((char *)waiters->next - offsetof(cw_wait, link));
        cw_task *t = cw_wait_task(w);
        cw_waiters_remove(w);
        w->ops = &ended_ops;
        w->object = NULL;
        w->result = result;
        rt->sched->wake(t);
    }
}

int cw_core_select(cw_wait *waits, size_t n, bool block)
{
    cw_rt *rt = cw_wait_rt(&waits[0]);
    cw_task *t = cw_task_self(rt, "cw_select");
    int rc = CW_ERR_WOULD_BLOCK;
    cw_rt_lock(rt);
    for (;;) {
        for (size_t i = 0; i < n; i++) {
            const cw_wait_ops *ops = waits[i].ops;
            if (ops->try_complete(&waits[i])) {
                rc = (int)i;
                goto out;
            }
        }
        if (!block)
            goto out;
        /* An aborted task ends at its first real suspension point. */
        if (t->aborted && !t->unwinding) {
            cw_rt_unlock(rt);
            cw_task_unwind(t, CW_ERR_CLOSED);
        }
        /* A task being unwound, or a runtime being torn down, cannot
         * suspend: its blocking calls fail instead. */
        if (t->unwinding || rt->ending) {
            rc = CW_ERR_CLOSED;
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            const cw_wait_ops *ops = waits[i].ops;
            ops->arm(&waits[i], t);
        }
        /* A wake between this unlock and the park is not lost: the
         * scheduler remembers it and the park returns at once. */
        cw_rt_unlock(rt);
        rt->sched->park(t);
        cw_rt_lock(rt);
        for (size_t i = 0; i < n; i++) {
            const cw_wait_ops *ops = waits[i].ops;
            ops->disarm(&waits[i]);
        }
        /* Aborted while parked: end here, even if a wait could now
         * complete, so the task never runs past this suspension point. */
        if (t->aborted && !t->unwinding) {
            cw_rt_unlock(rt);
            cw_task_unwind(t, CW_ERR_CLOSED);
        }
    }
out:
    cw_rt_unlock(rt);
    return rc;
}

static bool ready_try(cw_wait *w)
{
    w->result = (int)(int64_t)w->arg;
    return true;
}

static bool pending_try(cw_wait *w)
{
    (void)w;
    return false;
}

static void no_arm(cw_wait *w, cw_task *t)
{
    (void)w;
    (void)t;
}

static void no_disarm(cw_wait *w)
{
    (void)w;
}

static const cw_wait_ops ready_ops = {ready_try, no_arm, no_disarm};
static const cw_wait_ops pending_ops = {pending_try, no_arm, no_disarm};

void cw_core_wait_ready(cw_wait *w, cw_ctx *ctx, int result)
{
    cw_wait_init(w, ctx->hdr.backend, &ready_ops, NULL);
    w->link[3] = ctx->rt;
    w->arg = (uint64_t)(int64_t)result;
}

void cw_core_wait_pending(cw_wait *w, cw_ctx *ctx)
{
    cw_wait_init(w, ctx->hdr.backend, &pending_ops, NULL);
    w->link[3] = ctx->rt;
}
