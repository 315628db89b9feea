/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cwc.h - what a conformance case sees: the backend under test, a way to
 * run a root task on it, and the case-declaring macro.
 *
 * Cases run in a child process each (Check's fork mode), so an assertion
 * may fail from inside any task: it ends that process, not the suite.
 */
#ifndef CWC_H
#define CWC_H

#include <check.h>
#include <stdint.h>

#include "cw/cw.h"

/* The backend under test, and the seed given on the command line. */
extern const cw_backend *cwc_backend;
extern uint64_t cwc_seed;
/* How much slower than an idle ordinary machine this run is, at least 1
 * (timescale.c): every limit in real time is multiplied by it. */
extern double cwc_time_scale;
/* Whether it was measured (--time-scale auto), not given. */
extern bool cwc_time_scale_measured;
double cwc_measure_time_scale(void);
/* The ceiling on each case's address space, in MiB, 0 for none
 * (memlimit.c): settled once the backend is loaded, set in each case. */
extern unsigned long cwc_memory_limit_mib;
void cwc_settle_memory_limit(void);
void cwc_limit_case_memory(void);
/* Each case's own $TMPDIR (scratch.c): made before the case, entered in its
 * process, removed with all in it once the case and its leftovers ended. */
bool cwc_scratch_make(void);
void cwc_scratch_enter(void);
void cwc_scratch_remove(void);
/* A duration of real time (any unit) as this run needs it: a case's own
 * deadline for a thread. */
uint64_t cwc_scaled(uint64_t duration);
/* The I/O mode cwc_config() asks for: CW_IO_AUTO, unless the case runs in
 * each mode (NAT-008, harness/run.c). */
extern cw_io_backend cwc_io_backend;

typedef struct cwc_case {
    const char *name;      /* the seed test's name where it ports one */
    const char *group;     /* the spec section: "runner", "clock"... */
    const char *reqs;      /* requirement IDs it checks, space-separated */
    uint64_t needs;        /* CW_CAP_* and CWC_NEEDS_* bits: the profiles it needs */
    const TTest *test;     /* the Check test function */
    void (*body)(void);    /* what the test runs: the block after CWC_CASE */
    struct cwc_case *next; /* registry */
} cwc_case;

/* The tables a case needs beyond its own group's profile, as `needs` bits
 * next to the CW_CAP_* ones (which name the capability profiles). A case
 * needing a profile the backend does not declare is not applicable. */
#define CWC_NEEDS_BUFFERS (UINT64_C(1) << 32)
#define CWC_NEEDS_METRICS (UINT64_C(1) << 33)
#define CWC_NEEDS_STORAGE (UINT64_C(1) << 34)
#define CWC_NEEDS_NETWORK (UINT64_C(1) << 35)
/* The case checks a rule stated for backends without CW_CAP_DETERMINISTIC
 * ("on a backend without ..."): not applicable to one that declares it. */
#define CWC_UNLESS_DETERMINISTIC (UINT64_C(1) << 40)
/* The same for CW_CAP_PARALLEL ("on a backend without CW_CAP_PARALLEL"). */
#define CWC_UNLESS_PARALLEL (UINT64_C(1) << 42)
/* The case sets cfg.io_backend itself, to each mode it checks: the harness
 * runs it once, not once per mode (harness/run.c). */
#define CWC_OWN_IO (UINT64_C(1) << 41)
/* The case also checks RUN-008 (memory.c): its body runs again and again
 * in one process, and the heap must not grow with the repetitions. Only
 * for a body that leaves nothing behind itself and takes well under a
 * second. */
#define CWC_REPEATED (UINT64_C(1) << 43)

void cwc_register(cwc_case *c);
/* Run a case's body (once, or repeated under CWC_REPEATED) and mark its
 * end: what every case's Check test does. */
void cwc_case_run(const cwc_case *c);
/* Called by every case as its body returns. A case's process that ends
 * with status 0 before (an exit() in the backend) would pass as far as
 * Check can tell; the harness counts it failed without this mark. */
void cwc_case_done(void);
extern int cwc_done_fd;
const cwc_case *cwc_cases(void);

/* The default configuration for this run (defaults plus --seed). */
cw_config cwc_config(void);
/* Run `root` on the backend under test; returns the run's status. */
int cwc_run(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *res);
/* Run and require success: fails the case with the run's message otherwise. */
void *cwc_run_ok(const cw_config *cfg, cw_task_fn root, void *arg);

/* Declare a case. The body follows as a block, like START_TEST:
 *     CWC_CASE(clock_sleep, "clock", "CLK-001 CLK-002", 0) { ... }
 */
#define CWC_CASE(cname, cgroup, creqs, cneeds)                                                     \
    static void cwc_body_##cname(void);                                                            \
    static cwc_case cwc_case_##cname;                                                              \
    START_TEST(cwc_test_##cname)                                                                   \
    {                                                                                              \
        cwc_case_run(&cwc_case_##cname);                                                           \
    }                                                                                              \
    END_TEST                                                                                       \
    static cwc_case cwc_case_##cname = {#cname, cgroup,           creqs, cneeds,                   \
                                        NULL,   cwc_body_##cname, NULL};                           \
    __attribute__((constructor)) static void cwc_register_##cname(void)                            \
    {                                                                                              \
        cwc_case_##cname.test = cwc_test_##cname;                                                  \
        cwc_register(&cwc_case_##cname);                                                           \
    }                                                                                              \
    static void cwc_body_##cname(void)

/* Assertions that read well inside tasks. */
#define CWC_EQ(a, b) ck_assert_int_eq((a), (b))

/* An assertion for loops of many rounds. Check's ck_assert records the
 * place of every assertion that holds with the case's parent process, a
 * write each time: at a hundred thousand rounds that is most of a case's
 * time, and more under a sanitizer. This one costs nothing until it fails. */
#define CWC_REQUIRE(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

#endif
