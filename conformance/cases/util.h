/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * util.h - small helpers shared by the case files: tasks that never end,
 * and the one-line waits the seed's tests write as `.await`.
 */
#ifndef CWC_CASES_UTIL_H
#define CWC_CASES_UTIL_H

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/cwc.h"

/* Whether `rc`, the status of a run that asked for CW_IO_URING, is the
 * refusal NAT-008 allows when the run can have no ring: CW_ERR_UNSUPPORTED
 * where there is none to have, CW_ERR_NOMEM where it lacked resources. */
static inline bool cwc_no_ring(int rc)
{
    return rc == CW_ERR_UNSUPPORTED || rc == CW_ERR_NOMEM;
}

/* A task body that waits forever (until aborted). */
static inline void *cwc_pending_task(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_wait w = cw_wait_pending(ctx);
    cw_select(&w, 1);
    return NULL;
}

/* A task body that yields forever. */
static inline void *cwc_spin_task(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (;;)
        cw_yield(ctx);
    return NULL;
}

static inline void *cwc_return_42(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    return (void *)(intptr_t)42;
}

/* Send a unit value on a oneshot and require that it arrived. */
static inline void cwc_notify(cw_oneshot *o)
{
    char unit = 1;
    ck_assert_int_eq(cw_oneshot_send(o, &unit), CW_OK);
}

static inline void cwc_await(cw_oneshot *o)
{
    char unit;
    ck_assert_int_eq(cw_oneshot_recv(o, &unit), CW_OK);
}

/* A thread held as a blocking call holds it: the holder says it started,
 * then keeps its thread until the case lets it go. */
typedef struct cwc_hold {
    atomic_int started, release;
} cwc_hold;

static inline void cwc_hold_init(cwc_hold *h)
{
    atomic_init(&h->started, 0);
    atomic_init(&h->release, 0);
}

static inline void cwc_hold_thread(cwc_hold *h)
{
    atomic_store(&h->started, 1);
    while (!atomic_load(&h->release))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

/* The threads of this process now, or -1: runs must leave none behind.
 * Read with open and read alone, so that it allocates nothing and works
 * as well in a run whose memory is refused (cases/alloc_sweep.h). */
static inline int cwc_thread_count(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0)
        return -1;
    buf[len] = '\0';
    const char *at = strstr(buf, "\nThreads:");
    return at ? atoi(at + strlen("\nThreads:")) : -1;
}

/* Whether the process is down to at most `n` threads, waiting up to 10 s
 * for it: a thread that was joined is still listed until the kernel has
 * reaped it, a moment that a loaded machine makes long. */
static inline bool cwc_threads_at_most(int n)
{
    for (int waited_ms = 0; waited_ms < 10000; waited_ms++) {
        if (cwc_thread_count() <= n)
            return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return cwc_thread_count() <= n;
}

/* In a child process a case forked: end it (SIGALRM's default action)
 * after `seconds`. The test runner's handler, inherited through fork,
 * would kill the case's whole process group instead. */
static inline void cwc_child_alarm(unsigned seconds)
{
    signal(SIGALRM, SIG_DFL);
    alarm(seconds);
}

/* A run of `root` with `cfg` (NULL: the defaults) in a child process of
 * its own, for a run that must end its process (00-conventions.md, "When
 * the process ends"): the child's wait status, with what it wrote to the
 * standard error stream in said[0 .. cap) (NUL-ended). A run that returns
 * makes the child exit with 0. */
static inline int cwc_run_in_child(const cw_config *cfg, cw_task_fn root, void *arg, char *said,
                                   size_t cap)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        if (dup2(fds[1], STDERR_FILENO) < 0)
            _exit(3);
        cw_run_result res;
        cwc_run(cfg, root, arg, &res);
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    for (ssize_t r; (r = read(fds[0], said + n, cap - 1 - n)) > 0;)
        n += (size_t)r;
    said[n] = '\0';
    close(fds[0]);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return status;
}

/* The process's monotonic clock in ns, for a case's own time bounds
 * (never the runtime's clock, which a deterministic backend controls). */
static inline uint64_t cwc_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The CPU time the whole process uses over a sleep of `ms` by the calling
 * task [NAT-010]. A loaded machine gives a thread that spins less CPU,
 * never one that sleeps more. */
static inline uint64_t cwc_cpu_over_sleep(cw_ctx *ctx, cw_time ms)
{
    struct rusage u[2];
    ck_assert_int_eq(getrusage(RUSAGE_SELF, &u[0]), 0);
    ck_assert_int_eq(cw_sleep(ctx, ms * CW_MSEC), CW_OK);
    ck_assert_int_eq(getrusage(RUSAGE_SELF, &u[1]), 0);
    uint64_t ns[2];
    for (int i = 0; i < 2; i++)
        ns[i] = ((uint64_t)u[i].ru_utime.tv_sec + (uint64_t)u[i].ru_stime.tv_sec) * 1000000000u +
                ((uint64_t)u[i].ru_utime.tv_usec + (uint64_t)u[i].ru_stime.tv_usec) * 1000u;
    return ns[1] - ns[0];
}

#endif
