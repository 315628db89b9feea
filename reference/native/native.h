/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * native.h - private to the native backend: worker pools, per-task state,
 * the reactor, and the runtime that ties them together.
 *
 * Tasks are the core's coroutines. A pool is a queue of runnable tasks and
 * the threads that serve it: the shared workers, the bounded blocking pool,
 * and one single-task pool per dedicated task. A task always runs on its
 * home pool's threads but may resume on any of them.
 */
#ifndef CW_NATIVE_H
#define CW_NATIVE_H

#include <inttypes.h>
#include <pthread.h>

#include "core/sched.h"
#include "network/net.h"
#include "storage/storage.h"

typedef struct cw_native cw_native;

/* Where a task is, as far as the scheduler is concerned. Guarded by n->lock. */
enum cw_nstate {
    CW_N_QUEUED,   /* in its pool's queue */
    CW_N_RUNNING,  /* on a thread */
    CW_N_PARKING,  /* switching away to park: not yet safe to resume elsewhere */
    CW_N_YIELDING, /* switching away to yield */
    CW_N_PARKED,   /* suspended, waiting for a wake */
    CW_N_EXITED,   /* made its last switch */
};

typedef struct cw_tpool cw_tpool;

typedef struct cw_ntask {
    cw_task *task;
    cw_tpool *home;
    enum cw_nstate state;
    bool notified;         /* woken while not parked */
    bool no_thread;        /* its pool could not start a thread: it never runs */
    struct cw_ntask *next; /* queue link */
} cw_ntask;

struct cw_tpool {
    cw_native *n;
    cw_ntask *head, *tail; /* FIFO of runnable tasks */
    pthread_cond_t ready;  /* signalled when a task is queued or the pool stops */
    unsigned threads;      /* started */
    unsigned idle;         /* waiting on `ready` */
    unsigned queued;       /* tasks in the FIFO */
    unsigned max_threads;  /* a blocking pool grows up to this */
    bool dedicated;        /* one task, one thread, gone with the task */
    bool stopping;
    cw_tpool *next_dedicated; /* n->dedicated list, freed at the end of the run */
};

/* Something the reactor watches: `ready` runs on the worker holding the
 * reactor, with the epoll events and the runtime's lock held. A source
 * given to cw_reactor_forget is freed (`release`) once no event already
 * taken can name it. */
typedef struct cw_reactor_source {
    void (*ready)(struct cw_reactor_source *src, uint32_t events);
    void (*release)(struct cw_reactor_source *src);
    int fd;
    struct cw_reactor_source *next; /* the reactor's list of sources to free */
} cw_reactor_source;

typedef struct cw_reactor {
    int epfd, timerfd, eventfd;
    cw_reactor_source timer_src, event_src;
    cw_reactor_source *forgotten; /* under `lock`: freed before the next epoll_wait */
    pthread_mutex_t lock;         /* the alarm heap */
    cw_alarms alarms;
    cw_time armed; /* the timerfd's deadline, CW_TIME_MAX when disarmed */
    bool expired;  /* by the holder only: the timerfd expired during this poll */
    /* Under the scheduler lock (n->lock): */
    bool held;       /* a shared worker is polling, or about to */
    bool blocking;   /* ... in an epoll_wait that only an event ends */
    bool notified;   /* the eventfd was written since that wait began */
    bool standby;    /* an idle worker watches for a reactor nobody holds */
    uint64_t polled; /* the monotonic clock when the last poll ended */
} cw_reactor;

/* The HTTP endpoint serving GET /metrics (metrics_http.c). */
typedef struct cw_metrics_http {
    cw_rt *rt;
    int listen_fd, stop_fd; /* -1 when not serving */
    pthread_t thread;
    bool running;
} cw_metrics_http;

struct cw_native {
    cw_rt rt;               /* first: the core sees only this */
    pthread_mutex_t lock;   /* pools, task states, counts */
    pthread_cond_t changed; /* the run's end condition or a count changed */
    cw_tpool shared, blocking;
    unsigned live_tasks; /* spawned and not yet finished */
    pthread_t *threads;  /* every thread started, joined at the end */
    size_t nthreads, cap_threads;
    cw_tpool *dedicated; /* pools of dedicated tasks */
    bool root_done;
    bool panicked; /* a copy of rt.panicked, readable under this lock */
    cw_reactor reactor;
    struct cw_uring *uring;       /* file storage's io_uring (uring.h); NULL: I/O threads */
    struct cw_net_ring *net_ring; /* the network's, with `uring` (net_ring.h) */
    cw_metrics_http http;
    /* The clock: wall time at start, advanced by the monotonic clock, so it
     * reads like real time yet never goes back. */
    cw_time start_real;
    uint64_t start_mono;
};

/* scheduler.c */
extern const cw_sched_ops cw_native_sched;
void cw_tpool_init(cw_tpool *p, cw_native *n, unsigned max_threads, bool dedicated);
int cw_tpool_start_thread(cw_tpool *p);          /* with n->lock held */
void cw_native_push(cw_native *n, cw_ntask *nt); /* with n->lock held */
uint64_t cw_native_mono_ns(void);
cw_time cw_native_now(cw_native *n);

/* reactor.c */
int cw_reactor_start(cw_reactor *r);
void cw_reactor_stop(cw_reactor *r);
/* Wait for events (or only look, when !block), wake the tasks they concern
 * and the sleepers that are due. Only by the thread that holds the reactor. */
void cw_reactor_poll(cw_reactor *r, bool block);
/* End the blocking cw_reactor_poll in progress, or the next one. */
void cw_reactor_notify(cw_reactor *r);
bool cw_reactor_arm(cw_reactor *r, cw_wait *w, cw_task *t); /* false: no memory */
void cw_reactor_disarm(cw_reactor *r, cw_wait *w);
/* Watch src->fd, edge-triggered, for input, output and hang-up. */
int cw_reactor_watch(cw_reactor *r, cw_reactor_source *src);
/* Watch src->fd, already watched, for output alone (hang-ups and errors
 * are always reported): its input is read some other way. */
int cw_reactor_watch_output(cw_reactor *r, cw_reactor_source *src);
/* Stop watching src->fd (the caller closes it) and free `src` later. */
void cw_reactor_forget(cw_reactor *r, cw_reactor_source *src);

/* metrics_http.c: serve `address` ("host:port") when it is not NULL.
 * CW_OK, or CW_ERR_INVALID / CW_ERR_BIND_FAILED / CW_ERR_IO with why. */
int cw_metrics_http_start(cw_metrics_http *h, cw_rt *rt, const char *address, char *why,
                          size_t whylen);
void cw_metrics_http_stop(cw_metrics_http *h);

/* tcp.c, resolver.c: the network */
extern const cw_net_driver cw_tcp_net_driver;
extern const cw_network_ops cw_network_tcp_entries;
int cw_sys_resolve(cw_ctx *ctx, const char *host, cw_addr *out, size_t cap, size_t *n,
                   cw_resolve_error *err);
int cw_sys_resolver_register(cw_ctx *ctx, const char *host, const cw_addr *addrs, size_t n);
/* The lookups whose task never ran: only at the run's end. */
/* The native backend's part of a run's network (net->impl): the system
 * resolutions under way (resolver.c), which the run frees at its end. */
typedef struct cw_lookup cw_lookup;
typedef struct cw_tcp_net {
    cw_list lookups;
} cw_tcp_net;

static inline cw_tcp_net *cw_tcp_net_of(const cw_net *net)
{
    return net->impl;
}

void cw_lookups_free(cw_list *lookups);

/* file_storage.c: the storage driver */
extern const cw_storage_driver cw_file_driver;

extern const cw_origin cw_native_origin; /* backend.c */

/* runner.c: a run whose objects name `self`, the native table or one
 * derived from it. */
int cw_native_start_as(const cw_backend *self, const cw_config *cfg, cw_task_fn root, void *arg,
                       cw_run_result *out);

#endif
