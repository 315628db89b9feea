/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * io_threads.c - system calls that may block, run on threads of their own so
 * that the task asking for one is suspended and its worker thread keeps
 * running other tasks.
 *
 * A task hands over a job, spins a few microseconds in case it is done at
 * once (most page-cache transfers are), then parks. A pool thread runs the
 * job and marks it finished; if the task announced it parked, it wakes it,
 * under the pool's lock, so the task cannot see the job finished before
 * the wake is delivered (and cannot end while the pool still points at
 * it). The task parks through the scheduler directly, not cw_park: an
 * abort must not resume it while the job still writes into its memory. It
 * unwinds after the call instead.
 *
 * Threads are started as jobs queue up, up to the run's blocking_threads,
 * and stay until the run ends.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "native/io_threads.h"
#include "native/os.h"

/* How long each side of a hand-off spins before it sleeps. A page-cache
 * read or write takes a few microseconds, while putting a thread to sleep
 * and waking it costs ten or more on each side. The task spins briefly, as
 * its worker thread could be running other tasks; a pool thread, which has
 * nothing else to do, waits longer for the task's next call. */
enum { TASK_SPIN_NS = 20000, POOL_SPIN_NS = 50000 };

struct cw_offload {
    cw_rt *rt;
    pthread_mutex_t lock;
    pthread_cond_t work;  /* a job was queued, or the pool stops */
    pthread_cond_t quiet; /* nothing queued or running */
    cw_job *head, *tail;
    atomic_uint queued; /* jobs in the queue, for spinning threads to watch */
    unsigned threads, idle, spinning, busy, max_threads;
    bool stopping;
    pthread_t *tids;
};

static int64_t elapsed_ns(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - since->tv_sec) * 1000000000 + (now.tv_nsec - since->tv_nsec);
}

/* Until `done(arg)` or `limit` nanoseconds have passed, letting other
 * threads run. */
static bool spin_until(bool (*done)(void *arg), void *arg, int64_t limit)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        if (done(arg))
            return true;
        if (elapsed_ns(&start) > limit)
            return false;
        sched_yield(); /* on a busy machine, the thread we wait for may need this CPU */
    }
}

static bool work_queued(void *arg)
{
    cw_offload *o = arg;
    return atomic_load_explicit(&o->queued, memory_order_acquire) > 0;
}

static bool job_finished(void *arg)
{
    cw_job *job = arg;
    return atomic_load_explicit(&job->state, memory_order_acquire) == CW_JOB_FINISHED;
}

static void *io_thread_main(void *arg)
{
    cw_offload *o = arg;
    pthread_mutex_lock(&o->lock);
    for (;;) {
        if (!o->head && !o->stopping) {
            o->spinning++;
            pthread_mutex_unlock(&o->lock);
            spin_until(work_queued, o, POOL_SPIN_NS);
            pthread_mutex_lock(&o->lock);
            o->spinning--;
        }
        while (!o->head && !o->stopping) {
            o->idle++;
            pthread_cond_wait(&o->work, &o->lock);
            o->idle--;
        }
        cw_job *job = o->head;
        if (!job)
            break; /* stopping, and nothing left to run */
        o->head = job->next;
        if (!o->head)
            o->tail = NULL;
        atomic_fetch_sub_explicit(&o->queued, 1, memory_order_relaxed);
        o->busy++;
        pthread_mutex_unlock(&o->lock);

        bool waited = job->done == NULL; /* an async job may be freed by its done */
        job->fn(job);
        if (!waited)
            job->done(job);

        pthread_mutex_lock(&o->lock);
        if (waited) {
            cw_task *t = job->task;
            int was = atomic_exchange(&job->state, CW_JOB_FINISHED);
            if (was == CW_JOB_PARKED) /* a task still spinning needs no wake */
                o->rt->sched->wake(t);
        }
        o->busy--;
        if (!o->head && o->busy == 0)
            pthread_cond_broadcast(&o->quiet);
    }
    pthread_mutex_unlock(&o->lock);
    return NULL;
}

cw_offload *cw_offload_new(cw_rt *rt, unsigned max_threads)
{
    cw_offload *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->rt = rt;
    o->max_threads = max_threads ? max_threads : 1;
    o->tids = calloc(o->max_threads, sizeof *o->tids);
    if (!o->tids) {
        free(o);
        return NULL;
    }
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->work, NULL);
    pthread_cond_init(&o->quiet, NULL);
    return o;
}

static bool start_thread(cw_offload *o)
{
    if (cw_os.thread_create(&o->tids[o->threads], NULL, io_thread_main, o) != 0)
        return false;
    o->threads++;
    return true;
}

/* With o->lock held: queue `job`, and start a thread if none is free.
 * False, with nothing queued, when there is no thread and none can be
 * started: the caller then does the job on its own thread, which is
 * slower for the run but loses nothing. */
static bool enqueue(cw_offload *o, cw_job *job)
{
    if (o->threads == 0 && !start_thread(o))
        return false;
    job->next = NULL;
    if (o->tail)
        o->tail->next = job;
    else
        o->head = job;
    o->tail = job;
    atomic_fetch_add_explicit(&o->queued, 1, memory_order_release);
    if (o->spinning >= atomic_load_explicit(&o->queued, memory_order_relaxed))
        return true; /* enough threads are spinning to take every queued job */
    if (o->idle == 0 && o->threads < o->max_threads)
        start_thread(o); /* or one of those there are takes it later */
    pthread_cond_signal(&o->work);
    return true;
}

void cw_offload_run(cw_offload *o, cw_job *job)
{
    cw_task *t = cw_task_self(o->rt, "a storage call");
    job->task = t;
    job->done = NULL;
    atomic_init(&job->state, CW_JOB_WAITING);
    pthread_mutex_lock(&o->lock);
    bool queued = enqueue(o, job);
    pthread_mutex_unlock(&o->lock);
    if (!queued) {
        job->fn(job);
        return;
    }
    if (spin_until(job_finished, job, TASK_SPIN_NS))
        return;
    /* Announce the park under the lock, so the pool thread wakes the task
     * exactly when it will sleep. */
    pthread_mutex_lock(&o->lock);
    int expected = CW_JOB_WAITING;
    atomic_compare_exchange_strong(&job->state, &expected, CW_JOB_PARKED);
    while (atomic_load(&job->state) != CW_JOB_FINISHED) {
        pthread_mutex_unlock(&o->lock);
        o->rt->sched->park(t);
        pthread_mutex_lock(&o->lock);
    }
    pthread_mutex_unlock(&o->lock);
}

void cw_offload_submit(cw_offload *o, cw_job *job)
{
    job->task = NULL;
    pthread_mutex_lock(&o->lock);
    bool queued = enqueue(o, job);
    pthread_mutex_unlock(&o->lock);
    if (!queued) {
        job->fn(job);
        job->done(job); /* may free the job */
    }
}

void cw_offload_drain(cw_offload *o)
{
    pthread_mutex_lock(&o->lock);
    while (o->head || o->busy)
        pthread_cond_wait(&o->quiet, &o->lock);
    pthread_mutex_unlock(&o->lock);
}

void cw_offload_free(cw_offload *o)
{
    if (!o)
        return;
    pthread_mutex_lock(&o->lock);
    o->stopping = true;
    pthread_cond_broadcast(&o->work);
    unsigned threads = o->threads;
    pthread_mutex_unlock(&o->lock);
    for (unsigned i = 0; i < threads; i++)
        pthread_join(o->tids[i], NULL);
    pthread_cond_destroy(&o->work);
    pthread_cond_destroy(&o->quiet);
    pthread_mutex_destroy(&o->lock);
    free(o->tids);
    free(o);
}
