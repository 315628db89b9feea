/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/channel.h - mpsc channels (bounded or unbounded) and oneshots.
 *
 * Values are copied in and out by size, so any plain type travels. A channel
 * has one receiver and a count of senders; it is freed when both sides are
 * gone, or when the runtime ends. Rules: spec/09-channels.md.
 */
#ifndef CW_CHANNEL_H
#define CW_CHANNEL_H

#include "cw/select.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A channel of `elem_size`-byte values holding at most `capacity` of them
 * (0: unbounded), with one sender and the receiver. The caller owns both
 * sides. NULL for elem_size 0 or when memory is exhausted. */
static inline cw_chan *cw_chan_new(cw_ctx *ctx, size_t elem_size, size_t capacity)
{
    return cw__backend_of(ctx)->chan_new(ctx, elem_size, capacity);
}

/* One more sender: each must be dropped once. */
static inline void cw_chan_sender_add(cw_chan *c)
{
    cw__backend_of(c)->chan_sender_add(c);
}

/* When the last sender is dropped, the receiver drains what is queued and
 * then gets CW_ERR_CLOSED. */
static inline void cw_chan_sender_drop(cw_chan *c)
{
    cw__backend_of(c)->chan_sender_drop(c);
}

/* Queued values are discarded; sends fail with CW_ERR_CLOSED from now on. */
static inline void cw_chan_receiver_drop(cw_chan *c)
{
    cw__backend_of(c)->chan_receiver_drop(c);
}

/* Completes when `*elem` is queued (CW_OK) or the receiver is gone
 * (CW_ERR_CLOSED). `elem` must stay valid until the wait completes or is
 * dropped. */
static inline cw_wait cw_wait_send(cw_chan *c, const void *elem)
{
    cw_wait w;
    cw__backend_of(c)->wait_send(&w, c, elem);
    return w;
}

/* Completes with the oldest value copied to `elem` (CW_OK), or CW_ERR_CLOSED
 * once the channel is empty and every sender dropped. */
static inline cw_wait cw_wait_recv(cw_chan *c, void *elem)
{
    cw_wait w;
    cw__backend_of(c)->wait_recv(&w, c, elem);
    return w;
}

static inline int cw_chan_send(cw_chan *c, const void *elem)
{
    cw_wait w = cw_wait_send(c, elem);
    return cw_wait_one(&w);
}

static inline int cw_chan_recv(cw_chan *c, void *elem)
{
    cw_wait w = cw_wait_recv(c, elem);
    return cw_wait_one(&w);
}

/* Non-blocking forms: CW_ERR_WOULD_BLOCK when the channel is full (send) or
 * empty with senders left (recv). */
static inline int cw_chan_try_send(cw_chan *c, const void *elem)
{
    cw_wait w = cw_wait_send(c, elem);
    int i = cw_poll(&w, 1);
    return i < 0 ? i : w.result;
}

static inline int cw_chan_try_recv(cw_chan *c, void *elem)
{
    cw_wait w = cw_wait_recv(c, elem);
    int i = cw_poll(&w, 1);
    return i < 0 ? i : w.result;
}

/* A channel for one value of `elem_size` bytes. The caller owns both sides.
 * NULL for elem_size 0, or without memory [CHN-006]. */
static inline cw_oneshot *cw_oneshot_new(cw_ctx *ctx, size_t elem_size)
{
    return cw__backend_of(ctx)->oneshot_new(ctx, elem_size);
}

/* Never blocks. CW_OK; CW_ERR_CLOSED when the receiver is gone;
 * CW_ERR_INVALID when a value was already sent or the sender dropped. */
static inline int cw_oneshot_send(cw_oneshot *o, const void *elem)
{
    return cw__backend_of(o)->oneshot_send(o, elem);
}

/* Without a value sent, the receiver then gets CW_ERR_CLOSED. */
static inline void cw_oneshot_sender_drop(cw_oneshot *o)
{
    cw__backend_of(o)->oneshot_sender_drop(o);
}

static inline void cw_oneshot_receiver_drop(cw_oneshot *o)
{
    cw__backend_of(o)->oneshot_receiver_drop(o);
}

/* Completes with the value (CW_OK), or CW_ERR_CLOSED when the sender dropped
 * without sending. A completed receive (either result) ends the receiving
 * side, and the oneshot is freed once both sides ended: do not receive
 * again or drop the receiver after it (spec/09-channels.md). */
static inline cw_wait cw_wait_oneshot(cw_oneshot *o, void *elem)
{
    cw_wait w;
    cw__backend_of(o)->wait_oneshot(&w, o, elem);
    return w;
}

static inline int cw_oneshot_recv(cw_oneshot *o, void *elem)
{
    cw_wait w = cw_wait_oneshot(o, elem);
    return cw_wait_one(&w);
}

#ifdef __cplusplus
}
#endif
#endif
