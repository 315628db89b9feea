/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * listener.c - listeners of both transports: their address, the accept
 * wait, and closing. A memory listener's connections wait in its queue
 * (the dialer put them there); a TCP listener's in the kernel's.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "network/net.h"

cw_listener *cw_listener_new(cw_rt *rt, const cw_backend *b, const cw_addr *addr)
{
    cw_listener *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->hdr.backend = b;
    l->rt = rt;
    l->addr = *addr;
    cw_list_init(&l->pending);
    cw_list_init(&l->waiters);
    cw_list_push_back(&cw_net_of(rt)->listeners, &l->link);
    return l;
}

void cw_listener_free(cw_listener *l)
{
    cw_waiters_end(l->rt, &l->waiters, CW_ERR_CLOSED);
    for (cw_list *it = l->pending.next, *next; it != &l->pending; it = next) {
        next = it->next;
        cw_pending *p = cw_container_of(it, cw_pending, link);
        cw_sink_free(p->conn.sink);
        cw_stream_free(p->conn.stream);
        free(p);
    }
    if (l->sock)
        cw_net_of(l->rt)->driver->release_listener(l->sock);
    cw_list_remove(&l->link);
    free(l);
}

int cw_net_local_addr(const cw_listener *l, cw_addr *out)
{
    *out = l->addr;
    return CW_OK;
}

static void audit_accept(cw_listener *l, const cw_conn *c)
{
    cw_rt *rt = l->rt;
    if (!cw_audited(rt))
        return;
    char local[CW_ADDR_TEXT_MAX], peer[CW_ADDR_TEXT_MAX];
    cw_addr_format(&l->addr, local);
    cw_addr_format(&c->peer, peer);
    cw_field f[2] = {{local, strlen(local)}, {peer, strlen(peer)}};
    cw_audit(rt, "accept", f, 2);
}

static bool accept_try(cw_wait *w)
{
    cw_listener *l = w->object;
    cw_conn *out = w->out;
    int rc;
    if (l->sock) {
        rc = cw_net_of(l->rt)->driver->accept(l, out);
        if (rc == CW_ERR_WOULD_BLOCK)
            return false;
    } else {
        if (cw_list_empty(&l->pending))
            return false;
        cw_pending *p = cw_container_of(l->pending.next, cw_pending, link);
        cw_list_remove(&p->link);
        *out = p->conn;
        free(p);
        rc = CW_OK;
    }
    if (rc == CW_OK) {
        audit_accept(l, out);
        cw_metric_counter_add(cw_net_of(l->rt)->inbound, 1);
    }
    w->result = rc;
    return true;
}

static void accept_arm(cw_wait *w, cw_task *t)
{
    cw_listener *l = w->object;
    cw_waiters_add(&l->waiters, w, t);
}

static const cw_wait_ops accept_ops = {accept_try, accept_arm, cw_waiters_remove, cw_guard_rt};

void cw_net_wait_accept(cw_wait *w, cw_listener *l, cw_conn *out)
{
    cw_net_wait_init(w, l->rt, l->hdr.backend, &accept_ops, l);
    w->out = out;
    memset(out, 0, sizeof *out);
}

void cw_net_listener_close(cw_listener *l)
{
    cw_rt *rt = l->rt;
    cw_rt_lock(rt);
    cw_listener_free(l);
    cw_rt_unlock(rt);
}
