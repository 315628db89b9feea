/*
 * runtime.c - costs of the deterministic backend's core operations, each
 * next to a baseline measured in the same run:
 *
 *   yield      a yield round trip between two tasks, against the bare
 *              coroutine switch of the same mechanism and swapcontext(3)
 *   spawn      spawn + join of an empty task, against pthread_create+join
 *   sleepers   100,000 tasks sleeping at once: wall time and peak RSS
 *
 * usage: runtime [yield|spawn|sleepers ...]   (default: all)
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/coro.h"
#include "cwrt/cwrt.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- yield round trip -------------------------------------------------------- */

enum { YIELD_ROUNDS = 1000000, SWITCH_ROUNDS = 10000000 };

static void *yielder(cw_ctx *ctx, void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++)
        cw_yield(ctx);
    return NULL;
}

/* Two tasks yielding to each other: with two ready tasks, each iteration
 * resumes both, so one iteration is one round trip. */
static void *yield_root(cw_ctx *ctx, void *arg)
{
    cw_handle *a = cw_spawn(cw_child(ctx, "a"), yielder, arg);
    cw_handle *b = cw_spawn(cw_child(ctx, "b"), yielder, arg);
    cw_join(a, NULL);
    cw_join(b, NULL);
    cw_handle_release(a);
    cw_handle_release(b);
    return NULL;
}

static cw_coro main_coro, ping_coro;
static ucontext_t main_uc, ping_uc;

static void ping(void *arg)
{
    (void)arg;
    for (;;)
        cw_coro_switch(&ping_coro, &main_coro);
}

static void uc_ping(void)
{
    for (;;)
        swapcontext(&ping_uc, &main_uc);
}

static double bare_switch_ns(void)
{
    cw_stack s;
    if (cw_stack_alloc(&s, 64 * 1024) != 0)
        abort();
    cw_coro_init(&ping_coro, &s, ping, NULL);
    double t0 = now_ns();
    for (long i = 0; i < SWITCH_ROUNDS; i++)
        cw_coro_switch(&main_coro, &ping_coro);
    return (now_ns() - t0) / SWITCH_ROUNDS;
}

static double swapcontext_ns(void)
{
    static char stack[64 * 1024];
    getcontext(&ping_uc);
    ping_uc.uc_stack.ss_sp = stack;
    ping_uc.uc_stack.ss_size = sizeof stack;
    ping_uc.uc_link = NULL;
    makecontext(&ping_uc, uc_ping, 0);
    long rounds = SWITCH_ROUNDS / 10;
    double t0 = now_ns();
    for (long i = 0; i < rounds; i++)
        swapcontext(&main_uc, &ping_uc);
    return (now_ns() - t0) / (double)rounds;
}

static double yield_round_trip_ns(const cw_backend *b, bool audit)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.audit = audit;
    cfg.worker_threads = 1; /* native: the two tasks take turns on one worker */
    cw_run_result res;
    double t0 = now_ns();
    if (cw_start(b, &cfg, yield_root, (void *)(intptr_t)YIELD_ROUNDS, &res) != CW_OK)
        abort();
    return (now_ns() - t0) / YIELD_ROUNDS;
}

static void bench_yield(void)
{
    double audited = yield_round_trip_ns(cw_backend_deterministic(), true);
    double plain = yield_round_trip_ns(cw_backend_deterministic(), false);
    double native = yield_round_trip_ns(cw_backend_native(), false);
    double bare = bare_switch_ns();
    double uc = swapcontext_ns();
    printf("bench yield: det_audit_ns=%.1f det_no_audit_ns=%.1f native_1_worker_ns=%.1f "
           "bare_switch_ns=%.1f swapcontext_ns=%.1f (round trips)\n",
           audited, plain, native, bare, uc);
    printf("bench yield ratios: det_audit/bare=%.2f det_no_audit/bare=%.2f "
           "swapcontext/det_audit=%.2f swapcontext/det_no_audit=%.2f swapcontext/bare=%.2f\n",
           audited / bare, plain / bare, uc / audited, uc / plain, uc / bare);
}

/* ---- spawn + join ------------------------------------------------------------- */

enum { SPAWNS = 200000 };

static void *empty_task(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

static void *spawn_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (long i = 0; i < SPAWNS; i++) {
        cw_handle *h = cw_spawn(cw_child(ctx, "t"), empty_task, NULL);
        cw_join(h, NULL);
        cw_handle_release(h);
    }
    return NULL;
}

static void *empty_thread(void *arg)
{
    return arg;
}

static void bench_spawn(void)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cw_run_result res;
    double t0 = now_ns();
    if (cw_start(cw_backend_deterministic(), &cfg, spawn_root, NULL, &res) != CW_OK)
        abort();
    double det = (now_ns() - t0) / SPAWNS;
    long threads = SPAWNS / 10;
    t0 = now_ns();
    for (long i = 0; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, empty_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
            abort();
    }
    double pt = (now_ns() - t0) / (double)threads;
    printf("bench spawn: det_spawn_join_ns=%.1f pthread_create_join_ns=%.1f pthread/det=%.2f\n",
           det, pt, pt / det);
}

/* ---- many sleeping tasks ---------------------------------------------------------- */

enum { SLEEPERS = 100000 };

static void *sleeper(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_sleep(ctx, CW_SEC);
    return NULL;
}

static void *sleepers_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle **h = malloc(SLEEPERS * sizeof *h);
    for (long i = 0; i < SLEEPERS; i++)
        h[i] = cw_spawn(cw_child(ctx, "s"), sleeper, NULL);
    for (long i = 0; i < SLEEPERS; i++) {
        if (cw_join(h[i], NULL) != CW_OK)
            abort();
        cw_handle_release(h[i]);
    }
    free(h);
    return NULL;
}

/* In a child process, so its peak RSS is the run's alone. */
static void bench_sleepers(int guard)
{
    double t0 = now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        cw_config cfg;
        cw_config_default(&cfg);
        cfg.stack_guard = guard;
        cw_run_result res;
        int rc = cw_start(cw_backend_deterministic(), &cfg, sleepers_root, NULL, &res);
        if (rc != CW_OK)
            fprintf(stderr, "sleepers: %s: %s\n", cw_strerror(rc), res.message);
        _exit(rc == CW_OK ? 0 : 1);
    }
    int status = 0;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    double secs = (now_ns() - t0) / 1e9;
    printf("bench sleepers: tasks=%d guard=%d ok=%d wall_s=%.3f peak_rss_mib=%.1f "
           "per_task_kib=%.2f\n",
           SLEEPERS, guard, WIFEXITED(status) && WEXITSTATUS(status) == 0, secs,
           (double)ru.ru_maxrss / 1024.0, (double)ru.ru_maxrss / SLEEPERS);
}

int main(int argc, char **argv)
{
    int all = argc < 2;
    for (int i = all ? 0 : 1; i < (all ? 1 : argc); i++) {
        const char *what = all ? "all" : argv[i];
        if (all || !strcmp(what, "yield"))
            bench_yield();
        if (all || !strcmp(what, "spawn"))
            bench_spawn();
        if (all || !strcmp(what, "sleepers")) {
            bench_sleepers(1);
            bench_sleepers(0);
        }
    }
    return 0;
}
