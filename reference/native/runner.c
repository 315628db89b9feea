/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * runner.c - starting and ending a native run.
 *
 * The calling thread only waits: for the root to finish, a panic that ends
 * the run, or the run timeout. Then every task still alive is aborted and
 * the runner waits until each has unwound on its own thread, so no task
 * outlives cw_start.
 *
 * File storage moves blob bytes through an io_uring or on I/O threads
 * (cfg.io_backend, NAT-008): the ring is opened here, before anything
 * runs, so that a run that insists on one and cannot have it fails to
 * start rather than later, and the gauge runtime_io_uring says which. A
 * run with that ring also has the network's (net_ring.c), through which
 * its TCP connections receive.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buffers/buffers.h"
#include "metrics/metrics.h"
#include "native/native.h"
#include "native/net_ring.h"
#include "native/uring.h"

/* NULL when memory for the run's records is exhausted [RUN-006]. */
static cw_native *native_new(const cw_backend *self, const cw_config *cfg)
{
    cw_native *n = calloc(1, sizeof *n);
    if (!n || cw_rt_init(&n->rt, self, &cw_native_sched, cfg) != CW_OK) {
        free(n);
        return NULL;
    }
    if (cw_rt_metrics_open(&n->rt) != CW_OK) {
        cw_rt_free_objects(&n->rt);
        free(n);
        return NULL;
    }
    cw_ext_set_driver(&n->rt, CW_EXT_STORAGE, &cw_file_driver);
    cw_ext_set_driver(&n->rt, CW_EXT_NETWORK, &cw_tcp_net_driver);
    n->rt.threaded = true;
    pthread_mutex_init(&n->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&n->changed, &attr);
    pthread_condattr_destroy(&attr);
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    n->start_real = (cw_time)real.tv_sec * 1000000000u + (cw_time)real.tv_nsec;
    n->start_mono = cw_native_mono_ns();
    unsigned workers = cfg->worker_threads;
    if (workers == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        workers = cpus > 0 ? (unsigned)cpus : 1;
    }
    cw_tpool_init(&n->shared, n, workers, false);
    cw_tpool_init(&n->blocking, n, cfg->blocking_threads ? cfg->blocking_threads : 1, false);
    return n;
}

/* Wait for the end of the run; true when the timeout ended it. */
static bool wait_for_end(cw_native *n)
{
    cw_duration timeout = n->rt.cfg.timeout;
    uint64_t limit = timeout == CW_FOREVER || timeout > UINT64_MAX - n->start_mono
                         ? UINT64_MAX
                         : n->start_mono + timeout;
    struct timespec until = {(time_t)(limit / 1000000000u), (long)(limit % 1000000000u)};
    bool timed_out = false;
    pthread_mutex_lock(&n->lock);
    for (;;) {
        /* rt.panicked itself needs rt->lock, which must not be taken under
         * this one: finish() copies it here. */
        if (n->root_done || n->panicked)
            break;
        if (limit == UINT64_MAX) {
            pthread_cond_wait(&n->changed, &n->lock);
        } else if (pthread_cond_timedwait(&n->changed, &n->lock, &until) != 0 &&
                   cw_native_mono_ns() >= limit) {
            timed_out = true;
            break;
        }
    }
    pthread_mutex_unlock(&n->lock);
    return timed_out;
}

/* How the run does file I/O: as configured, unless the configuration
 * leaves it to the backend (CW_IO_AUTO) and CWRT_NATIVE_IO names a way
 * ("uring", "threads"), so that a whole certification can run one way
 * (README.md). -1 when either names no known way. */
static int io_mode(const cw_config *cfg)
{
    const char *env = getenv("CWRT_NATIVE_IO");
    if (cfg->io_backend != CW_IO_AUTO || !env || !env[0])
        return cfg->io_backend >= CW_IO_AUTO && cfg->io_backend <= CW_IO_THREADS
                   ? (int)cfg->io_backend
                   : -1;
    if (strcmp(env, "uring") == 0)
        return CW_IO_URING;
    return strcmp(env, "threads") == 0 ? CW_IO_THREADS : -1;
}

static void close_rings(cw_native *n)
{
    cw_net_ring_close(n->net_ring);
    cw_uring_close(n->uring);
    n->net_ring = NULL;
    n->uring = NULL;
}

/* Open the rings the run's mode asks for [NAT-008]: CW_OK, or the error
 * cw_start returns and why. */
static int open_ring(cw_native *n, char *why, size_t whylen)
{
    int mode = io_mode(&n->rt.cfg);
    if (mode < 0) {
        snprintf(why, whylen,
                 "io_backend must be CW_IO_AUTO, CW_IO_URING or CW_IO_THREADS, "
                 "and CWRT_NATIVE_IO \"uring\" or \"threads\"");
        return CW_ERR_INVALID;
    }
    /* CW_IO_AUTO is the I/O threads. Buffered writes through a ring are
     * slower on the file systems measured (bench/storage.c): ext4 hands
     * each to a kernel worker thread, a 4 KiB write took 20 us against
     * 6 us on the I/O threads and 3 us for pwrite, and a synced one 39 us
     * against 26 us; reads were even. A program that finds the ring
     * faster on its own disks asks for CW_IO_URING. */
    if (mode != CW_IO_URING)
        return CW_OK;
    char reason[256];
    n->uring = cw_uring_open(&n->rt, &n->reactor, reason, sizeof reason);
    if (n->uring)
        n->net_ring = cw_net_ring_open(&n->rt, &n->reactor, reason, sizeof reason);
    if (n->net_ring)
        return CW_OK;
    int e = errno;
    close_rings(n);
    snprintf(why, whylen, "io_backend is CW_IO_URING and the run has no io_uring: %s", reason);
    /* Short of memory or descriptors, the ring is a resource the run cannot
     * have now [RUN-006]; otherwise this build or kernel has none to give,
     * which no retry changes [NAT-008]. */
    return e == ENOMEM || e == EMFILE || e == ENFILE ? CW_ERR_NOMEM : CW_ERR_UNSUPPORTED;
}

/* The gauge saying whether the run has a ring, then the rings [NAT-008]:
 * in that order, so that a gauge without memory leaves no ring to close. */
static int start_io(cw_native *n, char *why, size_t whylen)
{
    cw_metric *m = cw_rt_metric(&n->rt, "runtime_io_uring",
                                "Whether file storage reads, writes and syncs through io_uring",
                                CW_METRIC_GAUGE, NULL, 0);
    if (!m) {
        snprintf(why, whylen, "out of memory for the run's records");
        return CW_ERR_NOMEM;
    }
    int rc = open_ring(n, why, whylen);
    if (rc == CW_OK)
        cw_gauge_set(m, n->uring != NULL);
    return rc;
}

/* Abort everything, wait for every task to unwind, stop the threads. */
static void teardown(cw_native *n)
{
    cw_rt_lock(&n->rt);
    n->rt.ending = true;
    for (cw_list *it = n->rt.tasks.next; it != &n->rt.tasks; it = it->next)
        cw_task_abort(cw_container_of(it, cw_task, link));
    cw_rt_unlock(&n->rt);

    pthread_mutex_lock(&n->lock);
    while (n->live_tasks > 0)
        pthread_cond_wait(&n->changed, &n->lock);
    n->shared.stopping = n->blocking.stopping = true;
    if (n->reactor.blocking)
        cw_reactor_notify(&n->reactor);
    pthread_cond_broadcast(&n->shared.ready);
    pthread_cond_broadcast(&n->blocking.ready);
    for (cw_tpool *p = n->dedicated; p; p = p->next_dedicated) {
        p->stopping = true;
        pthread_cond_broadcast(&p->ready);
    }
    size_t nthreads = n->nthreads;
    pthread_mutex_unlock(&n->lock);
    for (size_t i = 0; i < nthreads; i++)
        pthread_join(n->threads[i], NULL);
    /* No worker is left to poll: the network's sockets can leave the
     * reactor, and the reactor can stop. */
    cw_rt_lock(&n->rt);
    cw_ext_close(&n->rt, CW_EXT_NETWORK);
    cw_rt_unlock(&n->rt);
    cw_reactor_stop(&n->reactor);
    close_rings(n); /* no task is left to wait on them, no socket to receive */
    cw_metrics_http_stop(&n->http);
}

static void fill_result(cw_native *n, bool timed_out, cw_run_result *out)
{
    cw_task *root = n->rt.root;
    if (n->rt.panicked) {
        out->status = CW_ERR_PANICKED;
        snprintf(out->message, sizeof out->message, "%s", n->rt.panic_message);
    } else if (timed_out) {
        out->status = CW_ERR_RUN_TIMEOUT;
        snprintf(out->message, sizeof out->message, "runtime timeout");
    } else {
        out->status = root->exit_result;
        out->value = root->exit_result == CW_OK ? root->exit_value : NULL;
    }
    out->end_time = cw_native_now(n);
}

static void native_free(cw_native *n)
{
    if (n->rt.root) /* none when no worker could be started */
        cw_task_free(n->rt.root);
    cw_rt_free_objects(&n->rt);
    while (n->dedicated) {
        cw_tpool *p = n->dedicated;
        n->dedicated = p->next_dedicated;
        pthread_cond_destroy(&p->ready);
        free(p);
    }
    pthread_cond_destroy(&n->shared.ready);
    pthread_cond_destroy(&n->blocking.ready);
    pthread_cond_destroy(&n->changed);
    pthread_mutex_destroy(&n->lock);
    free(n->threads);
    free(n);
}

/* Start the shared workers: as many as configured, or as many as the
 * process can have; false when it can have none [RUN-006]. */
static bool start_workers(cw_native *n)
{
    pthread_mutex_lock(&n->lock);
    for (unsigned i = 0; i < n->shared.max_threads; i++)
        if (cw_tpool_start_thread(&n->shared) != 0)
            break;
    bool any = n->shared.threads > 0;
    pthread_mutex_unlock(&n->lock);
    return any;
}

int cw_native_start_as(const cw_backend *self, const cw_config *cfg, cw_task_fn root, void *arg,
                       cw_run_result *out)
{
    cw_config resolved;
    cw_bufpool *pools[2];
    if (cw_run_begin(cfg, &resolved, out) != CW_OK ||
        cw_run_pools_open(self, &resolved, pools, out) != CW_OK)
        return out->status;

    cw_native *n = native_new(self, &resolved);
    if (!n) {
        cw_rt_pools_close(pools);
        snprintf(out->message, sizeof out->message, "out of memory for the run's records");
        return out->status = CW_ERR_NOMEM;
    }
    memcpy(n->rt.pools, pools, sizeof pools);
    int rc = cw_metrics_http_start(&n->http, &n->rt, resolved.metrics_address, out->message,
                                   sizeof out->message);
    if (rc == CW_OK && cw_reactor_start(&n->reactor) != CW_OK) {
        /* Its descriptors could not be had: a resource ran out [RUN-006]. */
        int e = errno;
        cw_metrics_http_stop(&n->http);
        snprintf(out->message, sizeof out->message, "cannot start the reactor: %s", strerror(e));
        rc = CW_ERR_NOMEM;
    } else if (rc == CW_OK && (rc = start_io(n, out->message, sizeof out->message)) != CW_OK) {
        cw_reactor_stop(&n->reactor);
        cw_metrics_http_stop(&n->http);
    }
    if (rc != CW_OK) {
        cw_rt_pools_close(n->rt.pools);
        cw_rt_free_objects(&n->rt);
        free(n);
        return out->status = rc;
    }
    if (!start_workers(n)) {
        snprintf(out->message, sizeof out->message, "cannot start any worker thread");
        cw_reactor_stop(&n->reactor);
        close_rings(n);
        cw_metrics_http_stop(&n->http);
        cw_rt_pools_close(n->rt.pools);
        native_free(n);
        return out->status = CW_ERR_NOMEM;
    }
    if (cw_task_new_root(&n->rt, root, arg)) {
        bool timed_out = wait_for_end(n);
        teardown(n);
        fill_result(n, timed_out, out);
    } else {
        teardown(n);
        snprintf(out->message, sizeof out->message, "out of memory for the root task");
        out->status = CW_ERR_NOMEM;
    }
    cw_rt_pools_close(n->rt.pools);
    native_free(n);
    return out->status;
}
