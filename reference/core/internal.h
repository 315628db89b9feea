/*
 * internal.h - the one private header of the reference implementation.
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
 * A runtime whose tasks all run on one thread (rt->threaded false) skips
 * the lock: only its own thread ever touches the core's state.
 * Lock order: rt->lock, then a waker's lock, then the scheduler's own locks;
 * the scheduler never takes rt->lock while holding one of its own.
 * A cw_waker may be woken from any thread and has a lock of its own.
 */
#ifndef CW_INTERNAL_H
#define CW_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/coro.h"
#include "core/list.h"
#include "cw/cw.h"

typedef struct cw_rt cw_rt;
typedef struct cw_task cw_task;
typedef struct cw_node cw_node;

/* ---- Scheduler interface -------------------------------------------------- */

/* One field of an audit event: bytes hashed as a length-prefixed string. */
typedef struct cw_field {
    const void *data;
    size_t len;
} cw_field;

typedef struct cw_sched_ops {
    /* Make `t` runnable; a no-op for a finished task. */
    void (*wake)(cw_task *t);
    /* The calling task `t` gives up its thread until woken (it may return early). */
    void (*park)(cw_task *t);
    /* The calling task `t` lets every other ready task run first. */
    void (*yield)(cw_task *t);
    /* A new task was created: schedule its first run. */
    void (*spawned)(cw_task *t);
    /* The calling task `t` ends: switch away for the last time. */
    void (*exit)(cw_task *t); /* never returns */
    /* The running task, or NULL outside the runtime's tasks. */
    cw_task *(*current)(cw_rt *rt);
    cw_time (*now)(cw_rt *rt);
    /* Wake `t` at `deadline` (through the wait `w`, which stays put until
     * disarmed). With `t` NULL the alarm calls the cw_alarm_ops its wait's
     * ops point to instead (cw_alarm_fire): only a scheduler that drives
     * such alarms may be given one (the deterministic one). */
    void (*alarm_arm)(cw_rt *rt, cw_wait *w, cw_task *t);
    void (*alarm_disarm)(cw_rt *rt, cw_wait *w);
    /* Record an event in the audit digest (NULL without CW_CAP_AUDIT). */
    void (*audit)(cw_rt *rt, const char *label, const cw_field *fields, size_t n);
    void (*random)(cw_rt *rt, void *buf, size_t len);
    /* The next output of the run's seeded PRNG, recording no audit event:
     * for draws the spec places in the one random stream besides cw_random
     * (the network's delays). NULL for a scheduler without a seeded PRNG. */
    uint64_t (*draw)(cw_rt *rt);
} cw_sched_ops;

/* ---- Runtime ---------------------------------------------------------------- */

struct cw_rt {
    pthread_mutex_t lock; /* see "Threading" above */
    bool threaded;        /* tasks run on several threads: the lock is needed */
    const cw_backend *backend;
    const cw_sched_ops *sched;
    cw_config cfg;
    cw_task *root;
    uint64_t next_task_id;
    bool ending; /* teardown: blocking calls fail at once, nothing new runs */

    /* Live objects of each kind: whatever is left at the end is freed. */
    cw_list tasks, contexts, handles, chans, oneshots, signals, nodes;

    /* Stacks of ended tasks, kept for the next tasks: mapping and unmapping
     * a stack costs far more than a task switch. */
    cw_stack *stack_cache;
    size_t nstacks, stack_cache_cap;

    /* The first panic that ends the run. */
    bool panicked;
    char panic_message[512];

    /* The stop signal (signal.c). */
    bool stop_called;
    int32_t stop_value;
    size_t stop_outstanding; /* signals handed out before the stop, not yet released */
    cw_list stop_waiters;    /* cw_wait_stop waits */
    cw_list signal_waiters;  /* cw_wait_signal waits */

    cw_bufpool *pools[2];          /* the network and storage buffer pools (buffers/table.c) */
    struct cw_rt_metrics *metrics; /* the run's metrics registry (metrics/runtime.c) */
    struct cw_storage *storage;    /* the run's storage, made by its first call (storage/) */
    struct cw_net *net;            /* the run's network, made by its first call (network/) */

    /* What a run recovered from a checkpoint inherits (deterministic/
     * recover.c): the storage and the network adopt their part when they
     * are made; the run's own checkpoint takes back what was not adopted. */
    struct cw_mem_image *inherit_storage;
    struct cw_hosts_image *inherit_hosts;
};

/* What memory storage made durable, between a run's crash and the next
 * run's start (deterministic/memory_storage.c): cw_memory_take crashes the run's storage
 * (cw_storage_crash) and takes its durable contents, or the inheritance
 * itself when the run made no storage. Never NULL; the caller owns it. */
typedef struct cw_mem_image cw_mem_image;
cw_mem_image *cw_memory_take(cw_rt *rt);
void cw_mem_image_free(cw_mem_image *img);

/* The resolver's table between runs (deterministic/resolver.c): taken from a
 * run's network (or its inheritance, when it made none); never NULL. */
typedef struct cw_hosts_image cw_hosts_image;
cw_hosts_image *cw_hosts_take(cw_rt *rt);
void cw_hosts_image_free(cw_hosts_image *img);

void cw_rt_init(cw_rt *rt, const cw_backend *backend, const cw_sched_ops *sched,
                const cw_config *cfg);
void cw_rt_lock(cw_rt *rt);
void cw_rt_unlock(cw_rt *rt);
/* Free every object still alive and the lock. Call after every task has ended. */
void cw_rt_free_objects(cw_rt *rt);
/* Validate a caller's config into `cfg`; CW_OK or CW_ERR_INVALID with `why`. */
int cw_config_resolve(const cw_config *in, cw_config *cfg, char *why, size_t whylen);
/* What every cw_start does first: clear `out`, resolve the configuration and
 * open the run's buffer pools. CW_OK, or the failure in out->status and
 * out->message with nothing left to release. */
int cw_run_begin(const cw_backend *b, const cw_config *cfg, cw_config *resolved,
                 cw_bufpool *pools[2], cw_run_result *out);

/* Abort the process with a message: for misuse where there is no task to
 * panic (a blocking call outside any task, a broken invariant). */
_Noreturn void cw_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *cw_xcalloc(size_t n, size_t size);
char *cw_xstrdup(const char *s);

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

cw_node *cw_node_root(cw_rt *rt);
/* A new node below `parent` with one reference; aborted at once if the parent is. */
cw_node *cw_node_child(cw_node *parent);
void cw_node_ref(cw_node *n);
void cw_node_unref(cw_node *n);
/* Register `t` as the task of `n`; aborts it at once if `n` is aborted. */
void cw_node_set_task(cw_node *n, cw_task *t);
/* Abort `n` and everything below it, iteratively. */
void cw_node_abort(cw_node *n);

/* ---- Labels (label.c) -------------------------------------------------------- */

/* NULL when `label` is valid, else a static reason (the rule it breaks). */
const char *cw_label_check(const char *label);
/* "<prefix>_<label>" or `label` when prefix is empty; malloc'd, caller frees. */
char *cw_label_join(const char *prefix, const char *label);

/* ---- Contexts (context.c) ----------------------------------------------------- */

typedef struct cw_attribute {
    char *key, *value;
} cw_attribute;

struct cw_ctx {
    cw_object hdr;
    cw_rt *rt;
    cw_node *node; /* one reference */
    char *label;
    cw_attribute *attrs; /* sorted by key */
    size_t nattrs;
    int execution;
    cw_task *task; /* the task whose own context this is, if any */
    cw_list link;  /* rt->contexts */
};

cw_ctx *cw_ctx_new(cw_rt *rt, cw_node *node, const char *label); /* takes the node reference */
void cw_ctx_copy_attributes(cw_ctx *to, const cw_ctx *from);
void cw_ctx_free(cw_ctx *ctx);

cw_ctx *cw_core_child(cw_ctx *ctx, const char *label);
void cw_core_with_attribute(cw_ctx *ctx, const char *key, const char *value);
const char *cw_core_label(const cw_ctx *ctx);
void cw_core_set_execution(cw_ctx *ctx, int execution);
void cw_core_ctx_release(cw_ctx *ctx);

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
    bool aborted;   /* unwind at the next suspension point */
    bool unwinding; /* cleanup handlers are running: nothing may suspend */
    bool panicked;
    bool queued;   /* scheduler: on the ready queue */
    bool notified; /* scheduler: woken since it last parked */
    int exit_result;
    void *exit_value;
    cw_cleanup *cleanups; /* newest first */
    cw_list link;         /* rt->tasks */
    void *sched_data;     /* the scheduler's per-task state */
    cw_metric *running;   /* its runtime_tasks_running series until it stops running */
};

cw_handle *cw_core_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg);
/* The task that is calling into the runtime `rt`; fatal outside one. */
cw_task *cw_task_self(cw_rt *rt, const char *what);
/* Before a task's first run: its stack and coroutine. CW_OK or CW_ERR_NOMEM. */
int cw_task_prepare(cw_task *t);
bool cw_task_aborted(cw_task *t);
/* The first code a task's coroutine runs. */
void cw_task_main(void *task);
/* After a task's last switch (or when it is dropped unstarted): record its
 * result, abort what it supervised, release what it held. */
void cw_task_finish(cw_task *t);
/* Request an abort: it takes effect at the task's next suspension point. */
void cw_task_abort(cw_task *t);
/* Called by a suspension point after it resumes: unwinds an aborted task. */
void cw_task_check_abort(cw_task *t);
/* Run the cleanup handlers and end the task with `result` (never returns). */
_Noreturn void cw_task_unwind(cw_task *t, int result);
void cw_task_free(cw_task *t);
/* Free the stacks kept for reuse (at the end of a run). */
void cw_stack_cache_free(cw_rt *rt);
/* The root task: runs fn on the root context; not supervised by any node. */
cw_task *cw_task_new_root(cw_rt *rt, cw_task_fn fn, void *arg);

void cw_core_vpanic(cw_ctx *ctx, const char *fmt, va_list ap);
void cw_core_cleanup_push(cw_ctx *ctx, cw_cleanup *node);
void cw_core_cleanup_pop(cw_ctx *ctx, cw_cleanup *node, bool execute);
void cw_core_yield(cw_ctx *ctx);
void cw_core_park(cw_ctx *ctx);

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

cw_handle *cw_handle_new(cw_rt *rt);
void cw_handle_complete(cw_handle *h, int result, void *value);
void cw_handle_unref(cw_handle *h);
void cw_handle_free(cw_handle *h);
cw_handle *cw_core_handle_ready(cw_ctx *ctx, int result, void *value);
void cw_core_abort(cw_handle *h);
void cw_core_handle_release(cw_handle *h);
void cw_core_wait_join(cw_wait *w, cw_handle *h, void **out);

/* ---- Select and waits (select.c) ------------------------------------------------------ */

typedef struct cw_wait_ops {
    /* Complete now if possible: set w->result and return true. */
    bool (*try_complete)(cw_wait *w);
    /* Arrange for `t` to be woken when the wait may complete. */
    void (*arm)(cw_wait *w, cw_task *t);
    void (*disarm)(cw_wait *w);
} cw_wait_ops;

void cw_wait_init(cw_wait *w, const cw_backend *b, const cw_wait_ops *ops, void *object);
/* Waiter queues: the wait's link words hold its list node and task. */
void cw_waiters_add(cw_list *waiters, cw_wait *w, cw_task *t);
void cw_waiters_remove(cw_wait *w);
void cw_waiters_wake(cw_rt *rt, cw_list *waiters);
/* The object of these waits ends while they are armed: each is unlinked
 * and turned into a wait that completes with `result` and no longer names
 * the object, and its task is woken. So an object may be freed while tasks
 * wait on it. */
void cw_waiters_end(cw_rt *rt, cw_list *waiters, int result);
cw_task *cw_wait_task(cw_wait *w);
int cw_core_select(cw_wait *waits, size_t n, bool block);
void cw_core_wait_ready(cw_wait *w, cw_ctx *ctx, int result);
void cw_core_wait_pending(cw_wait *w, cw_ctx *ctx);
cw_rt *cw_wait_rt(const cw_wait *w);

/* ---- Channels (chan.c, oneshot.c) ------------------------------------------------------- */

cw_chan *cw_core_chan_new(cw_ctx *ctx, size_t elem_size, size_t capacity);
void cw_core_chan_sender_add(cw_chan *c);
void cw_core_chan_sender_drop(cw_chan *c);
void cw_core_chan_receiver_drop(cw_chan *c);
void cw_core_wait_send(cw_wait *w, cw_chan *c, const void *elem);
void cw_core_wait_recv(cw_wait *w, cw_chan *c, void *elem);
void cw_chan_free_all(cw_list *chans);

cw_oneshot *cw_core_oneshot_new(cw_ctx *ctx, size_t elem_size);
int cw_core_oneshot_send(cw_oneshot *o, const void *elem);
void cw_core_oneshot_sender_drop(cw_oneshot *o);
void cw_core_oneshot_receiver_drop(cw_oneshot *o);
void cw_core_wait_oneshot(cw_wait *w, cw_oneshot *o, void *elem);
void cw_oneshot_free_all(cw_list *oneshots);

/* ---- Stop signal (signal.c) ----------------------------------------------------------- */

cw_signal *cw_core_stopped(cw_ctx *ctx);
void cw_core_signal_release(cw_signal *s);
void cw_core_wait_signal(cw_wait *w, cw_signal *s, int32_t *value);
void cw_core_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value);
void cw_signal_free_all(cw_list *signals);

/* ---- Wakers (waker.c) -------------------------------------------------------------- */

/* A task's waker outlives the task and the runtime: the task holds one
 * reference and detaches itself when it ends. */
cw_waker *cw_waker_new(cw_task *t);
void cw_waker_detach(cw_waker *w);
cw_waker *cw_core_waker_current(cw_ctx *ctx);
void cw_core_waker_wake(cw_waker *w);
void cw_core_waker_release(cw_waker *w);

/* ---- Clock and randomness (clock.c) ------------------------------------------------- */

cw_time cw_core_current(cw_ctx *ctx);
void cw_core_wait_sleep_until(cw_wait *w, cw_ctx *ctx, cw_time deadline);
void cw_core_random(cw_ctx *ctx, void *buf, size_t len);

/* ---- Alarm heap (alarm.c): sleeping waits ordered by (deadline, sequence) ------------- */
typedef struct cw_alarms {
    cw_wait **heap;
    size_t len, cap;
    uint64_t seq;
} cw_alarms;

/* What an alarm with no task does when it is due: its wait's `ops` point
 * to one of these instead of a cw_wait_ops. Such an alarm moves time-driven
 * state forward (bytes in flight arriving) rather than resuming a task. */
typedef struct cw_alarm_ops {
    /* Called once the alarm was popped, outside any task and with no lock
     * held; it may arm the wait again. */
    void (*fire)(cw_wait *w);
} cw_alarm_ops;

/* `t` NULL arms an alarm with no task (see cw_alarm_ops). */
void cw_alarms_push(cw_alarms *a, cw_wait *w, cw_task *t);
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

/* ---- Buffers (buffers/): their table entries and each run's two pools --------------- */

extern const cw_buffer_ops cw_buffer_entries;
/* Make the network and storage pools of a run of backend `b` from `cfg`.
 * CW_ERR_INVALID or CW_ERR_NOMEM with the reason in `why`: nothing is left. */
int cw_rt_pools_open(const cw_backend *b, const cw_config *cfg, cw_bufpool *pools[2], char *why,
                     size_t whylen);
/* The owner's release of both: buffers still out keep their pool alive. */
void cw_rt_pools_close(cw_bufpool *pools[2]);

/* ---- Metrics (metrics/): their table entries, and the run's registry ----------------- */

extern const cw_metric_ops cw_metric_entries;
/* Make the registry of a run and its own metrics; close frees them. */
void cw_rt_metrics_open(cw_rt *rt);
void cw_rt_metrics_close(cw_rt *rt);
/* The task hooks of metrics/runtime.c: admitted, refused, no longer running
 * (the first of abort, cascade and completion; with rt->lock held). */
void cw_task_metrics_begin(cw_task *t);
void cw_task_metrics_refused(cw_rt *rt, const cw_ctx *ctx);
void cw_task_metrics_end(cw_task *t);

/* ---- Storage (storage/): its table entries, and the run's storage -------------------- */

extern const cw_storage_ops cw_storage_entries;
/* After the run's last task: wait for syncs in flight, close every blob
 * left open and free the run's storage. */
void cw_rt_storage_close(cw_rt *rt);

/* ---- Network (network/): the two backends' entries, and the run's network ------------ */

extern const cw_network_ops cw_network_memory_entries; /* in-memory, deterministic */
extern const cw_network_ops cw_network_tcp_entries;    /* TCP on the native reactor */
/* After the run's last task: close every listener, connection and socket left. */
void cw_rt_net_close(cw_rt *rt);

/* ---- Derived tables (derive.c) ------------------------------------------------------- */

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

extern const cw_origin cw_det_origin;    /* deterministic/backend.c */
extern const cw_origin cw_native_origin; /* native/backend.c */

/* ---- Backend tables ---------------------------------------------------------------- */

/* The table entries every reference backend takes from the core, as
 * designated initializers: a backend's table lists these, then its own. */
#define CW_CORE_ENTRIES                                                                            \
    .child = cw_core_child, .with_attribute = cw_core_with_attribute, .label = cw_core_label,      \
    .set_execution = cw_core_set_execution, .ctx_release = cw_core_ctx_release,                    \
    .spawn = cw_core_spawn, .handle_ready = cw_core_handle_ready, .abort = cw_core_abort,          \
    .handle_release = cw_core_handle_release, .yield = cw_core_yield,                              \
    .waker_current = cw_core_waker_current, .waker_wake = cw_core_waker_wake,                      \
    .waker_release = cw_core_waker_release, .park = cw_core_park, .vpanic = cw_core_vpanic,        \
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
    .wait_signal = cw_core_wait_signal, .wait_stop = cw_core_wait_stop, .random = cw_core_random,  \
    .metrics = &cw_metric_entries, .storage = &cw_storage_entries

/* Audit helpers: big-endian integer fields. */
static inline void cw_be64(uint8_t out[8], uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (uint8_t)v;
}

/* Whether the run keeps an audit digest: a caller that would build costly
 * fields (formatted addresses, copied bytes) asks first. */
static inline bool cw_audited(const cw_rt *rt)
{
    return rt->sched->audit && rt->cfg.audit;
}

static inline void cw_audit(cw_rt *rt, const char *label, const cw_field *fields, size_t n)
{
    if (cw_audited(rt))
        rt->sched->audit(rt, label, fields, n);
}

#endif
