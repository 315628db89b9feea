/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * sweep.h - what cw-sweep's parts share: the plan of a sweep (from the
 * command line), the runner that carries it out (run.c) and the report it
 * leaves (report.c).
 */
#ifndef CW_SWEEP_H
#define CW_SWEEP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define CW_SWEEP_VERSION "0.1.0"

typedef struct cw_sweep_plan {
    uint64_t first, end;       /* the seeds first .. end-1 */
    uint64_t shard_k, shard_n; /* this shard runs the seeds s with (s - first) % n == k */
    unsigned jobs;             /* runs at once */
    unsigned timeout_s;        /* 0: none */
    unsigned long max_failures;
    const char *seed_env;
    const char *logs; /* NULL: failed runs' output is not kept */
    const char *json; /* NULL: no JSON report */
    bool progress;
    char **argv; /* the program and its arguments, "{seed}" not yet replaced */
} cw_sweep_plan;

enum cw_sweep_outcome { CW_SWEEP_EXITED, CW_SWEEP_SIGNALED, CW_SWEEP_TIMED_OUT };

typedef struct cw_sweep_failure {
    uint64_t seed;
    enum cw_sweep_outcome how;
    int code; /* the exit status or the signal */
    double seconds;
} cw_sweep_failure;

typedef struct cw_sweep_report {
    uint64_t ran, passed;
    bool stopped_early; /* --max-failures reached: some seeds of the shard not run */
    double seconds;
    cw_sweep_failure *failures; /* in seed order */
    size_t nfailures, cap;
} cw_sweep_report;

/* The number of seeds of the plan's shard; seed i of the shard. */
uint64_t cw_sweep_shard_size(const cw_sweep_plan *p);
uint64_t cw_sweep_shard_seed(const cw_sweep_plan *p, uint64_t i);

/* Run every seed of the shard. 0, or -1 when the sweep could not start
 * (the message is printed). The report is the caller's (cw_sweep_report_free). */
int cw_sweep_run(const cw_sweep_plan *p, cw_sweep_report *out);
void cw_sweep_report_free(cw_sweep_report *r);

/* The text report, one failure per line with the command that replays it. */
void cw_sweep_print(const cw_sweep_plan *p, const cw_sweep_report *r, FILE *f);
/* The same as JSON in `path`; 0, or -1 with a message. */
int cw_sweep_write_json(const cw_sweep_plan *p, const cw_sweep_report *r, const char *path);
/* The shell command that runs `seed` alone, in `buf`. */
void cw_sweep_replay(const cw_sweep_plan *p, uint64_t seed, char *buf, size_t len);

#endif
