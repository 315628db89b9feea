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
    cw_node *n = cw_xcalloc(1, sizeof *n);
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

void cw_node_abort(cw_node *n)
{
    size_t cap = 16, len = 0;
    cw_node **stack = cw_xcalloc(cap, sizeof *stack);
    stack[len++] = n;
    while (len) {
        cw_node *cur = stack[--len];
        if (cur->aborted)
            continue;
        cur->aborted = true;
        if (cur->task) {
            cw_task *t = cur->task;
            cur->task = NULL;
            cw_task_abort(t);
        }
        for (cw_list *it = cur->children.next; it != &cur->children; it = it->next) {
            if (len == cap) {
                cw_node **bigger = realloc(stack, 2 * cap * sizeof *stack);
                if (!bigger)
                    cw_fatal("out of memory aborting a supervision tree");
                stack = bigger;
                cap *= 2;
            }
            stack[len++] = cw_container_of(it, cw_node, sibling);
        }
    }
    free(stack);
}
