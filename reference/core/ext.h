/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * ext.h - what a subsystem may use of the core: the one published
 * extension interface.
 *
 * A subsystem (buffers/, metrics/, storage/, network/) sees the runtime, its
 * tasks and its contexts only through this header. It may:
 *   - read the run's configuration, backend and buffer pools;
 *   - lock the runtime (everything a subsystem shares between tasks is
 *     guarded by the runtime's lock, like the core's own objects), or put
 *     an object that only its own users touch under one of the run's
 *     stripes (guard.c);
 *   - make a waitable object: waits, waiter lists, select, sleeps;
 *   - arm alarms (an alarm with no task calls a function instead), read the
 *     clock and draw from the run's random stream;
 *   - park the calling task and wake a task;
 *   - complete handles from outside a task;
 *   - record audit events;
 *   - keep state of one run in a slot, with a hook the core calls at the
 *     run's end, registered on first use (cw_ext_attach);
 *   - learn when tasks are admitted and stop running (cw_task_observer);
 *   - read the driver the run's backend chose for the subsystem.
 * Nothing else: the structures behind these names are the core's and the
 * backends' (core/sched.h), and ci/layers.sh fails on any other use.
 *
 * Ownership and threads: unless said otherwise a function here expects the
 * lock of what it touches held (a waiter list's object's guard; the
 * runtime's lock for slots), as the core's own helpers do, and hands
 * nothing over to the caller.
 */
#ifndef CW_CORE_EXT_H
#define CW_CORE_EXT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/list.h"
#include "cw/cw.h"

typedef struct cw_rt cw_rt;
typedef struct cw_task cw_task;

/* ---- Errors and allocation (util.c) --------------------------------------------- */

/* Abort the process with a message: for misuse where there is no task to
 * panic (a blocking call outside any task, a broken invariant). */
_Noreturn void cw_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* strdup through the allocator the allocation sweep watches; NULL when
 * memory is exhausted. */
char *cw_strdup(const char *s);
/* The one way an array grows: make room for `need` items of `size` bytes
 * in the array *items (a T ** passed as void *) whose capacity is *cap,
 * doubling from `first`. False when memory, or size_t, runs out; the
 * array and *cap are then as they were, so the caller returns
 * CW_ERR_NOMEM with nothing lost. */
bool cw_grow_slow(void *items, size_t *cap, size_t need, size_t size, size_t first);
static inline bool cw_grow(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
    return need <= *cap || cw_grow_slow(items, cap, need, size, first); /* hot paths never call */
}

/* ---- Sorted arrays (sorted.c) ---------------------------------------------------- */

/* The index in base[0..n) of the element `cmp` finds equal to `key` (cmp
 * < 0: key sorts first), or where it would go; *found says which. */
size_t cw_sorted_find(const void *base, size_t n, size_t size, const void *key,
                      int (*cmp)(const void *key, const void *elem), bool *found);
/* Insert a copy of `elem` at `at` of the array *items (a T ** as void *)
 * holding *n of capacity *cap. False when memory is exhausted, with the
 * array unchanged. */
bool cw_sorted_insert(void *items, size_t *n, size_t *cap, size_t size, size_t at,
                      const void *elem);
/* Take out element `at`. */
void cw_sorted_remove(void *base, size_t *n, size_t size, size_t at);

/* ---- The run (runtime.c) -------------------------------------------------------- */

void cw_rt_lock(cw_rt *rt);
void cw_rt_unlock(cw_rt *rt);

/* ---- Guards: which lock an object is under (guard.c) ------------------------------- */

/* Most of what tasks share is under the runtime's lock. An object that
 * tasks on different threads use apart from everything else (a TCP
 * connection's halves) may instead be under one of the run's stripes, so
 * that workers serving different connections do not queue behind one
 * lock; and a wait whose object guards itself (a sleep: the scheduler's
 * alarms) needs none. A guard names one of the three. Locks are taken in
 * one order: the runtime's first, then stripes by increasing index. */
#define CW_STRIPES 64
enum { CW_GUARD_RT = -1, CW_GUARD_NONE = -2 };

/* The stripe of a new object: each in turn, so that N objects share one
 * only when N > CW_STRIPES. With rt->lock held. */
int cw_rt_stripe_next(cw_rt *rt);
/* Take, and let go of, the lock `guard` names (nothing for CW_GUARD_NONE;
 * nothing at all in a run whose tasks share one thread). */
void cw_guard_lock(cw_rt *rt, int guard);
void cw_guard_unlock(cw_rt *rt, int guard);

/* The locks a select holds over its waits: a set, so taking them in the
 * one order needs no sorting and no memory. */
typedef struct cw_lockset {
    bool rt;
    uint64_t stripes; /* bit i: stripe i */
} cw_lockset;

void cw_lockset_add(cw_lockset *set, int guard);
/* The runtime's lock and the lock `guard` names: what closing an object
 * under a stripe takes, since it also unlinks it from the run's lists. */
cw_lockset cw_lockset_with_rt(int guard);
void cw_lockset_lock(cw_rt *rt, const cw_lockset *set);
void cw_lockset_unlock(cw_rt *rt, const cw_lockset *set);

/* For a wait's try (cw_wait_ops) that makes a system call: let every lock
 * of the select go for the call, so that other threads' tasks need not
 * wait out the kernel, and take them back with cw_rt_relock_in_try. The
 * select that called the try then tries every wait again before it arms
 * any: what the tries saw may have changed while the locks were gone, and
 * a wait armed on a stale view could miss its wake. A try that lets the
 * locks go must therefore not do so again on the next pass unless
 * something changed, or the select never parks. */
void cw_rt_unlock_in_try(cw_rt *rt);
void cw_rt_relock_in_try(cw_rt *rt);
/* The run's resolved configuration; read-only for the whole run. */
const cw_config *cw_rt_config(const cw_rt *rt);
/* The table the run's objects name (its backend's, or one derived from it). */
const cw_backend *cw_rt_backend(const cw_rt *rt);
/* The run's network (0) and storage (1) buffer pools, or NULL. */
cw_bufpool *cw_rt_pool(const cw_rt *rt, int which);
/* The root task of the run. */
cw_task *cw_rt_root(const cw_rt *rt);

/* The slots of run-scoped state, in the order their close hooks run at the
 * end of a run: storage first, since a sync in flight may still complete a
 * handle; then the network. */
typedef enum cw_ext_id { CW_EXT_STORAGE, CW_EXT_NETWORK, CW_EXT_METRICS, CW_EXT_COUNT } cw_ext_id;

/* The state of slot `id`, or NULL before cw_ext_attach. */
void *cw_ext_state(const cw_rt *rt, cw_ext_id id);
/* The first use of a subsystem in a run: keep `state` in slot `id`, and call
 * close(rt, state) when the run ends (after its last task, before the
 * core's objects are freed), or at cw_ext_close. The slot must be empty. */
void cw_ext_attach(cw_rt *rt, cw_ext_id id, void *state, void (*close)(cw_rt *rt, void *state));
/* Run slot `id`'s close hook now, if it has state, and empty the slot. */
void cw_ext_close(cw_rt *rt, cw_ext_id id);
/* The driver the run's backend chose for a subsystem (its own table type),
 * set by the backend before the run's first task; NULL when none. */
void cw_ext_set_driver(cw_rt *rt, cw_ext_id id, const void *driver);
const void *cw_ext_driver(const cw_rt *rt, cw_ext_id id);

/* ---- Contexts and tasks ----------------------------------------------------------- */

typedef struct cw_attribute {
    char *key, *value;
} cw_attribute;

cw_rt *cw_ctx_rt(const cw_ctx *ctx);
const cw_backend *cw_ctx_backend(const cw_ctx *ctx);
/* The context's label path ("" at the root) and its attributes, sorted by
 * key; both stay the context's. */
const char *cw_core_label(const cw_ctx *ctx);
size_t cw_ctx_attributes(const cw_ctx *ctx, const cw_attribute **out);
int cw_ctx_execution(const cw_ctx *ctx);

/* The task that is calling into the runtime `rt`; fatal outside one. */
cw_task *cw_task_self(cw_rt *rt, const char *what);
bool cw_task_aborted(cw_task *t);
/* Cleanup handlers are running: nothing may suspend. */
bool cw_task_unwinding(const cw_task *t);
/* Called by a suspension point after it resumes: unwinds an aborted task. */
void cw_task_check_abort(cw_task *t);
cw_rt *cw_task_rt(const cw_task *t);
const char *cw_task_label(const cw_task *t);
int cw_task_execution(const cw_task *t);

/* What the core tells an observer of tasks, with rt->lock held. */
typedef struct cw_task_observer {
    int (*admitted)(cw_task *t); /* spawned, or the root; CW_ERR_NOMEM refuses it */
    int (*refused)(cw_rt *rt, const cw_ctx *ctx); /* a spawn refused; CW_ERR_NOMEM as above */
    /* No longer running: the first of abort, cascade and completion. */
    void (*stopped)(cw_task *t);
} cw_task_observer;
/* One observer per run, set before its first task. */
void cw_rt_observe_tasks(cw_rt *rt, const cw_task_observer *o);
/* One word per task for the observer (NULL at first). */
void **cw_task_observer_word(cw_task *t);

/* ---- The scheduler, as a subsystem may use it (clock.c) --------------------------- */

cw_time cw_rt_now(cw_rt *rt);
/* The next output of the run's seeded PRNG, recording no audit event: for
 * draws the spec places in the one random stream besides cw_random. Only on
 * a scheduler with a seeded PRNG (the deterministic one). */
uint64_t cw_rt_draw(cw_rt *rt);
/* Whether an event of probability `r` happens: one draw, below(den) < num,
 * and none at all for a rate of never or always (spec/11-deterministic.md). */
bool cw_rt_chance(cw_rt *rt, cw_rate r);
/* Wake `t` at w->arg (the deadline) through the wait `w`, which stays put
 * until disarmed; false, with nothing armed, when memory is exhausted.
 * With `t` NULL the alarm calls the cw_alarm_ops its wait's ops point to
 * (only on a scheduler that drives such alarms: the deterministic one),
 * and it needs a place reserved beforehand: then it cannot fail. */
bool cw_rt_alarm_arm(cw_rt *rt, cw_wait *w, cw_task *t);
/* Keep a place for one alarm with no task (false: memory exhausted), and
 * give it back. */
bool cw_rt_alarm_reserve(cw_rt *rt);
void cw_rt_alarm_unreserve(cw_rt *rt);
void cw_rt_alarm_disarm(cw_rt *rt, cw_wait *w);

/* What an alarm with no task does when it is due: its wait's `ops` point
 * to one of these instead of a cw_wait_ops. Such an alarm moves time-driven
 * state forward (bytes in flight arriving) rather than resuming a task. */
typedef struct cw_alarm_ops {
    /* Called once the alarm was popped, outside any task and with no lock
     * held; it may arm the wait again. */
    void (*fire)(cw_wait *w);
} cw_alarm_ops;

/* ---- Audit ---------------------------------------------------------------------- */

/* One field of an audit event: bytes hashed as a length-prefixed string. */
typedef struct cw_field {
    const void *data;
    size_t len;
} cw_field;

/* Whether the run keeps an audit digest: a caller that would build costly
 * fields (formatted addresses, copied bytes) asks first. */
bool cw_audited(const cw_rt *rt);
void cw_audit(cw_rt *rt, const char *label, const cw_field *fields, size_t n);

/* Audit helpers: big-endian integer fields. Spelled out byte by byte, which
 * compilers merge into one swapped store; the loop it replaces stayed a loop,
 * eight stores every length prefix of every audit event. */
static inline void cw_be64(uint8_t out[8], uint64_t v)
{
    out[0] = (uint8_t)(v >> 56);
    out[1] = (uint8_t)(v >> 48);
    out[2] = (uint8_t)(v >> 40);
    out[3] = (uint8_t)(v >> 32);
    out[4] = (uint8_t)(v >> 24);
    out[5] = (uint8_t)(v >> 16);
    out[6] = (uint8_t)(v >> 8);
    out[7] = (uint8_t)v;
}

/* ---- The supervision tree (tree_walk.c) ------------------------------------------- */

/* One task of the tree, as cw_core_tree_walk hands it over; valid only
 * during the call. */
typedef struct cw_tree_entry {
    const char *label; /* "root" for the root */
    uint64_t id;
    const char *state; /* "new", "running", "aborting" or "done" */
    int depth;         /* 0 for the root, one more per supervisor */
    uint64_t parent;   /* the supervising task's id; the root's own id */
} cw_tree_entry;
typedef void (*cw_tree_visit_fn)(const cw_tree_entry *entry, void *arg);

/* Call `visit` for each task of ctx's run, supervisors before the tasks
 * they supervise, siblings in the order made, under the run's lock (so
 * `visit` must not call into the runtime). CW_ERR_INVALID for a NULL
 * context or one of a backend not built on this core, CW_ERR_NOMEM. */
int cw_core_tree_walk(cw_ctx *ctx, cw_tree_visit_fn visit, void *arg);

/* ---- Labels (label.c) ------------------------------------------------------------ */

/* NULL when `label` is valid, else a static reason (the rule it breaks). */
const char *cw_label_check(const char *label);
/* "<prefix>_<label>" or `label` when prefix is empty; malloc'd, caller
 * frees. NULL when memory is exhausted. */
char *cw_label_join(const char *prefix, const char *label);

/* ---- Handles completed from outside a task (handle.c) ----------------------------- */

/* A handle with one reference, the caller's (with rt->lock held, as the
 * calls below); NULL when memory is exhausted. */
cw_handle *cw_handle_new(cw_rt *rt);
/* A handle already completed with `result`; without memory for one, the
 * run's shared handle that resolves CW_ERR_NOMEM [TASK-011]. */
cw_handle *cw_handle_resolved(cw_rt *rt, int result);
void cw_handle_complete(cw_handle *h, int result, void *value);
void cw_handle_ref(cw_handle *h);
void cw_handle_unref(cw_handle *h);

/* ---- Waits and waiter lists (waiters.c, select.c, clock.c) ------------------------ */

/* A wait as the reference uses it: the public cw_wait (cw/select.h) with
 * the words it leaves to the backend named. Read and written through this
 * union, never through both names in one expression.
 *   arg    deadline   a sleep's or an alarm's (cw_time)
 *          value      what a wait carries in (a recv's length, a stop value)
 *          code       the result a ready wait completes with
 *   state  heap_pos   an alarm's place in its heap plus one (0: not armed)
 *          ticket     a network half's number for a waiting operation
 *          done       a one-shot flag (the stop signal's)
 *   link   node       its node in a waiter list, while armed
 *          seq        an alarm's arming order (alarms are in no list)
 *          task       the task to wake
 *          rt         the runtime the wait belongs to */
typedef union cw_waitv {
    cw_wait pub;
    struct {
        const cw_backend *backend;
        int result;
        const void *ops;
        void *object;
        void *out;
        union {
            cw_time deadline;
            uint64_t value;
            uint64_t code;
        };
        union {
            uint64_t heap_pos;
            uint64_t ticket;
            uint64_t done;
        };
        union {
            cw_list node;
            uintptr_t seq;
        };
        cw_task *task;
        cw_rt *rt;
    };
} cw_waitv;

_Static_assert(sizeof(cw_waitv) == sizeof(cw_wait), "the view adds nothing to a wait");
_Static_assert(offsetof(cw_waitv, deadline) == offsetof(cw_wait, arg), "arg");
_Static_assert(offsetof(cw_waitv, heap_pos) == offsetof(cw_wait, state), "state");
_Static_assert(offsetof(cw_waitv, node) == offsetof(cw_wait, link[0]), "link[0..1]");
_Static_assert(sizeof(cw_list) == 2 * sizeof(void *), "a node takes link[0] and link[1]");
_Static_assert(offsetof(cw_waitv, task) == offsetof(cw_wait, link[2]), "link[2]");
_Static_assert(offsetof(cw_waitv, rt) == offsetof(cw_wait, link[3]), "link[3]");
_Static_assert(offsetof(cw_waitv, result) == offsetof(cw_wait, result), "result");
_Static_assert(offsetof(cw_waitv, out) == offsetof(cw_wait, out), "out");

static inline cw_waitv *cw_waitv_of(cw_wait *w)
{
    return (cw_waitv *)(void *)w;
}

static inline const cw_waitv *cw_waitv_of_const(const cw_wait *w)
{
    return (const cw_waitv *)(const void *)w;
}

typedef struct cw_wait_ops {
    /* Complete now if possible: set w->result and return true. */
    bool (*try_complete)(cw_wait *w);
    /* Arrange for `t` to be woken when the wait may complete. */
    void (*arm)(cw_wait *w, cw_task *t);
    void (*disarm)(cw_wait *w);
    /* The lock the select holds over the three (a stripe, CW_GUARD_NONE
     * or CW_GUARD_RT), asked once per select. */
    int (*guard)(const cw_wait *w);
} cw_wait_ops;

/* The guards of most waits: the runtime's lock, and none. */
int cw_guard_rt(const cw_wait *w);
int cw_guard_none(const cw_wait *w);

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
cw_rt *cw_wait_rt(const cw_wait *w);
int cw_core_select(cw_wait *waits, size_t n, bool block);
/* A wait of run `rt` (its objects name `b`) that completes at `deadline`. */
void cw_wait_sleep_at(cw_wait *w, cw_rt *rt, const cw_backend *b, cw_time deadline);

#endif
