/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * handle.c - handles: a task's result, kept after the task is gone, and the
 * join wait on it (spec/04-tasks.md).
 *
 * Ownership: the caller of cw_spawn or cw_handle_ready owns the handle and
 * ends it with cw_handle_release, which never aborts the task [TASK-003].
 * The task and its handle point at each other until either ends.
 */
#include <stdlib.h>

#include "skeleton.h"

static void handle_destroy(sk_obj *o)
{
    sk_handle *h = (sk_handle *)o;
    if (h->task)
        h->task->handle = NULL;
    sk_obj_unlink(o);
    free(h);
}

sk_handle *sk_handle_new(sk_rt *rt)
{
    sk_handle *h = calloc(1, sizeof *h);
    if (h)
        sk_obj_init(&h->obj, rt, handle_destroy);
    return h;
}

void sk_handle_resolve(sk_handle *h, int result, void *value)
{
    h->done = true;
    h->result = result;
    h->value = value;
    sk_waitlist_wake(&h->joiners);
}

cw_handle *sk_handle_ready(cw_ctx *ctx, int result, void *value)
{
    sk_handle *h = sk_handle_new(SK_CTX(ctx)->obj.rt);
    if (h) {
        h->ready_made = true;
        sk_handle_resolve(h, result, value);
    }
    return (cw_handle *)h;
}

/* On a ready-made handle an abort is all that is left to observe, so it
 * changes the result [TASK-007]; on an ended task it does nothing. */
void sk_abort(cw_handle *handle)
{
    sk_handle *h = (sk_handle *)(void *)handle;
    if (h->task)
        sk_task_abort(h->task);
    else if (h->ready_made)
        sk_handle_resolve(h, CW_ERR_ABORTED, NULL);
}

void sk_handle_release(cw_handle *handle)
{
    handle_destroy((sk_obj *)(void *)handle);
}

/* Joining again gives the same result [TASK-008]: nothing is consumed.
 * A result other than CW_OK gives NULL; CW_ERR_ABORTED, which only an
 * aborted ready handle has (TASK-007), is a join that completed nothing
 * and leaves *out alone. */
static bool join_try(cw_wait *w)
{
    sk_handle *h = w->object;
    if (!h->done)
        return false;
    if (w->out && h->result != CW_ERR_ABORTED)
        *(void **)w->out = h->result == CW_OK ? h->value : NULL;
    w->result = h->result;
    return true;
}

static sk_waitlist *join_queue(cw_wait *w)
{
    return &((sk_handle *)w->object)->joiners;
}

static const sk_wait_ops join_ops = {"join", join_try, join_queue};

void sk_wait_join(cw_wait *w, cw_handle *h, void **out)
{
    sk_wait_fill(w, &join_ops, (sk_obj *)(void *)h, out, 0);
}
