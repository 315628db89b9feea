/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * waker.c - wakers, cw_park and cw_yield (spec/04-tasks.md).
 *
 * A waker may be woken from any thread, and after its task or its whole run
 * ended [TASK-010]. So a waker is not the task but its cell: counted (the
 * task holds one reference, each waker one), locked, and detached when the
 * task ends. The cell is made with the task, so a waker costs no memory
 * [TASK-014]. A wake does not touch the task either: it
 * queues the cell on its run, under the run's lock, and signals the
 * scheduler, which sets the task's wake_pending flag on its own thread.
 *
 * Ownership: cw_waker_current hands the caller a new waker, ended by
 * cw_waker_release; it may outlive the run.
 */
#include <stdlib.h>

#include "skeleton.h"

/* Made with its task, so that cw_waker_current never finds memory short
 * [TASK-014]: a waker is the cell itself, with one reference more. */
sk_cell *sk_cell_new(sk_task *t)
{
    sk_cell *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->base.backend = &sk_backend;
    pthread_mutex_init(&c->lock, NULL);
    c->refs = 1;
    c->rt = t->rt;
    c->task = t;
    return c;
}

void sk_cell_unref(sk_cell *c)
{
    if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        pthread_mutex_destroy(&c->lock);
        free(c);
    }
}

/* The task ended: later wakes do nothing. Its own reference goes. */
void sk_cell_detach(sk_cell *c)
{
    pthread_mutex_lock(&c->lock);
    c->rt = NULL;
    c->task = NULL;
    pthread_mutex_unlock(&c->lock);
    sk_cell_unref(c);
}

cw_waker *sk_waker_current(cw_ctx *ctx)
{
    sk_task *t = sk_current_of(SK_CTX(ctx)->obj.rt, "cw_waker_current");
    __atomic_add_fetch(&t->cell->refs, 1, __ATOMIC_RELAXED);
    return (cw_waker *)(void *)t->cell;
}

/* Lock order: the cell, then its run. A run is freed only after all its
 * cells were detached under their lock, so c->rt is safe to use here. */
void sk_waker_wake(cw_waker *waker)
{
    sk_cell *c = (sk_cell *)(void *)waker;
    pthread_mutex_lock(&c->lock);
    sk_rt *rt = c->rt;
    if (rt) {
        pthread_mutex_lock(&rt->lock);
        if (!c->queued) {
            c->queued = true;
            __atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
            c->next_woken = rt->woken;
            rt->woken = c;
        }
        pthread_cond_signal(&rt->cond);
        pthread_mutex_unlock(&rt->lock);
    }
    pthread_mutex_unlock(&c->lock);
}

void sk_waker_release(cw_waker *waker)
{
    sk_cell_unref((sk_cell *)(void *)waker);
}

/* On the run's thread: hand each queued wake to its task. A task that
 * ended since has a detached cell, which is just let go. A cell stays
 * marked queued until its link was read, both under the run's lock: a wake
 * from another thread re-queues it only then, and so never rewrites a
 * link this walk has yet to follow. */
void sk_take_wakes(sk_rt *rt)
{
    pthread_mutex_lock(&rt->lock);
    sk_cell *c = rt->woken;
    rt->woken = NULL;
    pthread_mutex_unlock(&rt->lock);
    while (c) {
        pthread_mutex_lock(&rt->lock);
        sk_cell *next = c->next_woken;
        c->queued = false;
        pthread_mutex_unlock(&rt->lock);
        if (c->task) {
            c->task->wake_pending = true;
            sk_wake(c->task);
        }
        sk_cell_unref(c);
        c = next;
    }
}

/* A wake since the last park makes this one return at once. An aborted
 * task ends here; an unwinding one does not wait [PAN-005]. */
void sk_park(cw_ctx *ctx)
{
    sk_task *t = sk_current_of(SK_CTX(ctx)->obj.rt, "cw_park");
    if (t->unwinding)
        return;
    sk_check_abort(t);
    if (!t->wake_pending)
        sk_block(t);
    t->wake_pending = false;
    sk_check_abort(t);
}

/* Back of the ready queue: every task ready now runs first. */
void sk_yield(cw_ctx *ctx)
{
    sk_task *t = sk_current_of(SK_CTX(ctx)->obj.rt, "cw_yield");
    if (t->unwinding)
        return;
    sk_check_abort(t);
    sk_ready(t);
    sk_switch_to_sched(t);
    sk_check_abort(t);
}
