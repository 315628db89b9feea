/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * channel.c - mpsc channels, bounded or not (spec/09-channels.md).
 *
 * Values are copied by size into a ring buffer: fixed at `capacity` slots
 * for a bounded channel, doubled on demand for an unbounded one. Senders and
 * the receiver each wait on a list of their own; whoever changes the queue
 * wakes the other side.
 *
 * Ownership: cw_chan_new gives the caller one sender and the receiver; each
 * cw_chan_sender_add is one more sender. The channel is freed when the
 * receiver and every sender are dropped, or when the run ends.
 */
#include <stdlib.h>
#include <string.h>

#include "skeleton.h"

typedef struct sk_chan {
    sk_obj obj;
    size_t elem_size;
    size_t capacity; /* 0: unbounded */
    unsigned char *ring;
    size_t slots, head, count;
    size_t senders;
    bool receiver;
    sk_waitlist send_waiters, recv_waiters;
} sk_chan;

static void chan_destroy(sk_obj *o)
{
    sk_chan *c = (sk_chan *)o;
    sk_obj_unlink(o);
    free(c->ring);
    free(c);
}

static bool mul_overflows(size_t a, size_t b)
{
    return b != 0 && a > SIZE_MAX / b;
}

/* NULL for elem_size 0 or when memory is exhausted. */
cw_chan *sk_chan_new(cw_ctx *ctx, size_t elem_size, size_t capacity)
{
    size_t slots = capacity ? capacity : 16;
    if (elem_size == 0 || mul_overflows(slots, elem_size))
        return NULL;
    sk_chan *c = calloc(1, sizeof *c);
    unsigned char *ring = c ? malloc(slots * elem_size) : NULL;
    if (!ring) {
        free(c);
        return NULL;
    }
    sk_obj_init(&c->obj, SK_CTX(ctx)->obj.rt, chan_destroy);
    c->elem_size = elem_size;
    c->capacity = capacity;
    c->ring = ring;
    c->slots = slots;
    c->senders = 1;
    c->receiver = true;
    return (cw_chan *)c;
}

static void free_if_unused(sk_chan *c)
{
    if (c->senders == 0 && !c->receiver)
        chan_destroy(&c->obj);
}

void sk_chan_sender_add(cw_chan *chan)
{
    ((sk_chan *)(void *)chan)->senders++;
}

void sk_chan_sender_drop(cw_chan *chan)
{
    sk_chan *c = (sk_chan *)(void *)chan;
    if (--c->senders == 0)
        sk_waitlist_wake(&c->recv_waiters);
    free_if_unused(c);
}

void sk_chan_receiver_drop(cw_chan *chan)
{
    sk_chan *c = (sk_chan *)(void *)chan;
    c->receiver = false;
    c->count = 0;
    sk_waitlist_wake(&c->send_waiters);
    free_if_unused(c);
}

/* Unbounded: double the ring, unrolling it so the oldest value is first. */
static bool grow(sk_chan *c)
{
    if (mul_overflows(c->slots * 2, c->elem_size))
        return false;
    unsigned char *ring = malloc(c->slots * 2 * c->elem_size);
    if (!ring)
        return false;
    for (size_t i = 0; i < c->count; i++)
        memcpy(ring + i * c->elem_size, c->ring + ((c->head + i) % c->slots) * c->elem_size,
               c->elem_size);
    free(c->ring);
    c->ring = ring;
    c->head = 0;
    c->slots *= 2;
    return true;
}

static bool send_try(cw_wait *w)
{
    sk_chan *c = w->object;
    if (!c->receiver) {
        w->result = CW_ERR_CLOSED; /* [CHN-004] */
        return true;
    }
    if (c->capacity && c->count == c->capacity)
        return false; /* [CHN-002] */
    if (c->count == c->slots && !grow(c)) {
        w->result = CW_ERR_NOMEM;
        return true;
    }
    size_t tail = (c->head + c->count) % c->slots;
    memcpy(c->ring + tail * c->elem_size, w->out, c->elem_size);
    c->count++;
    sk_waitlist_wake(&c->recv_waiters);
    w->result = CW_OK;
    return true;
}

/* Queued values first, then CW_ERR_CLOSED once no sender is left [CHN-003]. */
static bool recv_try(cw_wait *w)
{
    sk_chan *c = w->object;
    if (c->count == 0 && c->senders > 0)
        return false;
    if (c->count == 0) {
        w->result = CW_ERR_CLOSED;
        return true;
    }
    memcpy(w->out, c->ring + c->head * c->elem_size, c->elem_size);
    c->head = (c->head + 1) % c->slots;
    c->count--;
    sk_waitlist_wake(&c->send_waiters);
    w->result = CW_OK;
    return true;
}

static sk_waitlist *send_queue(cw_wait *w)
{
    return &((sk_chan *)w->object)->send_waiters;
}

static sk_waitlist *recv_queue(cw_wait *w)
{
    return &((sk_chan *)w->object)->recv_waiters;
}

static const sk_wait_ops send_ops = {"send", send_try, send_queue};
static const sk_wait_ops recv_ops = {"recv", recv_try, recv_queue};

/* The element is read when the send completes, so it stays the caller's. */
void sk_wait_send(cw_wait *w, cw_chan *c, const void *elem)
{
    sk_wait_fill(w, &send_ops, (sk_obj *)(void *)c, (void *)elem, 0);
}

void sk_wait_recv(cw_wait *w, cw_chan *c, void *elem)
{
    sk_wait_fill(w, &recv_ops, (sk_obj *)(void *)c, elem, 0);
}
