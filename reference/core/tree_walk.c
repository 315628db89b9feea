/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * tree_walk.c - the supervision tree, task by task, for a reader above the
 * core (cwrt/tree_dump.c prints it).
 *
 * The walk starts at the run's root node. A node that supervises a task
 * (it is the context the task was spawned from) shows that task; every
 * other node (a task's own context, a context made with cw_child) is
 * looked through, so a task appears below the nearest task above it. The
 * walk keeps an explicit stack, as the abort does: depth costs no C stack.
 * It runs under the run's lock, so the reader sees one moment of the tree.
 */
#include <stdlib.h>

#include "core/internal.h"

typedef struct frame {
    cw_node *node;
    int depth;       /* depth of the tasks found below this node */
    uint64_t parent; /* the task above */
} frame;

static const char *state_of(const cw_task *t)
{
    if (t->state == CW_TASK_DONE)
        return "done";
    if (t->aborted)
        return "aborting";
    return t->state == CW_TASK_NEW ? "new" : "running";
}

static void visit_task(const cw_task *t, int depth, uint64_t parent, cw_tree_visit_fn visit,
                       void *arg)
{
    cw_tree_entry e = {
        .label = t->label[0] ? t->label : "root",
        .id = t->id,
        .state = state_of(t),
        .depth = depth,
        .parent = parent,
    };
    visit(&e, arg);
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

static int walk(cw_rt *rt, cw_tree_visit_fn visit, void *arg)
{
    frame *stack = NULL;
    size_t n = 0, cap = 0;
    cw_task *root = rt->root;
    visit_task(root, 0, root->id, visit, arg);
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
            visit_task(f.node->task, depth, parent, visit, arg);
            parent = f.node->task->id;
            depth++;
        }
        rc = push_children(&stack, &n, &cap, f.node, depth, parent);
    }
    free(stack);
    return rc;
}

int cw_core_tree_walk(cw_ctx *ctx, cw_tree_visit_fn visit, void *arg)
{
    /* A context of the reference's core answers its label through the core. */
    if (!ctx || cw__backend_of(ctx)->label != cw_core_label)
        return CW_ERR_INVALID;
    cw_rt *rt = ctx->rt;
    cw_rt_lock(rt);
    int rc = walk(rt, visit, arg);
    cw_rt_unlock(rt);
    return rc;
}
