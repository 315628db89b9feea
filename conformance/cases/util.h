/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * util.h - small helpers shared by the case files: tasks that never end,
 * and the one-line waits the seed's tests write as `.await`.
 */
#ifndef CWC_CASES_UTIL_H
#define CWC_CASES_UTIL_H

#include <dirent.h>
#include <stdatomic.h>
#include <time.h>

#include "harness/cwc.h"

/* Whether `rc`, the status of a run that asked for CW_IO_URING, is the
 * refusal NAT-008 allows when the run can have no ring: CW_ERR_UNSUPPORTED
 * where there is none to have, CW_ERR_NOMEM where it lacked resources. */
static inline bool cwc_no_ring(int rc)
{
    return rc == CW_ERR_UNSUPPORTED || rc == CW_ERR_NOMEM;
}

/* A task body that waits forever (until aborted). */
static inline void *cwc_pending_task(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_wait w = cw_wait_pending(ctx);
    cw_select(&w, 1);
    return NULL;
}

/* A task body that yields forever. */
static inline void *cwc_spin_task(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (;;)
        cw_yield(ctx);
    return NULL;
}

static inline void *cwc_return_42(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    return (void *)(intptr_t)42;
}

/* Send a unit value on a oneshot and require that it arrived. */
static inline void cwc_notify(cw_oneshot *o)
{
    char unit = 1;
    ck_assert_int_eq(cw_oneshot_send(o, &unit), CW_OK);
}

static inline void cwc_await(cw_oneshot *o)
{
    char unit;
    ck_assert_int_eq(cw_oneshot_recv(o, &unit), CW_OK);
}

/* A thread held as a blocking call holds it: the holder says it started,
 * then keeps its thread until the case lets it go. */
typedef struct cwc_hold {
    atomic_int started, release;
} cwc_hold;

static inline void cwc_hold_init(cwc_hold *h)
{
    atomic_init(&h->started, 0);
    atomic_init(&h->release, 0);
}

static inline void cwc_hold_thread(cwc_hold *h)
{
    atomic_store(&h->started, 1);
    while (!atomic_load(&h->release))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

/* The threads of this process now, or -1: runs must leave none behind. */
static inline int cwc_thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Whether the process is down to at most `n` threads, waiting up to 10 s
 * for it: a thread that was joined is still listed until the kernel has
 * reaped it, a moment that a loaded machine makes long. */
static inline bool cwc_threads_at_most(int n)
{
    for (int waited_ms = 0; waited_ms < 10000; waited_ms++) {
        if (cwc_thread_count() <= n)
            return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return cwc_thread_count() <= n;
}

#endif
