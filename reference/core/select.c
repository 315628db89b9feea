/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * select.c - waiting for the first of several operations.
 *
 * The loop is the classic one: try every wait in order and take the first
 * that can complete; otherwise arm them all, park, disarm, and try again.
 * Trying in order is what makes the lowest index win, and completing only
 * inside "try" is what guarantees that a losing wait has no effect (a
 * message is never taken by a receive that lost).
 *
 * The waiter lists the waits arm themselves on are in waiters.c.
 */
#include "core/internal.h"

/* The locks every wait's object is under, each once. */
static cw_lockset guards_of(const cw_wait *waits, size_t n)
{
    cw_lockset set = {false, 0};
    for (size_t i = 0; i < n; i++) {
        const cw_wait_ops *ops = waits[i].ops;
        cw_lockset_add(&set, ops->guard(&waits[i]));
    }
    return set;
}

/* An aborted task ends here, never to return, with the select's locks
 * given back first. */
static void end_if_aborted(cw_task *t)
{
    if (t->aborted && !t->unwinding) {
        cw_lockset_unlock(t->rt, &t->held);
        cw_task_unwind(t, CW_ERR_CLOSED);
    }
}

/* The task may not suspend: aborted (it unwinds here), unwinding, or the
 * run ending (CW_ERR_CLOSED). False when it may. */
static bool may_not_park(cw_task *t, int *rc)
{
    end_if_aborted(t);
    /* A task being unwound, or a runtime being torn down, cannot
     * suspend: its blocking calls fail instead. */
    if (t->unwinding || t->rt->ending) {
        *rc = CW_ERR_CLOSED;
        return true;
    }
    return false;
}

static void arm_all(cw_wait *waits, size_t n, cw_task *t)
{
    for (size_t i = 0; i < n; i++) {
        const cw_wait_ops *ops = waits[i].ops;
        ops->arm(&waits[i], t);
    }
}

static void disarm_all(cw_wait *waits, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cw_wait_ops *ops = waits[i].ops;
        ops->disarm(&waits[i]);
    }
}

/* The select holds the locks of its waits' objects (guard.c) from the
 * first try to the park, and again from the wake to the next park: the
 * runtime's lock only if some object is under it, so that tasks waiting
 * on different connections take no lock in common. The set is worked out
 * once: an object's guard never changes, and a stripe outlives the object
 * (one closed while armed turns its waits into ended ones, which touch
 * nothing). */
int cw_core_select(cw_wait *waits, size_t n, bool block)
{
    cw_rt *rt = cw_wait_rt(&waits[0]);
    cw_task *t = cw_task_self(rt, "cw_select");
    int rc = CW_ERR_WOULD_BLOCK;
    t->held = guards_of(waits, n);
    cw_lockset_lock(rt, &t->held);
    for (;;) {
        uint64_t releases = t->lock_releases;
        for (size_t i = 0; i < n; i++) {
            const cw_wait_ops *ops = waits[i].ops;
            if (ops->try_complete(&waits[i])) {
                rc = (int)i;
                goto out;
            }
        }
        if (!block)
            goto out;
        /* A try let the locks go: the waits are armed only after a pass
         * that held them throughout (cw_rt_unlock_in_try). */
        if (t->lock_releases != releases)
            continue;
        /* An aborted task ends at its first real suspension point. */
        if (may_not_park(t, &rc))
            goto out;
        arm_all(waits, n, t);
        /* A wake between this unlock and the park is not lost: the
         * scheduler remembers it and the park returns at once. */
        cw_lockset_unlock(rt, &t->held);
        rt->sched->park(t);
        cw_lockset_lock(rt, &t->held);
        disarm_all(waits, n);
        /* Aborted while parked: end here, even if a wait could now
         * complete, so the task never runs past this suspension point. */
        end_if_aborted(t);
    }
out:
    cw_lockset_unlock(rt, &t->held);
    return rc;
}

/* ---- Waits that need no object ------------------------------------------------------- */

static bool ready_try(cw_wait *w)
{
    w->result = (int)(int64_t)cw_waitv_of(w)->code;
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

static const cw_wait_ops ready_ops = {ready_try, no_arm, no_disarm, cw_guard_none};
static const cw_wait_ops pending_ops = {pending_try, no_arm, no_disarm, cw_guard_none};

void cw_core_wait_ready(cw_wait *w, cw_ctx *ctx, int result)
{
    cw_wait_init(w, ctx->hdr.backend, &ready_ops, NULL);
    cw_waitv_of(w)->rt = ctx->rt;
    cw_waitv_of(w)->code = (uint64_t)(int64_t)result;
}

void cw_core_wait_pending(cw_wait *w, cw_ctx *ctx)
{
    cw_wait_init(w, ctx->hdr.backend, &pending_ops, NULL);
    cw_waitv_of(w)->rt = ctx->rt;
}
