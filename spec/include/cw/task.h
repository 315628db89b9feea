/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/task.h - spawning tasks, their handles, yielding and wakers.
 * Rules: spec/04-tasks.md.
 */
#ifndef CW_TASK_H
#define CW_TASK_H

#include "cw/select.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start fn(task_ctx, arg) as a new task supervised by `ctx`'s place in the
 * tree, and consume `ctx`: the pointer is invalid after the call [TASK-001].
 * The handle belongs to the caller (cw_handle_release). NULL only when
 * memory is exhausted. */
static inline cw_handle *cw_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    return cw__backend_of(ctx)->spawn(ctx, fn, arg);
}

/* Completes with the task's result: CW_OK and its return value in *out
 * (out may be NULL), CW_ERR_CLOSED if it was aborted or never ran,
 * CW_ERR_EXITED if it panicked. Joining again gives the same result. */
static inline cw_wait cw_wait_join(cw_handle *h, void **out)
{
    cw_wait w;
    cw__backend_of(h)->wait_join(&w, h, out);
    return w;
}

static inline int cw_join(cw_handle *h, void **out)
{
    cw_wait w = cw_wait_join(h, out);
    return cw_wait_one(&w);
}

/* Abort the task (and, through it, everything it supervises). It does not
 * run past its current suspension point; its cleanup handlers run. No
 * effect once the task finished. For a ready-made handle, later joins give
 * CW_ERR_ABORTED. */
static inline void cw_abort(cw_handle *h)
{
    cw__backend_of(h)->abort(h);
}

/* Give up the caller's claim on `h`. The task is not aborted: it runs on,
 * detached. `h` is invalid afterwards. */
static inline void cw_handle_release(cw_handle *h)
{
    cw__backend_of(h)->handle_release(h);
}

/* A handle that is already complete with (result, value). */
static inline cw_handle *cw_handle_ready(cw_ctx *ctx, int result, void *value)
{
    return cw__backend_of(ctx)->handle_ready(ctx, result, value);
}

/* Let every other ready task run before the caller continues. */
static inline void cw_yield(cw_ctx *ctx)
{
    cw__backend_of(ctx)->yield(ctx);
}

/* A waker for the calling task. The caller owns it (cw_waker_release); it
 * may be woken from any thread and stays safe to wake after its task, or its
 * whole runtime, has ended: then waking does nothing [TASK-010]. */
static inline cw_waker *cw_waker_current(cw_ctx *ctx)
{
    return cw__backend_of(ctx)->waker_current(ctx);
}

static inline void cw_waker_wake(cw_waker *w)
{
    cw__backend_of(w)->waker_wake(w);
}

static inline void cw_waker_release(cw_waker *w)
{
    cw__backend_of(w)->waker_release(w);
}

/* Suspend the calling task until one of its wakers is woken. A wake that
 * came after the previous park and before this one makes it return at once. */
static inline void cw_park(cw_ctx *ctx)
{
    cw__backend_of(ctx)->park(ctx);
}

#ifdef __cplusplus
}
#endif
#endif
