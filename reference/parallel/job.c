/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * job.c - one closure on a strategy's pool, joined from a task.
 *
 * A job is like a spawned task whose handle may be released: it runs to
 * its end whatever the submitter does. Its memory therefore has two
 * owners, the submitter (until join or release) and the run of the job,
 * and the last of them frees it.
 */
#include <stdlib.h>

#include "parallel/parallel.h"

struct cw_job {
    cw_pool_item item; /* first: the pool hands back this pointer */
    cw_strategy *strategy;
    cw_job_fn fn;
    void *arg;
    void *value;    /* written before the latch opens */
    cw_latch latch; /* opens once the job ran */
    atomic_int owners;
};

static void job_unref(cw_job *j)
{
    if (atomic_fetch_sub(&j->owners, 1) == 1) {
        cw_latch_destroy(&j->latch);
        free(j);
    }
}

static void job_run(cw_pool_item *item)
{
    cw_job *j = (cw_job *)item;
    j->value = j->fn(j->strategy, j->arg);
    cw_latch_count_down(&j->latch);
    job_unref(j);
}

int cw_strategy_spawn(cw_strategy *s, cw_job_fn fn, void *arg, cw_job **out)
{
    *out = NULL;
    if (!fn)
        return CW_ERR_INVALID;
    cw_job *j = calloc(1, sizeof *j);
    if (!j)
        return CW_ERR_NOMEM;
    j->item.run = job_run;
    j->strategy = s;
    j->fn = fn;
    j->arg = arg;
    cw_latch_init(&j->latch, 1);
    atomic_init(&j->owners, 2);
    if (!cw_strategy_submit(s, &j->item, &j->item))
        job_run(&j->item);
    *out = j;
    return CW_OK;
}

/* The joiner was aborted: the job runs on without it. */
static void job_detach(void *arg)
{
    job_unref(arg);
}

int cw_job_join(cw_job *j, cw_ctx *ctx, void **value)
{
    cw_latch_wait(&j->latch, ctx, job_detach, j);
    if (value)
        *value = j->value;
    job_unref(j);
    return CW_OK;
}

void cw_job_release(cw_job *j)
{
    job_unref(j);
}
