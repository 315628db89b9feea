/*
 * context.c - contexts: a label path, attributes, an execution mode for the
 * next spawn, and a place in the supervision tree.
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

cw_ctx *cw_ctx_new(cw_rt *rt, cw_node *node, const char *label)
{
    cw_ctx *ctx = cw_xcalloc(1, sizeof *ctx);
    ctx->hdr.backend = rt->backend;
    ctx->rt = rt;
    ctx->node = node;
    ctx->label = cw_xstrdup(label);
    ctx->execution = CW_EXEC_SHARED;
    cw_list_push_back(&rt->contexts, &ctx->link);
    return ctx;
}

static void set_attribute(cw_ctx *ctx, const char *key, const char *value)
{
    size_t i = 0;
    while (i < ctx->nattrs && strcmp(ctx->attrs[i].key, key) < 0)
        i++;
    if (i < ctx->nattrs && strcmp(ctx->attrs[i].key, key) == 0) {
        free(ctx->attrs[i].value);
        ctx->attrs[i].value = cw_xstrdup(value);
        return;
    }
    if (!cw_grow(&ctx->attrs, &ctx->cap_attrs, ctx->nattrs + 1, sizeof *ctx->attrs, 4))
        cw_fatal("out of memory adding a context attribute");
    cw_attribute *a = ctx->attrs;
    memmove(&a[i + 1], &a[i], (ctx->nattrs - i) * sizeof *a);
    a[i].key = cw_xstrdup(key);
    a[i].value = cw_xstrdup(value);
    ctx->nattrs++;
}

void cw_ctx_copy_attributes(cw_ctx *to, const cw_ctx *from)
{
    for (size_t i = 0; i < from->nattrs; i++)
        set_attribute(to, from->attrs[i].key, from->attrs[i].value);
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

cw_ctx *cw_core_child(cw_ctx *ctx, const char *label)
{
    const char *why = cw_label_check(label);
    if (why)
        cw_panic(ctx, "%s: %s", why, label ? label : "(null)");
    char *full = cw_label_join(ctx->label, label);
    if (strncmp(full, "runtime", 7) == 0) {
        free(full);
        cw_panic(ctx, "using runtime label is not allowed: %s", label);
    }
    cw_rt_lock(ctx->rt);
    cw_ctx *child = cw_ctx_new(ctx->rt, cw_node_child(ctx->node), "");
    cw_rt_unlock(ctx->rt);
    free(child->label);
    child->label = full;
    cw_ctx_copy_attributes(child, ctx);
    return child;
}

void cw_core_with_attribute(cw_ctx *ctx, const char *key, const char *value)
{
    const char *why = cw_label_check(key);
    if (why)
        cw_panic(ctx, "attribute key: %s: %s", why, key ? key : "(null)");
    set_attribute(ctx, key, value ? value : "");
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
    cw_rt_lock(rt);
    if (ctx->task)
        ctx->task->ctx = NULL; /* a task gave up its own context */
    cw_ctx_free(ctx);
    cw_rt_unlock(rt);
}
