/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * task.c - spawning, ending, aborting and unwinding tasks; panics and
 * cleanup handlers.
 *
 * A task ends in one of three ways, and each is a last switch away from its
 * coroutine: its function returns, it panics, or it is unwound after an
 * abort. In the last two cases its cleanup handlers run first, newest
 * first, on the task's own stack. Whatever the ending, cw_task_finish then
 * runs on the scheduler's side: it publishes the result, aborts everything
 * the task supervised, and releases what the task held.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* What the run's task observer (ext.h; the runtime's metrics) is told. */
static int observe_admitted(cw_task *t)
{
    return t->rt->observer ? t->rt->observer->admitted(t) : CW_OK;
}

static int observe_refused(cw_rt *rt, const cw_ctx *ctx)
{
    return rt->observer ? rt->observer->refused(rt, ctx) : CW_OK;
}

static void observe_stopped(cw_task *t)
{
    if (t->rt->observer)
        t->rt->observer->stopped(t);
}

/* Undo what task_new made, in any state it stops in. */
static void task_unmake(cw_task *t, cw_node *node)
{
    if (t->handle)
        cw_handle_free(t->handle);
    if (t->ctx)
        cw_ctx_free(t->ctx); /* and its node with it */
    else
        cw_node_unref(node);
    free(t->label);
    free(t);
}

/* A task for a spawn from `parent_ctx` (NULL: the root) with a new node
 * below `owner` (NULL: a root node). NULL when memory is exhausted, with
 * nothing left of it. */
static cw_task *task_new(cw_rt *rt, cw_ctx *parent_ctx, cw_node *owner, cw_task_fn fn, void *arg)
{
    cw_task *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    cw_node *node = owner ? cw_node_child(owner) : cw_node_root(rt);
    t->rt = rt;
    t->label = cw_strdup(parent_ctx ? parent_ctx->label : "");
    t->ctx = node && t->label ? cw_ctx_new(rt, node, t->label) : NULL;
    t->handle = t->ctx ? cw_handle_new(rt) : NULL;
    t->waker = t->handle ? cw_waker_new(t) : NULL;
    if (!t->waker || (parent_ctx && !cw_ctx_copy_attributes(t->ctx, parent_ctx))) {
        if (t->waker)
            cw_core_waker_release(t->waker);
        task_unmake(t, node);
        return NULL;
    }
    t->id = rt->next_task_id++;
    t->execution = parent_ctx ? parent_ctx->execution : CW_EXEC_SHARED;
    t->fn = fn;
    t->arg = arg;
    t->ctx->task = t;
    t->handle->task = t;
    t->state = CW_TASK_NEW;
    cw_list_push_back(&rt->tasks, &t->link);
    rt->ntasks++;
    return t;
}

/* With the lock held: end `t`, which never ran, with `result`. */
static void end_unstarted(cw_task *t, int result)
{
    t->exit_result = result;
    cw_task_finish_locked(t);
    cw_task_free_locked(t);
}

cw_task *cw_task_new_root(cw_rt *rt, cw_task_fn fn, void *arg)
{
    cw_rt_lock(rt);
    cw_task *t = task_new(rt, NULL, NULL, fn, arg);
    rt->root = t;
    if (t && (observe_admitted(t) != CW_OK || rt->sched->spawned(t) != CW_OK)) {
        rt->root = NULL;
        end_unstarted(t, CW_ERR_NOMEM);
        t = NULL;
    }
    cw_rt_unlock(rt);
    return t;
}

/* A spawn consumes the caller's context: its node becomes the new task's
 * owner, so anything derived from that context earlier is supervised by
 * the new task too. */
static void consume_context(cw_ctx *ctx)
{
    if (ctx == ctx->rt->spent_ctx)
        return;
    if (ctx->task)
        ctx->task->ctx = NULL;
    cw_ctx_free(ctx);
}

/* With the lock held: the handle of a new task below `owner`, or one that
 * resolves CW_ERR_NOMEM when any part of the task cannot be had [TASK-011]. */
static cw_handle *spawn_task(cw_rt *rt, cw_ctx *ctx, cw_node *owner, cw_task_fn fn, void *arg)
{
    cw_task *t = task_new(rt, ctx, owner, fn, arg);
    if (!t)
        return cw_handle_resolved(rt, CW_ERR_NOMEM);
    t->owner = owner;
    cw_node_ref(owner);
    t->handle->refs++; /* one for the task, one for the caller */
    cw_handle *h = t->handle;
    if (observe_admitted(t) != CW_OK || rt->sched->spawned(t) != CW_OK) {
        end_unstarted(t, CW_ERR_NOMEM);
        return h;
    }
    cw_node_set_task(owner, t);
    return h;
}

cw_handle *cw_core_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    cw_rt *rt = ctx->rt;
    cw_rt_lock(rt);
    cw_handle *h;
    if (ctx->exhausted) {
        h = cw_handle_resolved(rt, CW_ERR_NOMEM);
    } else if (ctx->node->aborted || rt->ending) {
        /* Counted as spawned if it can be [MET-019]; else refused for memory. */
        int rc = observe_refused(rt, ctx) == CW_OK ? CW_ERR_CLOSED : CW_ERR_NOMEM;
        h = cw_handle_resolved(rt, rc);
    } else {
        h = spawn_task(rt, ctx, ctx->node, fn, arg);
    }
    consume_context(ctx);
    cw_rt_unlock(rt);
    return h;
}

cw_task *cw_task_self(cw_rt *rt, const char *what)
{
    cw_task *t = rt->sched->current(rt);
    if (!t)
        cw_fatal("%s called outside a task of its runtime", what);
    return t;
}

int cw_task_prepare(cw_task *t)
{
    cw_rt *rt = t->rt;
    cw_rt_lock(rt);
    bool cached = cw_stack_cache_take(&rt->stacks, &t->stack);
    cw_rt_unlock(rt);
    if (!cached && cw_stack_map(&t->stack, rt->cfg.stack_size, rt->cfg.stack_guard) != 0)
        return CW_ERR_NOMEM;
    cw_coro_init(&t->coro, &t->stack, cw_task_main, t);
    cw_rt_lock(rt);
    t->state = CW_TASK_RUNNING;
    cw_rt_unlock(rt);
    return CW_OK;
}

/* No lock: `aborted` is an atomic, which an abort sets once and for all. */
bool cw_task_aborted(cw_task *t)
{
    return atomic_load(&t->aborted);
}

void cw_task_main(void *arg)
{
    cw_task *t = arg;
    if (!cw_task_aborted(t)) {
        t->exit_value = t->fn(t->ctx, t->arg);
        t->exit_result = CW_OK;
    } else {
        t->exit_result = CW_ERR_CLOSED;
    }
    t->rt->sched->exit(t);
    __builtin_unreachable();
}

void cw_task_unwind(cw_task *t, int result)
{
    t->unwinding = true;
    while (t->cleanups) {
        cw_cleanup *c = t->cleanups;
        t->cleanups = c->prev;
        c->fn(c->arg);
    }
    t->exit_result = result;
    t->exit_value = NULL;
    t->rt->sched->exit(t);
    __builtin_unreachable();
}

/* On the task itself, at every suspension point and storage call, so it
 * takes no lock: `unwinding` is only ever written by the task, and
 * `aborted` is an atomic. */
void cw_task_check_abort(cw_task *t)
{
    if (atomic_load(&t->aborted) && !t->unwinding)
        cw_task_unwind(t, CW_ERR_CLOSED);
}

void cw_task_abort(cw_task *t)
{
    if (t->state == CW_TASK_DONE || t->aborted)
        return;
    t->aborted = true;
    observe_stopped(t);
    t->rt->sched->wake(t);
}

void cw_task_finish(cw_task *t)
{
    cw_rt_lock(t->rt);
    cw_task_finish_locked(t);
    cw_rt_unlock(t->rt);
}

void cw_task_finish_locked(cw_task *t)
{
    t->state = CW_TASK_DONE;
    t->cleanups = NULL;
    observe_stopped(t); /* before the result is seen: a joiner reads it dropped */
    /* An aborted task reports CW_ERR_CLOSED even if it got to return. */
    int result = t->aborted && t->exit_result == CW_OK ? CW_ERR_CLOSED : t->exit_result;
    cw_handle_complete(t->handle, result, result == CW_OK ? t->exit_value : NULL);
    t->handle->task = NULL;
    cw_handle_unref(t->handle);
    t->handle = NULL;
    if (t->owner) {
        if (t->owner->task == t)
            t->owner->task = NULL;
        cw_node_abort(t->owner);
        cw_node_unref(t->owner);
        t->owner = NULL;
    }
    if (t->ctx) {
        t->ctx->task = NULL;
        cw_ctx_free(t->ctx);
        t->ctx = NULL;
    }
    cw_waker_detach(t->waker);
    t->waker = NULL;
    cw_stack_cache_put(&t->rt->stacks, &t->stack);
}

void cw_task_free(cw_task *t)
{
    cw_rt *rt = t->rt;
    cw_rt_lock(rt);
    cw_task_free_locked(t);
    cw_rt_unlock(rt);
}

void cw_task_free_locked(cw_task *t)
{
    cw_list_remove(&t->link);
    t->rt->ntasks--;
    free(t->label);
    free(t);
}

/* cw_panic has formatted the message (PAN-007): the reference fills only
 * this entry, so the va_list path of the ABI is the skeleton's to test. */
void cw_core_panic(cw_ctx *ctx, const char *message)
{
    cw_rt *rt = ctx->rt;
    cw_task *t = rt->sched->current(rt);
    if (!t)
        cw_fatal("panic outside a task: %s", message);
    if (t->unwinding)
        cw_fatal("panic in a cleanup handler of task %" PRIu64 " (%s): %s", t->id, t->label,
                 message);
    t->panicked = true;
    cw_rt_lock(rt);
    if ((t == rt->root || !rt->cfg.catch_panics) && !rt->panicked) {
        rt->panicked = true;
        snprintf(rt->panic_message, sizeof rt->panic_message, "%s", message);
    }
    cw_rt_unlock(rt);
    cw_task_unwind(t, CW_ERR_EXITED);
}

void cw_core_cleanup_push(cw_ctx *ctx, cw_cleanup *node)
{
    cw_task *t = cw_task_self(ctx->rt, "cw_cleanup_push");
    node->prev = t->cleanups;
    t->cleanups = node;
}

void cw_core_cleanup_pop(cw_ctx *ctx, cw_cleanup *node, bool execute)
{
    cw_task *t = cw_task_self(ctx->rt, "cw_cleanup_pop");
    if (t->cleanups != node)
        cw_panic(ctx, "cleanup handlers must be popped newest first");
    t->cleanups = node->prev;
    if (execute)
        node->fn(node->arg);
}

void cw_core_yield(cw_ctx *ctx)
{
    cw_task *t = cw_task_self(ctx->rt, "cw_yield");
    if (t->unwinding)
        return;
    ctx->rt->sched->yield(t);
    cw_task_check_abort(t);
}

void cw_core_park(cw_ctx *ctx)
{
    cw_task *t = cw_task_self(ctx->rt, "cw_park");
    if (t->unwinding)
        return;
    ctx->rt->sched->park(t);
    cw_task_check_abort(t);
}

bool cw_task_unwinding(const cw_task *t)
{
    return t->unwinding;
}

cw_rt *cw_task_rt(const cw_task *t)
{
    return t->rt;
}

const char *cw_task_label(const cw_task *t)
{
    return t->label;
}

int cw_task_execution(const cw_task *t)
{
    return t->execution;
}

void cw_rt_observe_tasks(cw_rt *rt, const cw_task_observer *o)
{
    rt->observer = o;
}

void **cw_task_observer_word(cw_task *t)
{
    return &t->observed;
}
