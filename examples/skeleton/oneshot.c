/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * oneshot.c - a channel for exactly one value (spec/09-channels.md, CHN-005).
 *
 * Ownership: cw_oneshot_new gives the caller both sides. The sending side
 * ends with a send (whatever it returned) or cw_oneshot_sender_drop; the
 * receiving side with a receive that completed or cw_oneshot_receiver_drop.
 * The oneshot is freed when both ended, or when the run ends.
 */
#include <stdlib.h>
#include <string.h>

#include "skeleton.h"

typedef struct sk_oneshot {
    sk_obj obj;
    size_t elem_size;
    bool sender_ended, receiver_ended, has_value;
    sk_waitlist waiters; /* the receiver, while it waits */
    unsigned char value[];
} sk_oneshot;

static void oneshot_destroy(sk_obj *o)
{
    sk_obj_unlink(o);
    free(o);
}

static void free_if_ended(sk_oneshot *o)
{
    if (o->sender_ended && o->receiver_ended)
        oneshot_destroy(&o->obj);
}

/* NULL for elem_size 0 (CHN-006), or when memory is exhausted. */
cw_oneshot *sk_oneshot_new(cw_ctx *ctx, size_t elem_size)
{
    if (elem_size == 0 || elem_size > SIZE_MAX - sizeof(sk_oneshot))
        return NULL;
    sk_oneshot *o = calloc(1, sizeof *o + elem_size);
    if (o) {
        sk_obj_init(&o->obj, SK_CTX(ctx)->obj.rt, oneshot_destroy);
        o->elem_size = elem_size;
    }
    return (cw_oneshot *)o;
}

/* Never suspends. */
int sk_oneshot_send(cw_oneshot *oneshot, const void *elem)
{
    sk_oneshot *o = (sk_oneshot *)(void *)oneshot;
    if (o->sender_ended)
        return CW_ERR_INVALID;
    o->sender_ended = true;
    int rc = CW_ERR_CLOSED;
    if (!o->receiver_ended) {
        memcpy(o->value, elem, o->elem_size);
        o->has_value = true;
        sk_waitlist_wake(&o->waiters);
        rc = CW_OK;
    }
    free_if_ended(o);
    return rc;
}

void sk_oneshot_sender_drop(cw_oneshot *oneshot)
{
    sk_oneshot *o = (sk_oneshot *)(void *)oneshot;
    o->sender_ended = true;
    sk_waitlist_wake(&o->waiters);
    free_if_ended(o);
}

void sk_oneshot_receiver_drop(cw_oneshot *oneshot)
{
    sk_oneshot *o = (sk_oneshot *)(void *)oneshot;
    o->receiver_ended = true;
    free_if_ended(o);
}

/* A completed receive ends the receiving side, which may free the oneshot:
 * the wait must not be used again after it completed with CW_OK. */
static bool oneshot_try(cw_wait *w)
{
    sk_oneshot *o = w->object;
    if (!o->has_value && !o->sender_ended)
        return false;
    w->result = o->has_value ? CW_OK : CW_ERR_CLOSED;
    if (o->has_value)
        memcpy(w->out, o->value, o->elem_size);
    o->has_value = false;
    o->receiver_ended = true;
    free_if_ended(o);
    return true;
}

static sk_waitlist *oneshot_queue(cw_wait *w)
{
    return &((sk_oneshot *)w->object)->waiters;
}

static const sk_wait_ops oneshot_ops = {"oneshot", oneshot_try, oneshot_queue};

void sk_wait_oneshot(cw_wait *w, cw_oneshot *o, void *elem)
{
    sk_wait_fill(w, &oneshot_ops, (sk_obj *)(void *)o, elem, 0);
}
