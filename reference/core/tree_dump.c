/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * tree_dump.c - the supervision tree as text or DOT (cwrt/tree.h).
 *
 * The walk starts at the run's root node. A node that supervises a task
 * (it is the context the task was spawned from) shows that task; every
 * other node (a task's own context, a context made with cw_child) is
 * looked through, so a task appears below the nearest task above it. The
 * walk keeps an explicit stack, as the abort does: depth costs no C stack.
 */
#include <stdlib.h>

#include "core/internal.h"
#include "cwrt/tree.h"

typedef struct frame {
    cw_node *node;
    int depth;       /* indent of the tasks found below this node */
    uint64_t parent; /* the task above, for DOT edges */
} frame;

static const char *state_of(const cw_task *t)
{
    if (t->state == CW_TASK_DONE)
        return "done";
    if (t->aborted)
        return "aborting";
    return t->state == CW_TASK_NEW ? "new" : "running";
}

/* "label#id", the root as "root#0". */
static void put_name(FILE *out, const cw_task *t)
{
    fprintf(out, "%s#%llu", t->label[0] ? t->label : "root", (unsigned long long)t->id);
}

static void put_task(FILE *out, int format, const cw_task *t, int depth, uint64_t parent)
{
    if (format == CW_TREE_TEXT) {
        fprintf(out, "%*s", 2 * depth, "");
        put_name(out, t);
        fprintf(out, " (%s)\n", state_of(t));
        return;
    }
    fprintf(out, "  t%llu [label=\"", (unsigned long long)t->id);
    put_name(out, t);
    fprintf(out, "\\n%s\"];\n", state_of(t));
    if (t->id != parent)
        fprintf(out, "  t%llu -> t%llu;\n", (unsigned long long)parent, (unsigned long long)t->id);
}

static int push(frame **stack, size_t *n, size_t *cap, frame f)
{
    if (!cw_grow(stack, cap, *n + 1, sizeof **stack, 32))
        return CW_ERR_NOMEM;
    (*stack)[(*n)++] = f;
    return CW_OK;
}

/* Children are pushed last first, so they come out in the order made. */
static int push_children(frame **stack, size_t *n, size_t *cap, const cw_node *node, int depth,
                         uint64_t parent)
{
    for (cw_list *it = node->children.prev; it != &node->children; it = it->prev) {
        frame f = {cw_container_of(it, cw_node, sibling), depth, parent};
        if (push(stack, n, cap, f) != CW_OK)
            return CW_ERR_NOMEM;
    }
    return CW_OK;
}

static int walk(cw_rt *rt, FILE *out, int format)
{
    frame *stack = NULL;
    size_t n = 0, cap = 0;
    cw_task *root = rt->root;
    put_task(out, format, root, 0, root->id);
    int rc = CW_OK;
    /* The root node and any node cut off below an aborted one: the nodes
     * without a parent, in the order they were made. */
    for (cw_list *it = rt->nodes.prev; rc == CW_OK && it != &rt->nodes; it = it->prev) {
        cw_node *top = cw_container_of(it, cw_node, link);
        if (!top->parent)
            rc = push(&stack, &n, &cap, (frame){top, 1, root->id});
    }
    while (rc == CW_OK && n > 0) {
        frame f = stack[--n];
        int depth = f.depth;
        uint64_t parent = f.parent;
        if (f.node->task) {
            put_task(out, format, f.node->task, depth, parent);
            parent = f.node->task->id;
            depth++;
        }
        rc = push_children(&stack, &n, &cap, f.node, depth, parent);
    }
    free(stack);
    return rc;
}

int cw_tree_dump(cw_ctx *ctx, FILE *out, int format)
{
    /* A context of the reference's core answers its label through the core. */
    if ((format != CW_TREE_TEXT && format != CW_TREE_DOT) || !ctx ||
        cw__backend_of(ctx)->label != cw_core_label)
        return CW_ERR_INVALID;
    cw_rt *rt = ctx->rt;
    if (format == CW_TREE_DOT)
        fputs("digraph tasks {\n  node [shape=box, fontname=\"monospace\"];\n", out);
    cw_rt_lock(rt);
    int rc = walk(rt, out, format);
    cw_rt_unlock(rt);
    if (format == CW_TREE_DOT)
        fputs("}\n", out);
    if (rc == CW_OK && (fflush(out) != 0 || ferror(out)))
        rc = CW_ERR_IO;
    return rc;
}
