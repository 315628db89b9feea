/*
 * sweep_workloads.h - the programs the allocation sweep runs
 * (test_alloc_sweep.c). Each returns 0 when everything it saw is what the
 * spec allows: a call that needed memory and got none returned its error
 * (or NULL where the header says so), and every call that succeeded did
 * what it should.
 */
#ifndef CW_TESTS_SWEEP_WORKLOADS_H
#define CW_TESTS_SWEEP_WORKLOADS_H

typedef struct cw_sweep_workload {
    const char *name;
    int (*run)(void);
} cw_sweep_workload;

/* Ends with an entry whose name is NULL. */
extern const cw_sweep_workload cw_sweep_workloads[];

#endif
