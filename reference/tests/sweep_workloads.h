/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * sweep_workloads.h - the programs the allocation sweep runs
 * (alloc_sweep.c), each a run's root task. A workload passes when
 * everything it saw is what the spec allows: a call that needed memory and
 * got none returned its error (or what the spec gives instead, such as a
 * spent context), and every call that succeeded did what it should.
 */
#ifndef CW_TESTS_SWEEP_WORKLOADS_H
#define CW_TESTS_SWEEP_WORKLOADS_H

#include "cwrt/cwrt.h"

typedef void *(*cw_sweep_root)(cw_ctx *ctx, void *arg);

typedef struct cw_sweep_workload {
    const char *name;
    cw_sweep_root root; /* the run's root task */
    /* How the root is run: 0 when the run ended as the workload allows. */
    int (*start)(cw_sweep_root root);
    /* The failure points a sampled sweep makes of it at the most, for a
     * workload whose runs are long; 0: as many as the others. */
    long max_points;
} cw_sweep_workload;

/* Ends with an entry whose name is NULL. */
extern const cw_sweep_workload cw_sweep_workloads[];

/* Run `w` (on the deterministic backend unless it says otherwise): 0
 * when its run ended with CW_OK or CW_ERR_NOMEM and its checks saw
 * nothing wrong. */
int cw_sweep_run(const cw_sweep_workload *w);

#endif
