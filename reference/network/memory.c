/*
 * memory.c - the deterministic backend's network: listeners keyed by
 * address inside the run, dialers given ports from a fixed range, and
 * connections made of two in-memory byte pipes. The mock channel is one
 * such pipe on its own.
 *
 * Nothing here depends on real time or on the host: a send appends to the
 * peer's buffer and wakes the task waiting on it, and the seeded scheduler
 * decides when that task runs. So every run of a seed replays.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "network/net.h"

void cw_mem_link(cw_sink *sink, cw_stream *stream)
{
    sink->reader = stream;
    stream->writer = sink;
}

bool cw_mem_deliver(cw_stream *s, const cw_iobufs *bufs)
{
    size_t len = cw_iobufs_len(bufs);
    if (!cw_stream_reserve(s, len))
        return false;
    const cw_iobuf *c;
    for (size_t i = 0; (c = cw_iobufs_chunk(bufs, i)); i++) {
        if (c->len)
            memcpy(s->buf + s->off + s->len, c->data, c->len);
        s->len += c->len;
    }
    if (len)
        cw_waiters_wake(s->rt, &s->waiters);
    return true;
}

static cw_listener *find(cw_net *net, const cw_addr *addr)
{
    for (cw_list *it = net->listeners.next; it != &net->listeners; it = it->next) {
        cw_listener *l = cw_container_of(it, cw_listener, link);
        if (cw_addr_equal(&l->addr, addr))
            return l;
    }
    return NULL;
}

/* A port no listener of this family and address holds, counting up. */
static bool pick_port(cw_net *net, cw_addr *addr)
{
    for (uint32_t tries = 0; tries < 65536; tries++) {
        uint32_t port = net->next_port++;
        if (net->next_port > 65535)
            net->next_port = CW_NET_PORT_FIRST;
        if (port >= CW_NET_EPHEMERAL_FIRST && port < CW_NET_EPHEMERAL_END)
            continue;
        addr->port = (uint16_t)port;
        if (!find(net, addr))
            return true;
    }
    return false;
}

int cw_mem_bind(cw_ctx *ctx, const cw_addr *addr, cw_listener **out)
{
    cw_rt *rt = ctx->rt;
    cw_task_self(rt, "cw_bind");
    if (addr->family != CW_ADDR_IPV4 && addr->family != CW_ADDR_IPV6)
        return CW_ERR_INVALID;
    cw_rt_lock(rt);
    cw_net *net = cw_net_of(rt);
    cw_addr a = *addr;
    /* Loopback ports of the dialers' range are theirs [NET-003]. */
    bool reserved = cw_addr_is_loopback(&a) && a.port >= CW_NET_EPHEMERAL_FIRST &&
                    a.port < CW_NET_EPHEMERAL_END;
    bool taken = a.port == 0 ? !pick_port(net, &a) : find(net, &a) != NULL;
    int rc = reserved || taken ? CW_ERR_BIND_FAILED : CW_OK;
    cw_net_audit_result(rt, "bind", addr, rc);
    if (rc == CW_OK)
        *out = cw_listener_new(rt, ctx->hdr.backend, &a);
    cw_rt_unlock(rt);
    return rc;
}

/* Two pipes: the dialer's sink feeds the listener's stream, and back. */
static void connect_pair(cw_rt *rt, const cw_backend *b, const cw_addr *dialer,
                         const cw_addr *target, cw_conn *theirs, cw_sink **sink, cw_stream **stream)
{
    *sink = cw_sink_new(rt, b, target);
    *stream = cw_stream_new(rt, b, target);
    theirs->peer = *dialer;
    theirs->sink = cw_sink_new(rt, b, dialer);
    theirs->stream = cw_stream_new(rt, b, dialer);
    cw_mem_link(*sink, theirs->stream);
    cw_mem_link(theirs->sink, *stream);
}

int cw_mem_dial(cw_ctx *ctx, const cw_addr *addr, cw_sink **sink, cw_stream **stream)
{
    cw_rt *rt = ctx->rt;
    cw_task_self(rt, "cw_dial");
    cw_rt_lock(rt);
    cw_net *net = cw_net_of(rt);
    if (net->next_ephemeral >= CW_NET_EPHEMERAL_END) {
        cw_rt_unlock(rt);
        cw_panic(ctx, "[NET-007] ephemeral port range exhausted");
    }
    /* A failed dial uses its port too: the port sequence depends only on
     * how many dials were made. */
    uint16_t port = (uint16_t)net->next_ephemeral++;
    cw_addr dialer =
        addr->family == CW_ADDR_IPV6 ? cw_addr_loopback6(port) : cw_addr_loopback4(port);
    cw_listener *l = find(net, addr);
    int rc = l ? CW_OK : CW_ERR_CONNECTION_FAILED;
    cw_net_audit_result(rt, "dial", addr, rc);
    if (l) {
        cw_pending *p = cw_xcalloc(1, sizeof *p);
        connect_pair(rt, ctx->hdr.backend, &dialer, addr, &p->conn, sink, stream);
        cw_list_push_back(&l->pending, &p->link);
        cw_waiters_wake(rt, &l->waiters);
        cw_metric_counter_add(net->outbound, 1);
    }
    cw_rt_unlock(rt);
    return rc;
}

int cw_mem_mock_channel(cw_ctx *ctx, cw_sink **sink, cw_stream **stream)
{
    cw_rt *rt = ctx->rt;
    cw_addr none;
    memset(&none, 0, sizeof none);
    none.family = CW_ADDR_IPV4;
    cw_rt_lock(rt);
    *sink = cw_sink_new(rt, ctx->hdr.backend, &none);
    *stream = cw_stream_new(rt, ctx->hdr.backend, &none);
    cw_mem_link(*sink, *stream);
    cw_rt_unlock(rt);
    return CW_OK;
}
