/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * resolver.c - the deterministic backend's names to addresses: a table the
 * program fills during the run (cw_resolver_register), so a run never
 * depends on the host's resolver. The table outlives a crash: a recovered
 * run adopts the one its checkpoint carried. (The native backend asks the
 * system's resolver: native/resolver.c.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deterministic/det.h"

static cw_host *find(cw_mem_net *mn, const char *name)
{
    for (size_t i = 0; i < mn->nhosts; i++)
        if (strcmp(mn->hosts[i].name, name) == 0)
            return &mn->hosts[i];
    return NULL;
}

/* host, then each address as text: the fields of both events. false,
 * with nothing recorded, when there is no memory for the fields. */
static bool audit_host(cw_rt *rt, const char *label, const char *host, const cw_addr *addrs,
                       size_t n)
{
    if (!cw_audited(rt))
        return true;
    cw_field *f = calloc(n + 1, sizeof *f);
    char(*text)[CW_ADDR_TEXT_MAX] = calloc(n + 1, sizeof *text);
    if (f && text) {
        f[0] = (cw_field){host, strlen(host)};
        for (size_t i = 0; i < n; i++) {
            cw_addr_format(&addrs[i], text[i]);
            f[i + 1] = (cw_field){text[i], strlen(text[i])};
        }
        cw_audit(rt, label, f, n + 1);
    }
    bool recorded = f && text;
    free(text);
    free(f);
    return recorded;
}

static void fail_message(cw_resolve_error *err, const char *host)
{
    if (err)
        snprintf(err->message, sizeof err->message, "dns resolution failed: %s", host);
}

int cw_mem_resolve(cw_ctx *ctx, const char *host, cw_addr *out, size_t cap, size_t *n,
                   cw_resolve_error *err)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task_self(rt, "cw_resolve");
    if (!host || (cap > 0 && !out))
        return CW_ERR_INVALID;
    cw_rt_lock(rt);
    cw_net *net = cw_net_open(rt);
    cw_host *h = net ? find(cw_mem_net_of(net), host) : NULL;
    bool recorded = net && audit_host(rt, "resolve", host, h ? h->addrs : NULL, h ? h->n : 0);
    if (h && recorded) {
        *n = h->n < cap ? h->n : cap;
        for (size_t i = 0; i < *n; i++)
            out[i] = h->addrs[i];
    }
    cw_rt_unlock(rt);
    if (!recorded)
        return CW_ERR_NOMEM;
    if (!h) {
        fail_message(err, host);
        return CW_ERR_RESOLVE_FAILED;
    }
    return CW_OK;
}

static void host_clear(cw_host *h)
{
    free(h->name);
    free(h->addrs);
}

/* The entry `host` is to have: its own copies of the name and of the
 * addresses (port 0). false when memory is exhausted. */
static bool host_make(cw_host *h, const char *host, const cw_addr *addrs, size_t n)
{
    h->name = cw_strdup(host);
    h->addrs = calloc(n, sizeof *h->addrs);
    h->n = n;
    if (!h->name || !h->addrs) {
        host_clear(h);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        h->addrs[i] = addrs[i];
        h->addrs[i].port = 0;
    }
    return true;
}

/* Everything a registration needs is had before the table changes: a
 * registration that finds no memory changes nothing [NET-034]. */
int cw_mem_resolver_register(cw_ctx *ctx, const char *host, const cw_addr *addrs, size_t n)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    if (!host || (n > 0 && !addrs))
        return CW_ERR_INVALID;
    cw_host made = {0};
    if (n > 0 && !host_make(&made, host, addrs, n))
        return CW_ERR_NOMEM;
    cw_rt_lock(rt);
    cw_net *net = cw_net_open(rt);
    cw_mem_net *mn = net ? cw_mem_net_of(net) : NULL;
    bool room = mn && cw_grow(&mn->hosts, &mn->cap_hosts, mn->nhosts + 1, sizeof *mn->hosts, 8);
    if (!room || !audit_host(rt, "resolver_register", host, addrs, n)) {
        cw_rt_unlock(rt);
        host_clear(&made);
        return CW_ERR_NOMEM;
    }
    cw_host *h = find(mn, host);
    if (h) {
        host_clear(h);
        *h = mn->hosts[--mn->nhosts];
    }
    if (n > 0)
        mn->hosts[mn->nhosts++] = made;
    cw_rt_unlock(rt);
    return CW_OK;
}

void cw_hosts_free(cw_mem_net *mn)
{
    for (size_t i = 0; i < mn->nhosts; i++)
        host_clear(&mn->hosts[i]);
    free(mn->hosts);
}

/* The resolver's table between a run's crash and the next run's start. */
struct cw_hosts_image {
    cw_host *hosts;
    size_t n, cap;
};

void cw_hosts_adopt(cw_net *net)
{
    cw_det *d = cw_det_of(net->rt);
    cw_hosts_image *img = d->inherit_hosts;
    if (!img)
        return;
    cw_mem_net *mn = cw_mem_net_of(net);
    mn->hosts = img->hosts;
    mn->nhosts = img->n;
    mn->cap_hosts = img->cap;
    free(img);
    d->inherit_hosts = NULL;
}

cw_hosts_image *cw_hosts_image_new(void)
{
    return calloc(1, sizeof(cw_hosts_image));
}

cw_hosts_image *cw_hosts_take(cw_rt *rt, cw_hosts_image *spare)
{
    cw_net *net = cw_ext_state(rt, CW_EXT_NETWORK);
    if (!net) {
        cw_hosts_image *img = cw_det_of(rt)->inherit_hosts;
        cw_det_of(rt)->inherit_hosts = NULL;
        if (!img)
            return spare;
        free(spare);
        return img;
    }
    cw_hosts_image *img = spare;
    cw_mem_net *mn = cw_mem_net_of(net);
    img->hosts = mn->hosts;
    img->n = mn->nhosts;
    img->cap = mn->cap_hosts;
    mn->hosts = NULL;
    mn->nhosts = mn->cap_hosts = 0;
    return img;
}

void cw_hosts_image_free(cw_hosts_image *img)
{
    for (size_t i = 0; i < img->n; i++)
        host_clear(&img->hosts[i]);
    free(img->hosts);
    free(img);
}
