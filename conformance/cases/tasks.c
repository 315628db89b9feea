/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * tasks.c - spawning, joining, aborting, and the supervision tree
 * (spec/04-tasks.md, spec/03-context.md).
 */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cases/util.h"

/* ---- spawn ----------------------------------------------------------------- */

struct spawn_state {
    cw_handle *child;
    cw_oneshot *initialized, *complete;
};

static void *spawn_parent(cw_ctx *ctx, void *arg)
{
    struct spawn_state *s = arg;
    s->child = cw_spawn(ctx, cwc_return_42, NULL); /* consumes the task's context */
    cwc_notify(s->initialized);
    cwc_await(s->complete);
    return NULL;
}

static void *spawn_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct spawn_state s = {0};
    s.initialized = cw_oneshot_new(ctx, 1);
    s.complete = cw_oneshot_new(ctx, 1);
    cw_handle *parent = cw_spawn(cw_child(ctx, "parent"), spawn_parent, &s);
    cwc_await(s.initialized);
    void *v = NULL;
    ck_assert_int_eq(cw_join(s.child, &v), CW_OK);
    ck_assert_ptr_eq(v, (void *)(intptr_t)42);
    cwc_notify(s.complete);
    ck_assert_int_eq(cw_join(parent, NULL), CW_OK);
    cw_handle_release(s.child);
    cw_handle_release(parent);
    return NULL;
}

CWC_CASE(spawn, "tasks", "TASK-001 TASK-004 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, spawn_root, NULL);
}

static void *dedicated_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h = cw_spawn(cw_dedicated(cw_child(ctx, "dedicated")), cwc_return_42, NULL);
    void *v = NULL;
    ck_assert_int_eq(cw_join(h, &v), CW_OK);
    ck_assert_ptr_eq(v, (void *)(intptr_t)42);
    cw_handle_release(h);
    return NULL;
}

/* Code that relies on the calling convention's stack alignment: a
 * variadic call with doubles (whose callee saves vector registers to an
 * aligned area), and a local whose alignment the compiler takes from the
 * stack rather than making it. The pointer goes through a volatile so that
 * the check is not folded away. */
static void *formats_doubles(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    char text[64];
    snprintf(text, sizeof text, "%.2f %.1Lf %g", 1.25, (long double)2.5, 0.125);
    ck_assert_str_eq(text, "1.25 2.5 0.125");
    max_align_t local;
    uintptr_t volatile at = (uintptr_t)&local;
    ck_assert_msg(at % _Alignof(max_align_t) == 0, "a max_align_t local at %#lx",
                  (unsigned long)at);
    return NULL;
}

/* The root's `arg`, a task function, run in the root and in a task of
 * each kind of execution. */
static void *every_kind_root(cw_ctx *ctx, void *arg)
{
    cw_task_fn fn;
    memcpy(&fn, arg, sizeof fn);
    fn(ctx, NULL);
    cw_handle *h[3] = {cw_spawn(cw_child(ctx, "shared"), fn, NULL),
                       cw_spawn(cw_dedicated(cw_child(ctx, "dedicated")), fn, NULL),
                       cw_spawn(cw_shared(cw_child(ctx, "blocking"), true), fn, NULL)};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    return NULL;
}

CWC_CASE(task_stack_follows_the_calling_convention, "tasks", "TASK-012 RUN-008", CWC_REPEATED)
{
    cw_task_fn fn = formats_doubles;
    cwc_run_ok(NULL, every_kind_root, &fn);
}

/* ---- The floating-point environment [TASK-015] ------------------------------------------- */

static long double third_outside; /* 1/3 in long double, computed before the run */

static long double third(void)
{
    volatile long double one = 1.0L, three = 3.0L;
    return one / three;
}

/* Rounding to nearest, no exception trapping (glibc reads the x87 control
 * word and MXCSR for it), long double at the precision it had outside (an
 * x87 unit left at 24 bits rounds 1/3 differently), and subnormal numbers
 * kept (MXCSR's denormals-are-zero and flush-to-zero bits clear). FE_DFL_ENV
 * also has no exception flag raised: the program leaves FE_INVALID clear
 * wherever it spawns (it clears what it raised below), so a task finds it
 * clear. Then each exception is raised in double arithmetic (SSE on x86-64,
 * where glibc's fegetexcept reads only the x87 unit): a trap would end the
 * process, masked they give their default results. */
static void *default_fp_environment(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    ck_assert_msg(!fetestexcept(FE_INVALID), "a task starts with FE_INVALID raised");
    ck_assert_int_eq(fegetround(), FE_TONEAREST);
#ifdef __GLIBC__
    ck_assert_msg(fegetexcept() == 0, "exceptions that trap: %#x", (unsigned)fegetexcept());
#endif
    ck_assert_msg(third() == third_outside, "1/3 in long double is not what it is outside");
    /* Subnormal numbers are numbers: none is read or made as zero. */
    volatile double smallest = DBL_MIN, four = 4.0;
    double quarter = smallest / four;
    ck_assert_msg(quarter != 0 && quarter * four == DBL_MIN, "subnormal numbers flushed to zero");
    volatile double zero = 0.0, one = 1.0, largest = DBL_MAX;
    double invalid = zero / zero, pole = one / zero, overflow = largest * four;
    ck_assert_msg(isnan(invalid) && isinf(pole) && isinf(overflow),
                  "masked exceptions do not give their default results");
    feclearexcept(FE_ALL_EXCEPT);
    return NULL;
}

CWC_CASE(task_floating_point_environment, "tasks", "TASK-015 RUN-008", CWC_REPEATED)
{
    third_outside = third();
    cw_task_fn fn = default_fp_environment;
    cwc_run_ok(NULL, every_kind_root, &fn);
}

CWC_CASE(spawn_dedicated, "tasks", "TASK-006 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, dedicated_root, NULL);
}

static cw_ctx *with_execution(cw_ctx *ctx, int execution)
{
    if (execution == CW_EXEC_DEDICATED)
        return cw_dedicated(ctx);
    return cw_shared(ctx, execution == CW_EXEC_SHARED_BLOCKING);
}

static void *blocking_root(cw_ctx *ctx, void *arg)
{
    int execution = (int)(intptr_t)arg;
    cw_handle *h =
        cw_spawn(with_execution(cw_child(ctx, "blocking"), execution), cwc_return_42, NULL);
    void *v = NULL;
    ck_assert_int_eq(cw_join(h, &v), CW_OK);
    ck_assert_ptr_eq(v, (void *)(intptr_t)42);
    cw_handle_release(h);
    return NULL;
}

CWC_CASE(spawn_blocking, "tasks", "TASK-006 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, blocking_root, (void *)(intptr_t)CW_EXEC_SHARED_BLOCKING);
    cwc_run_ok(NULL, blocking_root, (void *)(intptr_t)CW_EXEC_DEDICATED);
}

/* ---- abort ------------------------------------------------------------------- */

static void *abort_root(cw_ctx *ctx, void *arg)
{
    int execution = (int)(intptr_t)arg;
    cw_handle *h =
        cw_spawn(with_execution(cw_child(ctx, "spinner"), execution), cwc_spin_task, NULL);
    cw_abort(h);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    return NULL;
}

CWC_CASE(spawn_abort, "tasks", "TASK-002 TASK-006 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, abort_root, (void *)(intptr_t)CW_EXEC_SHARED);
    cwc_run_ok(NULL, abort_root, (void *)(intptr_t)CW_EXEC_SHARED_BLOCKING);
    cwc_run_ok(NULL, abort_root, (void *)(intptr_t)CW_EXEC_DEDICATED);
}

/* A task aborted while it runs on another thread, between suspension
 * points, then waits on a channel: it must end there, its cleanup run,
 * and leave the runtime as it found it (a select that gave up its locks
 * before the task unwound), so that the run goes on. */
struct running_abort {
    atomic_int started, go, cleaned, past;
    cw_chan *never; /* nothing is sent on it while the task waits */
};

static void running_abort_cleanup(void *arg)
{
    struct running_abort *r = arg;
    atomic_store(&r->cleaned, 1);
}

static void *running_abort_task(cw_ctx *ctx, void *arg)
{
    struct running_abort *r = arg;
    CW_CLEANUP_PUSH(ctx, running_abort_cleanup, r);
    atomic_store(&r->started, 1);
    while (!atomic_load(&r->go))
        ; /* no suspension point: the abort finds it running */
    int value;
    (void)cw_chan_recv(r->never, &value);
    atomic_store(&r->past, 1);
    CW_CLEANUP_POP(ctx, false);
    return NULL;
}

static void *running_abort_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct running_abort r;
    atomic_store(&r.started, 0);
    atomic_store(&r.go, 0);
    atomic_store(&r.cleaned, 0);
    atomic_store(&r.past, 0);
    r.never = cw_chan_new(ctx, sizeof(int), 1);
    cw_handle *h = cw_spawn(cw_child(ctx, "running"), running_abort_task, &r);
    while (!atomic_load(&r.started))
        cw_yield(ctx);
    cw_abort(h);
    atomic_store(&r.go, 1);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    ck_assert_int_eq(atomic_load(&r.cleaned), 1);
    ck_assert_int_eq(atomic_load(&r.past), 0);
    /* The run goes on: the channel, and a task spawned and joined. */
    int sent = 7, got = 0;
    ck_assert_int_eq(cw_chan_send(r.never, &sent), CW_OK);
    ck_assert_int_eq(cw_chan_recv(r.never, &got), CW_OK);
    ck_assert_int_eq(got, 7);
    void *v = NULL;
    cw_handle *after = cw_spawn(cw_child(ctx, "after"), cwc_return_42, NULL);
    ck_assert_int_eq(cw_join(after, &v), CW_OK);
    ck_assert_ptr_eq(v, (void *)(intptr_t)42);
    cw_handle_release(after);
    cw_chan_sender_drop(r.never);
    cw_chan_receiver_drop(r.never);
    return NULL;
}

CWC_CASE(abort_while_running_ends_at_its_next_wait, "tasks", "TASK-002", CW_CAP_PARALLEL)
{
    for (int round = 0; round < 20; round++)
        cwc_run_ok(NULL, running_abort_root, NULL);
}

static void *spawn_after_abort_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *child = cw_child(ctx, "child");
    cw_ctx *other = cw_child(ctx, "other");
    /* The root's own context is consumed here: the parent task now owns the
     * root node, and `child`, made from it earlier, is below that task. */
    cw_handle *parent = cw_spawn(ctx, cwc_pending_task, NULL);
    cw_abort(parent);
    cw_handle *late = cw_spawn(child, cwc_pending_task, NULL);
    ck_assert_int_eq(cw_join(late, NULL), CW_ERR_CLOSED);
    /* A context made below the aborted node after the abort starts aborted. */
    cw_handle *later = cw_spawn(cw_child(other, "grandchild"), cwc_pending_task, NULL);
    ck_assert_int_eq(cw_join(later, NULL), CW_ERR_CLOSED);
    cw_handle_release(later);
    cw_ctx_release(other);
    ck_assert_int_eq(cw_join(parent, NULL), CW_ERR_CLOSED);
    cw_handle_release(late);
    cw_handle_release(parent);
    return NULL;
}

CWC_CASE(spawn_after_abort, "tasks", "CTX-005 TASK-002 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, spawn_after_abort_root, NULL);
}

struct parent_state {
    cw_handle *child;
    cw_oneshot *initialized, *complete;
};

static void *parent_spawns_pending(cw_ctx *ctx, void *arg)
{
    struct parent_state *s = arg;
    s->child = cw_spawn(cw_child(ctx, "child"), cwc_pending_task, NULL);
    if (s->initialized)
        cwc_notify(s->initialized);
    if (s->complete)
        cwc_await(s->complete);
    else
        cwc_pending_task(ctx, NULL);
    return NULL;
}

static void *abort_on_parent_abort_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct parent_state s = {0};
    s.initialized = cw_oneshot_new(ctx, 1);
    cw_handle *parent = cw_spawn(cw_child(ctx, "parent"), parent_spawns_pending, &s);
    cwc_await(s.initialized);
    cw_abort(parent);
    ck_assert_int_eq(cw_join(parent, NULL), CW_ERR_CLOSED);
    ck_assert_int_eq(cw_join(s.child, NULL), CW_ERR_CLOSED);
    cw_handle_release(parent);
    cw_handle_release(s.child);
    return NULL;
}

CWC_CASE(spawn_abort_on_parent_abort, "tasks", "TASK-002 TASK-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, abort_on_parent_abort_root, NULL);
}

static void *abort_on_parent_completion_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct parent_state s = {0};
    s.initialized = cw_oneshot_new(ctx, 1);
    s.complete = cw_oneshot_new(ctx, 1);
    cw_handle *parent = cw_spawn(cw_child(ctx, "parent"), parent_spawns_pending, &s);
    cwc_notify(s.complete);
    ck_assert_int_eq(cw_join(parent, NULL), CW_OK);
    cwc_await(s.initialized);
    ck_assert_int_eq(cw_join(s.child, NULL), CW_ERR_CLOSED);
    cw_handle_release(parent);
    cw_handle_release(s.child);
    return NULL;
}

CWC_CASE(spawn_abort_on_parent_completion, "tasks", "TASK-004 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, abort_on_parent_completion_root, NULL);
}

/* ---- cascading abort through a 3 x 2 tree -------------------------------------- */

struct tree_state {
    cw_handle *handles[9];
    atomic_int nhandles; /* tasks on several threads register at once */
    cw_chan *initialized;
    cw_ctx *children[3];
    cw_ctx *grandchildren[3][2];
};

struct tree_child_arg {
    struct tree_state *s;
    int i;
};

static void tree_register(struct tree_state *s, cw_handle *h)
{
    s->handles[atomic_fetch_add(&s->nhandles, 1)] = h;
    char unit = 1;
    ck_assert_int_eq(cw_chan_send(s->initialized, &unit), CW_OK);
}

static void *tree_child(cw_ctx *ctx, void *arg)
{
    struct tree_child_arg *a = arg;
    for (int g = 0; g < 2; g++)
        tree_register(a->s, cw_spawn(a->s->grandchildren[a->i][g], cwc_pending_task, NULL));
    return cwc_pending_task(ctx, NULL);
}

static void *tree_top(cw_ctx *ctx, void *arg)
{
    struct tree_state *s = arg;
    static struct tree_child_arg args[3];
    for (int i = 0; i < 3; i++) {
        args[i] = (struct tree_child_arg){s, i};
        tree_register(s, cw_spawn(s->children[i], tree_child, &args[i]));
    }
    return cwc_pending_task(ctx, NULL);
}

static void *cascading_abort_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct tree_state s;
    memset(&s, 0, sizeof s);
    atomic_init(&s.nhandles, 0);
    static const char *names[3] = {"c0", "c1", "c2"};
    static const char *gnames[3][2] = {{"g0", "g1"}, {"g2", "g3"}, {"g4", "g5"}};
    for (int i = 0; i < 3; i++) {
        s.children[i] = cw_child(ctx, names[i]);
        for (int g = 0; g < 2; g++)
            s.grandchildren[i][g] = cw_child(s.children[i], gnames[i][g]);
    }
    s.initialized = cw_chan_new(ctx, 1, 9);
    cw_ctx *waiter = cw_child(ctx, "waiter");
    cw_handle *top = cw_spawn(ctx, tree_top, &s);
    for (int i = 0; i < 9; i++) {
        char unit;
        ck_assert_int_eq(cw_chan_recv(s.initialized, &unit), CW_OK);
    }
    ck_assert_int_eq(atomic_load(&s.nhandles), 9);
    cw_abort(top);
    ck_assert_int_eq(cw_join(top, NULL), CW_ERR_CLOSED);
    for (int i = 0; i < 9; i++) {
        ck_assert_int_eq(cw_join(s.handles[i], NULL), CW_ERR_CLOSED);
        cw_handle_release(s.handles[i]);
    }
    cw_handle_release(top);
    cw_ctx_release(waiter);
    return NULL;
}

CWC_CASE(spawn_cascading_abort, "tasks", "TASK-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, cascading_abort_root, NULL);
}

/* ---- siblings and chains ----------------------------------------------------------- */

struct sibling_state {
    cw_oneshot *child_started, *child_complete, *sibling_started, *sibling_complete;
    cw_oneshot *handles_ready, *parent_complete;
    cw_handle *child, *sibling;
};

static void *started_then_wait(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_oneshot **pair = arg;
    cwc_notify(pair[0]);
    cwc_await(pair[1]);
    return NULL;
}

static void *sibling_parent(cw_ctx *ctx, void *arg)
{
    struct sibling_state *s = arg;
    static cw_oneshot *child_pair[2], *sibling_pair[2];
    child_pair[0] = s->child_started;
    child_pair[1] = s->child_complete;
    sibling_pair[0] = s->sibling_started;
    sibling_pair[1] = s->sibling_complete;
    s->child = cw_spawn(cw_child(ctx, "child"), started_then_wait, child_pair);
    s->sibling = cw_spawn(cw_child(ctx, "sibling"), started_then_wait, sibling_pair);
    cwc_notify(s->handles_ready);
    cwc_await(s->parent_complete);
    return NULL;
}

static void *sibling_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct sibling_state s = {0};
    s.child_started = cw_oneshot_new(ctx, 1);
    s.child_complete = cw_oneshot_new(ctx, 1);
    s.sibling_started = cw_oneshot_new(ctx, 1);
    s.sibling_complete = cw_oneshot_new(ctx, 1);
    s.parent_complete = cw_oneshot_new(ctx, 1);
    s.handles_ready = cw_oneshot_new(ctx, 1);
    cw_handle *parent = cw_spawn(cw_child(ctx, "parent"), sibling_parent, &s);
    cwc_await(s.handles_ready);
    cwc_await(s.child_started);
    cwc_await(s.sibling_started);
    cwc_notify(s.sibling_complete);
    ck_assert_int_eq(cw_join(s.sibling, NULL), CW_OK);
    cwc_notify(s.child_complete);
    ck_assert_int_eq(cw_join(s.child, NULL), CW_OK);
    cwc_notify(s.parent_complete);
    ck_assert_int_eq(cw_join(parent, NULL), CW_OK);
    cw_handle_release(parent);
    cw_handle_release(s.child);
    cw_handle_release(s.sibling);
    return NULL;
}

CWC_CASE(child_survives_sibling_completion, "tasks", "TASK-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, sibling_root, NULL);
}

struct chain_state {
    cw_oneshot *started[3];
    cw_handle *child, *grandchild;
};

static void *chain_grandchild(cw_ctx *ctx, void *arg)
{
    struct chain_state *s = arg;
    cwc_notify(s->started[2]);
    return cwc_pending_task(ctx, NULL);
}

static void *chain_child(cw_ctx *ctx, void *arg)
{
    struct chain_state *s = arg;
    s->grandchild = cw_spawn(cw_child(ctx, "grandchild"), chain_grandchild, s);
    cwc_notify(s->started[1]);
    return cwc_pending_task(ctx, NULL);
}

static void *chain_parent(cw_ctx *ctx, void *arg)
{
    struct chain_state *s = arg;
    s->child = cw_spawn(cw_child(ctx, "child"), chain_child, s);
    cwc_notify(s->started[0]);
    return cwc_pending_task(ctx, NULL);
}

static void *clone_chain_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct chain_state s = {0};
    for (int i = 0; i < 3; i++)
        s.started[i] = cw_oneshot_new(ctx, 1);
    cw_handle *parent = cw_spawn(cw_child(ctx, "parent"), chain_parent, &s);
    for (int i = 0; i < 3; i++)
        cwc_await(s.started[i]);
    cw_abort(parent);
    ck_assert_int_ne(cw_join(parent, NULL), CW_OK);
    ck_assert_int_ne(cw_join(s.child, NULL), CW_OK);
    ck_assert_int_ne(cw_join(s.grandchild, NULL), CW_OK);
    cw_handle_release(parent);
    cw_handle_release(s.child);
    cw_handle_release(s.grandchild);
    return NULL;
}

CWC_CASE(spawn_clone_chain, "tasks", "TASK-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, clone_chain_root, NULL);
}

struct sparse_state {
    cw_oneshot *leaf_started, *leaf_spawned;
    cw_handle *leaf;
};

static void *sparse_leaf(cw_ctx *ctx, void *arg)
{
    struct sparse_state *s = arg;
    cwc_notify(s->leaf_started);
    return cwc_pending_task(ctx, NULL);
}

static void *sparse_parent(cw_ctx *ctx, void *arg)
{
    struct sparse_state *s = arg;
    cw_ctx *clone1 = cw_child(ctx, "clone1");
    cw_ctx *clone2 = cw_child(clone1, "clone2");
    cw_ctx *clone3 = cw_child(clone2, "clone3");
    s->leaf = cw_spawn(clone3, sparse_leaf, s);
    cwc_notify(s->leaf_spawned);
    cw_ctx_release(clone2);
    cw_ctx_release(clone1);
    return cwc_pending_task(ctx, NULL);
}

static void *sparse_chain_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct sparse_state s = {0};
    s.leaf_started = cw_oneshot_new(ctx, 1);
    s.leaf_spawned = cw_oneshot_new(ctx, 1);
    cw_handle *parent = cw_spawn(cw_child(ctx, "parent"), sparse_parent, &s);
    cwc_await(s.leaf_spawned);
    cwc_await(s.leaf_started);
    cw_abort(parent);
    ck_assert_int_ne(cw_join(parent, NULL), CW_OK);
    ck_assert_int_ne(cw_join(s.leaf, NULL), CW_OK);
    cw_handle_release(parent);
    cw_handle_release(s.leaf);
    return NULL;
}

CWC_CASE(spawn_sparse_clone_chain, "tasks", "TASK-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, sparse_chain_root, NULL);
}

/* ---- the root ends the run ------------------------------------------------------------- */

static void *root_finishes_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle_release(cw_spawn(ctx, cwc_spin_task, NULL));
    return (void *)(intptr_t)7;
}

CWC_CASE(root_finishes, "runner", "RUN-001 RUN-003 RUN-008", CWC_REPEATED)
{
    ck_assert_ptr_eq(cwc_run_ok(NULL, root_finishes_root, NULL), (void *)(intptr_t)7);
}

static void *error_future_root(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

CWC_CASE(error_future, "runner", "RUN-001 RUN-008", CWC_REPEATED)
{
    static const char message[] = "An error occurred";
    ck_assert_ptr_eq(cwc_run_ok(NULL, error_future_root, (void *)message), (void *)message);
}

static void *futures_pool_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *pool[2] = {cw_handle_ready(ctx, CW_OK, (void *)(intptr_t)5),
                          cw_spawn(cw_child(ctx, "slow"), cwc_pending_task, NULL)};
    void *v0 = NULL, *v1 = NULL;
    cw_wait waits[2] = {cw_wait_join(pool[1], &v1), cw_wait_join(pool[0], &v0)};
    ck_assert_int_eq(cw_select(waits, 2), 1);
    ck_assert_int_eq(waits[1].result, CW_OK);
    ck_assert_ptr_eq(v0, (void *)(intptr_t)5);
    /* Joining again gives the same result. */
    ck_assert_int_eq(cw_join(pool[0], &v0), CW_OK);
    ck_assert_ptr_eq(v0, (void *)(intptr_t)5);
    cw_abort(pool[0]);
    ck_assert_int_eq(cw_join(pool[0], NULL), CW_ERR_ABORTED);
    cw_handle_release(pool[0]);
    cw_handle_release(pool[1]);
    return NULL;
}

CWC_CASE(handle_can_use_futures_pool, "tasks", "TASK-007 TASK-008 SEL-001 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, futures_pool_root, NULL);
}

/* A released handle detaches the task: it runs on to completion. */
static void *detached(cw_ctx *ctx, void *arg)
{
    cw_sleep(ctx, 5 * CW_MSEC);
    cwc_notify(arg);
    return NULL;
}

static void *detach_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_oneshot *done = cw_oneshot_new(ctx, 1);
    cw_handle_release(cw_spawn(cw_child(ctx, "detached"), detached, done));
    cwc_await(done);
    return NULL;
}

CWC_CASE(handle_release_detaches, "tasks", "TASK-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, detach_root, NULL);
}

/* ---- wakers ------------------------------------------------------------------------- */

static void *capture_waker(cw_ctx *ctx, void *arg)
{
    cw_waker *w = cw_waker_current(ctx);
    ck_assert_int_eq(cw_oneshot_send(arg, &w), CW_OK);
    return cwc_pending_task(ctx, NULL);
}

static void *late_waker_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_oneshot *tx = cw_oneshot_new(ctx, sizeof(cw_waker *));
    cw_handle_release(cw_spawn(cw_child(ctx, "capture_waker"), capture_waker, tx));
    cw_yield(ctx);
    cw_waker *w = NULL;
    ck_assert_int_eq(cw_oneshot_recv(tx, &w), CW_OK);
    return w;
}

CWC_CASE(late_waker, "tasks", "TASK-010 RUN-008", CWC_REPEATED)
{
    cw_waker *w = cwc_run_ok(NULL, late_waker_root, NULL);
    ck_assert_ptr_nonnull(w);
    cw_waker_wake(w); /* the runtime is gone: nothing happens */
    cw_waker_release(w);
}

struct park_state {
    _Atomic(cw_waker *) waker;
    atomic_int woken;
};

static void *parker(cw_ctx *ctx, void *arg)
{
    struct park_state *s = arg;
    s->waker = cw_waker_current(ctx);
    while (!s->woken)
        cw_park(ctx);
    cw_waker_release(s->waker);
    return NULL;
}

static void *park_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct park_state s = {NULL, 0};
    cw_handle *h = cw_spawn(cw_child(ctx, "parker"), parker, &s);
    while (!s.waker)
        cw_yield(ctx);
    cw_sleep(ctx, CW_MSEC);
    s.woken = 1;
    cw_waker_wake(s.waker);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    return NULL;
}

CWC_CASE(park_and_wake, "tasks", "TASK-009 TASK-010 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, park_root, NULL);
}

/* A task woken and aborted before it runs again ends at the suspension
 * point it was parked in, even though its receive could now complete. */
struct parked {
    cw_chan *c;
    atomic_int parked, ran_past, cleaned;
};

static void parked_cleanup(void *arg)
{
    atomic_store(&((struct parked *)arg)->cleaned, 1);
}

static void *parked_receiver(cw_ctx *ctx, void *arg)
{
    struct parked *p = arg;
    CW_CLEANUP_PUSH(ctx, parked_cleanup, p);
    atomic_store(&p->parked, 1);
    int v;
    if (cw_chan_recv(p->c, &v) == CW_OK)
        atomic_store(&p->ran_past, 1);
    CW_CLEANUP_POP(ctx, false);
    return NULL;
}

static void *abort_while_parked_root(cw_ctx *ctx, void *arg)
{
    struct parked *p = arg;
    p->c = cw_chan_new(ctx, sizeof(int), 0);
    cw_handle *h = cw_spawn(cw_child(ctx, "receiver"), parked_receiver, p);
    while (!atomic_load(&p->parked))
        cw_yield(ctx);
    cw_yield(ctx);
    int one = 1;
    ck_assert_int_eq(cw_chan_send(p->c, &one), CW_OK); /* wakes it... */
    cw_abort(h);                                       /* ...but it must not run on */
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    return NULL;
}

CWC_CASE(abort_while_parked_ends_at_the_suspension_point, "tasks", "TASK-002 PAN-004 RUN-008",
         CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 1; /* native: nothing runs between the send and the abort */
    struct parked p;
    memset(&p, 0, sizeof p);
    cwc_run_ok(&cfg, abort_while_parked_root, &p);
    ck_assert_int_eq(atomic_load(&p.ran_past), 0);
    ck_assert_int_eq(atomic_load(&p.cleaned), 1);
}

/* ---- what is a suspension point ------------------------------------------------ */

/* A select that can complete at once does not suspend, so it is not where an
 * aborted task ends, and it still works while the task unwinds; a wait that
 * would have to suspend is where both stop [TASK-002, PAN-005]. */
struct completing {
    cw_ctx *ctx;
    cw_oneshot *self;   /* the task's own handle, from the root */
    cw_chan *unbounded; /* a send never waits */
    cw_chan *quiet;     /* empty, with a sender kept: a receive would wait */
    atomic_int steps;   /* how far the aborted task went */
    int cleanup_send, cleanup_sleep0, cleanup_recv;
};

static void completing_cleanup(void *arg)
{
    struct completing *s = arg;
    int v = 2;
    s->cleanup_send = cw_chan_send(s->unbounded, &v);
    s->cleanup_sleep0 = cw_sleep(s->ctx, 0);
    s->cleanup_recv = cw_chan_recv(s->quiet, &v);
}

static void *completing_task(cw_ctx *ctx, void *arg)
{
    struct completing *s = arg;
    cw_handle *self;
    s->ctx = ctx;
    ck_assert_int_eq(cw_oneshot_recv(s->self, &self), CW_OK);
    CW_CLEANUP_PUSH(ctx, completing_cleanup, s);
    cw_abort(self);
    int v = 1;
    ck_assert_int_eq(cw_chan_send(s->unbounded, &v), CW_OK);
    atomic_store(&s->steps, 1);
    ck_assert_int_eq(cw_sleep(ctx, 0), CW_OK); /* its deadline has passed */
    atomic_store(&s->steps, 2);
    cw_yield(ctx); /* always suspends: the task ends here */
    atomic_store(&s->steps, 3);
    CW_CLEANUP_POP(ctx, false);
    return NULL;
}

static void *completing_root(cw_ctx *ctx, void *arg)
{
    struct completing *s = arg;
    s->self = cw_oneshot_new(ctx, sizeof(cw_handle *));
    s->unbounded = cw_chan_new(ctx, sizeof(int), 0);
    s->quiet = cw_chan_new(ctx, sizeof(int), 0);
    cw_handle *h = cw_spawn(cw_child(ctx, "aborted"), completing_task, s);
    ck_assert_int_eq(cw_oneshot_send(s->self, &h), CW_OK);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    int v = 0;
    ck_assert_int_eq(cw_chan_try_recv(s->unbounded, &v), CW_OK);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(cw_chan_try_recv(s->unbounded, &v), CW_OK);
    ck_assert_int_eq(v, 2); /* sent by the cleanup handler */
    return NULL;
}

CWC_CASE(completing_calls_are_not_suspension_points, "tasks", "TASK-002 PAN-005 RUN-008",
         CWC_REPEATED)
{
    struct completing s;
    memset(&s, 0, sizeof s);
    cwc_run_ok(NULL, completing_root, &s);
    ck_assert_int_eq(atomic_load(&s.steps), 2);
    ck_assert_int_eq(s.cleanup_send, CW_OK);
    ck_assert_int_eq(s.cleanup_sleep0, CW_OK);
    ck_assert_int_eq(s.cleanup_recv, CW_ERR_CLOSED);
}

/* stack_guard = false only saves the guard pages (02-runner.md): tasks still
 * get their stacks, run and return, ended ones' stacks reused or not, and
 * a deep frame works as with a guard [TASK-001, TASK-011]. */
static void *unguarded_task(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    volatile char deep[16 * 1024];
    memset((char *)deep, (int)(intptr_t)arg, sizeof deep);
    return (void *)(intptr_t)(deep[sizeof deep - 1] + 1);
}

static void *unguarded_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (intptr_t i = 0; i < 40; i++) {
        cw_handle *h = cw_spawn(cw_child(ctx, "unguarded"), unguarded_task, (void *)i);
        void *v = NULL;
        ck_assert_int_eq(cw_join(h, &v), CW_OK);
        ck_assert_int_eq((intptr_t)v, i + 1);
        cw_handle_release(h);
    }
    return NULL;
}

CWC_CASE(tasks_run_without_guard_pages, "tasks", "TASK-001 TASK-011 RUN-008", CWC_REPEATED)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.stack_guard = false;
    cwc_run_ok(&cfg, unguarded_root, NULL);
}

/* Aborting a task that already ended does nothing (TASK-002): its joins
 * still give its own result and value, whether it was joined before the
 * abort or not (TASK-008). */
static void *mark_and_return_42(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    atomic_store((atomic_int *)arg, 1); /* no suspension after this: it ends */
    return (void *)(intptr_t)42;
}

static void expect_42(cw_handle *h)
{
    void *v = NULL;
    ck_assert_int_eq(cw_join(h, &v), CW_OK);
    ck_assert_int_eq((intptr_t)v, 42);
}

static void *abort_after_end_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    atomic_int ended = 0;
    cw_handle *joined = cw_spawn(cw_child(ctx, "joined"), mark_and_return_42, &ended);
    expect_42(joined);
    cw_abort(joined);
    expect_42(joined);
    cw_handle_release(joined);

    atomic_store(&ended, 0);
    cw_handle *unjoined = cw_spawn(cw_child(ctx, "unjoined"), mark_and_return_42, &ended);
    while (!atomic_load(&ended))
        cw_sleep(ctx, CW_MSEC);
    cw_sleep(ctx, CW_MSEC); /* past its return */
    cw_abort(unjoined);
    expect_42(unjoined);
    cw_handle_release(unjoined);
    return NULL;
}

CWC_CASE(abort_after_end_changes_nothing, "tasks", "TASK-002 TASK-008 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, abort_after_end_root, NULL);
}

/* An abort reaches the aborted task's subtree only (TASK-005): its
 * sibling, spawned from a child of the same context, and that sibling's
 * own child go on and end as they would have. */
struct siblings {
    cw_oneshot *go_sibling, *go_nephew;
    atomic_int nephew_started;
};

static void *nephew(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct siblings *s = arg;
    atomic_store(&s->nephew_started, 1);
    cwc_await(s->go_nephew);
    return (void *)(intptr_t)7;
}

static void *sibling(cw_ctx *ctx, void *arg)
{
    struct siblings *s = arg;
    cw_handle *n = cw_spawn(cw_child(ctx, "nephew"), nephew, s);
    cwc_await(s->go_sibling);
    void *v = NULL;
    ck_assert_int_eq(cw_join(n, &v), CW_OK);
    ck_assert_int_eq((intptr_t)v, 7);
    cw_handle_release(n);
    return (void *)(intptr_t)42;
}

static void *siblings_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct siblings s = {cw_oneshot_new(ctx, 1), cw_oneshot_new(ctx, 1), 0};
    cw_ctx *parent = cw_child(ctx, "parent");
    cw_handle *aborted = cw_spawn(cw_child(parent, "aborted"), cwc_pending_task, NULL);
    cw_handle *kept = cw_spawn(cw_child(parent, "kept"), sibling, &s);
    while (!atomic_load(&s.nephew_started))
        cw_sleep(ctx, CW_MSEC);
    cw_abort(aborted);
    ck_assert_int_eq(cw_join(aborted, NULL), CW_ERR_CLOSED);
    cwc_notify(s.go_nephew);
    cwc_notify(s.go_sibling);
    expect_42(kept);
    cw_handle_release(aborted);
    cw_handle_release(kept);
    cw_ctx_release(parent);
    return NULL;
}

CWC_CASE(abort_leaves_siblings_and_their_children, "tasks", "TASK-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, siblings_root, NULL);
}
