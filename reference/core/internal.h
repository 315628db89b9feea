/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * internal.h - the core's private header: only core/ includes it. What a
 * backend may use is in core/sched.h, what a subsystem may use in
 * core/ext.h; this adds the core's own records.
 *
 * The core (this folder) implements everything that does not depend on how
 * tasks are scheduled: the supervision tree, contexts, handles, channels,
 * the stop signal, select, panics and cleanup. A backend (deterministic/,
 * native/) supplies a scheduler through cw_sched_ops and fills the public
 * cw_backend table, mostly with the core's functions.
 *
 * Threading: a runtime's tasks may run on several threads at once (native
 * backend), so all of the core's shared state — the tree, handles, channels,
 * the stop signal and the object lists — is guarded by one lock per runtime,
 * rt->lock. Public entry points (cw_core_*) take it; internal helpers expect
 * it held. It is never held while user code runs or a task is suspended.
 * A subsystem's object that only its own users touch may be under one of
 * the run's stripes instead (guard.c); a select takes the locks of its
 * waits' objects, and only those. A task's `aborted` and the run's
 * `ending` are atomic: a select holding only stripes reads them.
 * A runtime whose tasks all run on one thread (rt->threaded false) skips
 * the locks: only its own thread ever touches the core's state.
 * Lock order: rt->lock, then stripes by increasing index, then a waker's
 * lock, then the scheduler's own locks; the scheduler never takes rt->lock
 * or a stripe while holding one of its own.
 * A cw_waker may be woken from any thread and has a lock of its own.
 */
#ifndef CW_INTERNAL_H
#define CW_INTERNAL_H

#include "core/sched.h"

/* ---- Supervision tree (tree.c) ---------------------------------------------- */

struct cw_node {
    cw_rt *rt;
    cw_node *parent;  /* holds a reference on the parent; NULL for roots */
    size_t refs;      /* contexts, child nodes and tasks that point here */
    cw_list children; /* live child nodes, weakly: a child unlinks itself when freed */
    cw_list sibling;  /* link in parent->children */
    cw_list link;     /* link in rt->nodes */
    cw_task *task;    /* the task this node supervises (its "aborter"), if any */
    bool aborted;
};

/* NULL when memory is exhausted, as for cw_node_child. */
cw_node *cw_node_root(cw_rt *rt);
/* A new node below `parent` with one reference; aborted at once if the
 * parent is. NULL when memory is exhausted. */
cw_node *cw_node_child(cw_node *parent);
void cw_node_ref(cw_node *n);
void cw_node_unref(cw_node *n);
/* Register `t` as the task of `n`; aborts it at once if `n` is aborted. */
void cw_node_set_task(cw_node *n, cw_task *t);
/* Abort `n` and everything below it, iteratively. */
void cw_node_abort(cw_node *n);

/* ---- Contexts (context.c) ----------------------------------------------------- */

struct cw_ctx {
    cw_object hdr;
    cw_rt *rt;
    cw_node *node; /* one reference */
    char *label;
    cw_attribute *attrs; /* sorted by key */
    size_t nattrs, cap_attrs;
    int execution;
    bool exhausted; /* memory ran out making it: spawns resolve CW_ERR_NOMEM */
    cw_task *task;  /* the task whose own context this is, if any */
    cw_list link;   /* rt->contexts */
};

/* Takes the node reference; NULL when memory is exhausted, the node then
 * still the caller's. */
cw_ctx *cw_ctx_new(cw_rt *rt, cw_node *node, const char *label);
/* False when memory is exhausted: `to` may then hold some of them. */
bool cw_ctx_copy_attributes(cw_ctx *to, const cw_ctx *from);
void cw_ctx_free(cw_ctx *ctx);

/* ---- Handles (handle.c) ------------------------------------------------------------ */

struct cw_handle {
    cw_object hdr;
    cw_rt *rt;
    size_t refs;   /* the caller's claim, and the task's while it runs */
    bool done;     /* result and value are final */
    bool is_ready; /* made by cw_handle_ready: abort makes it CW_ERR_ABORTED */
    bool aborted_ready;
    bool released; /* the caller gave up its claim */
    int result;
    void *value;
    cw_task *task; /* while the task runs */
    cw_list waiters;
    cw_list link; /* rt->handles */
};

void cw_handle_free(cw_handle *h);

/* ---- What the end of a run frees (chan.c, oneshot.c, signal.c) ------------------------- */

void cw_chan_free_all(cw_list *chans);
void cw_oneshot_free_all(cw_list *oneshots);
void cw_signal_free_all(cw_list *signals);
/* The run's spent signal (cw_rt.spent_signal); NULL when memory is exhausted. */
cw_signal *cw_signal_spent_new(cw_rt *rt);

/* ---- Wakers (waker.c) -------------------------------------------------------------- */

/* A task's waker outlives the task and the runtime: the task holds one
 * reference and detaches itself when it ends. */
cw_waker *cw_waker_new(cw_task *t);
void cw_waker_detach(cw_waker *w);

#endif
