/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * io_threads.h - the native backend's I/O threads (io_threads.c): blocking
 * system calls made off the worker threads while the asking task is parked.
 * File storage makes every call through them.
 */
#ifndef CW_NATIVE_IO_THREADS_H
#define CW_NATIVE_IO_THREADS_H

#include <stdatomic.h>

#include "core/sched.h"

typedef struct cw_offload cw_offload;
typedef struct cw_job cw_job;

enum cw_job_state { CW_JOB_WAITING, CW_JOB_PARKED, CW_JOB_FINISHED };

struct cw_job {
    void (*fn)(cw_job *job);   /* runs on an I/O thread */
    void (*done)(cw_job *job); /* after fn, on that thread: NULL for a waiting task */
    cw_task *task;             /* the task waiting until fn has run */
    atomic_int state;          /* enum cw_job_state; changed under the offload's lock */
    cw_job *next;
};

/* A pool of at most `max_threads` threads, started as jobs need them. */
cw_offload *cw_offload_new(cw_rt *rt, unsigned max_threads);
/* Run job->fn on a pool thread while the calling task is suspended; it is
 * resumed only after fn has returned, whatever wakes it meanwhile. */
void cw_offload_run(cw_offload *o, cw_job *job);
/* Queue job->fn, then job->done; returns at once. */
void cw_offload_submit(cw_offload *o, cw_job *job);
/* Wait until no job is queued or running. */
void cw_offload_drain(cw_offload *o);
/* Run what is queued, then stop and join every thread. */
void cw_offload_free(cw_offload *o);

#endif
