/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * task.c - a task's life: spawned, started on a stack of its own, ended by
 * returning, by a panic or by an abort, then freed (spec/04-tasks.md).
 *
 * A task ends in one place, sk_task_finish, whatever ended it: the result
 * goes to its handle, its own context and its wakers are let go, and its
 * owner node (the spawning context's) is aborted with all below it [TASK-004].
 * Unwinding is a longjmp to the task's first frame, on the task's own stack,
 * after its cleanup handlers ran.
 */
#include <stdlib.h>
#include <string.h>

#include "skeleton.h"

static void link_task(sk_rt *rt, sk_task *t)
{
    t->prev = rt->tasks_tail;
    if (rt->tasks_tail)
        rt->tasks_tail->next = t;
    else
        rt->tasks_head = t;
    rt->tasks_tail = t;
}

static void unlink_task(sk_rt *rt, sk_task *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        rt->tasks_head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    else
        rt->tasks_tail = t->prev;
}

/* The task and its own context, one level below the spawning context. */
static sk_task *task_new(sk_ctx *from, cw_task_fn fn, void *arg)
{
    sk_task *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->rt = from->obj.rt;
    t->cell = sk_cell_new(t);
    sk_node *node = t->cell ? sk_node_new(from->node) : NULL;
    t->ctx = node ? sk_ctx_new(from->obj.rt, node, from->label, from) : NULL;
    if (!t->ctx) {
        if (t->cell)
            sk_cell_unref(t->cell);
        free(t);
        return NULL;
    }
    t->ctx->task = t;
    t->fn = fn;
    t->arg = arg;
    return t;
}

/* Consumes `ctx` in every case. A spawn from an aborted context, or while
 * the run ends, gives a handle that resolves CW_ERR_CLOSED and runs nothing
 * [CTX-005]; one that finds no memory for its task, or comes from a spent
 * context, one that resolves CW_ERR_NOMEM [TASK-011]. NULL only when
 * memory for the handle itself is exhausted. */
cw_handle *sk_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    sk_ctx *from = SK_CTX(ctx);
    sk_rt *rt = from->obj.rt;
    sk_handle *h = sk_handle_new(rt);
    bool refused = rt->ending || from->node->aborted;
    sk_task *t = NULL;
    if (h && !refused && !from->spent)
        t = task_new(from, fn, arg);
    if (h && !t)
        sk_handle_resolve(h, refused ? CW_ERR_CLOSED : CW_ERR_NOMEM, NULL);
    if (t) {
        t->handle = h;
        h->task = t;
        sk_node_register(from->node, t);
        link_task(rt, t);
        sk_ready(t);
    }
    if (from != rt->spent)
        sk_ctx_end(from);
    return (cw_handle *)h;
}

/* The first frame of every task. It never returns: a finished task switches
 * to the scheduler for good, which frees its stack. */
static void task_main(void)
{
    sk_task *t = sk_current();
    sk_task_arrived(t);
    if (setjmp(t->unwind) == 0) {
        t->end_value = t->fn((cw_ctx *)t->ctx, t->arg);
        t->end_result = CW_OK;
    }
    sk_task_finish(t, t->end_result, t->end_result == CW_OK ? t->end_value : NULL);
    sk_exit_to_sched(t);
}

/* Called by the scheduler before a task first runs. False when the task
 * ended without running: aborted before it started, or no stack. */
bool sk_task_start(sk_task *t)
{
    if (t->aborting) {
        sk_task_finish(t, CW_ERR_CLOSED, NULL);
        return false;
    }
    if (!sk_stack_alloc(t, t->rt->cfg.stack_size, t->rt->cfg.stack_guard) ||
        getcontext(&t->uc) != 0) {
        sk_task_finish(t, CW_ERR_NOMEM, NULL);
        return false;
    }
    t->uc.uc_stack.ss_sp = t->stack;
    t->uc.uc_stack.ss_size = t->stack_len;
    t->uc.uc_link = NULL;
    makecontext(&t->uc, task_main, 0);
    sk_fiber_new(t);
    t->started = true;
    return true;
}

/* Marks the task; it ends at its next suspension point [TASK-002]. A task
 * that never started ends when the scheduler reaches it, without running. */
void sk_task_abort(sk_task *t)
{
    if (t->done || t->aborting)
        return;
    t->aborting = true;
    sk_wake(t);
}

void sk_task_finish(sk_task *t, int result, void *value)
{
    sk_rt *rt = t->rt;
    t->done = true;
    if (t->handle) {
        t->handle->task = NULL;
        sk_handle_resolve(t->handle, result, value);
    }
    if (t->ctx)
        sk_ctx_end(t->ctx);
    if (t->cell)
        sk_cell_detach(t->cell);
    if (t->owner) {
        sk_node *owner = t->owner;
        sk_node_unregister(t);
        sk_node_abort(owner);
        sk_node_unref(owner);
    }
    unlink_task(rt, t);
    if (t == rt->root)
        sk_rt_end(rt, CW_OK, value, "");
}

/* By the scheduler, off the task's stack. */
void sk_task_free(sk_task *t)
{
    sk_fiber_free(t);
    sk_stack_free(t);
    free(t);
}

/* Ends the calling task `t` with `result`: cleanup handlers newest first
 * [PAN-004], then back to its first frame. */
_Noreturn void sk_unwind(sk_task *t, int result)
{
    t->unwinding = true;
    t->end_result = result;
    sk_run_cleanups(t);
    longjmp(t->unwind, 1);
}

/* At a suspension point: an aborted task goes no further. */
void sk_check_abort(sk_task *t)
{
    if (t->aborting && !t->unwinding)
        sk_unwind(t, CW_ERR_CLOSED);
}

/* The root task owns the root context and has no owner node: nothing
 * supervises it, and its end is the end of the run [RUN-001]. */
bool sk_root_task(sk_rt *rt, cw_task_fn fn, void *arg)
{
    sk_task *t = calloc(1, sizeof *t);
    sk_node *node = sk_node_new(NULL);
    if (t) {
        t->rt = rt;
        t->cell = sk_cell_new(t);
    }
    if (!t || !node || !t->cell) {
        if (t && t->cell)
            sk_cell_unref(t->cell);
        free(t);
        free(node);
        return false;
    }
    t->ctx = sk_ctx_new(rt, node, "", NULL);
    if (!t->ctx) {
        sk_cell_unref(t->cell);
        free(t);
        return false;
    }
    t->ctx->task = t;
    t->fn = fn;
    t->arg = arg;
    rt->root = t;
    link_task(rt, t);
    sk_ready(t);
    return true;
}
