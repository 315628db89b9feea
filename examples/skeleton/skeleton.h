/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * skeleton.h - the types shared by the files of the skeleton backend.
 *
 * The skeleton implements the core of spec/ (runner, contexts, tasks,
 * panics, clock, select, channels, stop) and nothing else. It is written to
 * be read: every task is a ucontext coroutine with a stack of its own, one
 * scheduler loop on the thread that called cw_start switches between them,
 * and a blocked task is simply "not in the ready queue" until something it
 * waits on changes and puts it back. See README.md for the tour.
 */
#ifndef SKELETON_H
#define SKELETON_H

#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

#include "cw/cw.h"

typedef struct sk_rt sk_rt;
typedef struct sk_task sk_task;
typedef struct sk_node sk_node;
typedef struct sk_cell sk_cell;

/* ---- Objects (object.c) ----------------------------------------------------
 * Every object a run hands out starts with an sk_obj: first the cw_object the
 * inline wrappers of the headers dispatch through [ABI-002], then its place
 * in the run's list of live objects, so that the end of the run frees what
 * the program left behind [RUN-003]. */
typedef struct sk_obj {
    cw_object base;
    sk_rt *rt;
    struct sk_obj *prev, *next;
    void (*destroy)(struct sk_obj *o); /* unlinks and frees the object */
} sk_obj;

void sk_obj_init(sk_obj *o, sk_rt *rt, void (*destroy)(sk_obj *o));
void sk_obj_unlink(sk_obj *o);
void sk_obj_destroy_all(sk_rt *rt);

/* ---- Waiter lists (waitlist.c) ---------------------------------------------
 * A task blocked in cw_select has each of its waits linked on the list of
 * the object it waits for (a channel, a handle, the run's sleepers...). The
 * links live in the cw_wait itself (link[]), which sits in the blocked
 * task's frame, so arming a wait never allocates. Whoever changes an object
 * wakes its whole list; each woken task tries its waits again. */
typedef struct sk_waitlist {
    cw_wait *head;
} sk_waitlist;

void sk_waitlist_add(sk_waitlist *l, cw_wait *w, sk_task *t);
void sk_waitlist_remove(cw_wait *w);
void sk_waitlist_wake(sk_waitlist *l);
sk_task *sk_wait_task(const cw_wait *w);

/* How one kind of wait is tried and where it waits (select.c). */
typedef struct sk_wait_ops {
    const char *name;
    /* Complete the operation now if it can: set w->result and return true.
     * Returning false must leave everything as it was [SEL-002], except
     * for the stop, which a try makes (SIG-006). */
    bool (*try_now)(cw_wait *w);
    /* The list a blocked task waits on, or NULL for a wait that nothing
     * completes (cw_wait_pending, a sleep until CW_TIME_MAX). */
    sk_waitlist *(*queue)(cw_wait *w);
} sk_wait_ops;

void sk_wait_fill(cw_wait *w, const sk_wait_ops *ops, sk_obj *object, void *out, uint64_t arg);
int sk_select(cw_wait *waits, size_t n, bool block);
void sk_wait_ready(cw_wait *w, cw_ctx *ctx, int result);
void sk_wait_pending(cw_wait *w, cw_ctx *ctx);

/* ---- Supervision tree (tree.c) ---------------------------------------------
 * A node is a place in the tree (spec/03-context.md). It is counted: one
 * reference per context on it, per child node, per task registered on it;
 * the last one frees it. */
struct sk_node {
    sk_node *parent, *first_child, *prev_sibling, *next_sibling;
    sk_task *tasks; /* tasks spawned from a context of this node */
    size_t refs;
    bool aborted;
};

sk_node *sk_node_new(sk_node *parent);
void sk_node_ref(sk_node *n);
void sk_node_unref(sk_node *n);
void sk_node_abort(sk_node *n);
void sk_node_register(sk_node *n, sk_task *t);
void sk_node_unregister(sk_task *t);

/* ---- Contexts (context.c) ------------------------------------------------- */
typedef struct sk_attr {
    char *key, *value;
} sk_attr;

typedef struct sk_ctx {
    sk_obj obj;
    sk_node *node;  /* one reference, given back when the context ends */
    sk_task *task;  /* the task whose own context this is, else NULL */
    char *label;    /* the full label path, "" for the root */
    sk_attr *attrs; /* sorted by key */
    size_t nattrs;
    int execution; /* enum cw_execution: recorded, every mode runs alike */
    bool spent;    /* memory ran out making it: its spawns resolve CW_ERR_NOMEM */
} sk_ctx;

sk_ctx *sk_ctx_new(sk_rt *rt, sk_node *node, const char *label, const sk_ctx *inherit);
void sk_ctx_end(sk_ctx *c);
cw_ctx *sk_child(cw_ctx *ctx, const char *label);
void sk_with_attribute(cw_ctx *ctx, const char *key, const char *value);
const char *sk_label(const cw_ctx *ctx);
void sk_set_execution(cw_ctx *ctx, int execution);
void sk_ctx_release(cw_ctx *ctx);

/* ---- Tasks (task.c, handle.c) --------------------------------------------- */
typedef struct sk_handle sk_handle;

struct sk_task {
    sk_rt *rt;
    cw_task_fn fn;
    void *arg;
    sk_ctx *ctx;                    /* its own context, until consumed or the task ends */
    sk_node *owner;                 /* the spawning context's node: aborted when this ends */
    sk_task *node_prev, *node_next; /* on owner->tasks */
    sk_task *prev, *next;           /* the run's live tasks, in spawn order */
    sk_task *ready_next;            /* the ready queue */
    sk_handle *handle;              /* NULL once released */
    sk_cell *cell;                  /* what its wakers are, made with the task */
    cw_cleanup *cleanups;           /* newest first */
    bool queued, blocked, started, done;
    bool aborting;     /* asked to end at its next suspension point */
    bool unwinding;    /* running its cleanup handlers on the way out */
    bool wake_pending; /* a waker fired since the last cw_park */
    int end_result;
    void *end_value;
    ucontext_t uc;
    jmp_buf unwind; /* set by the task's first frame; longjmp'd to on the way out */
    void *stack;
    size_t stack_len;
    void *fiber;       /* ThreadSanitizer's name for this stack */
    unsigned stack_id; /* valgrind's */
};

cw_handle *sk_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg);
bool sk_task_start(sk_task *t);
void sk_task_abort(sk_task *t);
void sk_task_finish(sk_task *t, int result, void *value);
void sk_task_free(sk_task *t);
bool sk_root_task(sk_rt *rt, cw_task_fn fn, void *arg);
_Noreturn void sk_unwind(sk_task *t, int result);
void sk_check_abort(sk_task *t);

struct sk_handle {
    sk_obj obj;
    sk_task *task; /* the running task, NULL once it ended or for a ready-made one */
    bool done, ready_made;
    int result;
    void *value;
    sk_waitlist joiners;
};

sk_handle *sk_handle_new(sk_rt *rt);
void sk_handle_resolve(sk_handle *h, int result, void *value);
cw_handle *sk_handle_ready(cw_ctx *ctx, int result, void *value);
void sk_abort(cw_handle *h);
void sk_handle_release(cw_handle *h);
void sk_wait_join(cw_wait *w, cw_handle *h, void **out);

/* ---- Stacks (stack.c) ------------------------------------------------------ */
bool sk_stack_alloc(sk_task *t, size_t size, bool guard);
void sk_stack_free(sk_task *t);

/* ---- Switching stacks (switch.c) ----------------------------------------- */
void sk_fiber_init(sk_rt *rt);
void sk_fiber_new(sk_task *t);
void sk_fiber_free(sk_task *t);
void sk_switch_to_task(sk_rt *rt, sk_task *t);
void sk_switch_to_sched(sk_task *t);
void sk_task_arrived(sk_task *t);
_Noreturn void sk_exit_to_sched(sk_task *t);

/* ---- Scheduler (sched.c) ---------------------------------------------------- */
void sk_ready(sk_task *t);
void sk_wake(sk_task *t);
void sk_block(sk_task *t);
void sk_sched_loop(sk_rt *rt);
void sk_end_tasks(sk_rt *rt);
sk_task *sk_current(void);
sk_task *sk_current_of(sk_rt *rt, const char *call);
void sk_set_current(sk_task *t);

/* ---- Wakers, park, yield (waker.c) ------------------------------------------
 * A cell is what a task's wakers point at. It is shared, counted and locked
 * because wakers may be woken from any thread and outlive their task and
 * their run [TASK-010]. */
struct sk_cell {
    cw_object base; /* a waker is its task's cell, one reference more */
    pthread_mutex_t lock;
    int refs;            /* the task's one, and one per waker (atomic) */
    sk_rt *rt;           /* NULL once the task ended: waking does nothing */
    sk_task *task;       /* touched on the run's thread only */
    sk_cell *next_woken; /* the run's queue of woken cells, under rt->lock */
    bool queued;
};

sk_cell *sk_cell_new(sk_task *t);
cw_waker *sk_waker_current(cw_ctx *ctx);
void sk_waker_wake(cw_waker *w);
void sk_waker_release(cw_waker *w);
void sk_park(cw_ctx *ctx);
void sk_yield(cw_ctx *ctx);
void sk_cell_detach(sk_cell *c);
void sk_cell_unref(sk_cell *c);
void sk_take_wakes(sk_rt *rt);

/* ---- Panics and cleanup (panic.c) ------------------------------------------- */
_Noreturn void sk_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sk_vpanic(cw_ctx *ctx, const char *fmt, va_list ap);
_Noreturn void sk_panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sk_cleanup_push(cw_ctx *ctx, cw_cleanup *node);
void sk_cleanup_pop(cw_ctx *ctx, cw_cleanup *node, bool execute);
void sk_run_cleanups(sk_task *t);

/* ---- Clock (clock.c) ------------------------------------------------------- */
cw_time sk_now(const sk_rt *rt);
cw_time sk_current_time(cw_ctx *ctx);
void sk_wait_sleep_until(cw_wait *w, cw_ctx *ctx, cw_time deadline);
void sk_expire_sleepers(sk_rt *rt, cw_time now);
cw_time sk_next_alarm(const sk_rt *rt);

/* ---- Channels and oneshots (channel.c, oneshot.c) ---------------------------- */
cw_chan *sk_chan_new(cw_ctx *ctx, size_t elem_size, size_t capacity);
void sk_chan_sender_add(cw_chan *c);
void sk_chan_sender_drop(cw_chan *c);
void sk_chan_receiver_drop(cw_chan *c);
void sk_wait_send(cw_wait *w, cw_chan *c, const void *elem);
void sk_wait_recv(cw_wait *w, cw_chan *c, void *elem);
cw_oneshot *sk_oneshot_new(cw_ctx *ctx, size_t elem_size);
int sk_oneshot_send(cw_oneshot *o, const void *elem);
void sk_oneshot_sender_drop(cw_oneshot *o);
void sk_oneshot_receiver_drop(cw_oneshot *o);
void sk_wait_oneshot(cw_wait *w, cw_oneshot *o, void *elem);

/* ---- Stop and stopped (signal.c) --------------------------------------------- */
cw_signal *sk_stopped(cw_ctx *ctx);
cw_signal *sk_signal_spent_new(sk_rt *rt);
void sk_signal_release(cw_signal *s);
void sk_wait_signal(cw_wait *w, cw_signal *s, int32_t *value);
void sk_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value);

/* ---- Random (random.c) ------------------------------------------------------ */
void sk_random(cw_ctx *ctx, void *buf, size_t len);

/* ---- The run (runner.c) -----------------------------------------------------
 * One per cw_start. Everything in it is touched by the run's thread only,
 * except the queue of woken cells, which wakers on other threads fill under
 * `lock` (and signal `cond`, which the idle scheduler waits on). */
struct sk_rt {
    cw_config cfg;
    ucontext_t sched;         /* the scheduler loop, on cw_start's own stack */
    const void *sched_bottom; /* that stack, for AddressSanitizer (switch.c) */
    size_t sched_size;
    void *sched_fiber; /* and its name for ThreadSanitizer */
    sk_task *current;  /* the task running now, NULL in the scheduler */
    sk_task *root;
    sk_task *ready_head, *ready_tail;
    sk_task *tasks_head, *tasks_tail; /* live tasks in spawn order */
    sk_ctx *spent;                    /* what cw_child gives without memory [CTX-006] */
    cw_signal *spent_signal;          /* what cw_stopped gives without memory [SIG-007] */
    sk_obj objects;                   /* sentinel of the live objects */
    sk_waitlist sleepers;             /* armed sleeps; the deadline is in w->arg */
    /* Stop [SIG-001..006]. */
    bool stopping;
    int32_t stop_value;
    size_t signals_held; /* signals taken before the stop and not yet released */
    sk_waitlist signal_waiters, stop_waiters;
    /* How the run ends; the first reason wins [PAN-003]. */
    bool ending;
    int status;
    void *value;
    char message[512];
    /* The clock: wall time at the start plus monotonic time since [CLK-005]. */
    cw_time t0_real;
    uint64_t t0_mono;
    cw_time end_at; /* start + timeout, CW_TIME_MAX for none [RUN-005] */
    /* Wakes from any thread. */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    sk_cell *woken;
};

int sk_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out);
void sk_rt_end(sk_rt *rt, int status, void *value, const char *message);
uint64_t sk_mono_ns(void);
uint64_t sk_real_ns(void);

/* The one table (table.c). */
extern const cw_backend sk_backend;

/* Casts between the public opaque types and ours, in one place. */
#define SK_CTX(c) ((sk_ctx *)(void *)(c))
#define SK_RT_OF(p) (((sk_obj *)(void *)(p))->rt)

#endif
