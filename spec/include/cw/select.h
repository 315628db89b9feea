/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/select.h - waiting for the first of several operations.
 *
 * A cw_wait describes one operation that may have to wait: joining a handle,
 * receiving from a channel, sleeping until a deadline, waiting for the stop
 * signal... cw_select blocks the calling task until one of them can
 * complete, completes exactly that one, and leaves the others untouched.
 * Rules: spec/08-select.md.
 */
#ifndef CW_SELECT_H
#define CW_SELECT_H

#include <stdbool.h>

#include "cw/backend.h"
#include "cw/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Filled by a cw_wait_* constructor; `result` is the only field a caller
 * reads, after the wait completed. The rest belongs to the backend. A wait
 * holds no resources, so it is simply dropped when no longer needed. */
struct cw_wait {
    const cw_backend *backend; /* the backend of the object waited on */
    int result;       /* the completed operation's result code */
    const void *ops;  /* backend: how to try, arm and disarm this kind of wait */
    void *object;     /* backend: the handle, channel, signal... */
    void *out;        /* backend: where a value goes */
    uint64_t arg;     /* backend: a deadline, a value... */
    uint64_t state;   /* backend: progress kept between selects */
    void *link[4];    /* backend: waiter-queue links while armed */
};

/* Block the calling task until one of waits[0..n) completes; returns its
 * index. When several can complete, the lowest index wins. All waits must
 * come from one runtime. n == 0 returns CW_ERR_INVALID. */
static inline int cw_select(cw_wait *waits, size_t n)
{
    return n == 0 ? CW_ERR_INVALID : waits[0].backend->select(waits, n, true);
}

/* Like cw_select, but never blocks: CW_ERR_WOULD_BLOCK when none can
 * complete now. */
static inline int cw_poll(cw_wait *waits, size_t n)
{
    return n == 0 ? CW_ERR_INVALID : waits[0].backend->select(waits, n, false);
}

/* Wait for one operation; returns its result. */
static inline int cw_wait_one(cw_wait *w)
{
    int i = cw_select(w, 1);
    return i < 0 ? i : w->result;
}

/* Always completes at once, with `result`. */
static inline cw_wait cw_wait_ready(cw_ctx *ctx, int result)
{
    cw_wait w;
    cw__backend_of(ctx)->wait_ready(&w, ctx, result);
    return w;
}

/* Never completes. */
static inline cw_wait cw_wait_pending(cw_ctx *ctx)
{
    cw_wait w;
    cw__backend_of(ctx)->wait_pending(&w, ctx);
    return w;
}

#ifdef __cplusplus
}
#endif
#endif
