/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * sched.c - the scheduler: one loop on the thread that called cw_start,
 * switching to one task at a time (spec/00-conventions.md, Threads).
 *
 * A task is in exactly one of these states: queued (in the ready queue),
 * running (rt->current), blocked (waiting for sk_wake), or done. The loop
 * takes wakes from other threads, fires due sleeps, checks the run's
 * timeout, then runs the oldest ready task; with nothing ready it sleeps on
 * a condition variable until the next alarm or a wake.
 */
#include <errno.h>
#include <time.h>

#include "skeleton.h"

/* The task running on this thread, so that a suspending call can tell it is
 * made from a task of the right run [PAN-006]. */
static _Thread_local sk_task *tls_current;

sk_task *sk_current(void)
{
    return tls_current;
}

void sk_set_current(sk_task *t)
{
    tls_current = t;
}

sk_task *sk_current_of(sk_rt *rt, const char *call)
{
    sk_task *t = tls_current;
    if (!t || t->rt != rt)
        sk_fatal("%s: not called from a task of the object's runtime", call);
    return t;
}

void sk_ready(sk_task *t)
{
    if (t->queued || t->done)
        return;
    t->queued = true;
    t->ready_next = NULL;
    if (t->rt->ready_tail)
        t->rt->ready_tail->ready_next = t;
    else
        t->rt->ready_head = t;
    t->rt->ready_tail = t;
}

static sk_task *pop_ready(sk_rt *rt)
{
    sk_task *t = rt->ready_head;
    if (!t)
        return NULL;
    rt->ready_head = t->ready_next;
    if (!rt->ready_head)
        rt->ready_tail = NULL;
    t->queued = false;
    return t;
}

/* Anything that may have made a blocked task able to progress calls this. */
void sk_wake(sk_task *t)
{
    if (t->blocked) {
        t->blocked = false;
        sk_ready(t);
    }
}

/* Give the thread back to the scheduler until sk_wake (or sk_ready). */
void sk_block(sk_task *t)
{
    t->blocked = true;
    sk_switch_to_sched(t);
}

/* Run `t` until it suspends or ends; free it when it ended. */
static void run_task(sk_rt *rt, sk_task *t)
{
    if (!t->started && !sk_task_start(t)) {
        sk_task_free(t);
        return;
    }
    t->blocked = false;
    rt->current = t;
    tls_current = t;
    sk_switch_to_task(rt, t);
    tls_current = NULL;
    rt->current = NULL;
    if (t->done)
        sk_task_free(t);
}

static struct timespec mono_timespec(const sk_rt *rt, cw_time at)
{
    uint64_t mono = (at < rt->t0_real ? 0 : at - rt->t0_real) + rt->t0_mono;
    return (struct timespec){(time_t)(mono / CW_SEC), (long)(mono % CW_SEC)};
}

/* Sleep until `until` (CW_TIME_MAX: no limit) or a wake from any thread. */
static void idle(sk_rt *rt, cw_time until)
{
    struct timespec ts = mono_timespec(rt, until);
    pthread_mutex_lock(&rt->lock);
    int rc = 0;
    while (!rt->woken && rc != ETIMEDOUT) {
        if (until == CW_TIME_MAX)
            rc = pthread_cond_wait(&rt->cond, &rt->lock);
        else
            rc = pthread_cond_timedwait(&rt->cond, &rt->lock, &ts);
    }
    pthread_mutex_unlock(&rt->lock);
}

static cw_time min_time(cw_time a, cw_time b)
{
    return a < b ? a : b;
}

void sk_sched_loop(sk_rt *rt)
{
    sk_fiber_init(rt);
    while (!rt->ending) {
        sk_take_wakes(rt);
        cw_time now = sk_now(rt);
        if (now >= rt->end_at) {
            sk_rt_end(rt, CW_ERR_RUN_TIMEOUT, NULL, "runtime timeout");
            break;
        }
        sk_expire_sleepers(rt, now);
        sk_task *t = pop_ready(rt);
        if (t)
            run_task(rt, t);
        else
            idle(rt, min_time(sk_next_alarm(rt), rt->end_at));
    }
}

/* [RUN-003]: every task still alive is unwound where it stands, oldest
 * first; one that never started is dropped without running. Each resumed
 * task finds itself aborted at its suspension point and unwinds. */
void sk_end_tasks(sk_rt *rt)
{
    while (rt->tasks_head) {
        sk_task *t = rt->tasks_head;
        t->aborting = true;
        run_task(rt, t);
    }
    rt->ready_head = rt->ready_tail = NULL;
}
