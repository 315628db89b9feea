/*
 * offload.c - system calls that may block, run on threads of their own so
 * that the task asking for one is suspended and its worker thread keeps
 * running other tasks.
 *
 * A task hands over a job and parks; a pool thread runs it, marks it
 * finished and wakes the task, both under the pool's lock, so the task
 * cannot see the job finished before the wake is delivered (and cannot
 * end while the pool still points at it). The task parks through the
 * scheduler directly, not cw_park: an abort must not resume it while the
 * job still writes into its memory. It unwinds after the call instead.
 *
 * Threads are started as jobs queue up, up to the run's blocking_threads,
 * and stay until the run ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "storage/storage.h"

struct cw_offload {
    cw_rt *rt;
    pthread_mutex_t lock;
    pthread_cond_t work;  /* a job was queued, or the pool stops */
    pthread_cond_t quiet; /* nothing queued or running */
    cw_job *head, *tail;
    unsigned threads, idle, busy, max_threads;
    bool stopping;
    pthread_t *tids;
};

static void *pool_thread(void *arg)
{
    cw_offload *o = arg;
    pthread_mutex_lock(&o->lock);
    for (;;) {
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
        o->busy++;
        pthread_mutex_unlock(&o->lock);

        bool waited = job->done == NULL; /* an async job may be freed by its done */
        job->fn(job);
        if (!waited)
            job->done(job);

        pthread_mutex_lock(&o->lock);
        if (waited) {
            job->finished = true;
            o->rt->sched->wake(job->task);
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
    cw_offload *o = cw_xcalloc(1, sizeof *o);
    o->rt = rt;
    o->max_threads = max_threads ? max_threads : 1;
    o->tids = cw_xcalloc(o->max_threads, sizeof *o->tids);
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->work, NULL);
    pthread_cond_init(&o->quiet, NULL);
    return o;
}

/* With o->lock held: queue `job`, and start a thread if none is free. */
static void enqueue(cw_offload *o, cw_job *job)
{
    job->next = NULL;
    if (o->tail)
        o->tail->next = job;
    else
        o->head = job;
    o->tail = job;
    if (o->idle == 0 && o->threads < o->max_threads) {
        int rc = pthread_create(&o->tids[o->threads], NULL, pool_thread, o);
        if (rc == 0)
            o->threads++;
        else if (o->threads == 0)
            cw_fatal("cannot start a storage I/O thread: errno %d", rc);
    }
    pthread_cond_signal(&o->work);
}

void cw_offload_run(cw_offload *o, cw_job *job)
{
    cw_task *t = cw_task_self(o->rt, "a storage call");
    job->task = t;
    job->done = NULL;
    job->finished = false;
    pthread_mutex_lock(&o->lock);
    enqueue(o, job);
    while (!job->finished) {
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
    enqueue(o, job);
    pthread_mutex_unlock(&o->lock);
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
