/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * waker.c - wakers that outlive their task and their runtime.
 *
 * A waker may be handed to another thread or kept past the end of the run,
 * so it is reference counted on its own and guarded by its own lock. The
 * task holds one reference and, when it ends, detaches the waker under that
 * lock: from then on waking it does nothing.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "core/internal.h"

struct cw_waker {
    cw_object hdr;
    pthread_mutex_t lock;
    atomic_size_t refs;
    cw_task *task; /* NULL once the task ended */
};

cw_waker *cw_waker_new(cw_task *t)
{
    cw_waker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->hdr.backend = t->rt->backend;
    pthread_mutex_init(&w->lock, NULL);
    atomic_init(&w->refs, 1);
    w->task = t;
    return w;
}

void cw_core_waker_release(cw_waker *w)
{
    if (atomic_fetch_sub(&w->refs, 1) == 1) {
        pthread_mutex_destroy(&w->lock);
        free(w);
    }
}

void cw_waker_detach(cw_waker *w)
{
    pthread_mutex_lock(&w->lock);
    w->task = NULL;
    pthread_mutex_unlock(&w->lock);
    cw_core_waker_release(w);
}

cw_waker *cw_core_waker_current(cw_ctx *ctx)
{
    cw_task *t = cw_task_self(ctx->rt, "cw_waker_current");
    atomic_fetch_add(&t->waker->refs, 1);
    return t->waker;
}

void cw_core_waker_wake(cw_waker *w)
{
    pthread_mutex_lock(&w->lock);
    if (w->task)
        w->task->rt->sched->wake(w->task);
    pthread_mutex_unlock(&w->lock);
}
