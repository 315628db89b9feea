/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * context.c - contexts: a label path, attributes, an execution mode for the
 * next spawn, and a place in the supervision tree.
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

cw_ctx *cw_ctx_new(cw_rt *rt, cw_node *node, const char *label)
{
    cw_ctx *ctx = calloc(1, sizeof *ctx);
    char *copy = cw_strdup(label);
    if (!ctx || !copy) {
        free(ctx);
        free(copy);
        return NULL;
    }
    ctx->hdr.backend = rt->backend;
    ctx->rt = rt;
    ctx->node = node;
    ctx->label = copy;
    ctx->execution = CW_EXEC_SHARED;
    cw_list_push_back(&rt->contexts, &ctx->link);
    return ctx;
}

/* Both strings are copied before anything changes, so a failure leaves
 * the attributes as they were. */
static bool set_attribute(cw_ctx *ctx, const char *key, const char *value)
{
    size_t i = 0;
    while (i < ctx->nattrs && strcmp(ctx->attrs[i].key, key) < 0)
        i++;
    bool replace = i < ctx->nattrs && strcmp(ctx->attrs[i].key, key) == 0;
    char *v = cw_strdup(value);
    char *k = replace ? NULL : cw_strdup(key);
    if (!v || (!replace && (!k || !cw_grow(&ctx->attrs, &ctx->cap_attrs, ctx->nattrs + 1,
                                           sizeof *ctx->attrs, 4)))) {
        free(v);
        free(k);
        return false;
    }
    cw_attribute *a = ctx->attrs;
    if (replace) {
        free(a[i].value);
        a[i].value = v;
        return true;
    }
    memmove(&a[i + 1], &a[i], (ctx->nattrs - i) * sizeof *a);
    a[i] = (cw_attribute){k, v};
    ctx->nattrs++;
    return true;
}

bool cw_ctx_copy_attributes(cw_ctx *to, const cw_ctx *from)
{
    for (size_t i = 0; i < from->nattrs; i++)
        if (!set_attribute(to, from->attrs[i].key, from->attrs[i].value))
            return false;
    return true;
}

void cw_ctx_free(cw_ctx *ctx)
{
    cw_list_remove(&ctx->link);
    cw_node_unref(ctx->node);
    for (size_t i = 0; i < ctx->nattrs; i++) {
        free(ctx->attrs[i].key);
        free(ctx->attrs[i].value);
    }
    free(ctx->attrs);
    free(ctx->label);
    free(ctx);
}

/* Whether "<prefix>_<label>" (`label` when prefix is empty) starts with
 * "runtime" [CTX-003]: read from the first bytes of each part, so that it
 * needs no memory and no pass over a long label. */
static bool joins_to_runtime(const char *prefix, const char *label)
{
    static const char word[] = "runtime";
    size_t i = 0;
    for (const char *p = prefix; *p && i < 7; p++)
        if (*p != word[i++])
            return false;
    if (prefix[0] && i < 7 && word[i++] != '_')
        return false;
    for (const char *p = label; *p && i < 7; p++)
        if (*p != word[i++])
            return false;
    return i == 7;
}

/* What cw_child gives when memory for the child is exhausted: the run's
 * spent context, from which every spawn resolves CW_ERR_NOMEM [CTX-006]. */
static cw_ctx *spent(cw_rt *rt, char *unused)
{
    free(unused);
    return rt->spent_ctx;
}

cw_ctx *cw_core_child(cw_ctx *ctx, const char *label)
{
    const char *why = cw_label_check(label);
    if (why)
        cw_panic(ctx, "%s: %s", why, label ? label : "(null)");
    if (joins_to_runtime(ctx->label, label))
        cw_panic(ctx, "using runtime label is not allowed: %s", label);
    char *full = ctx->exhausted ? NULL : cw_label_join(ctx->label, label);
    if (!full)
        return spent(ctx->rt, NULL);
    cw_rt_lock(ctx->rt);
    cw_node *node = cw_node_child(ctx->node);
    cw_ctx *child = node ? cw_ctx_new(ctx->rt, node, "") : NULL;
    if (node && !child)
        cw_node_unref(node);
    cw_rt_unlock(ctx->rt);
    if (!child)
        return spent(ctx->rt, full);
    free(child->label);
    child->label = full;
    if (!cw_ctx_copy_attributes(child, ctx)) {
        cw_core_ctx_release(child);
        return spent(ctx->rt, NULL);
    }
    return child;
}

void cw_core_with_attribute(cw_ctx *ctx, const char *key, const char *value)
{
    const char *why = cw_label_check(key);
    if (why)
        cw_panic(ctx, "attribute key: %s: %s", why, key ? key : "(null)");
    if (ctx->exhausted)
        return;
    /* Losing the attribute quietly would misfile the metrics registered
     * through this context: it spawns nothing instead [CTX-006]. */
    if (!set_attribute(ctx, key, value ? value : ""))
        ctx->exhausted = true;
}

const char *cw_core_label(const cw_ctx *ctx)
{
    return ctx->label;
}

cw_rt *cw_ctx_rt(const cw_ctx *ctx)
{
    return ctx->rt;
}

const cw_backend *cw_ctx_backend(const cw_ctx *ctx)
{
    return ctx->hdr.backend;
}

size_t cw_ctx_attributes(const cw_ctx *ctx, const cw_attribute **out)
{
    *out = ctx->attrs;
    return ctx->nattrs;
}

int cw_ctx_execution(const cw_ctx *ctx)
{
    return ctx->execution;
}

void cw_core_set_execution(cw_ctx *ctx, int execution)
{
    ctx->execution = execution;
}

void cw_core_ctx_release(cw_ctx *ctx)
{
    cw_rt *rt = ctx->rt;
    if (ctx == rt->spent_ctx)
        return;
    cw_rt_lock(rt);
    if (ctx->task)
        ctx->task->ctx = NULL; /* a task gave up its own context */
    cw_ctx_free(ctx);
    cw_rt_unlock(rt);
}
