/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * threads.c - the threads of a strategy and the queue they serve.
 *
 * Threads start all at once with the first item, so a strategy that is
 * never used costs nothing. They serve the queue in order until the pool
 * stops; stopping drains the queue first, because each item belongs to a
 * caller waiting for it to be done.
 */
#include <signal.h>
#include <stdlib.h>

#include "parallel/parallel.h"

/* Set on pool threads: work reaching a strategy from one runs inline. */
static _Thread_local bool on_pool_thread;

bool cw_pool_thread(void)
{
    return on_pool_thread;
}

void cw_pool_init(cw_pool *p, size_t max_threads)
{
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    p->head = p->tail = NULL;
    p->threads = NULL;
    p->nthreads = 0;
    p->max_threads = max_threads;
    p->started = false;
    p->stopping = false;
}

void cw_pool_destroy(cw_pool *p)
{
    free(p->threads);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
}

static cw_pool_item *next_item(cw_pool *p)
{
    pthread_mutex_lock(&p->lock);
    while (!p->head && !p->stopping)
        pthread_cond_wait(&p->cond, &p->lock);
    cw_pool_item *it = p->head;
    if (it) {
        p->head = it->next;
        if (!p->head)
            p->tail = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    return it;
}

static void *pool_thread_main(void *arg)
{
    cw_pool *p = arg;
    on_pool_thread = true;
    for (cw_pool_item *it; (it = next_item(p));)
        it->run(it);
    return NULL;
}

/* With the lock held. Signals go to the program's own threads, not to these. */
static void start_threads(cw_pool *p)
{
    p->started = true;
    p->threads = calloc(p->max_threads, sizeof *p->threads);
    if (!p->threads)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (p->nthreads < p->max_threads &&
           pthread_create(&p->threads[p->nthreads], NULL, pool_thread_main, p) == 0)
        p->nthreads++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

bool cw_pool_submit(cw_pool *p, cw_pool_item *first, cw_pool_item *last)
{
    pthread_mutex_lock(&p->lock);
    if (!p->started && !p->stopping)
        start_threads(p);
    bool ok = !p->stopping && p->nthreads > 0;
    if (ok) {
        last->next = NULL;
        if (p->tail)
            p->tail->next = first;
        else
            p->head = first;
        p->tail = last;
        pthread_cond_broadcast(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
    return ok;
}

void cw_pool_stop(cw_pool *p)
{
    pthread_mutex_lock(&p->lock);
    bool first = !p->stopping;
    p->stopping = true;
    size_t n = first ? p->nthreads : 0;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    /* `threads` is only written before `stopping` is set, so it can be read
     * without the lock by the one caller that joins. */
    for (size_t i = 0; i < n; i++)
        pthread_join(p->threads[i], NULL);
}
