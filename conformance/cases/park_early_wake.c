/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * park_early_wake.c - a wake is never lost to the park that follows it
 * (TASK-009): a task takes its waker, the waker is woken while the task
 * still runs, and the task's next cw_park must return without waiting.
 * This is what makes the usual pattern safe: publish the waker, check the
 * condition, park; whoever makes the condition true wakes the waker, maybe
 * before the park.
 *
 * A backend that loses such a wake would leave the task parked for ever.
 * So a rescuer task sleeps a while and then wakes the waker again, noting
 * that it did: a park that needed the rescue waited, and the case fails
 * rather than hangs.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "cases/util.h"

struct early {
    cw_waker *waker;
    atomic_bool woken;  /* the early wake was made */
    atomic_bool parked; /* the park under test returned */
    atomic_bool rescued;
};

/* Wake the parker late, unless its park has returned by then. */
static void *rescuer(cw_ctx *ctx, void *arg)
{
    struct early *e = arg;
    cw_sleep(ctx, 200 * CW_MSEC);
    if (!atomic_load(&e->parked)) {
        atomic_store(&e->rescued, true);
        cw_waker_wake(e->waker);
    }
    return NULL;
}

/* Park once, with a rescue behind it: whether the park had to wait for it. */
static bool park_needed_rescue(cw_ctx *ctx, struct early *e)
{
    cw_handle *h = cw_spawn(cw_child(ctx, "rescuer"), rescuer, e);
    ck_assert_ptr_nonnull(h);
    cw_park(ctx);
    atomic_store(&e->parked, true);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    return atomic_load(&e->rescued);
}

static void early_init(struct early *e, cw_ctx *ctx)
{
    e->waker = cw_waker_current(ctx);
    ck_assert_ptr_nonnull(e->waker);
    atomic_init(&e->woken, false);
    atomic_init(&e->parked, false);
    atomic_init(&e->rescued, false);
}

/* The task wakes its own waker, then parks. */
static void *self_wake_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct early e;
    early_init(&e, ctx);
    cw_waker_wake(e.waker);
    ck_assert_msg(!park_needed_rescue(ctx, &e), "a wake made before cw_park was lost");
    cw_waker_release(e.waker);
    return NULL;
}

static void *foreign_wake(void *arg)
{
    struct early *e = arg;
    cw_waker_wake(e->waker);
    atomic_store(&e->woken, true);
    return NULL;
}

/* A program thread wakes the waker while the task runs on, without
 * suspending, until that wake is made; then the task parks. */
static void *thread_wake_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct early e;
    early_init(&e, ctx);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, foreign_wake, &e), 0);
    while (!atomic_load(&e.woken))
        sched_yield(); /* the thread's, not the task's: the task stays running */
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_msg(!park_needed_rescue(ctx, &e), "a wake made while the task ran was lost");
    cw_waker_release(e.waker);
    return NULL;
}

CWC_CASE(park_returns_after_an_early_self_wake, "tasks", "TASK-009", 0)
{
    cwc_run_ok(NULL, self_wake_root, NULL);
}

CWC_CASE(park_returns_after_a_wake_while_running, "tasks", "TASK-009 TASK-010", 0)
{
    cwc_run_ok(NULL, thread_wake_root, NULL);
}
