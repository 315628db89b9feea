/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * parallel.h - the private pieces of strategies (cw/strategy.h).
 *
 * Everything here is built on the public interface only, so one copy
 * serves every backend:
 *
 *   threads.c   a FIFO of work items and the threads that run them
 *   latch.c     a count of outstanding items that a task (or a thread)
 *               waits on, woken from the pool through a cw_waker
 *   strategy.c  the strategy object, and the task that stops its pool
 *               when the run (or the task that made it) ends
 *   range.c     chunks, fold and map
 *   job.c       single closures: spawn, join, release
 */
#ifndef CW_PARALLEL_H
#define CW_PARALLEL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "cw/cw.h"
#include "cw/strategy.h"

/* ---- Pool (threads.c) ------------------------------------------------------ */

/* One unit of work. It lives in its submitter's memory: the pool only links
 * it, runs it once, and forgets it. */
typedef struct cw_pool_item {
    struct cw_pool_item *next;
    void (*run)(struct cw_pool_item *item);
} cw_pool_item;

typedef struct cw_pool {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    cw_pool_item *head, *tail;
    pthread_t *threads;
    size_t nthreads, max_threads;
    bool started;  /* threads were asked for (they start once) */
    bool stopping; /* no new item; threads drain the queue and exit */
} cw_pool;

void cw_pool_init(cw_pool *p, size_t max_threads);
/* Queue items[0 .. n) (linked through their `next`), all or none. False when
 * the pool is stopping or has no thread: the caller runs them itself. */
bool cw_pool_submit(cw_pool *p, cw_pool_item *first, cw_pool_item *last);
/* Refuse new items, let the threads finish the queue, and join them. Only
 * the first call joins; later calls return at once. */
void cw_pool_stop(cw_pool *p);
/* Call after cw_pool_stop returned in every thread that called it. */
void cw_pool_destroy(cw_pool *p);
/* True on a thread of any strategy's pool. */
bool cw_pool_thread(void);

/* ---- Latch (latch.c) ------------------------------------------------------- */

/* `remaining` items are outstanding; whoever waits learns when they are done.
 * A task waits with its waker, a plain thread on the condition variable. */
typedef struct cw_latch {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    size_t remaining;
    cw_waker *waker;       /* the waiting task's, while it waits */
    atomic_bool cancelled; /* the waiter was aborted: items skip their work */
} cw_latch;

void cw_latch_init(cw_latch *l, size_t remaining);
void cw_latch_destroy(cw_latch *l);
/* One item is done (any thread). The last one wakes the waiter. */
void cw_latch_count_down(cw_latch *l);
bool cw_latch_cancelled(cw_latch *l);
/* Wait until every item is done. With a ctx the task suspends; should it be
 * aborted meanwhile, its unwinding forgets the waker and calls
 * on_abort(arg), which decides what becomes of the items. */
void cw_latch_wait(cw_latch *l, cw_ctx *ctx, void (*on_abort)(void *arg), void *arg);
/* Wait on the condition variable until done (for threads, and unwinding). */
void cw_latch_wait_blocking(cw_latch *l);
/* Make the items not started skip their work, and wait for the rest. */
void cw_latch_cancel(cw_latch *l);
/* Stop waiting without waiting for the items: forget the waker. Returns
 * whether they were all done. */
bool cw_latch_abandon(cw_latch *l);

/* ---- Strategy (strategy.c) ---------------------------------------------------- */

struct cw_strategy {
    size_t parallelism;
    bool inline_only; /* deterministic backend: no pool at all */
    cw_pool pool;
    atomic_size_t refs;   /* the owner's claim, and the keeper's while it runs */
    cw_oneshot *started;  /* the keeper's word that it runs */
    pthread_mutex_t lock; /* guards the two fields below */
    cw_handle *keeper;    /* the task that stops the pool when it unwinds */
    bool keeper_gone;     /* it unwound (or never ran): never touch `keeper` again */
};

/* Queue items on the pool of `s`; false when they must run inline. */
bool cw_strategy_submit(cw_strategy *s, cw_pool_item *first, cw_pool_item *last);

#endif
