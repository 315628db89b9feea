/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * select.c - cw_select and cw_poll, and the two waits that need no object.
 *
 * Select is a retry loop: try every wait in index order and complete the
 * first that can [SEL-001]; otherwise link the task on each wait's list,
 * block, unlink, and try again. Only try_now ever changes anything, and it
 * does so only when it completes, so a wait that lost had no effect
 * [SEL-002]. A wake-up that finds nothing to do simply loops.
 */
#include "skeleton.h"

void sk_wait_fill(cw_wait *w, const sk_wait_ops *ops, sk_obj *object, void *out, uint64_t arg)
{
    w->backend = &sk_backend;
    w->result = CW_ERR_WOULD_BLOCK;
    w->ops = ops;
    w->object = object;
    w->out = out;
    w->arg = arg;
    w->state = 0;
    w->link[0] = w->link[1] = w->link[2] = w->link[3] = NULL;
}

static const sk_wait_ops *ops_of(const cw_wait *w)
{
    return w->ops;
}

static int try_all(cw_wait *waits, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ops_of(&waits[i])->try_now(&waits[i]))
            return (int)i;
    return -1;
}

/* One pass in index order. Only a stop changes anything without completing
 * (SIG-006), and it may let a wait before it complete, so a pass that
 * started the stop is tried once more [SEL-001]. */
static int try_pass(sk_rt *rt, cw_wait *waits, size_t n)
{
    bool was_stopping = rt->stopping;
    int i = try_all(waits, n);
    /* cppcheck-suppress incorrectLogicOperator ; try_all may start the stop */
    if (i < 0 && !was_stopping && rt->stopping)
        i = try_all(waits, n);
    return i;
}

static void arm_all(cw_wait *waits, size_t n, sk_task *t)
{
    for (size_t i = 0; i < n; i++) {
        sk_waitlist *l = ops_of(&waits[i])->queue(&waits[i]);
        if (l)
            sk_waitlist_add(l, &waits[i], t);
    }
}

static void disarm_all(cw_wait *waits, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sk_waitlist_remove(&waits[i]);
}

/* Select suspends only when no wait can complete now, and only that is a
 * suspension point: an aborted task ends there [TASK-002], an unwinding one
 * fails there at once [PAN-005]. A wait that can complete, completes. */
int sk_select(cw_wait *waits, size_t n, bool block)
{
    sk_task *t = sk_current_of(SK_RT_OF(waits[0].object), block ? "cw_select" : "cw_poll");
    for (;;) {
        int i = try_pass(t->rt, waits, n);
        if (i >= 0 || !block)
            return i >= 0 ? i : CW_ERR_WOULD_BLOCK;
        if (t->unwinding)
            return CW_ERR_CLOSED;
        sk_check_abort(t);
        arm_all(waits, n, t);
        sk_block(t);
        disarm_all(waits, n);
        sk_check_abort(t);
    }
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

static sk_waitlist *no_queue(cw_wait *w)
{
    (void)w;
    return NULL;
}

static const sk_wait_ops ready_ops = {"ready", ready_try, no_queue};
static const sk_wait_ops pending_ops = {"pending", pending_try, no_queue};

void sk_wait_ready(cw_wait *w, cw_ctx *ctx, int result)
{
    sk_wait_fill(w, &ready_ops, &SK_CTX(ctx)->obj, NULL, (uint64_t)(int64_t)result);
}

void sk_wait_pending(cw_wait *w, cw_ctx *ctx)
{
    sk_wait_fill(w, &pending_ops, &SK_CTX(ctx)->obj, NULL, 0);
}
