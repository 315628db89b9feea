/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * chan.c - multi-producer, single-consumer channels.
 *
 * Values live in a ring of fixed-size slots. A bounded channel allocates its
 * ring once; an unbounded one doubles it when full, and an allocation that
 * fails is reported to that sender as CW_ERR_NOMEM with nothing queued.
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

struct cw_chan {
    cw_object hdr;
    cw_rt *rt;
    size_t elem_size;
    size_t capacity; /* 0: unbounded */
    unsigned char *ring;
    size_t slots, head, len;
    size_t senders;
    bool receiver;
    cw_list send_waiters, recv_waiters;
    cw_list link; /* rt->chans */
};

cw_chan *cw_core_chan_new(cw_ctx *ctx, size_t elem_size, size_t capacity)
{
    if (elem_size == 0)
        return NULL;
    size_t slots = capacity ? capacity : 4;
    if (slots > SIZE_MAX / elem_size)
        return NULL;
    cw_chan *c = calloc(1, sizeof *c);
    unsigned char *ring = malloc(slots * elem_size);
    if (!c || !ring) {
        free(c);
        free(ring);
        return NULL;
    }
    c->hdr.backend = ctx->hdr.backend;
    c->rt = ctx->rt;
    cw_rt_lock(ctx->rt);
    c->elem_size = elem_size;
    c->capacity = capacity;
    c->ring = ring;
    c->slots = slots;
    c->senders = 1;
    c->receiver = true;
    cw_list_init(&c->send_waiters);
    cw_list_init(&c->recv_waiters);
    cw_list_push_back(&ctx->rt->chans, &c->link);
    cw_rt_unlock(ctx->rt);
    return c;
}

static void chan_free(cw_chan *c)
{
    cw_list_remove(&c->link);
    free(c->ring);
    free(c);
}

static void free_if_unused(cw_chan *c)
{
    if (c->senders == 0 && !c->receiver)
        chan_free(c);
}

void cw_core_chan_sender_add(cw_chan *c)
{
    cw_rt_lock(c->rt);
    c->senders++;
    cw_rt_unlock(c->rt);
}

void cw_core_chan_sender_drop(cw_chan *c)
{
    cw_rt *rt = c->rt;
    cw_rt_lock(rt);
    if (c->senders == 0)
        cw_fatal("channel sender dropped more often than added");
    if (--c->senders == 0)
        cw_waiters_wake(rt, &c->recv_waiters);
    free_if_unused(c);
    cw_rt_unlock(rt);
}

void cw_core_chan_receiver_drop(cw_chan *c)
{
    cw_rt *rt = c->rt;
    cw_rt_lock(rt);
    if (!c->receiver)
        cw_fatal("channel receiver dropped twice");
    c->receiver = false;
    c->len = 0;
    cw_waiters_wake(rt, &c->send_waiters);
    free_if_unused(c);
    cw_rt_unlock(rt);
}

/* Make room for one more value in an unbounded ring, unrolling it. */
static bool grow(cw_chan *c)
{
    if (c->slots > SIZE_MAX / 2 / c->elem_size)
        return false;
    size_t slots = c->slots * 2;
    unsigned char *ring = malloc(slots * c->elem_size);
    if (!ring)
        return false;
    size_t first = c->slots - c->head < c->len ? c->slots - c->head : c->len;
    memcpy(ring, c->ring + c->head * c->elem_size, first * c->elem_size);
    memcpy(ring + first * c->elem_size, c->ring, (c->len - first) * c->elem_size);
    free(c->ring);
    c->ring = ring;
    c->slots = slots;
    c->head = 0;
    return true;
}

static bool send_try(cw_wait *w)
{
    cw_chan *c = w->object;
    if (!c->receiver) {
        w->result = CW_ERR_CLOSED;
        return true;
    }
    if (c->capacity && c->len >= c->capacity)
        return false;
    if (c->len == c->slots && !grow(c)) {
        w->result = CW_ERR_NOMEM;
        return true;
    }
    size_t tail = (c->head + c->len) % c->slots;
    memcpy(c->ring + tail * c->elem_size, w->out, c->elem_size);
    c->len++;
    cw_waiters_wake(c->rt, &c->recv_waiters);
    w->result = CW_OK;
    return true;
}

static bool recv_try(cw_wait *w)
{
    cw_chan *c = w->object;
    if (c->len) {
        memcpy(w->out, c->ring + c->head * c->elem_size, c->elem_size);
        c->head = (c->head + 1) % c->slots;
        c->len--;
        cw_waiters_wake(c->rt, &c->send_waiters);
        w->result = CW_OK;
        return true;
    }
    if (c->senders == 0) {
        w->result = CW_ERR_CLOSED;
        return true;
    }
    return false;
}

static void send_arm(cw_wait *w, cw_task *t)
{
    cw_chan *c = w->object;
    cw_waiters_add(&c->send_waiters, w, t);
}

static void recv_arm(cw_wait *w, cw_task *t)
{
    cw_chan *c = w->object;
    cw_waiters_add(&c->recv_waiters, w, t);
}

static const cw_wait_ops send_ops = {send_try, send_arm, cw_waiters_remove, cw_guard_rt};
static const cw_wait_ops recv_ops = {recv_try, recv_arm, cw_waiters_remove, cw_guard_rt};

void cw_core_wait_send(cw_wait *w, cw_chan *c, const void *elem)
{
    cw_wait_init(w, c->hdr.backend, &send_ops, c);
    cw_waitv_of(w)->rt = c->rt;
    w->out = (void *)(uintptr_t)elem; /* only read: the send copies from it */
}

void cw_core_wait_recv(cw_wait *w, cw_chan *c, void *elem)
{
    cw_wait_init(w, c->hdr.backend, &recv_ops, c);
    cw_waitv_of(w)->rt = c->rt;
    w->out = elem;
}

void cw_chan_free_all(cw_list *head)
{
    for (cw_list *it = head->next, *next; it != head; it = next) {
        next = it->next;
        chan_free(cw_container_of(it, cw_chan, link));
    }
}
