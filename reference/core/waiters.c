/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * waiters.c - waits, and the waiter lists every waitable object keeps.
 *
 * An armed wait is on its object's list through its node, with the task to
 * wake; both are words of the wait itself (cw_waitv), so arming allocates
 * nothing and a wait given up unlinks itself in O(1). The object's lock
 * (the runtime's) guards the list.
 */
#include <string.h>

#include "core/internal.h"

void cw_wait_init(cw_wait *w, const cw_backend *b, const cw_wait_ops *ops, void *object)
{
    memset(w, 0, sizeof *w);
    w->backend = b;
    w->ops = ops;
    w->object = object;
}

cw_rt *cw_wait_rt(const cw_wait *w)
{
    return cw_waitv_of_const(w)->rt;
}

cw_task *cw_wait_task(cw_wait *w)
{
    return cw_waitv_of(w)->task;
}

static cw_wait *wait_of_node(cw_list *node)
{
    return &cw_container_of(node, cw_waitv, node)->pub;
}

void cw_waiters_add(cw_list *waiters, cw_wait *w, cw_task *t)
{
    cw_waitv *v = cw_waitv_of(w);
    v->task = t;
    cw_list_push_back(waiters, &v->node);
}

void cw_waiters_remove(cw_wait *w)
{
    cw_waitv *v = cw_waitv_of(w);
    if (v->node.next)
        cw_list_remove(&v->node);
    v->task = NULL;
}

void cw_waiters_wake(cw_rt *rt, cw_list *waiters)
{
    for (cw_list *it = waiters->next; it != waiters; it = it->next)
        rt->sched->wake(cw_wait_task(wait_of_node(it)));
}

/* What a wait becomes when its object ends under it: done, with the result
 * it was given, and nothing to arm or disarm. */
static bool ended_try(cw_wait *w)
{
    (void)w;
    return true;
}

static void ended_arm(cw_wait *w, cw_task *t)
{
    (void)w;
    (void)t;
}

static void ended_disarm(cw_wait *w)
{
    (void)w;
}

static const cw_wait_ops ended_ops = {ended_try, ended_arm, ended_disarm, cw_guard_none};

void cw_waiters_end(cw_rt *rt, cw_list *waiters, int result)
{
    while (waiters->next != waiters) {
        cw_wait *w = wait_of_node(waiters->next);
        cw_task *t = cw_wait_task(w);
        cw_waiters_remove(w);
        w->ops = &ended_ops;
        w->object = NULL;
        w->result = result;
        rt->sched->wake(t);
    }
}
