/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * stream.c - the receiving half of a connection.
 *
 * Received bytes wait in the stream's buffer until a recv takes exactly the
 * length it asked for; a recv that cannot complete leaves them there. What
 * makes a stream unusable is a recv that gave up after it had waited (a
 * select that took another wait, a timeout, an abort): the spec treats the
 * bytes it may have consumed as lost, so the stream is poisoned. A recv
 * that waits takes a ticket; a later recv that finds another ticket still
 * outstanding knows the earlier one was abandoned.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "network/net.h"

cw_stream *cw_stream_new(cw_rt *rt, const cw_backend *b, const cw_addr *remote)
{
    cw_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->hdr.backend = b;
    s->rt = rt;
    s->remote = *remote;
    s->guard = CW_GUARD_RT; /* until a transport puts it under a stripe */
    cw_list_init(&s->waiters);
    cw_list_push_back(&cw_net_of(rt)->streams, &s->link);
    return s;
}

void cw_stream_free(cw_stream *s)
{
    if (s->sock)
        cw_net_of(s->rt)->driver->quiesce(s->sock);
    cw_waiters_end(s->rt, &s->waiters, CW_ERR_CLOSED);
    if (s->writer)
        s->writer->reader = NULL;
    if (s->twin)
        s->twin->twin = NULL;
    cw_mem_drop_flight(s); /* bytes in flight to a closed stream are lost */
    if (s->sock)
        cw_net_of(s->rt)->driver->release_stream(s->sock);
    if (s->direct.data)
        cw_iobuf_mut_release(&s->direct);
    cw_list_remove(&s->link);
    free(s->buf);
    free(s);
}

bool cw_stream_reserve(cw_stream *s, size_t more)
{
    size_t held = s->len + s->flying; /* bytes in flight are kept too */
    if (s->off > 0 && s->off + held + more > s->cap) {
        memmove(s->buf, s->buf + s->off, held);
        s->off = 0;
    }
    return cw_grow(&s->buf, &s->cap, held + more, 1, 4096);
}

/* The first `len` buffered bytes, copied into network-pool buffers no larger
 * than the pool's largest class. NULL on NOMEM. */
static cw_iobufs *take(cw_stream *s, size_t len)
{
    cw_bufpool *pool = cw_rt_pool(s->rt, CW_BUFPOOL_NETWORK);
    cw_bufpool_config cfg;
    cw_bufpool_get_config(pool, &cfg);
    cw_iobufs *l = cw_iobufs_new(s->hdr.backend);
    for (size_t done = 0; l && done < len;) {
        size_t n = len - done < cfg.max_size ? len - done : cfg.max_size;
        cw_iobuf_mut m;
        cw_iobuf buf;
        if (cw_bufpool_alloc(pool, n, &m) != CW_OK) {
            cw_iobufs_release(l);
            return NULL;
        }
        memcpy(m.data, s->buf + s->off + done, n);
        m.len = n;
        cw_iobuf_mut_freeze(&m, &buf);
        if (cw_iobufs_append(l, &buf) != CW_OK) {
            cw_iobuf_release(&buf);
            cw_iobufs_release(l);
            return NULL;
        }
        done += n;
    }
    if (l) {
        s->off += len;
        s->len -= len;
    }
    return l;
}

/* The direct buffer, once it holds all `len` bytes, as the recv's list. */
static cw_iobufs *take_direct(cw_stream *s)
{
    cw_iobufs *l = cw_iobufs_new(s->hdr.backend);
    if (!l)
        return NULL;
    cw_iobuf buf;
    cw_iobuf_mut_freeze(&s->direct, &buf);
    memset(&s->direct, 0, sizeof s->direct);
    if (cw_iobufs_append(l, &buf) != CW_OK) {
        cw_iobuf_release(&buf);
        cw_iobufs_release(l);
        return NULL;
    }
    return l;
}

/* Give the direct buffer's bytes back to `buf`: a recv of another length
 * came (one that did not wait may be followed by any). false on NOMEM. */
static bool undo_direct(cw_stream *s)
{
    cw_iobuf_mut *d = &s->direct;
    if (!cw_stream_reserve(s, d->len))
        return false;
    if (d->len)
        memcpy(s->buf + s->off, d->data, d->len);
    s->len = d->len;
    cw_iobuf_mut_release(d);
    memset(d, 0, sizeof *d);
    return true;
}

/* Over TCP: read what the socket has towards a recv of `len`. Straight into
 * the buffer the recv will return when nothing is buffered yet: large
 * messages are then copied once, by the kernel. */
static bool fill(cw_stream *s, size_t len)
{
    if (s->direct.data && s->direct_for != len && !undo_direct(s))
        return false;
    const cw_net_driver *d = cw_net_of(s->rt)->driver;
    if (s->len == 0 && len > 0 && d->fill_direct(s, len))
        return true;
    return d->fill(s, len);
}

static void audit_recv(cw_stream *s, size_t len, int rc, const cw_iobufs *got)
{
    cw_rt *rt = s->rt;
    if (!cw_audited(rt))
        return;
    char text[CW_ADDR_TEXT_MAX];
    uint8_t n[8], code[4];
    cw_be64(n, len);
    uint32_t v = (uint32_t)rc;
    for (int i = 3; i >= 0; i--, v >>= 8)
        code[i] = (uint8_t)v;
    /* The bytes as one field, whatever their chunks: they are still in
     * the buffer right before what is left. */
    const uint8_t *bytes = got ? s->buf + s->off - len : NULL;
    cw_field f[4] = {{cw_addr_format(&s->remote, text), strlen(text)},
                     {n, 8},
                     {code, 4},
                     {bytes, got ? len : 0}};
    cw_audit(rt, "recv", f, 4);
}

static bool fail(cw_wait *w, cw_stream *s, int rc)
{
    s->poisoned = true;
    cw_turn_end(&s->turn);
    *(cw_iobufs **)w->out = NULL;
    w->result = rc;
    audit_recv(s, (size_t)cw_waitv_of(w)->value, rc, NULL);
    return true;
}

/* Another task's recv is waiting or under way: this one is turned away
 * and changes nothing, that one's included [NET-035]. */
static bool refuse(cw_wait *w, cw_stream *s)
{
    *(cw_iobufs **)w->out = NULL;
    w->result = CW_ERR_INVALID;
    audit_recv(s, (size_t)cw_waitv_of(w)->value, CW_ERR_INVALID, NULL);
    return true;
}

static bool recv_try(cw_wait *w)
{
    cw_stream *s = w->object;
    size_t len = (size_t)cw_waitv_of(w)->value;
    if (s->poisoned)
        return fail(w, s, CW_ERR_CLOSED);
    /* Under way while the transport lets the lock go (tcp.c): a recv made
     * by another task meanwhile finds it as it would an armed one. */
    cw_turn_mark was;
    int turn = cw_turn_begin(&s->turn, &cw_waitv_of(w)->ticket, &was);
    if (turn == CW_ERR_INVALID)
        return refuse(w, s);
    if (turn != CW_OK)
        return fail(w, s, turn); /* an earlier recv was abandoned */
    if (s->sock && s->len < len && !fill(s, len))
        return fail(w, s, CW_ERR_NOMEM);
    bool direct = s->direct.data && s->direct.len == len;
    if (direct || s->len >= len) {
        cw_iobufs *got = direct ? take_direct(s) : take(s, len);
        if (!got)
            return fail(w, s, CW_ERR_NOMEM);
        cw_turn_end(&s->turn);
        *(cw_iobufs **)w->out = got;
        w->result = CW_OK;
        audit_recv(s, len, CW_OK, got);
        cw_metric_counter_add(cw_net_of(s->rt)->inbound_bytes, len);
        return true;
    }
    if (s->eof)
        return fail(w, s, CW_ERR_RECV_FAILED); /* what came is not returned as if complete */
    cw_turn_pause(&s->turn, was, false); /* a recv that never waits changes nothing [NET-010] */
    return false;
}

static void recv_arm(cw_wait *w, cw_task *t)
{
    cw_stream *s = w->object;
    cw_turn_arm(&s->turn, cw_waitv_of(w)->ticket);
    cw_waiters_add(&s->waiters, w, t);
}

/* Completed or given up: the stream takes the next recv. A recv given up
 * leaves its ticket in `busy`, for that next recv to find. */
static void recv_disarm(cw_wait *w)
{
    cw_stream *s = w->object;
    cw_turn_disarm(&s->turn, cw_waitv_of(w)->ticket);
    cw_waiters_remove(w);
}

static int recv_guard(const cw_wait *w)
{
    const cw_stream *s = w->object;
    return s->guard;
}

static const cw_wait_ops recv_ops = {recv_try, recv_arm, recv_disarm, recv_guard};

void cw_net_stream_wait_recv(cw_wait *w, cw_stream *s, size_t len, cw_iobufs **out)
{
    cw_net_wait_init(w, s->rt, s->hdr.backend, &recv_ops, s);
    w->out = out;
    cw_waitv_of(w)->value = len;
    *out = NULL;
}

int cw_net_stream_recv(cw_stream *s, size_t len, cw_iobufs **out)
{
    cw_wait w;
    cw_net_stream_wait_recv(&w, s, len, out);
    int rc =
        cw_net_wait_bounded(s->rt, &w, s->sock ? cw_rt_config(s->rt)->read_timeout : CW_FOREVER);
    if (rc == CW_ERR_TIMEOUT) {
        cw_guard_lock(s->rt, s->guard);
        s->poisoned = true;
        cw_guard_unlock(s->rt, s->guard);
    }
    return rc;
}

size_t cw_net_stream_peek(cw_stream *s, size_t max, uint8_t *dst)
{
    cw_guard_lock(s->rt, s->guard);
    size_t len = s->direct.data ? s->direct.len : s->len;
    size_t n = len < max ? len : max;
    /* A stream that never held a byte has no buffer yet: no pointer
     * arithmetic on it, even of zero. */
    if (n > 0)
        memcpy(dst, s->direct.data ? s->direct.data : s->buf + s->off, n);
    cw_guard_unlock(s->rt, s->guard);
    return n;
}

void cw_net_stream_close(cw_stream *s)
{
    cw_rt *rt = s->rt;
    cw_lockset both = cw_lockset_with_rt(s->guard);
    cw_lockset_lock(rt, &both);
    cw_stream_free(s);
    cw_lockset_unlock(rt, &both);
}
