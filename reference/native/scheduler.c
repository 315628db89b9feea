/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * scheduler.c - the native scheduler: pools of threads running tasks.
 *
 * Each pool is a FIFO of runnable tasks served by its threads. A thread
 * pops a task and switches into it; when the task switches back, the
 * thread decides, under the scheduler lock, what happens to it next. That
 * after-switch step is what makes cross-thread wakes safe: a parking task
 * is only marked PARKED (and so only becomes resumable by a wake on another
 * thread) once it is entirely off its stack.
 *
 * One global queue per pool keeps the design readable; bench/runtime.c
 * measures it against work stealing's main alternative, a thread per task.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "native/native.h"
#include "native/net_ring.h"
#include "native/os.h"

static _Thread_local cw_task *tls_task;      /* the task this thread is running */
static _Thread_local cw_coro *tls_home;      /* this thread's own context */
static _Thread_local cw_native *tls_polling; /* the run whose reactor this thread polls now */

/* A busy worker looks at the reactor, without waiting, when it ran this
 * many tasks and this long passed since anyone polled: sockets and timers
 * are served even when no worker is idle. The clock is read every
 * CW_POLL_EVERY tasks only, and a poll is a system call: both gates keep a
 * busy worker's cost per task to a few nanoseconds. */
#define CW_POLL_EVERY 61
#define CW_POLL_GAP_NS (100 * 1000)

/* One idle worker (the standby) checks this often that some worker holds
 * the reactor: the one that left it to run what its events woke may run
 * long, and nothing else would end the idle workers' wait for a task. */
#define CW_STANDBY_NS (10 * 1000 * 1000)

/* The worker that polled runs what its events woke, and wakes an idle
 * sibling for the rest only when the rest is at least this many tasks.
 * A wake costs the sibling's thread a futex wait and a trip through the
 * kernel's scheduler, several microseconds, and a socket's task runs in
 * about as long: for a few tasks the poller is done before the sibling
 * would start, and a sibling started for nothing takes a core from
 * whatever else runs on the machine (in bench/network.c, the client). */
#define CW_HANDOFF_MIN 8

/* Fewer tasks are still handed over when one of them runs long: a worker
 * whose task ran this long while others waited behind it wakes an idle
 * sibling for them, so no task waits much longer than one task's run. */
#define CW_HANDOFF_NS (50 * 1000)

/* TLS is read through these out-of-line functions only: a task may resume
 * on another thread, and a TLS address computed before a switch must never
 * be reused after it. */
static __attribute__((noinline)) cw_task *current_task(void)
{
    return tls_task;
}

static __attribute__((noinline)) cw_coro *current_home(void)
{
    return tls_home;
}

static __attribute__((noinline)) cw_native *current_poller(void)
{
    return tls_polling;
}

static cw_native *native_of(cw_rt *rt)
{
    return (cw_native *)rt;
}

static cw_ntask *ntask_of(cw_task *t)
{
    return t->sched_data;
}

uint64_t cw_native_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

cw_time cw_native_now(cw_native *n)
{
    return n->start_real + (cw_native_mono_ns() - n->start_mono);
}

/* ---- Pools --------------------------------------------------------------------- */

void cw_tpool_init(cw_tpool *p, cw_native *n, unsigned max_threads, bool dedicated)
{
    p->n = n;
    p->max_threads = max_threads;
    p->dedicated = dedicated;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&p->ready, &attr);
    pthread_condattr_destroy(&attr);
}

static cw_ntask *pool_pop(cw_tpool *p)
{
    cw_ntask *nt = p->head;
    p->head = nt->next;
    if (!p->head)
        p->tail = NULL;
    nt->next = NULL;
    p->queued--;
    return nt;
}

/* With n->lock held: a task was queued for the shared workers, more than are idle;
 * the one blocked in the reactor (if any) must come and run it. */
static void wake_poller(cw_native *n)
{
    cw_reactor *r = &n->reactor;
    if (r->blocking && !r->notified) {
        r->notified = true;
        cw_reactor_notify(r);
    }
}

/* With n->lock held: a blocking or dedicated pool has tasks queued, no
 * thread, and could not start one. A task that never ran does not run: a
 * shared worker ends it with CW_ERR_NOMEM, as when its stack cannot be had
 * [TASK-011]. One that already ran must still reach its end, so it goes on
 * on the shared workers, the only threads there are. */
static void threadless(cw_native *n, cw_tpool *p)
{
    while (p->head) {
        cw_ntask *nt = pool_pop(p);
        nt->no_thread = nt->task->state == CW_TASK_NEW;
        nt->home = &n->shared;
        cw_native_push(n, nt);
    }
}

void cw_native_push(cw_native *n, cw_ntask *nt)
{
    cw_tpool *p = nt->home;
    nt->state = CW_N_QUEUED;
    nt->next = NULL;
    if (p->tail)
        p->tail->next = nt;
    else
        p->head = nt;
    p->tail = nt;
    p->queued++;
    if (p == &n->shared && current_poller() == n)
        return; /* the worker polling runs what its events woke: see poll_reactor() */
    if (p->idle)
        pthread_cond_signal(&p->ready);
    /* `idle` still counts the workers signalled for the tasks queued before
     * this one until they wake: a task beyond them needs another thread,
     * or it waits behind tasks that may never yield (NAT-001). */
    if (p->queued <= p->idle)
        return;
    if (p == &n->shared)
        wake_poller(n);
    else if (p->threads < p->max_threads && cw_tpool_start_thread(p) != 0 && p->threads == 0)
        threadless(n, p);
}

/* Finish a task that made its last switch: publish its result, then
 * account for it (the root is kept for the runner to read). */
static void finish(cw_native *n, cw_ntask *nt)
{
    cw_task *t = nt->task;
    cw_task_finish(t);
    cw_rt_lock(&n->rt);
    bool panicked = n->rt.panicked;
    cw_rt_unlock(&n->rt);
    bool root = t == n->rt.root;
    if (!root)
        cw_task_free(t);
    pthread_mutex_lock(&n->lock);
    n->live_tasks--;
    if (root)
        n->root_done = true;
    if (panicked)
        n->panicked = true;
    if (root || panicked || n->live_tasks == 0)
        pthread_cond_broadcast(&n->changed);
    pthread_mutex_unlock(&n->lock);
    free(nt);
}

/* Run `nt` until it switches back; true when it ended. */
static bool run(cw_native *n, cw_coro *home, cw_ntask *nt)
{
    cw_task *t = nt->task;
    if (t->state == CW_TASK_NEW && (nt->no_thread || cw_task_prepare(t) != CW_OK)) {
        t->exit_result = CW_ERR_NOMEM;
        finish(n, nt);
        return true;
    }
    tls_task = t;
    tls_home = home;
    cw_coro_switch(home, &t->coro);
    tls_task = NULL;

    pthread_mutex_lock(&n->lock);
    switch (nt->state) {
    case CW_N_PARKING:
        if (nt->notified) {
            nt->notified = false;
            cw_native_push(n, nt);
        } else {
            nt->state = CW_N_PARKED;
        }
        break;
    case CW_N_YIELDING:
        cw_native_push(n, nt);
        break;
    case CW_N_EXITED:
        pthread_mutex_unlock(&n->lock);
        finish(n, nt);
        return true;
    default:
        cw_fatal("task %" PRIu64 " switched away while %d", t->id, (int)nt->state);
    }
    pthread_mutex_unlock(&n->lock);
    return false;
}

/* ---- The reactor's holder -------------------------------------------------------- */

/* With n->lock held, by a shared worker: hold the reactor for one poll. The
 * tasks its events wake are queued without a signal; afterwards this worker
 * runs them and hands a large surplus (CW_HANDOFF_MIN) to idle workers.
 * Waking a sibling for the one task a socket woke would move the task to
 * another thread, the hand-off that polling on the workers is there to
 * avoid. */
static void poll_reactor(cw_native *n, bool block)
{
    cw_reactor *r = &n->reactor;
    cw_tpool *p = &n->shared;
    r->held = true;
    r->blocking = block;
    r->notified = false;
    pthread_mutex_unlock(&n->lock);
    tls_polling = n;
    cw_reactor_poll(r, block);
    tls_polling = NULL;
    pthread_mutex_lock(&n->lock);
    r->held = r->blocking = false;
    r->polled = cw_native_mono_ns();
    for (unsigned extra = p->queued / CW_HANDOFF_MIN, woken = 0; woken < extra && woken < p->idle;
         woken++)
        pthread_cond_signal(&p->ready);
}

/* With n->lock held, by a thread about to wait or that ran many tasks:
 * see that the kernel gets the receives, accepts and connects queued on
 * the network's ring (net_ring.c). The kernel finishes a socket operation
 * on the thread that submitted it, interrupting that thread if it sleeps.
 * The thread to submit is the one that will hold the reactor: it is about
 * to wait for exactly those completions, where any other would be woken
 * for nothing.
 * So when a thread holds it, blocked, it is told to come round
 * (wake_poller) and submits them on its way to its next poll; when none
 * does, this thread submits them and, being a shared worker, polls next.
 * True when it let the lock go to do that. */
static bool hand_over_net_ops(cw_native *n)
{
    if (!n->net_ring || !cw_net_ring_queued(n->net_ring))
        return false;
    if (n->reactor.held) {
        wake_poller(n);
        return false;
    }
    pthread_mutex_unlock(&n->lock);
    cw_net_ring_flush(n->net_ring);
    pthread_mutex_lock(&n->lock);
    return true;
}

/* With n->lock held: wait for a task to be queued. One idle shared worker
 * also wakes every CW_STANDBY_NS, to take a reactor nobody holds. */
static void idle_wait(cw_native *n, cw_tpool *p)
{
    cw_reactor *r = &n->reactor;
    p->idle++;
    if (p != &n->shared || r->standby) {
        pthread_cond_wait(&p->ready, &n->lock);
    } else {
        r->standby = true;
        uint64_t at = cw_native_mono_ns() + CW_STANDBY_NS;
        struct timespec until = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
        pthread_cond_timedwait(&p->ready, &n->lock, &until);
        r->standby = false;
    }
    p->idle--;
}

static void *worker_main(void *arg)
{
    cw_tpool *p = arg;
    cw_native *n = p->n;
    bool shared = p == &n->shared;
    unsigned ran = 0;
    cw_coro home = {0};
    pthread_mutex_lock(&n->lock);
    for (;;) {
        if (p->head) {
            if (shared && ++ran >= CW_POLL_EVERY) {
                if (hand_over_net_ops(n))
                    continue; /* the lock was let go: look again */
                if (!n->reactor.held) {
                    ran = 0;
                    if (cw_native_mono_ns() - n->reactor.polled >= CW_POLL_GAP_NS) {
                        poll_reactor(n, false);
                        continue;
                    }
                }
            }
            cw_ntask *nt = pool_pop(p);
            nt->state = CW_N_RUNNING;
            /* The clock is read only when a task waits and a sibling could take it. */
            uint64_t began = shared && p->head && p->idle ? cw_native_mono_ns() : 0;
            pthread_mutex_unlock(&n->lock);
            bool ended = run(n, &home, nt);
            pthread_mutex_lock(&n->lock);
            if (began && p->head && p->idle && cw_native_mono_ns() - began >= CW_HANDOFF_NS)
                pthread_cond_signal(&p->ready);
            if (ended && p->dedicated)
                break;
        } else if (hand_over_net_ops(n)) {
            continue;
        } else if (p->stopping) {
            break;
        } else if (shared && !n->reactor.held) {
            ran = 0;
            poll_reactor(n, true);
        } else {
            idle_wait(n, p);
        }
    }
    p->threads--;
    pthread_cond_broadcast(&n->changed);
    pthread_mutex_unlock(&n->lock);
    return NULL;
}

int cw_tpool_start_thread(cw_tpool *p)
{
    cw_native *n = p->n;
    if (!cw_grow(&n->threads, &n->cap_threads, n->nthreads + 1, sizeof *n->threads, 16))
        return ENOMEM;
    /* The thread only runs the pool loop; tasks have stacks of their own. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    int rc = cw_os.thread_create(&n->threads[n->nthreads], &attr, worker_main, p);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        return rc;
    n->nthreads++;
    p->threads++;
    return 0;
}

/* ---- The scheduler interface ------------------------------------------------------- */

static void native_wake(cw_task *t)
{
    cw_native *n = native_of(t->rt);
    cw_ntask *nt = ntask_of(t);
    pthread_mutex_lock(&n->lock);
    if (nt->state == CW_N_PARKED)
        cw_native_push(n, nt);
    else if (nt->state != CW_N_EXITED)
        nt->notified = true;
    pthread_mutex_unlock(&n->lock);
}

static void switch_home(cw_task *t)
{
    cw_coro_switch(&t->coro, current_home());
}

static void native_park(cw_task *t)
{
    cw_native *n = native_of(t->rt);
    cw_ntask *nt = ntask_of(t);
    pthread_mutex_lock(&n->lock);
    if (nt->notified) {
        nt->notified = false;
        pthread_mutex_unlock(&n->lock);
        return;
    }
    nt->state = CW_N_PARKING;
    pthread_mutex_unlock(&n->lock);
    switch_home(t);
}

static void native_yield(cw_task *t)
{
    cw_native *n = native_of(t->rt);
    pthread_mutex_lock(&n->lock);
    ntask_of(t)->state = CW_N_YIELDING;
    pthread_mutex_unlock(&n->lock);
    switch_home(t);
}

static cw_tpool *home_pool(cw_native *n, cw_task *t)
{
    if (t->execution == CW_EXEC_SHARED_BLOCKING)
        return &n->blocking;
    if (t->execution != CW_EXEC_DEDICATED)
        return &n->shared;
    cw_tpool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    cw_tpool_init(p, n, 1, true);
    p->next_dedicated = n->dedicated;
    n->dedicated = p;
    return p;
}

static int native_spawned(cw_task *t)
{
    cw_native *n = native_of(t->rt);
    cw_ntask *nt = calloc(1, sizeof *nt);
    if (!nt)
        return CW_ERR_NOMEM;
    nt->task = t;
    t->sched_data = nt;
    pthread_mutex_lock(&n->lock);
    nt->home = home_pool(n, t);
    bool homed = nt->home != NULL;
    if (homed) {
        n->live_tasks++;
        cw_native_push(n, nt);
    }
    pthread_mutex_unlock(&n->lock);
    if (homed)
        return CW_OK;
    t->sched_data = NULL; /* a dedicated task's pool could not be had */
    free(nt);
    return CW_ERR_NOMEM;
}

static void native_exit(cw_task *t)
{
    cw_native *n = native_of(t->rt);
    pthread_mutex_lock(&n->lock);
    ntask_of(t)->state = CW_N_EXITED;
    pthread_mutex_unlock(&n->lock);
    cw_coro_exit_switch(&t->coro, current_home());
}

static cw_task *native_current(cw_rt *rt)
{
    cw_task *t = current_task();
    return t && t->rt == rt ? t : NULL;
}

static cw_time native_now(cw_rt *rt)
{
    return cw_native_now(native_of(rt));
}

static bool native_alarm_arm(cw_rt *rt, cw_wait *w, cw_task *t)
{
    return cw_reactor_arm(&native_of(rt)->reactor, w, t);
}

/* Only the deterministic network arms alarms with no task. */
static bool native_alarm_reserve(cw_rt *rt)
{
    (void)rt;
    return false;
}

static void native_alarm_unreserve(cw_rt *rt)
{
    (void)rt;
}

static void native_alarm_disarm(cw_rt *rt, cw_wait *w)
{
    cw_reactor_disarm(&native_of(rt)->reactor, w);
}

static void native_random(cw_rt *rt, void *buf, size_t len)
{
    (void)rt;
    unsigned char *p = buf;
    while (len) {
        ssize_t got = getrandom(p, len, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            cw_fatal("getrandom failed: errno %d", errno);
        }
        p += got;
        len -= (size_t)got;
    }
}

const cw_sched_ops cw_native_sched = {
    .wake = native_wake,
    .park = native_park,
    .yield = native_yield,
    .spawned = native_spawned,
    .exit = native_exit,
    .current = native_current,
    .now = native_now,
    .alarm_arm = native_alarm_arm,
    .alarm_reserve = native_alarm_reserve,
    .alarm_unreserve = native_alarm_unreserve,
    .alarm_disarm = native_alarm_disarm,
    .audit = NULL,
    .random = native_random,
};
