/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * oneshot.c - a channel for exactly one value.
 *
 * Each side ends once: the sender by sending or dropping, the receiver by a
 * receive that completed or by dropping. The oneshot is freed when both
 * sides have ended, so the common send-then-receive pattern needs no
 * explicit release at all.
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

struct cw_oneshot {
    cw_object hdr;
    cw_rt *rt;
    size_t elem_size;
    bool has_value;
    bool sender;   /* the sending side has not ended */
    bool receiver; /* the receiving side has not ended */
    cw_list waiters;
    cw_list link; /* rt->oneshots */
    unsigned char value[];
};

cw_oneshot *cw_core_oneshot_new(cw_ctx *ctx, size_t elem_size)
{
    if (elem_size == 0 || elem_size > SIZE_MAX - sizeof(cw_oneshot))
        return NULL;
    cw_oneshot *o = calloc(1, sizeof *o + elem_size);
    if (!o)
        return NULL;
    o->hdr.backend = ctx->hdr.backend;
    o->rt = ctx->rt;
    o->elem_size = elem_size;
    o->sender = o->receiver = true;
    cw_list_init(&o->waiters);
    cw_rt_lock(ctx->rt);
    cw_list_push_back(&ctx->rt->oneshots, &o->link);
    cw_rt_unlock(ctx->rt);
    return o;
}

static void oneshot_free(cw_oneshot *o)
{
    cw_list_remove(&o->link);
    free(o);
}

static void free_if_ended(cw_oneshot *o)
{
    if (!o->sender && !o->receiver)
        oneshot_free(o);
}

int cw_core_oneshot_send(cw_oneshot *o, const void *elem)
{
    cw_rt *rt = o->rt;
    int rc = CW_OK;
    cw_rt_lock(rt);
    if (!o->sender) {
        rc = CW_ERR_INVALID;
    } else if (!o->receiver) {
        o->sender = false;
        free_if_ended(o);
        rc = CW_ERR_CLOSED;
    } else {
        o->sender = false;
        memcpy(o->value, elem, o->elem_size);
        o->has_value = true;
        cw_waiters_wake(rt, &o->waiters);
    }
    cw_rt_unlock(rt);
    return rc;
}

void cw_core_oneshot_sender_drop(cw_oneshot *o)
{
    cw_rt *rt = o->rt;
    cw_rt_lock(rt);
    if (o->sender) { /* else it already ended with a send */
        o->sender = false;
        cw_waiters_wake(rt, &o->waiters);
        free_if_ended(o);
    }
    cw_rt_unlock(rt);
}

void cw_core_oneshot_receiver_drop(cw_oneshot *o)
{
    cw_rt *rt = o->rt;
    cw_rt_lock(rt);
    if (!o->receiver)
        cw_fatal("oneshot receiver dropped after it ended");
    o->receiver = false;
    free_if_ended(o);
    cw_rt_unlock(rt);
}

static bool recv_try(cw_wait *w)
{
    cw_oneshot *o = w->object;
    if (!o->receiver)
        cw_fatal("oneshot received from after its receiver ended");
    if (o->has_value) {
        memcpy(w->out, o->value, o->elem_size);
        w->result = CW_OK;
    } else if (!o->sender) {
        w->result = CW_ERR_CLOSED;
    } else {
        return false;
    }
    o->receiver = false;
    free_if_ended(o);
    return true;
}

static void recv_arm(cw_wait *w, cw_task *t)
{
    cw_oneshot *o = w->object;
    cw_waiters_add(&o->waiters, w, t);
}

static const cw_wait_ops recv_ops = {recv_try, recv_arm, cw_waiters_remove, cw_guard_rt};

void cw_core_wait_oneshot(cw_wait *w, cw_oneshot *o, void *elem)
{
    cw_wait_init(w, o->hdr.backend, &recv_ops, o);
    cw_waitv_of(w)->rt = o->rt;
    w->out = elem;
}

void cw_oneshot_free_all(cw_list *head)
{
    for (cw_list *it = head->next, *next; it != head; it = next) {
        next = it->next;
        oneshot_free(cw_container_of(it, cw_oneshot, link));
    }
}
