/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * context.c - contexts: a label, attributes, an execution mode and a node of
 * the supervision tree (spec/03-context.md).
 *
 * Ownership: cw_child hands the caller a new context, ended by cw_spawn or
 * cw_ctx_release; a task's own context is ended by the runtime when the task
 * ends unless a spawn consumed it first. Ending a context gives its node
 * reference back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "label.h"
#include "skeleton.h"

static void free_attrs(sk_attr *attrs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(attrs[i].key);
        free(attrs[i].value);
    }
    free(attrs);
}

static bool copy_attrs(sk_ctx *c, const sk_ctx *from)
{
    if (!from || from->nattrs == 0)
        return true;
    c->attrs = calloc(from->nattrs, sizeof *c->attrs);
    if (!c->attrs)
        return false;
    for (size_t i = 0; i < from->nattrs; i++) {
        c->attrs[i].key = strdup(from->attrs[i].key);
        c->attrs[i].value = strdup(from->attrs[i].value);
        c->nattrs++; /* counted even half made: free_attrs frees what it holds */
        if (!c->attrs[i].key || !c->attrs[i].value)
            return false;
    }
    return true;
}

static void ctx_destroy(sk_obj *o)
{
    sk_ctx *c = (sk_ctx *)o;
    if (c->task && c->task->ctx == c)
        c->task->ctx = NULL;
    sk_obj_unlink(o);
    sk_node_unref(c->node);
    free_attrs(c->attrs, c->nattrs);
    free(c->label);
    free(c);
}

/* Takes over the caller's reference on `node` (given back on failure too).
 * Copies `label` and, from `inherit`, the attributes. NULL when memory is
 * exhausted. */
sk_ctx *sk_ctx_new(sk_rt *rt, sk_node *node, const char *label, const sk_ctx *inherit)
{
    sk_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        sk_node_unref(node);
        return NULL;
    }
    sk_obj_init(&c->obj, rt, ctx_destroy);
    c->node = node;
    c->label = strdup(label);
    if (!c->label || !copy_attrs(c, inherit)) {
        ctx_destroy(&c->obj);
        return NULL;
    }
    return c;
}

void sk_ctx_end(sk_ctx *c)
{
    ctx_destroy(&c->obj);
}

static char *join_label(const char *parent, const char *label)
{
    size_t n = strlen(parent) + strlen(label) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", parent, parent[0] ? "_" : "", label);
    return s;
}

/* Without memory, the run's spent context [CTX-006]. */
cw_ctx *sk_child(cw_ctx *ctx, const char *label)
{
    sk_ctx *parent = SK_CTX(ctx);
    sk_label_check(label);
    sk_label_check_reserved(parent->label, label);
    sk_rt *rt = parent->obj.rt;
    char *path = parent->spent ? NULL : join_label(parent->label, label);
    if (!path)
        return (cw_ctx *)rt->spent;
    sk_node *node = sk_node_new(parent->node);
    sk_ctx *c = node ? sk_ctx_new(rt, node, path, parent) : NULL;
    free(path);
    return (cw_ctx *)(c ? c : rt->spent);
}

/* Index of `key`, or of where it would go to keep the array sorted. */
static size_t attr_slot(const sk_ctx *c, const char *key, bool *found)
{
    size_t i = 0;
    while (i < c->nattrs && strcmp(c->attrs[i].key, key) < 0)
        i++;
    *found = i < c->nattrs && strcmp(c->attrs[i].key, key) == 0;
    return i;
}

static bool attr_insert(sk_ctx *c, size_t i, char *key, char *value)
{
    sk_attr *grown = realloc(c->attrs, (c->nattrs + 1) * sizeof *grown);
    if (!grown)
        return false;
    c->attrs = grown;
    memmove(&c->attrs[i + 1], &c->attrs[i], (c->nattrs - i) * sizeof *grown);
    c->attrs[i] = (sk_attr){key, value};
    c->nattrs++;
    return true;
}

/* Attributes are not visible through the core interface (metrics would
 * read them); they are kept as the spec says so a backend that grows a
 * metrics table has them. Out of memory leaves the attributes unchanged
 * and the context spent [CTX-006]. */
void sk_with_attribute(cw_ctx *ctx, const char *key, const char *value)
{
    sk_ctx *c = SK_CTX(ctx);
    sk_label_check(key);
    if (c->spent)
        return;
    bool found;
    size_t i = attr_slot(c, key, &found);
    char *v = strdup(value);
    if (!v) {
        c->spent = true;
        return;
    }
    if (found) {
        free(c->attrs[i].value);
        c->attrs[i].value = v;
        return;
    }
    char *k = strdup(key);
    if (!k || !attr_insert(c, i, k, v)) {
        free(k);
        free(v);
        c->spent = true;
    }
}

const char *sk_label(const cw_ctx *ctx)
{
    return ((const sk_ctx *)(const void *)ctx)->label;
}

/* Every mode runs the same way here: one scheduler, one thread. That is
 * allowed, since tasks of each mode only have to behave alike [TASK-006]. */
void sk_set_execution(cw_ctx *ctx, int execution)
{
    SK_CTX(ctx)->execution = execution;
}

void sk_ctx_release(cw_ctx *ctx)
{
    sk_ctx *c = SK_CTX(ctx);
    if (c != c->obj.rt->spent) /* the spent context ends with the run */
        sk_ctx_end(c);
}
