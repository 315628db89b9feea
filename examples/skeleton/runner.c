/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * runner.c - cw_start: check the configuration, set up a run, let the
 * scheduler go, and take everything down when the run ends
 * (spec/02-runner.md).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skeleton.h"

/* The end of the ABI 1.0 configuration: a smaller `size` is refused. */
#define SK_CONFIG_1_0 (offsetof(cw_config, blocking_threads) + sizeof(unsigned))

/* The caller's fields over the defaults, so an older, shorter struct works.
 * NULL when valid, else the reason [RUN-002]. */
static const char *load_config(const cw_config *given, cw_config *cfg)
{
    cw_config_default(cfg);
    if (!given)
        return NULL;
    if (given->size < SK_CONFIG_1_0)
        return "invalid configuration: size is smaller than the ABI 1.0 cw_config";
    memcpy(cfg, given, given->size < sizeof *cfg ? given->size : sizeof *cfg);
    cfg->size = sizeof *cfg;
    if (cfg->cycle == 0)
        return "invalid configuration: cycle must be greater than zero";
    if (cfg->stack_size == 0 || cfg->stack_size > ((size_t)1 << 30))
        return "invalid configuration: stack_size must be in 1 byte ..= 1 GiB";
    if (given->size >= offsetof(cw_config, blob_layouts) + sizeof(cw_blob_range) &&
        (cfg->blob_layouts.first > cfg->blob_layouts.last ||
         cfg->blob_layouts.last > CW_BLOB_LAYOUT_LATEST))
        return "invalid configuration: blob_layouts must be a range of known layouts";
    if (!cw_rate_valid(cfg->network_dial_failure) || !cw_rate_valid(cfg->network_reset) ||
        !cw_storage_faults_valid(&cfg->storage_faults))
        return "invalid configuration: a rate must be a fraction num/den no larger than 1, "
               "and storage_faults.write_mode one of the two";
    return NULL;
}

static int refuse(cw_run_result *out, int status, const char *message)
{
    out->status = status;
    snprintf(out->message, sizeof out->message, "%s", message);
    return status;
}

static bool rt_init(sk_rt *rt, const cw_config *cfg)
{
    pthread_condattr_t attr;
    memset(rt, 0, sizeof *rt);
    rt->cfg = *cfg;
    rt->objects.prev = rt->objects.next = &rt->objects;
    rt->t0_real = sk_real_ns();
    rt->t0_mono = sk_mono_ns();
    rt->end_at =
        cfg->timeout > CW_TIME_MAX - rt->t0_real ? CW_TIME_MAX : rt->t0_real + cfg->timeout;
    if (pthread_condattr_init(&attr) != 0)
        return false;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    bool ok = pthread_cond_init(&rt->cond, &attr) == 0;
    pthread_condattr_destroy(&attr);
    if (ok && pthread_mutex_init(&rt->lock, NULL) != 0) {
        pthread_cond_destroy(&rt->cond);
        ok = false;
    }
    return ok;
}

/* Wakes that came after their task ended hold cell references. */
static void rt_fini(sk_rt *rt)
{
    sk_take_wakes(rt);
    pthread_mutex_destroy(&rt->lock);
    pthread_cond_destroy(&rt->cond);
}

/* The first reason wins [PAN-003]; later ones are ignored. */
void sk_rt_end(sk_rt *rt, int status, void *value, const char *message)
{
    if (rt->ending)
        return;
    rt->ending = true;
    rt->status = status;
    rt->value = value;
    snprintf(rt->message, sizeof rt->message, "%s", message);
}

static void report(const sk_rt *rt, cw_run_result *out)
{
    out->status = rt->status;
    out->value = rt->status == CW_OK ? rt->value : NULL;
    snprintf(out->message, sizeof out->message, "%s", rt->message);
    out->end_time = sk_now(rt);
}

/* Runs on the caller's thread; a nested cw_start from inside a task works
 * because the task running on this thread is put back at the end. */
static void run(sk_rt *rt)
{
    sk_task *outer = sk_current();
    sk_set_current(NULL);
    sk_sched_loop(rt);
    sk_end_tasks(rt);
    sk_obj_destroy_all(rt);
    sk_set_current(outer);
}

int sk_start(const cw_config *given, cw_task_fn root, void *arg, cw_run_result *out)
{
    cw_config cfg;
    memset(out, 0, sizeof *out);
    const char *invalid = load_config(given, &cfg);
    if (invalid)
        return refuse(out, CW_ERR_INVALID, invalid);
    sk_rt *rt = malloc(sizeof *rt);
    if (!rt || !rt_init(rt, &cfg)) {
        free(rt);
        return refuse(out, CW_ERR_NOMEM, "out of memory");
    }
    sk_node *spent_node = sk_node_new(NULL);
    rt->spent = spent_node ? sk_ctx_new(rt, spent_node, "", NULL) : NULL;
    rt->spent_signal = sk_signal_spent_new(rt);
    if (!rt->spent || !rt->spent_signal) {
        sk_obj_destroy_all(rt);
        rt_fini(rt);
        free(rt);
        return refuse(out, CW_ERR_NOMEM, "out of memory");
    }
    rt->spent->spent = true;
    if (!sk_root_task(rt, root, arg))
        sk_rt_end(rt, CW_ERR_NOMEM, NULL, "out of memory");
    run(rt);
    report(rt, out);
    rt_fini(rt);
    free(rt);
    return out->status;
}
