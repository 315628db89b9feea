/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * partition.c - partitions of the simulated network [NET-028..NET-030]:
 * pairs of address patterns whose connections and dials are cut.
 *
 * A cut connection is not torn down: its bytes are held (pipe.c keeps them
 * in flight and arms no alarm for them) and arrive once the last partition
 * cutting it is repaired. That is how a real network heals, and it lets a
 * test see a protocol's retransmission and timeout paths without losing
 * the connection itself.
 *
 * The list is short (a test makes a few partitions) and is read only when a
 * partition is made or repaired, and by dials: a stream keeps whether it is
 * cut (`held`), so a send does not look. A linear scan it is.
 */
#include <stdlib.h>
#include <string.h>

#include "deterministic/det.h"

static bool ip_unspecified(const cw_addr *p)
{
    static const uint8_t zero[16];
    return memcmp(p->ip, zero, p->family == CW_ADDR_IPV6 ? 16 : 4) == 0;
}

/* An unspecified IP or a port 0 in the pattern matches any. */
static bool matches(const cw_addr *pattern, const cw_addr *x)
{
    if (pattern->family != x->family)
        return false;
    size_t iplen = x->family == CW_ADDR_IPV6 ? 16 : 4;
    bool ip = ip_unspecified(pattern) || memcmp(pattern->ip, x->ip, iplen) == 0;
    return ip && (pattern->port == 0 || pattern->port == x->port);
}

static bool cuts(const cw_cut *c, const cw_addr *x, const cw_addr *y)
{
    return (matches(&c->a, x) && matches(&c->b, y)) || (matches(&c->b, x) && matches(&c->a, y));
}

bool cw_net_cut(const cw_net *net, const cw_addr *x, const cw_addr *y)
{
    const cw_mem_net *mn = cw_mem_net_of(net);
    for (size_t i = 0; i < mn->ncuts; i++)
        if (cuts(&mn->cuts[i], x, y))
            return true;
    return false;
}

/* Whether a partition cuts a stream's connection: only a dialed
 * connection's (the mock channel's pipe has no ends to match). */
static bool stream_cut(const cw_net *net, const cw_stream *s)
{
    return s->delayed && cw_mem_net_of(net)->ncuts > 0 && cw_net_cut(net, &s->local, &s->remote);
}

static bool pattern_valid(const cw_addr *p)
{
    return p && (p->family == CW_ADDR_IPV4 || p->family == CW_ADDR_IPV6);
}

/* The same pair, in either order: patterns are compared as given. */
static bool same_pair(const cw_cut *c, const cw_addr *a, const cw_addr *b)
{
    return (cw_addr_equal(&c->a, a) && cw_addr_equal(&c->b, b)) ||
           (cw_addr_equal(&c->a, b) && cw_addr_equal(&c->b, a));
}

static void audit_pair(cw_rt *rt, const char *label, const cw_addr *a, const cw_addr *b)
{
    if (!cw_audited(rt))
        return;
    char ta[CW_ADDR_TEXT_MAX], tb[CW_ADDR_TEXT_MAX];
    cw_addr_format(a, ta);
    cw_addr_format(b, tb);
    cw_field f[2] = {{ta, strlen(ta)}, {tb, strlen(tb)}};
    cw_audit(rt, label, f, 2);
}

static bool cuts_reserve(cw_mem_net *mn)
{
    return cw_grow(&mn->cuts, &mn->cap_cuts, mn->ncuts + 1, sizeof *mn->cuts, 4);
}

/* After a partition, hold every stream it cuts (`cut` true); after a
 * repair, release every held one no partition cuts any more. In the order
 * the streams were made, which is the order NET-030 takes. */
static void settle_streams(cw_net *net, bool cut)
{
    for (cw_list *it = net->streams.next; it != &net->streams; it = it->next) {
        cw_stream *s = cw_container_of(it, cw_stream, link);
        if (stream_cut(net, s) != cut)
            continue;
        if (cut)
            cw_mem_hold(s);
        else
            cw_mem_release(s);
    }
}

int cw_mem_partition(cw_ctx *ctx, const cw_addr *a, const cw_addr *b)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task_self(rt, "cw_network_partition");
    if (!pattern_valid(a) || !pattern_valid(b))
        return CW_ERR_INVALID;
    cw_rt_lock(rt);
    cw_net *net = cw_net_open(rt);
    cw_mem_net *mn = net ? cw_mem_net_of(net) : NULL;
    bool known = false;
    for (size_t i = 0; mn && i < mn->ncuts && !known; i++)
        known = same_pair(&mn->cuts[i], a, b);
    if (!mn || (!known && !cuts_reserve(mn))) {
        cw_rt_unlock(rt);
        return CW_ERR_NOMEM;
    }
    if (!known) /* partitioning a pair twice is partitioning it once */
        mn->cuts[mn->ncuts++] = (cw_cut){*a, *b};
    audit_pair(rt, "partition", a, b);
    settle_streams(net, true);
    cw_rt_unlock(rt);
    return CW_OK;
}

int cw_mem_repair(cw_ctx *ctx, const cw_addr *a, const cw_addr *b)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task_self(rt, "cw_network_repair");
    if (!pattern_valid(a) || !pattern_valid(b))
        return CW_ERR_INVALID;
    cw_rt_lock(rt);
    cw_net *net = cw_net_open(rt);
    if (!net) {
        cw_rt_unlock(rt);
        return CW_ERR_NOMEM;
    }
    /* At most one: a partition of a known pair added nothing. */
    cw_mem_net *mn = cw_mem_net_of(net);
    for (size_t i = 0; i < mn->ncuts; i++) {
        if (same_pair(&mn->cuts[i], a, b)) {
            memmove(&mn->cuts[i], &mn->cuts[i + 1], (mn->ncuts - i - 1) * sizeof *mn->cuts);
            mn->ncuts--;
            break;
        }
    }
    audit_pair(rt, "repair", a, b);
    settle_streams(net, false);
    cw_rt_unlock(rt);
    return CW_OK;
}
