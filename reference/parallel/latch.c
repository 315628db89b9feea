/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * latch.c - waiting for work on the pool without holding up a worker.
 *
 * A task registers its waker and parks; the pool thread that finishes the
 * last item wakes it. The wake happens with the latch's lock held, and the
 * waiter reads `remaining` under the same lock, so once the waiter has seen
 * zero no pool thread touches the latch or the waker again: the waiter may
 * free both at once.
 *
 * An aborted task unwinds at its park, and the caller decides what happens
 * to the items. Items that borrow the caller's memory are cancelled: what
 * has not started is skipped and the unwinding thread blocks until the rest
 * is done. cw_park returns at once during unwinding, which is why that wait
 * uses the condition variable.
 */
#include "parallel/parallel.h"

void cw_latch_init(cw_latch *l, size_t remaining)
{
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
    l->remaining = remaining;
    l->waker = NULL;
    atomic_init(&l->cancelled, false);
}

void cw_latch_destroy(cw_latch *l)
{
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->lock);
}

bool cw_latch_cancelled(cw_latch *l)
{
    return atomic_load_explicit(&l->cancelled, memory_order_relaxed);
}

void cw_latch_count_down(cw_latch *l)
{
    pthread_mutex_lock(&l->lock);
    if (--l->remaining == 0) {
        if (l->waker)
            cw_waker_wake(l->waker);
        pthread_cond_broadcast(&l->cond);
    }
    pthread_mutex_unlock(&l->lock);
}

void cw_latch_wait_blocking(cw_latch *l)
{
    pthread_mutex_lock(&l->lock);
    while (l->remaining > 0)
        pthread_cond_wait(&l->cond, &l->lock);
    pthread_mutex_unlock(&l->lock);
}

static bool latch_done(cw_latch *l)
{
    pthread_mutex_lock(&l->lock);
    bool done = l->remaining == 0;
    pthread_mutex_unlock(&l->lock);
    return done;
}

bool cw_latch_abandon(cw_latch *l)
{
    pthread_mutex_lock(&l->lock);
    cw_waker *w = l->waker;
    l->waker = NULL;
    bool done = l->remaining == 0;
    pthread_mutex_unlock(&l->lock);
    if (w)
        cw_waker_release(w);
    return done;
}

typedef struct latch_abort {
    cw_latch *latch;
    void (*on_abort)(void *arg);
    void *arg;
} latch_abort;

void cw_latch_cancel(cw_latch *l)
{
    atomic_store(&l->cancelled, true);
    cw_latch_wait_blocking(l);
}

static void latch_unwind(void *arg)
{
    latch_abort *a = arg;
    cw_latch_abandon(a->latch);
    a->on_abort(a->arg);
}

void cw_latch_wait(cw_latch *l, cw_ctx *ctx, void (*on_abort)(void *arg), void *arg)
{
    if (!ctx) {
        cw_latch_wait_blocking(l);
        return;
    }
    cw_waker *w = cw_waker_current(ctx);
    pthread_mutex_lock(&l->lock);
    bool done = l->remaining == 0;
    if (!done)
        l->waker = w;
    pthread_mutex_unlock(&l->lock);
    if (done) {
        cw_waker_release(w);
        return;
    }
    latch_abort a = {l, on_abort, arg};
    CW_CLEANUP_PUSH(ctx, latch_unwind, &a);
    while (!latch_done(l))
        cw_park(ctx);
    CW_CLEANUP_POP(ctx, false);
    cw_latch_abandon(l);
}
