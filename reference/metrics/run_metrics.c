/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * run_metrics.c - the metrics every run keeps about itself: its tasks, and its
 * two buffer pools. The schedulers add their own (deterministic/).
 *
 * Task series are labelled by the spawning context's label path, the kind
 * (Root or Task) and the execution mode, never by attributes, so a
 * program that spawns with a new attribute value each round still has one
 * series per place in its code. A task keeps a pointer to its
 * runtime_tasks_running series and gives it back exactly once.
 *
 * The pool metrics mirror counters the pools keep anyway: they are read
 * when the registry is encoded, so allocation paths pay nothing for them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "metrics/metrics.h"

static const char *const task_labels[3] = {"name", "kind", "execution"};
static const char *const pool_labels[1] = {"size_class"};
static const char *const pool_prefix[2] = {"runtime_network_buffer_pool_",
                                           "runtime_storage_buffer_pool_"};

cw_metric *cw_rt_metric(cw_rt *rt, const char *name, const char *help, int kind,
                        const char *const *labels, size_t nlabels)
{
    cw_metric_type type = {kind, NULL, 0, labels, nlabels};
    char why[256];
    cw_metric *m =
        cw_registry_add(cw_metrics_of(rt)->reg, name, help, &type, NULL, 0, why, sizeof why);
    if (!m && why[0]) /* two of the runtime's own names clash: a bug here */
        cw_fatal("registering the runtime's metric %s: %s", name, why);
    return m;
}

static cw_metric *pool_metric(cw_rt *rt, int pool, const char *name, const char *help, int kind,
                              size_t nlabels)
{
    char full[128];
    snprintf(full, sizeof full, "%s%s", pool_prefix[pool], name);
    return cw_rt_metric(rt, full, help, kind, pool_labels, nlabels);
}

/* Before an encode: copy each pool's counters into its metrics. A class
 * that has neither made nor refused a buffer has no series yet. */
static void collect_pools(void *arg)
{
    cw_rt *rt = arg;
    cw_rt_metrics *rm = cw_metrics_of(rt);
    for (int k = 0; k < 2; k++) {
        cw_bufpool *pool = cw_rt_pool(rt, k);
        if (!pool)
            continue;
        cw_bufpool_stats st;
        uint64_t oversized = 0;
        for (size_t i = 0; cw_bufpool_class_stats(pool, i, &st) == CW_OK; i++) {
            oversized = st.oversized;
            if (!st.created && !st.exhausted)
                continue;
            char size[24];
            snprintf(size, sizeof size, "%zu", st.size);
            const char *values[1] = {size};
            /* A series with no memory to be made shows at a later encode. */
            cw_metric *created = cw_family_child(rm->pool_created[k], values);
            cw_metric *exhausted = cw_family_child(rm->pool_exhausted[k], values);
            if (created)
                cw_metric_gauge_set(created, (int64_t)st.created);
            if (exhausted)
                cw_series_store(exhausted, st.exhausted);
        }
        cw_series_store(rm->pool_oversized[k], oversized);
    }
}

static const char *execution_name(int execution)
{
    switch (execution) {
    case CW_EXEC_SHARED_BLOCKING:
        return "SharedBlocking";
    case CW_EXEC_DEDICATED:
        return "Dedicated";
    default:
        return "Shared";
    }
}

/* The series of `family` for a task labelled `label`. */
static cw_metric *task_series(cw_registry *reg, cw_metric *family, const char *label, bool root,
                              int execution)
{
    const char *values[3] = {label, root ? "Root" : "Task", execution_name(execution)};
    cw_registry_lock(reg);
    cw_metric *series = cw_family_child(family, values);
    cw_registry_unlock(reg);
    return series;
}

/* The task observer (core/ext.h): each task's word holds its
 * runtime_tasks_running series until it stops running. */
/* Both series of a spawn are made before either changes, so a spawn
 * refused for lack of memory is counted nowhere. */
static int count_spawn(cw_rt *rt, const char *label, bool root, int execution, cw_metric **running)
{
    cw_rt_metrics *rm = cw_metrics_of(rt);
    cw_metric *spawned = task_series(rm->reg, rm->tasks_spawned, label, root, execution);
    *running = task_series(rm->reg, rm->tasks_running, label, root, execution);
    if (!spawned || !*running)
        return CW_ERR_NOMEM;
    cw_metric_counter_add(spawned, 1);
    return CW_OK;
}

static int task_admitted(cw_task *t)
{
    cw_rt *rt = cw_task_rt(t);
    cw_metric *running;
    int rc = count_spawn(rt, cw_task_label(t), t == cw_rt_root(rt), cw_task_execution(t), &running);
    if (rc != CW_OK)
        return rc;
    *cw_task_observer_word(t) = running;
    cw_metric_gauge_add(running, 1);
    return CW_OK;
}

/* Its running series exists from now on, at the value it had. */
static int task_refused(cw_rt *rt, const cw_ctx *ctx)
{
    cw_metric *running;
    return count_spawn(rt, cw_core_label(ctx), false, cw_ctx_execution(ctx), &running);
}

static void task_stopped(cw_task *t)
{
    void **running = cw_task_observer_word(t);
    if (!*running)
        return;
    cw_metric_gauge_add(*running, -1);
    *running = NULL;
}

static const cw_task_observer task_observer = {task_admitted, task_refused, task_stopped};

static void metrics_close(cw_rt *rt, void *state)
{
    (void)rt;
    cw_rt_metrics *rm = state;
    cw_registry_free(rm->reg);
    free(rm);
}

int cw_rt_metrics_open(cw_rt *rt)
{
    cw_rt_metrics *rm = calloc(1, sizeof *rm);
    cw_registry *reg = rm ? cw_registry_new(cw_rt_backend(rt)) : NULL;
    if (!reg) {
        free(rm);
        return CW_ERR_NOMEM;
    }
    rm->reg = reg;
    cw_ext_attach(rt, CW_EXT_METRICS, rm, metrics_close);
    cw_rt_observe_tasks(rt, &task_observer);
    rm->tasks_spawned = cw_rt_metric(rt, "runtime_tasks_spawned", "Total number of tasks spawned",
                                     CW_METRIC_COUNTER, task_labels, 3);
    rm->tasks_running =
        cw_rt_metric(rt, "runtime_tasks_running", "Number of tasks currently running",
                     CW_METRIC_GAUGE, task_labels, 3);
    for (int k = 0; k < 2; k++) {
        rm->pool_created[k] =
            pool_metric(rt, k, "buffer_pool_created",
                        "Number of tracked buffers created for the pool", CW_METRIC_GAUGE, 1);
        rm->pool_exhausted[k] = pool_metric(
            rt, k, "buffer_pool_exhausted",
            "Total number of failed allocations due to pool exhaustion", CW_METRIC_COUNTER, 1);
        rm->pool_oversized[k] =
            pool_metric(rt, k, "buffer_pool_oversized",
                        "Total number of oversized allocation requests", CW_METRIC_COUNTER, 0);
    }
    rm->reg->collect = collect_pools;
    rm->reg->collect_arg = rt;
    bool all = rm->tasks_spawned && rm->tasks_running;
    for (int k = 0; k < 2; k++)
        all = all && rm->pool_created[k] && rm->pool_exhausted[k] && rm->pool_oversized[k];
    return all ? CW_OK : CW_ERR_NOMEM; /* what was made goes with the run */
}

cw_metric *cw_task_metrics_polls(cw_rt *rt, cw_metric *polls, const cw_task *t)
{
    return task_series(cw_metrics_of(rt)->reg, polls, cw_task_label(t), t == cw_rt_root(rt),
                       cw_task_execution(t));
}
