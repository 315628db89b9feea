/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * tree.c - the supervision tree.
 *
 * Each context owns a node; cw_child hangs a new node below its context's.
 * A spawn turns the spawning context's node into the new task's "owner":
 * when that task ends, for any reason, the owner and everything below it is
 * aborted. So a finished parent takes its children with it, while siblings
 * (nodes beside it) are untouched.
 *
 * A node is kept alive by references from contexts, tasks and its own child
 * nodes; children are listed weakly (a freed child unlinks itself). Both the
 * release of a long chain and the abort of a deep tree are loops, not
 * recursion, so depth costs no stack.
 */
#include <stdlib.h>

#include "core/internal.h"

static cw_node *node_new(cw_rt *rt)
{
    cw_node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->rt = rt;
    n->refs = 1;
    cw_list_init(&n->children);
    cw_list_init(&n->sibling);
    cw_list_push_back(&rt->nodes, &n->link);
    return n;
}

cw_node *cw_node_root(cw_rt *rt)
{
    return node_new(rt);
}

cw_node *cw_node_child(cw_node *parent)
{
    cw_node *n = node_new(parent->rt);
    if (!n)
        return NULL;
    if (parent->aborted) {
        /* Below an aborted node nothing may run: the child starts aborted
         * and, with nothing to inherit, needs no link to the parent. */
        n->aborted = true;
        return n;
    }
    n->parent = parent;
    parent->refs++;
    cw_list_push_back(&parent->children, &n->sibling);
    return n;
}

void cw_node_ref(cw_node *n)
{
    n->refs++;
}

void cw_node_unref(cw_node *n)
{
    while (n && --n->refs == 0) {
        cw_node *parent = n->parent;
        cw_list_remove(&n->sibling);
        cw_list_remove(&n->link);
        /* A child that dies leaves its children orphaned but alive only if
         * something else holds them, and each holds a reference on us: so
         * by the time our count is zero the children list is empty. */
        free(n);
        n = parent;
    }
}

void cw_node_set_task(cw_node *n, cw_task *t)
{
    if (n->aborted) {
        cw_task_abort(t);
        return;
    }
    if (n->task)
        cw_fatal("supervision node already has a task");
    n->task = t;
}

/* The node after `cur` in a walk of the subtree of `top` that visits a
 * node before its children, and its children newest first; the children
 * of `cur` are skipped unless `descend`. NULL at the end. Walking by the
 * links rather than with a stack of its own keeps an abort from needing
 * memory, so it cannot fail. */
static cw_node *next_in(const cw_node *top, cw_node *cur, bool descend)
{
    if (descend && !cw_list_empty(&cur->children))
        return cw_container_of(cur->children.prev, cw_node, sibling);
    for (; cur != top; cur = cur->parent)
        if (cur->sibling.prev != &cur->parent->children)
            return cw_container_of(cur->sibling.prev, cw_node, sibling);
    return NULL;
}

void cw_node_abort(cw_node *n)
{
    for (cw_node *cur = n; cur;) {
        bool descend = !cur->aborted; /* an aborted node's subtree already is */
        cur->aborted = true;
        if (descend && cur->task) {
            cw_task *t = cur->task;
            cur->task = NULL;
            cw_task_abort(t);
        }
        cur = next_in(n, cur, descend);
    }
}
