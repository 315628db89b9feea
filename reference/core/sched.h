/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * sched.h - what a backend may use of the core: the scheduler interface it
 * implements (cw_sched_ops), the runtime and task records its scheduler
 * works on, the alarm heap, and the core's entries of the cw_backend table.
 *
 * Only a backend (deterministic/, native/) includes this header; a
 * subsystem sees the core through ext.h alone. The core's own records
 * (contexts, nodes, handles, channels) stay in core/internal.h.
 *
 * Threading: see core/internal.h. A backend's scheduler takes its own
 * locks after rt->lock, never before.
 */
#ifndef CW_CORE_SCHED_H
#define CW_CORE_SCHED_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "core/coro.h"
#include "core/ext.h"

typedef struct cw_node cw_node;

/* ---- Scheduler interface -------------------------------------------------- */

typedef struct cw_sched_ops {
    /* Make `t` runnable; a no-op for a finished task. */
    void (*wake)(cw_task *t);
    /* The calling task `t` gives up its thread until woken (it may return early). */
    void (*park)(cw_task *t);
    /* The calling task `t` lets every other ready task run first. */
    void (*yield)(cw_task *t);
    /* A new task was created: schedule its first run. CW_ERR_NOMEM, with
     * nothing scheduled, when the scheduler has no memory for it. */
    int (*spawned)(cw_task *t);
    /* The calling task `t` ends: switch away for the last time. */
    void (*exit)(cw_task *t); /* never returns */
    /* The running task, or NULL outside the runtime's tasks. */
    cw_task *(*current)(cw_rt *rt);
    cw_time (*now)(cw_rt *rt);
    /* Wake `t` at `deadline` (through the wait `w`, which stays put until
     * disarmed). With `t` NULL the alarm calls the cw_alarm_ops its wait's
     * ops point to instead (cw_alarm_fire): only a scheduler that drives
     * such alarms may be given one (the deterministic one). The core
     * arms and disarms a sleep's alarm holding none of its locks, so a
     * scheduler whose tasks share threads guards its alarms itself. */
    bool (*alarm_arm)(cw_rt *rt, cw_wait *w, cw_task *t); /* false: no memory */
    /* A place for an alarm with no task, kept until given back (false: no
     * memory): so that arming it later cannot fail. */
    bool (*alarm_reserve)(cw_rt *rt);
    void (*alarm_unreserve)(cw_rt *rt);
    void (*alarm_disarm)(cw_rt *rt, cw_wait *w);
    /* Record an event in the audit digest (NULL without CW_CAP_AUDIT). */
    void (*audit)(cw_rt *rt, const char *label, const cw_field *fields, size_t n);
    void (*random)(cw_rt *rt, void *buf, size_t len);
    /* The next output of the run's seeded PRNG, recording no audit event:
     * for draws the spec places in the one random stream besides cw_random
     * (the network's delays). NULL for a scheduler without a seeded PRNG. */
    uint64_t (*draw)(cw_rt *rt);
} cw_sched_ops;

/* One subsystem's slot in a run (ext.h). */
typedef struct cw_ext_slot {
    void *state;
    void (*close)(cw_rt *rt, void *state);
    const void *driver;
} cw_ext_slot;

/* ---- Runtime ---------------------------------------------------------------- */

struct cw_rt {
    pthread_mutex_t lock;                /* see "Threading" in core/internal.h */
    bool threaded;                       /* tasks run on several threads: the locks are needed */
    pthread_mutex_t stripes[CW_STRIPES]; /* guards of objects used apart (guard.c) */
    unsigned next_stripe;                /* the next object's, in turn; under `lock` */
    const cw_backend *backend;
    const cw_sched_ops *sched;
    cw_config cfg;
    cw_task *root;
    uint64_t next_task_id;
    size_t ntasks;      /* task records not yet freed */
    atomic_bool ending; /* teardown: blocking calls fail at once, nothing new runs */

    /* What a spawn or cw_child gives when memory runs out (made at the
     * start, so that giving them needs none): a handle that resolves
     * CW_ERR_NOMEM and a context that spawns nothing [TASK-011, CTX-006]. */
    cw_handle *spent_handle;
    cw_ctx *spent_ctx;
    cw_signal *spent_signal; /* and a signal that holds nothing [SIG-007] */

    /* Live objects of each kind: whatever is left at the end is freed. */
    cw_list tasks, contexts, handles, chans, oneshots, signals, nodes;

    cw_stack_cache stacks; /* of ended tasks, for the next ones (stack.c) */

    /* The first panic that ends the run. */
    bool panicked;
    char panic_message[512];

    /* The stop signal (signal.c). */
    bool stop_called;
    int32_t stop_value;
    size_t stop_outstanding; /* signals handed out before the stop, not yet released */
    cw_list stop_waiters;    /* cw_wait_stop waits */
    cw_list signal_waiters;  /* cw_wait_signal waits */

    cw_bufpool *pools[2]; /* the network and storage buffer pools (buffers/entries.c) */

    /* The subsystems' state of this run and their drivers (ext.h). */
    cw_ext_slot ext[CW_EXT_COUNT];
    const cw_task_observer *observer; /* NULL: nobody observes tasks */
};

/* CW_OK, or CW_ERR_NOMEM with nothing left to free. */
int cw_rt_init(cw_rt *rt, const cw_backend *backend, const cw_sched_ops *sched,
               const cw_config *cfg);
/* Free every object still alive and the lock. Call after every task has ended. */
void cw_rt_free_objects(cw_rt *rt);
/* Validate a caller's config into `cfg`; CW_OK or CW_ERR_INVALID with `why`. */
int cw_config_resolve(const cw_config *in, cw_config *cfg, char *why, size_t whylen);
/* What every cw_start does first: clear `out` and resolve the
 * configuration. CW_OK, or the failure in out->status and out->message. */
int cw_run_begin(const cw_config *cfg, cw_config *resolved, cw_run_result *out);

/* ---- Tasks (task.c) --------------------------------------------------------------- */

enum cw_task_state { CW_TASK_NEW, CW_TASK_RUNNING, CW_TASK_DONE };

struct cw_task {
    cw_rt *rt;
    uint64_t id;
    char *label;   /* the spawning context's label */
    int execution; /* enum cw_execution */
    cw_task_fn fn;
    void *arg;
    cw_ctx *ctx;       /* the task's own context; NULL once a spawn consumed it */
    cw_node *owner;    /* the node this task supervises (one reference) */
    cw_handle *handle; /* where the result goes (one reference) */
    cw_waker *waker;   /* how to wake it (one reference) */
    cw_coro coro;
    cw_stack stack;
    enum cw_task_state state;
    /* Unwind at the next suspension point. Set under rt->lock, and read
     * also by a select that holds only its waits' stripes. */
    atomic_bool aborted;
    bool unwinding; /* cleanup handlers are running: nothing may suspend */
    bool panicked;
    bool queued;   /* scheduler: on the ready queue */
    bool notified; /* scheduler: woken since it last parked */
    int exit_result;
    void *exit_value;
    cw_cleanup *cleanups;   /* newest first */
    cw_lockset held;        /* the locks of the select it is in (guard.c) */
    uint64_t lock_releases; /* by that select's tries (cw_rt_unlock_in_try) */
    cw_list link;           /* rt->tasks */
    void *sched_data;       /* the scheduler's per-task state */
    void *observed;         /* the task observer's word (ext.h) */
};

/* Before a task's first run: its stack and coroutine. CW_OK or CW_ERR_NOMEM. */
int cw_task_prepare(cw_task *t);
/* The first code a task's coroutine runs. */
void cw_task_main(void *task);
/* After a task's last switch (or when it is dropped unstarted): record its
 * result, abort what it supervised, release what it held. */
void cw_task_finish(cw_task *t);
void cw_task_finish_locked(cw_task *t); /* the same, with rt->lock held */
/* Request an abort: it takes effect at the task's next suspension point. */
void cw_task_abort(cw_task *t);
/* Run the cleanup handlers and end the task with `result` (never returns). */
_Noreturn void cw_task_unwind(cw_task *t, int result);
void cw_task_free(cw_task *t);
void cw_task_free_locked(cw_task *t);
/* The root task: runs fn on the root context; not supervised by any node.
 * NULL when memory is exhausted, with nothing left of it. */
cw_task *cw_task_new_root(cw_rt *rt, cw_task_fn fn, void *arg);

/* ---- Alarm heap (alarm.c): sleeping waits ordered by (deadline, sequence) ------------- */
typedef struct cw_alarms {
    cw_wait **heap;
    size_t len, cap;
    size_t with_task; /* armed alarms that wake a task */
    size_t reserved;  /* places kept for alarms with no task */
    uint64_t seq;
} cw_alarms;

/* Arm `w`. An alarm with no task (`t` NULL, see cw_alarm_ops) uses a
 * place reserved for it and always succeeds; one with a task is false
 * when the heap cannot grow, with nothing armed. */
bool cw_alarms_push(cw_alarms *a, cw_wait *w, cw_task *t);
/* Keep a place for one more alarm with no task (false: memory exhausted),
 * and give one back. */
bool cw_alarms_reserve(cw_alarms *a);
void cw_alarms_unreserve(cw_alarms *a);
void cw_alarms_remove(cw_alarms *a, cw_wait *w);
/* The earliest armed wait, or NULL. */
cw_wait *cw_alarms_peek(const cw_alarms *a);
cw_wait *cw_alarms_pop(cw_alarms *a);
/* Act on an alarm popped because it is due: wake its task or, for an alarm
 * with no task, call its fire function. */
void cw_alarm_fire(cw_rt *rt, cw_wait *w);
/* Forget every alarm (their waits are left unarmed). */
void cw_alarms_clear(cw_alarms *a);
void cw_alarms_free(cw_alarms *a);

/* ---- The core's entries of a backend's table ---------------------------------------- */

cw_ctx *cw_core_child(cw_ctx *ctx, const char *label);
void cw_core_with_attribute(cw_ctx *ctx, const char *key, const char *value);
void cw_core_set_execution(cw_ctx *ctx, int execution);
void cw_core_ctx_release(cw_ctx *ctx);
cw_handle *cw_core_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg);
void cw_core_panic(cw_ctx *ctx, const char *message);
void cw_core_cleanup_push(cw_ctx *ctx, cw_cleanup *node);
void cw_core_cleanup_pop(cw_ctx *ctx, cw_cleanup *node, bool execute);
void cw_core_yield(cw_ctx *ctx);
void cw_core_park(cw_ctx *ctx);
cw_handle *cw_core_handle_ready(cw_ctx *ctx, int result, void *value);
void cw_core_abort(cw_handle *h);
void cw_core_handle_release(cw_handle *h);
void cw_core_wait_join(cw_wait *w, cw_handle *h, void **out);
void cw_core_wait_ready(cw_wait *w, cw_ctx *ctx, int result);
void cw_core_wait_pending(cw_wait *w, cw_ctx *ctx);
cw_chan *cw_core_chan_new(cw_ctx *ctx, size_t elem_size, size_t capacity);
void cw_core_chan_sender_add(cw_chan *c);
void cw_core_chan_sender_drop(cw_chan *c);
void cw_core_chan_receiver_drop(cw_chan *c);
void cw_core_wait_send(cw_wait *w, cw_chan *c, const void *elem);
void cw_core_wait_recv(cw_wait *w, cw_chan *c, void *elem);
cw_oneshot *cw_core_oneshot_new(cw_ctx *ctx, size_t elem_size);
int cw_core_oneshot_send(cw_oneshot *o, const void *elem);
void cw_core_oneshot_sender_drop(cw_oneshot *o);
void cw_core_oneshot_receiver_drop(cw_oneshot *o);
void cw_core_wait_oneshot(cw_wait *w, cw_oneshot *o, void *elem);
cw_signal *cw_core_stopped(cw_ctx *ctx);
void cw_core_signal_release(cw_signal *s);
void cw_core_wait_signal(cw_wait *w, cw_signal *s, int32_t *value);
void cw_core_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value);
cw_waker *cw_core_waker_current(cw_ctx *ctx);
void cw_core_waker_wake(cw_waker *w);
void cw_core_waker_release(cw_waker *w);
cw_time cw_core_current(cw_ctx *ctx);
void cw_core_wait_sleep_until(cw_wait *w, cw_ctx *ctx, cw_time deadline);
void cw_core_random(cw_ctx *ctx, void *buf, size_t len);

/* ---- Derived tables (cwrt/derive.c) ------------------------------------------------------- */

/* How a reference backend begins a run whose objects name `self`, which is
 * its own table or one derived from it (cwrt/derive.h). recover is NULL on
 * a backend without checkpoints, and then so is start_checkpoint. */
typedef struct cw_origin {
    const cw_backend *table;
    int (*start)(const cw_backend *self, const cw_config *cfg, cw_task_fn root, void *arg,
                 cw_run_result *out);
    int (*start_checkpoint)(const cw_backend *self, const cw_config *cfg, cw_task_fn root,
                            void *arg, cw_run_result *out, cw_checkpoint **cp);
    int (*recover)(const cw_backend *self, cw_checkpoint *from, cw_task_fn root, void *arg,
                   cw_run_result *out, cw_checkpoint **cp);
} cw_origin;

/* ---- Backend tables ---------------------------------------------------------------- */

/* The table entries every reference backend takes from the core, as
 * designated initializers: a backend's table lists these, then its own. */
#define CW_CORE_ENTRIES                                                                            \
    .child = cw_core_child, .with_attribute = cw_core_with_attribute, .label = cw_core_label,      \
    .set_execution = cw_core_set_execution, .ctx_release = cw_core_ctx_release,                    \
    .spawn = cw_core_spawn, .handle_ready = cw_core_handle_ready, .abort = cw_core_abort,          \
    .handle_release = cw_core_handle_release, .yield = cw_core_yield,                              \
    .waker_current = cw_core_waker_current, .waker_wake = cw_core_waker_wake,                      \
    .waker_release = cw_core_waker_release, .park = cw_core_park, .panic = cw_core_panic,          \
    .cleanup_push = cw_core_cleanup_push, .cleanup_pop = cw_core_cleanup_pop,                      \
    .current = cw_core_current, .select = cw_core_select, .wait_join = cw_core_wait_join,          \
    .wait_sleep_until = cw_core_wait_sleep_until, .wait_ready = cw_core_wait_ready,                \
    .wait_pending = cw_core_wait_pending, .chan_new = cw_core_chan_new,                            \
    .chan_sender_add = cw_core_chan_sender_add, .chan_sender_drop = cw_core_chan_sender_drop,      \
    .chan_receiver_drop = cw_core_chan_receiver_drop, .wait_send = cw_core_wait_send,              \
    .wait_recv = cw_core_wait_recv, .oneshot_new = cw_core_oneshot_new,                            \
    .oneshot_send = cw_core_oneshot_send, .oneshot_sender_drop = cw_core_oneshot_sender_drop,      \
    .oneshot_receiver_drop = cw_core_oneshot_receiver_drop, .wait_oneshot = cw_core_wait_oneshot,  \
    .stopped = cw_core_stopped, .signal_release = cw_core_signal_release,                          \
    .wait_signal = cw_core_wait_signal, .wait_stop = cw_core_wait_stop, .random = cw_core_random

#endif
