/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * alloc_sweep.h - the allocation sweep that alloc_faults.c and
 * alloc_faults_more.c share (RUN-007, RUN-008): a workload is run once
 * with every allocation allowed, recording the places it allocates at,
 * then once per place in a child process with that allocation refused.
 * Its checks say what each call must do when memory runs out; the sweep
 * says where a run crashed, hung, failed a check, or kept memory or a
 * descriptor.
 *
 * A workload is a root task and, when a plain run of it with cwc_config()
 * is not what it needs, a run of its own (a configuration, a checkpoint to
 * recover) and what that run needs made before any allocation is refused.
 */
#ifndef CWC_ALLOC_SWEEP_H
#define CWC_ALLOC_SWEEP_H

#include "cases/util.h"

/* A failed check of a run: the first one is kept, with its place, as what
 * the run did wrong. */
#define EXPECT(cond) cwc_sweep_expect((cond), #cond, __FILE__, __LINE__)

void cwc_sweep_expect(bool ok, const char *what, const char *file, int line);

/* Whether `rc` is CW_OK or CW_ERR_NOMEM. */
bool cwc_ok_or_nomem(int rc);

/* `text` from `sink` to `stream`: it arrives whole, or a call said it
 * found no memory (NET-034); checked with EXPECT. */
void cwc_sweep_exchange(cw_sink *sink, cw_stream *stream, const char *text);

/* The root of the run began: after that a checkpoint is handed back
 * whatever the memory (DET-008). */
void cwc_sweep_root_began(void);

/* Whether the root of this run began. */
bool cwc_sweep_root_has_begun(void);

/* A run of `root` as `cfg` says, checked as RUN-007 says: it ends with
 * CW_OK or CW_ERR_NOMEM (with a reason), and its status is its result's. */
void cwc_sweep_run_config(const cw_config *cfg, cw_task_fn root);

/* Checks of a run that hands back a checkpoint: `rc` its status, `res`
 * its result, `cp` what it gave for the checkpoint (freed here) [DET-008]. */
void cwc_sweep_check_checkpoint(int rc, const cw_run_result *res, cw_checkpoint *cp);

typedef struct cwc_workload {
    cw_task_fn root;
    /* Made in the run's process before anything is refused (or recorded),
     * and handed to `run`; NULL for nothing. */
    void *(*prepare)(void);
    /* The run of `root`, checked; NULL for a run with cwc_config(). It
     * must consume what `prepare` made, whatever the memory. */
    void (*run)(cw_task_fn root, void *prepared);
} cwc_workload;

/* The sweep of `w`: every place it allocates at, refused in turn. */
void cwc_sweep_workload(const cwc_workload *w);

/* The sweep of a plain run of `root`. */
void cwc_sweep(cw_task_fn root);

#endif
