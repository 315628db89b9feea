/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * memory_network.c - the deterministic backend's network: listeners keyed
 * by address inside the run, dialers given ports from a fixed range, and
 * connections made of two in-memory pipes (network/pipe.c) whose bytes take
 * the run's network latency. Its cw_network_ops table is at the end: the
 * halves and listeners are shared, the transport and the resolver differ.
 */
#include <stdlib.h>
#include <string.h>

#include "deterministic/det.h"
#include "metrics/metrics.h"

static cw_listener *find(cw_net *net, const cw_addr *addr)
{
    for (cw_list *it = net->listeners.next; it != &net->listeners; it = it->next) {
        cw_listener *l = cw_container_of(it, cw_listener, link);
        if (cw_addr_equal(&l->addr, addr))
            return l;
    }
    return NULL;
}

/* The lowest port from 1024 up that no listener of this family and address
 * holds, outside the dialers' range [NET-004]. Lowest rather than next: a
 * port freed by a close is chosen again, as the rule says. */
static bool pick_port(cw_net *net, cw_addr *addr)
{
    for (uint32_t port = CW_NET_PORT_FIRST; port <= 65535; port++) {
        if (port == CW_NET_EPHEMERAL_FIRST)
            port = CW_NET_EPHEMERAL_END;
        addr->port = (uint16_t)port;
        if (!find(net, addr))
            return true;
    }
    return false;
}

static int mem_bind(cw_ctx *ctx, const cw_addr *addr, cw_listener **out)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task_self(rt, "cw_bind");
    if (addr->family != CW_ADDR_IPV4 && addr->family != CW_ADDR_IPV6)
        return CW_ERR_INVALID;
    cw_rt_lock(rt);
    cw_net *net = cw_net_open(rt);
    if (!net) {
        cw_rt_unlock(rt);
        return CW_ERR_NOMEM;
    }
    cw_addr a = *addr;
    /* Loopback ports of the dialers' range are theirs [NET-003]. */
    bool reserved = cw_addr_is_loopback(&a) && a.port >= CW_NET_EPHEMERAL_FIRST &&
                    a.port < CW_NET_EPHEMERAL_END;
    bool taken = a.port == 0 ? !pick_port(net, &a) : find(net, &a) != NULL;
    int rc = reserved || taken ? CW_ERR_BIND_FAILED : CW_OK;
    if (rc == CW_OK && !(*out = cw_listener_new(rt, cw_ctx_backend(ctx), &a)))
        rc = CW_ERR_NOMEM;
    cw_net_audit_result(rt, "bind", addr, rc);
    cw_rt_unlock(rt);
    return rc;
}

/* The four halves of a connection, or NULL for each when memory ran out. */
typedef struct halves {
    cw_sink *sink, *their_sink;
    cw_stream *stream, *their_stream;
} halves;

static void halves_free(halves *h)
{
    if (h->sink)
        cw_sink_free(h->sink);
    if (h->their_sink)
        cw_sink_free(h->their_sink);
    if (h->stream)
        cw_stream_free(h->stream);
    if (h->their_stream)
        cw_stream_free(h->their_stream);
}

/* All four halves, with their arrival alarms reserved, or none. */
static bool halves_new(cw_rt *rt, const cw_backend *b, const cw_addr *dialer, const cw_addr *target,
                       halves *h)
{
    if (cw_halves_new(rt, b, target, &h->sink, &h->stream) &&
        cw_halves_new(rt, b, dialer, &h->their_sink, &h->their_stream) &&
        cw_pipe_delay(h->stream) && cw_pipe_delay(h->their_stream))
        return true;
    halves_free(h); /* a stream frees the alarm place it reserved */
    return false;
}

/* Two pipes: the dialer's sink feeds the listener's stream, and back. */
static void connect_pair(const halves *h, const cw_addr *dialer, const cw_addr *target,
                         cw_conn *theirs, cw_sink **sink, cw_stream **stream)
{
    *sink = h->sink;
    *stream = h->stream;
    theirs->peer = *dialer;
    theirs->sink = h->their_sink;
    theirs->stream = h->their_stream;
    cw_mem_link(*sink, theirs->stream);
    cw_mem_link(theirs->sink, *stream);
    /* The ends a partition matches, and each side's two halves (a reset
     * breaks both directions) [NET-028, NET-032]. */
    (*stream)->local = *dialer;
    theirs->stream->local = *target;
    (*sink)->twin = *stream;
    (*stream)->twin = *sink;
    theirs->sink->twin = theirs->stream;
    theirs->stream->twin = theirs->sink;
}

/* The pending connection of a dial that found `l`, or CW_ERR_NOMEM. */
static int mem_connect(cw_rt *rt, const cw_backend *b, cw_listener *l, const cw_addr *dialer,
                       cw_sink **sink, cw_stream **stream)
{
    halves h = {0};
    cw_pending *p = calloc(1, sizeof *p);
    if (!p || !halves_new(rt, b, dialer, &l->addr, &h)) {
        free(p);
        return CW_ERR_NOMEM;
    }
    connect_pair(&h, dialer, &l->addr, &p->conn, sink, stream);
    cw_list_push_back(&l->pending, &p->link);
    cw_waiters_wake(rt, &l->waiters);
    return CW_OK;
}

static int mem_dial(cw_ctx *ctx, const cw_addr *addr, cw_sink **sink, cw_stream **stream)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task_self(rt, "cw_dial");
    if (addr->family != CW_ADDR_IPV4 && addr->family != CW_ADDR_IPV6)
        return CW_ERR_INVALID; /* NET-039 */
    cw_rt_lock(rt);
    cw_net *net = cw_net_open(rt);
    if (!net) {
        cw_rt_unlock(rt);
        return CW_ERR_NOMEM;
    }
    cw_mem_net *mn = cw_mem_net_of(net);
    if (mn->next_ephemeral >= CW_NET_EPHEMERAL_END) {
        cw_rt_unlock(rt);
        cw_panic(ctx, "[NET-007] ephemeral port range exhausted");
    }
    /* A failed dial uses its port too: the port sequence depends only on
     * how many dials were made. */
    uint16_t port = (uint16_t)mn->next_ephemeral++;
    cw_addr dialer =
        addr->family == CW_ADDR_IPV6 ? cw_addr_loopback6(port) : cw_addr_loopback4(port);
    /* A partition or the failure rate refuses a dial as if nothing listened;
     * the rate draws only for a dial that would have connected [NET-031]. */
    cw_listener *l = find(net, addr);
    if (l && (cw_net_cut(net, &dialer, addr) ||
              cw_rt_chance(rt, cw_rt_config(rt)->network_dial_failure)))
        l = NULL;
    int rc = l ? mem_connect(rt, cw_ctx_backend(ctx), l, &dialer, sink, stream)
               : CW_ERR_CONNECTION_FAILED;
    cw_net_audit_result(rt, "dial", addr, rc);
    if (rc == CW_OK)
        cw_metric_counter_add(net->outbound, 1);
    cw_rt_unlock(rt);
    return rc;
}

static bool mem_net_open(cw_net *net)
{
    cw_mem_net *mn = calloc(1, sizeof *mn);
    if (!mn)
        return false;
    mn->next_ephemeral = CW_NET_EPHEMERAL_FIRST;
    net->impl = mn;
    cw_hosts_adopt(net);
    return true;
}

static void mem_net_close(cw_net *net)
{
    cw_mem_net *mn = cw_mem_net_of(net);
    cw_hosts_free(mn);
    free(mn->cuts);
    free(mn);
}

/* Its connections are pipes: no socket, so no transport entries. */
const cw_net_driver cw_memory_net_driver = {
    .open = mem_net_open,
    .close = mem_net_close,
};

const cw_network_ops cw_network_memory_entries = {
    CW_NETWORK_ENTRIES,
    .bind = mem_bind,
    .dial = mem_dial,
    .resolve = cw_mem_resolve,
    .resolver_register = cw_mem_resolver_register,
    .partition = cw_mem_partition,
    .repair = cw_mem_repair,
};
