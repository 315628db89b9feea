/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * sink.c - the sending half of a connection.
 *
 * A send completes once every byte was handed over. In memory that is at
 * once: the bytes go to the peer stream's buffer (where they may still be
 * in flight for the run's latency, pipe.c). Over TCP a send may take
 * several writes, and a send that gave up between two of them has sent
 * part of a message: like a stream, the sink is then poisoned, found out
 * by the ticket of the abandoned send.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "network/net.h"

cw_sink *cw_sink_new(cw_rt *rt, const cw_backend *b, const cw_addr *remote)
{
    cw_sink *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->hdr.backend = b;
    s->rt = rt;
    s->remote = *remote;
    s->guard = CW_GUARD_RT; /* until a transport puts it under a stripe */
    cw_list_init(&s->waiters);
    cw_list_push_back(&cw_net_of(rt)->sinks, &s->link);
    return s;
}

void cw_sink_free(cw_sink *s)
{
    if (s->sock)
        cw_net_of(s->rt)->driver->quiesce(s->sock);
    cw_waiters_end(s->rt, &s->waiters, CW_ERR_CLOSED);
    cw_stream *r = s->reader;
    if (s->twin)
        s->twin->twin = NULL;
    /* The peer stream sees the end once what is in flight arrived and it
     * drained what is buffered. */
    if (r)
        cw_mem_writer_closed(r);
    if (s->sock)
        cw_net_of(s->rt)->driver->release_sink(s->sock);
    cw_list_remove(&s->link);
    free(s);
}

/* The bytes of a send as one field, whatever their chunks: the chunk
 * itself when there is one, else a copy in *copy for the caller to free.
 * false when the copy found no memory. */
static bool send_field(const cw_iobufs *bufs, cw_field *f, uint8_t **copy)
{
    const cw_iobuf *c = cw_iobufs_chunk(bufs, 0);
    *copy = NULL;
    *f = (cw_field){c ? c->data : NULL, c ? c->len : 0};
    if (!c || !cw_iobufs_chunk(bufs, 1))
        return true;
    size_t len = cw_iobufs_len(bufs), at = 0;
    if (!(*copy = malloc(len)))
        return false;
    for (size_t i = 0; (c = cw_iobufs_chunk(bufs, i)); at += c->len, i++)
        if (c->len)
            memcpy(*copy + at, c->data, c->len);
    *f = (cw_field){*copy, len};
    return true;
}

static void audit_send(cw_sink *s, const cw_field *bytes, int rc)
{
    char text[CW_ADDR_TEXT_MAX];
    uint8_t code[4];
    uint32_t v = (uint32_t)rc;
    for (int i = 3; i >= 0; i--, v >>= 8)
        code[i] = (uint8_t)v;
    cw_field f[3] = {{cw_addr_format(&s->remote, text), strlen(text)}, *bytes, {code, 4}};
    cw_audit(s->rt, "send", f, 3);
}

static bool finish(cw_wait *w, cw_sink *s, int rc)
{
    const cw_iobufs *bufs = w->out;
    if (rc != CW_OK)
        s->poisoned = true;
    else
        cw_metric_counter_add(cw_net_of(s->rt)->outbound_bytes, cw_iobufs_len(bufs));
    cw_turn_end(&s->turn);
    s->sent = 0;
    w->result = rc;
    return true;
}

/* Another task's send is waiting or under way: this one is turned away
 * and changes nothing, that one's included [NET-035]. Only TCP sends
 * wait, so only they meet this. */
static bool refuse(cw_wait *w)
{
    w->result = CW_ERR_INVALID;
    return true;
}

/* Settle a send that TCP did not take: one `refused` with that error, or
 * one on the memory transport, which completes in one try. Only memory
 * connections are audited (a deterministic backend's), and the record of
 * the bytes is copied before any is sent: a send that finds no memory for
 * it sends nothing [NET-034]. */
static bool settle(cw_wait *w, cw_sink *s, int refused)
{
    const cw_iobufs *bufs = w->out;
    cw_field bytes;
    uint8_t *copy = NULL;
    bool audited = cw_audited(s->rt);
    if (audited && !send_field(bufs, &bytes, &copy))
        return finish(w, s, CW_ERR_NOMEM);
    int rc = refused ? refused : cw_mem_send(s, bufs);
    if (audited)
        audit_send(s, &bytes, rc);
    free(copy);
    return finish(w, s, rc);
}

static bool send_try(cw_wait *w)
{
    cw_sink *s = w->object;
    const cw_iobufs *bufs = w->out;
    if (s->poisoned)
        return settle(w, s, CW_ERR_CLOSED);
    /* Under way while the transport lets the lock go (tcp.c): a send made
     * by another task meanwhile finds it as it would an armed one. */
    cw_turn_mark was;
    int turn = cw_turn_begin(&s->turn, &cw_waitv_of(w)->ticket, &was);
    if (turn == CW_ERR_INVALID)
        return refuse(w);
    if (turn != CW_OK)
        return settle(w, s, turn); /* an earlier send was abandoned midway */
    if (!s->sock)
        return settle(w, s, CW_OK);
    int rc = cw_net_of(s->rt)->driver->write(s, bufs);
    if (rc == CW_ERR_WOULD_BLOCK) {
        /* Unless some of it went, giving up now changes nothing. */
        cw_turn_pause(&s->turn, was, s->sent > 0);
        return false;
    }
    return finish(w, s, rc);
}

static void send_arm(cw_wait *w, cw_task *t)
{
    cw_sink *s = w->object;
    cw_turn_arm(&s->turn, cw_waitv_of(w)->ticket);
    cw_waiters_add(&s->waiters, w, t);
}

/* Completed or given up: the sink takes the next send. One given up
 * midway leaves its ticket in `busy`, for that next send to find. */
static void send_disarm(cw_wait *w)
{
    cw_sink *s = w->object;
    cw_turn_disarm(&s->turn, cw_waitv_of(w)->ticket);
    cw_waiters_remove(w);
}

static int send_guard(const cw_wait *w)
{
    const cw_sink *s = w->object;
    return s->guard;
}

static const cw_wait_ops send_ops = {send_try, send_arm, send_disarm, send_guard};

void cw_net_sink_wait_send(cw_wait *w, cw_sink *s, const cw_iobufs *bufs)
{
    cw_net_wait_init(w, s->rt, s->hdr.backend, &send_ops, s);
    w->out = (void *)(uintptr_t)bufs; /* only read: the wait's slot is untyped */
}

int cw_net_sink_send(cw_sink *s, const cw_iobufs *bufs)
{
    cw_wait w;
    cw_net_sink_wait_send(&w, s, bufs);
    int rc =
        cw_net_wait_bounded(s->rt, &w, s->sock ? cw_rt_config(s->rt)->write_timeout : CW_FOREVER);
    if (rc == CW_ERR_TIMEOUT) {
        cw_guard_lock(s->rt, s->guard);
        s->poisoned = true;
        cw_guard_unlock(s->rt, s->guard);
    }
    return rc;
}

void cw_net_sink_close(cw_sink *s)
{
    cw_rt *rt = s->rt;
    cw_lockset both = cw_lockset_with_rt(s->guard);
    cw_lockset_lock(rt, &both);
    cw_sink_free(s);
    cw_lockset_unlock(rt, &both);
}
