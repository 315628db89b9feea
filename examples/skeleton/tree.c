/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * tree.c - the supervision tree (spec/03-context.md).
 *
 * A node is counted: each context on it, each child node and each task
 * registered on it holds one reference. Aborting walks the subtree without
 * recursion (parent and sibling links), so a deep tree costs no stack; a
 * node already aborted is skipped with everything below it, because nodes
 * below an aborted one are aborted too (or are born aborted).
 */
#include <stdlib.h>

#include "skeleton.h"

/* NULL when memory is exhausted. The caller owns the one reference. */
sk_node *sk_node_new(sk_node *parent)
{
    sk_node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->refs = 1;
    n->parent = parent;
    if (parent) {
        n->aborted = parent->aborted;
        n->next_sibling = parent->first_child;
        if (parent->first_child)
            parent->first_child->prev_sibling = n;
        parent->first_child = n;
        parent->refs++;
    }
    return n;
}

void sk_node_ref(sk_node *n)
{
    n->refs++;
}

static void unlink_from_parent(sk_node *n)
{
    if (n->prev_sibling)
        n->prev_sibling->next_sibling = n->next_sibling;
    else
        n->parent->first_child = n->next_sibling;
    if (n->next_sibling)
        n->next_sibling->prev_sibling = n->prev_sibling;
}

/* A loop, not recursion: freeing a leaf may free a long chain above it. */
void sk_node_unref(sk_node *n)
{
    while (n && --n->refs == 0) {
        sk_node *parent = n->parent;
        if (parent)
            unlink_from_parent(n);
        free(n);
        n = parent;
    }
}

static sk_node *first_live(sk_node *n)
{
    while (n && n->aborted)
        n = n->next_sibling;
    return n;
}

/* Preorder successor of `n` within the subtree of `top`, among nodes not yet
 * aborted (the ones visited so far are all marked). */
static sk_node *next_in(sk_node *n, const sk_node *top)
{
    sk_node *c = first_live(n->first_child);
    if (c)
        return c;
    for (; n != top; n = n->parent) {
        sk_node *s = first_live(n->next_sibling);
        if (s)
            return s;
    }
    return NULL;
}

static void abort_tasks_of(sk_node *n)
{
    for (sk_task *t = n->tasks; t; t = t->node_next)
        sk_task_abort(t);
}

void sk_node_abort(sk_node *top)
{
    if (!top || top->aborted)
        return;
    for (sk_node *n = top; n; n = next_in(n, top)) {
        n->aborted = true;
        abort_tasks_of(n);
    }
}

void sk_node_register(sk_node *n, sk_task *t)
{
    sk_node_ref(n);
    t->owner = n;
    t->node_prev = NULL;
    t->node_next = n->tasks;
    if (n->tasks)
        n->tasks->node_prev = t;
    n->tasks = t;
}

/* Leaves the reference with the caller, who gives it back with unref. */
void sk_node_unregister(sk_task *t)
{
    sk_node *n = t->owner;
    if (t->node_prev)
        t->node_prev->node_next = t->node_next;
    else
        n->tasks = t->node_next;
    if (t->node_next)
        t->node_next->node_prev = t->node_prev;
    t->node_prev = t->node_next = NULL;
}
