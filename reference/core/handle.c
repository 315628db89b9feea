/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * handle.c - task handles and ready-made handles.
 *
 * A handle is shared by the caller and, while it runs, the task; it is freed
 * when both have let go (or when the runtime ends). Releasing a handle
 * detaches the task rather than aborting it.
 */
#include <stdlib.h>

#include "core/internal.h"

cw_handle *cw_handle_new(cw_rt *rt)
{
    cw_handle *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->hdr.backend = rt->backend;
    h->rt = rt;
    h->refs = 1;
    cw_list_init(&h->waiters);
    cw_list_push_back(&rt->handles, &h->link);
    return h;
}

void cw_handle_complete(cw_handle *h, int result, void *value)
{
    if (h->done)
        return;
    h->done = true;
    h->result = result;
    h->value = value;
    cw_waiters_wake(h->rt, &h->waiters);
}

void cw_handle_free(cw_handle *h)
{
    cw_list_remove(&h->link);
    free(h);
}

void cw_handle_ref(cw_handle *h)
{
    h->refs++;
}

void cw_handle_unref(cw_handle *h)
{
    if (--h->refs == 0)
        cw_handle_free(h);
}

cw_handle *cw_handle_resolved(cw_rt *rt, int result)
{
    cw_handle *h = cw_handle_new(rt);
    if (!h)
        return rt->spent_handle;
    cw_handle_complete(h, result, NULL);
    return h;
}

cw_handle *cw_core_handle_ready(cw_ctx *ctx, int result, void *value)
{
    cw_rt_lock(ctx->rt);
    cw_handle *h = cw_handle_new(ctx->rt);
    if (h) {
        h->is_ready = true;
        cw_handle_complete(h, result, value);
    } else {
        h = ctx->rt->spent_handle;
    }
    cw_rt_unlock(ctx->rt);
    return h;
}

void cw_core_abort(cw_handle *h)
{
    cw_rt *rt = h->rt;
    cw_rt_lock(rt);
    if (h->is_ready)
        h->aborted_ready = true;
    else if (h->task)
        cw_task_abort(h->task);
    cw_rt_unlock(rt);
}

void cw_core_handle_release(cw_handle *h)
{
    cw_rt *rt = h->rt;
    if (h == rt->spent_handle)
        return; /* shared by every spawn that found no memory */
    cw_rt_lock(rt);
    if (h->released)
        cw_fatal("handle released twice");
    h->released = true;
    cw_handle_unref(h);
    cw_rt_unlock(rt);
}

static bool join_try(cw_wait *w)
{
    cw_handle *h = w->object;
    if (h->is_ready && h->aborted_ready) {
        w->result = CW_ERR_ABORTED;
        return true;
    }
    if (!h->done)
        return false;
    w->result = h->result;
    if (w->out)
        *(void **)w->out = h->result == CW_OK ? h->value : NULL;
    return true;
}

static void join_arm(cw_wait *w, cw_task *t)
{
    cw_handle *h = w->object;
    cw_waiters_add(&h->waiters, w, t);
}

static const cw_wait_ops join_ops = {join_try, join_arm, cw_waiters_remove, cw_guard_rt};

void cw_core_wait_join(cw_wait *w, cw_handle *h, void **out)
{
    cw_wait_init(w, h->hdr.backend, &join_ops, h);
    cw_waitv_of(w)->rt = h->rt;
    w->out = out;
}
