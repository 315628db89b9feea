/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * resolver.c - the native backend's names to addresses: the system's
 * resolver, asked on the blocking pool so that no worker waits on it.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native/native.h"

/* Shared by the asking task and the lookup task, and freed by whichever is
 * done with it last: the asking task may be aborted while getaddrinfo
 * still runs, and the lookup must not then write into a stack that is gone.
 * A lookup task aborted before it ran never lets go of its share, so the
 * run's network keeps every lookup and frees what is left at the end. */
struct cw_lookup {
    cw_rt *rt;
    int refs; /* under rt->lock */
    char *host;
    cw_addr *found;
    size_t cap, n;
    int gai;      /* getaddrinfo's result */
    cw_list link; /* the run's lookups (cw_tcp_net) */
};

static void lookup_free(cw_lookup *lk)
{
    cw_list_remove(&lk->link);
    free(lk->host);
    free(lk->found);
    free(lk);
}

static void lookup_unref(void *arg)
{
    cw_lookup *lk = arg;
    cw_rt *rt = lk->rt;
    cw_rt_lock(rt);
    if (--lk->refs == 0)
        lookup_free(lk);
    cw_rt_unlock(rt);
}

void cw_lookups_free(cw_list *lookups)
{
    for (cw_list *it = lookups->next, *next; it != lookups; it = next) {
        next = it->next;
        lookup_free(cw_container_of(it, cw_lookup, link));
    }
}

/* Runs on the blocking pool: getaddrinfo may wait on the network. */
static void *lookup_task(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_lookup *lk = arg;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    lk->gai = getaddrinfo(lk->host, NULL, &hints, &res);
    for (struct addrinfo *ai = res; lk->gai == 0 && ai; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        cw_addr a;
        cw_addr_from_sockaddr(ai->ai_addr, &a);
        a.port = 0;
        bool seen = false;
        for (size_t i = 0; i < lk->n && !seen; i++)
            seen = cw_addr_equal(&lk->found[i], &a);
        if (!seen && lk->n < lk->cap)
            lk->found[lk->n++] = a;
    }
    if (res)
        freeaddrinfo(res);
    lookup_unref(lk);
    return NULL;
}

/* A lookup of `host` for up to `cap` addresses, kept by the run's
 * network; NULL when memory is exhausted. */
static cw_lookup *lookup_new(cw_rt *rt, const char *host, size_t cap)
{
    cw_lookup *lk = calloc(1, sizeof *lk);
    if (!lk)
        return NULL;
    lk->rt = rt;
    lk->refs = 2;
    lk->host = cw_strdup(host);
    lk->cap = cap;
    lk->found = calloc(cap ? cap : 1, sizeof *lk->found);
    cw_list_init(&lk->link);
    cw_rt_lock(rt);
    cw_net *net = lk->host && lk->found ? cw_net_open(rt) : NULL;
    if (net)
        cw_list_push_back(&cw_tcp_net_of(net)->lookups, &lk->link);
    cw_rt_unlock(rt);
    if (!net) {
        lookup_free(lk);
        return NULL;
    }
    return lk;
}

int cw_sys_resolve(cw_ctx *ctx, const char *host, cw_addr *out, size_t cap, size_t *n,
                   cw_resolve_error *err)
{
    if (!host || (cap > 0 && !out))
        return CW_ERR_INVALID;
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_lookup *lk = lookup_new(rt, host, cap);
    if (!lk)
        return CW_ERR_NOMEM;
    cw_cleanup guard;
    cw_cleanup_push(ctx, &guard, lookup_unref, lk);
    cw_handle *h = cw_spawn(cw_shared(cw_child(ctx, "resolve"), true), lookup_task, lk);
    int rc = cw_join(h, NULL);
    cw_handle_release(h);
    if (rc == CW_OK && (lk->gai != 0 || lk->n == 0)) {
        if (err)
            snprintf(err->message, sizeof err->message, "dns resolution failed: %s (%s)", host,
                     lk->gai != 0 ? gai_strerror(lk->gai) : "no address");
        rc = CW_ERR_RESOLVE_FAILED;
    }
    if (rc == CW_OK) {
        memcpy(out, lk->found, lk->n * sizeof *out);
        *n = lk->n;
    }
    cw_cleanup_pop(ctx, &guard, true);
    return rc;
}

int cw_sys_resolver_register(cw_ctx *ctx, const char *host, const cw_addr *addrs, size_t n)
{
    (void)ctx;
    (void)host;
    (void)addrs;
    (void)n;
    return CW_ERR_UNSUPPORTED;
}
