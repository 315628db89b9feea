/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * scheduler.c - the deterministic scheduler: one OS thread, a seeded
 * shuffle of the ready tasks each iteration, and virtual time.
 *
 * An iteration takes the whole ready queue, shuffles it with the run's
 * PRNG, and resumes each task in that order until it suspends. Tasks woken
 * during an iteration run in the next one. Then the clock moves one cycle;
 * if nothing is ready it jumps straight to the earliest alarm, and if there
 * is no alarm either, the run has stalled. spec/11-deterministic.md gives
 * the same algorithm as numbered steps.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers/buffers.h"
#include "deterministic/det.h"
#include "metrics/metrics.h"

static cw_det *det_of(cw_rt *rt)
{
    return (cw_det *)rt;
}

/* Called with det->lock held. A task is queued at most once, and the
 * queue has room for every task record (det_spawned), so a wake, which
 * has nobody to report a failure to, never needs memory. */
static void push_ready(cw_det *d, cw_task *t)
{
    if (t->queued)
        return;
    d->ready[d->nready++] = t;
    t->queued = true;
}

static void det_wake(cw_task *t)
{
    cw_det *d = det_of(t->rt);
    cw_spin_lock(&d->lock);
    if (t->state != CW_TASK_DONE) {
        t->notified = true;
        if (t != d->current)
            push_ready(d, t);
    }
    cw_spin_unlock(&d->lock);
}

static void to_scheduler(cw_det *d, cw_task *t)
{
    cw_coro_switch(&t->coro, &d->main);
}

static void det_park(cw_task *t)
{
    cw_det *d = det_of(t->rt);
    cw_spin_lock(&d->lock);
    bool notified = t->notified;
    t->notified = false;
    cw_spin_unlock(&d->lock);
    if (!notified)
        to_scheduler(d, t);
    cw_spin_lock(&d->lock);
    t->notified = false;
    cw_spin_unlock(&d->lock);
}

static void det_yield(cw_task *t)
{
    cw_det *d = det_of(t->rt);
    cw_spin_lock(&d->lock);
    push_ready(d, t);
    cw_spin_unlock(&d->lock);
    to_scheduler(d, t);
}

/* Room in the ready queue and in an iteration's batch for every task
 * record, and the task's runtime_task_polls series, or CW_ERR_NOMEM. */
static int det_spawned(cw_task *t)
{
    cw_det *d = det_of(t->rt);
    size_t need = d->rt.ntasks;
    cw_spin_lock(&d->lock);
    bool room = cw_grow(&d->ready, &d->cap, need, sizeof *d->ready, 64);
    cw_spin_unlock(&d->lock);
    if (!room || !cw_grow(&d->batch, &d->batch_cap, need, sizeof *d->batch, 64))
        return CW_ERR_NOMEM;
    t->sched_data = cw_task_metrics_polls(&d->rt, d->task_polls, t);
    if (!t->sched_data)
        return CW_ERR_NOMEM;
    cw_spin_lock(&d->lock);
    push_ready(d, t);
    cw_spin_unlock(&d->lock);
    return CW_OK;
}

static void det_exit(cw_task *t)
{
    cw_det *d = det_of(t->rt);
    cw_spin_lock(&d->lock); /* a foreign waker may be reading the state */
    t->state = CW_TASK_DONE;
    cw_spin_unlock(&d->lock);
    cw_coro_exit_switch(&t->coro, &d->main);
}

/* Only the run's own thread is ever inside one of its tasks: a call from any
 * other thread, even while a task is running, is not a task's call. */
static cw_task *det_current(cw_rt *rt)
{
    cw_det *d = det_of(rt);
    return pthread_equal(pthread_self(), d->thread) ? d->current : NULL;
}

static cw_time det_now(cw_rt *rt)
{
    return det_of(rt)->now;
}

static bool det_alarm_arm(cw_rt *rt, cw_wait *w, cw_task *t)
{
    return cw_alarms_push(&det_of(rt)->alarms, w, t);
}

static bool det_alarm_reserve(cw_rt *rt)
{
    return cw_alarms_reserve(&det_of(rt)->alarms);
}

static void det_alarm_unreserve(cw_rt *rt)
{
    cw_alarms_unreserve(&det_of(rt)->alarms);
}

static void det_alarm_disarm(cw_rt *rt, cw_wait *w)
{
    cw_alarms_remove(&det_of(rt)->alarms, w);
}

static void det_audit(cw_rt *rt, const char *label, const cw_field *fields, size_t n)
{
    if (rt->cfg.audit)
        cw_auditor_event(&det_of(rt)->auditor, label, fields, n);
}

static void det_random(cw_rt *rt, void *buf, size_t len)
{
    cw_det *d = det_of(rt);
    uint8_t be[8];
    cw_be64(be, len);
    cw_field f = {be, sizeof be};
    det_audit(rt, "rand", &f, 1);
    cw_prng_fill(&d->prng, buf, len);
}

static uint64_t det_draw(cw_rt *rt)
{
    return cw_prng_next(&det_of(rt)->prng);
}

static const cw_sched_ops det_sched = {
    .wake = det_wake,
    .park = det_park,
    .yield = det_yield,
    .spawned = det_spawned,
    .exit = det_exit,
    .current = det_current,
    .now = det_now,
    .alarm_arm = det_alarm_arm,
    .alarm_reserve = det_alarm_reserve,
    .alarm_unreserve = det_alarm_unreserve,
    .alarm_disarm = det_alarm_disarm,
    .audit = det_audit,
    .random = det_random,
    .draw = det_draw,
};

/* ---- Running tasks -------------------------------------------------------- */

static void finish_and_maybe_free(cw_det *d, cw_task *t)
{
    cw_task_finish(t);
    cw_spin_lock(&d->lock);
    bool queued = t->queued;
    cw_spin_unlock(&d->lock);
    /* Still queued: the queue's drain frees it. The root is freed at the end
     * of the run, after its result has been read. */
    if (!queued && t != d->rt.root)
        cw_task_free(t);
}

/* Resume `t` until it suspends or ends. */
/* Runs t until it suspends or ends. d->current changes under the lock
 * because det_wake, on whatever thread a waker is called, reads it: a
 * wake that finds t current only sets t's flag, which det_park reads
 * before it suspends. One that comes after that read and before t is
 * back here would be lost, so t is queued here if its flag is set. */
static void run_until_suspended(cw_det *d, cw_task *t)
{
    cw_spin_lock(&d->lock);
    d->current = t;
    cw_spin_unlock(&d->lock);
    cw_coro_switch(&d->main, &t->coro);
    cw_spin_lock(&d->lock);
    d->current = NULL;
    if (t->notified && t->state != CW_TASK_DONE)
        push_ready(d, t);
    cw_spin_unlock(&d->lock);
}

static void resume(cw_det *d, cw_task *t)
{
    if (d->rt.cfg.audit) {
        uint8_t id[16] = {0};
        cw_be64(id + 8, t->id);
        cw_field fields[2] = {{id, sizeof id}, {t->label, strlen(t->label)}};
        cw_auditor_event(&d->auditor, "process_task", fields, 2);
    }
    cw_counter_inc(t->sched_data);

    if (t->state == CW_TASK_NEW) {
        if (t->aborted) {
            /* Aborted before it ever ran: end it without a stack. */
            t->exit_result = CW_ERR_CLOSED;
            finish_and_maybe_free(d, t);
            return;
        }
        if (cw_task_prepare(t) != CW_OK) {
            t->exit_result = CW_ERR_NOMEM;
            finish_and_maybe_free(d, t);
            return;
        }
    }
    run_until_suspended(d, t);
    if (t->state == CW_TASK_DONE)
        finish_and_maybe_free(d, t);
}

/* ---- The run loop ------------------------------------------------------------ */

typedef enum {
    RUN_GOING,
    RUN_ROOT_DONE,
    RUN_PANICKED,
    RUN_STALLED,
    RUN_TIMED_OUT,
    RUN_NO_ROOT /* memory for the root task was exhausted */
} run_state;

static void shuffle(cw_det *d, cw_task **q, size_t n)
{
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)cw_prng_below(&d->prng, (uint64_t)i + 1);
        cw_task *tmp = q[i];
        q[i] = q[j];
        q[j] = tmp;
    }
}

/* Steps 2-4: take the ready queue, shuffle it, run each task once. */
static run_state run_iteration(cw_det *d)
{
    cw_spin_lock(&d->lock);
    size_t n = d->nready; /* no more than the batch holds: see det_spawned */
    if (n)
        memcpy(d->batch, d->ready, n * sizeof *d->batch);
    d->nready = 0;
    for (size_t i = 0; i < n; i++)
        d->batch[i]->queued = false;
    cw_spin_unlock(&d->lock);

    /* A task spawned below may move the batch (det_spawned grows it): it
     * is read through d->batch each time, never through a saved pointer. */
    if (n > 1)
        shuffle(d, d->batch, n);
    size_t i = 0;
    for (; i < n; i++) {
        cw_task *t = d->batch[i];
        if (t->state == CW_TASK_DONE) {
            if (!t->queued && t != d->rt.root)
                cw_task_free(t);
            continue;
        }
        resume(d, t);
        if (d->rt.panicked)
            break;
        if (d->rt.root->state == CW_TASK_DONE)
            break;
    }
    /* Entries after an early stop are dead tasks to free or live ones the
     * teardown will unwind; the finished ones are freed here. */
    for (i = i < n ? i + 1 : n; i < n; i++) {
        cw_task *t = d->batch[i];
        if (t->state == CW_TASK_DONE && !t->queued && t != d->rt.root)
            cw_task_free(t);
    }
    if (d->rt.panicked)
        return RUN_PANICKED;
    if (d->rt.root->state == CW_TASK_DONE)
        return RUN_ROOT_DONE;
    return RUN_GOING;
}

/* Steps 5-7: advance the clock and wake what is due. */
static run_state advance(cw_det *d)
{
    if (d->now > CW_TIME_MAX - d->rt.cfg.cycle)
        return RUN_TIMED_OUT; /* the clock cannot move: treated as the end of time */
    d->now += d->rt.cfg.cycle;
    for (;;) {
        cw_wait *next = cw_alarms_peek(&d->alarms);
        cw_spin_lock(&d->lock);
        bool idle = d->nready == 0;
        cw_spin_unlock(&d->lock);
        if (idle && next && cw_waitv_of(next)->deadline > d->now)
            d->now = cw_waitv_of(next)->deadline;
        if (d->now >= d->deadline)
            return RUN_TIMED_OUT;
        /* An alarm with no task (bytes in flight arriving) acts here, in
         * the same order as the wakes; it may arm itself again, later. */
        while ((next = cw_alarms_peek(&d->alarms)) && cw_waitv_of(next)->deadline <= d->now) {
            cw_alarms_pop(&d->alarms);
            cw_alarm_fire(&d->rt, next);
        }
        cw_spin_lock(&d->lock);
        idle = d->nready == 0;
        cw_spin_unlock(&d->lock);
        if (!idle)
            return RUN_GOING;
        if (!cw_alarms_peek(&d->alarms))
            return RUN_STALLED;
    }
}

static void stall_message(cw_det *d, char *out, size_t len)
{
    size_t used =
        (size_t)snprintf(out, len, "runtime stalled: no task can make progress; blocked:");
    size_t shown = 0, total = 0;
    for (cw_list *it = d->rt.tasks.next; it != &d->rt.tasks; it = it->next) {
        cw_task *t = cw_container_of(it, cw_task, link);
        if (t->state == CW_TASK_DONE)
            continue;
        total++;
        if (shown < 16 && used < len) {
            used += (size_t)snprintf(out + used, len - used, " %s#%" PRIu64,
                                     t->label[0] ? t->label : "root", t->id);
            shown++;
        }
    }
    if (total > shown && used < len)
        snprintf(out + used, len - used, " (and %zu more)", total - shown);
}

/* Forget every queued wake: at the end of a run nothing is scheduled again. */
static void drop_ready(cw_det *d)
{
    cw_spin_lock(&d->lock);
    for (size_t i = 0; i < d->nready; i++)
        d->ready[i]->queued = false;
    d->nready = 0;
    cw_spin_unlock(&d->lock);
}

/* Step 8: end the run. Every task still alive is unwound at its suspension
 * point, in ascending id order, so its cleanup handlers run; then every
 * object of the run is freed. */
/* End every task, then take the checkpoint (when `cp`), then free the
 * run's objects. */
static void teardown(cw_det *d, cw_checkpoint **cp)
{
    d->rt.ending = true;
    cw_alarms_clear(&d->alarms);
    drop_ready(d);
    while (!cw_list_empty(&d->rt.tasks)) {
        cw_task *t = cw_container_of(d->rt.tasks.next, cw_task, link);
        t->aborted = true;
        /* An aborted task unwinds at its suspension point; resuming until
         * it is done also covers a cleanup handler that yields. */
        while (t->state == CW_TASK_RUNNING)
            run_until_suspended(d, t);
        if (t->state != CW_TASK_DONE || t->handle)
            cw_task_finish(t);
        /* Wakes its unwinding caused are dropped before it is freed, so the
         * queue never holds a freed task. */
        drop_ready(d);
        cw_task_free(t);
    }
    if (cp)
        cw_det_checkpoint_take(d, *cp);
    cw_rt_free_objects(&d->rt);
    /* An inheritance never adopted (a run that made no storage or network)
     * was handed on to *cp; without a checkpoint it ends here. */
    if (d->inherit_storage)
        cw_mem_image_free(d->inherit_storage);
    if (d->inherit_hosts)
        cw_hosts_image_free(d->inherit_hosts);
}

static int refuse_nomem(cw_run_result *out, const char *what)
{
    out->status = CW_ERR_NOMEM;
    snprintf(out->message, sizeof out->message, "out of memory for %s", what);
    return out->status;
}

static void fill_result(cw_det *d, run_state how, cw_run_result *out)
{
    out->message[0] = '\0';
    switch (how) {
    case RUN_ROOT_DONE:
        out->status = d->rt.root->exit_result;
        out->value = d->rt.root->exit_value;
        if (out->status == CW_ERR_EXITED) {
            out->status = CW_ERR_PANICKED;
            snprintf(out->message, sizeof out->message, "%s", d->rt.panic_message);
        }
        break;
    case RUN_PANICKED:
        out->status = CW_ERR_PANICKED;
        snprintf(out->message, sizeof out->message, "%s", d->rt.panic_message);
        break;
    case RUN_STALLED:
        out->status = CW_ERR_STALLED;
        stall_message(d, out->message, sizeof out->message);
        break;
    case RUN_TIMED_OUT:
        out->status = CW_ERR_RUN_TIMEOUT;
        snprintf(out->message, sizeof out->message, "runtime timeout");
        break;
    case RUN_NO_ROOT:
        refuse_nomem(out, "the root task");
        break;
    case RUN_GOING:
        break;
    }
    out->end_time = d->now;
    out->iterations = d->iterations;
}

/* The scheduler's own metrics, next to the core's task metrics. */
static int open_metrics(cw_det *d)
{
    static const char *const labels[3] = {"name", "kind", "execution"};
    d->iterations_metric = cw_rt_metric(&d->rt, "runtime_iterations", "Total number of iterations",
                                        CW_METRIC_COUNTER, NULL, 0);
    d->task_polls = cw_rt_metric(&d->rt, "runtime_task_polls", "Total number of task polls",
                                 CW_METRIC_COUNTER, labels, 3);
    return d->iterations_metric && d->task_polls ? CW_OK : CW_ERR_NOMEM;
}

/* The scheduler's records, after the run's objects went. */
static void det_free(cw_det *d)
{
    cw_auditor_free(&d->auditor);
    cw_alarms_free(&d->alarms);
    free(d->ready);
    free(d->batch);
    free(d);
}

/* The records of a run and what every run has from its start (RUN-006):
 * NULL when memory for them is exhausted, with nothing left of them. */
static cw_det *det_open(const cw_backend *self, const cw_config *resolved, cw_bufpool *pools[2])
{
    cw_det *d = calloc(1, sizeof *d);
    if (!d || cw_rt_init(&d->rt, self, &det_sched, resolved) != CW_OK) {
        free(d);
        return NULL;
    }
    if (cw_auditor_init(&d->auditor) != CW_OK || cw_rt_metrics_open(&d->rt) != CW_OK ||
        open_metrics(d) != CW_OK) {
        cw_rt_free_objects(&d->rt);
        det_free(d);
        return NULL;
    }
    cw_ext_set_driver(&d->rt, CW_EXT_STORAGE, &cw_memory_driver);
    cw_ext_set_driver(&d->rt, CW_EXT_NETWORK, &cw_memory_net_driver);
    memcpy(d->rt.pools, pools, 2 * sizeof *pools);
    return d;
}

/* A run whose objects name `self`, new (`from` NULL) or continuing the one
 * that left `from`, which it consumes; when `cp` is not NULL it receives
 * this run's checkpoint. */
static int det_run(const cw_backend *self, const cw_config *cfg, cw_checkpoint *from,
                   cw_task_fn root, void *arg, cw_run_result *out, cw_checkpoint **cp)
{
    cw_config resolved;
    cw_bufpool *pools[2];
    if (cp)
        *cp = NULL;
    if (cw_run_begin(cfg, &resolved, out) != CW_OK ||
        cw_run_pools_open(self, &resolved, pools, out) != CW_OK) {
        if (from)
            cw_det_checkpoint_free(from);
        return out->status;
    }

    cw_checkpoint *next = cp ? cw_det_checkpoint_alloc() : NULL;
    cw_det *d = cp && !next ? NULL : det_open(self, &resolved, pools);
    if (!d) {
        cw_rt_pools_close(pools);
        if (next)
            cw_det_checkpoint_free(next);
        if (from)
            cw_det_checkpoint_free(from);
        return refuse_nomem(out, "the run's records");
    }
    if (cp)
        *cp = next;
    d->thread = pthread_self();
    cw_prng_seed(&d->prng, resolved.seed);
    cw_prng_take_bytes(&d->prng, resolved.random_bytes, resolved.random_len);
    cw_auditor_log_to(&d->auditor, resolved.event_log, resolved.event_log_arg, &d->now);
    d->now = resolved.start_time;
    d->deadline = resolved.timeout > CW_TIME_MAX - d->now ? CW_TIME_MAX : d->now + resolved.timeout;
    if (resolved.timeout == CW_FOREVER)
        d->deadline = CW_TIME_MAX;
    if (from)
        cw_det_resume(d, from);

    /* Without a root the run ends at once; a checkpoint still carries on
     * what a recovered run inherited. */
    run_state how = cw_task_new_root(&d->rt, root, arg) ? RUN_GOING : RUN_NO_ROOT;
    while (how == RUN_GOING) {
        if (d->now >= d->deadline) {
            how = RUN_TIMED_OUT;
            break;
        }
        how = run_iteration(d);
        if (how != RUN_GOING)
            break;
        how = advance(d);
        d->iterations++;
        cw_counter_inc(d->iterations_metric);
    }
    fill_result(d, how, out);
    if (how != RUN_ROOT_DONE)
        out->value = NULL;
    teardown(d, cp);
    cw_rt_pools_close(d->rt.pools);
    if (d->rt.cfg.audit)
        cw_auditor_hex(&d->auditor, out->digest);
    if (cp)
        cw_det_checkpoint_seal(d, *cp);
    det_free(d);
    return out->status;
}

int cw_det_start_as(const cw_backend *self, const cw_config *cfg, cw_task_fn root, void *arg,
                    cw_run_result *out)
{
    return det_run(self, cfg, NULL, root, arg, out, NULL);
}

int cw_det_start_checkpoint_as(const cw_backend *self, const cw_config *cfg, cw_task_fn root,
                               void *arg, cw_run_result *out, cw_checkpoint **cp)
{
    return det_run(self, cfg, NULL, root, arg, out, cp);
}

int cw_det_recover_as(const cw_backend *self, cw_checkpoint *from, cw_task_fn root, void *arg,
                      cw_run_result *out, cw_checkpoint **cp)
{
    /* The settings are the crashed run's: copied out, as `from` goes. */
    cw_config cfg = *cw_det_checkpoint_config(from);
    return det_run(self, &cfg, from, root, arg, out, cp);
}

int cw_det_audit_digest(cw_ctx *ctx, char out[65])
{
    if (!cw_ctx_rt(ctx)->cfg.audit)
        return CW_ERR_UNSUPPORTED;
    cw_auditor_hex(&det_of(cw_ctx_rt(ctx))->auditor, out);
    return CW_OK;
}
