/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * native.c - the native backend next to plain pthreads, in one run:
 *
 *   spawn      spawn + join of an empty task: native, deterministic, and
 *              pthread_create + pthread_join
 *   pingpong   a value passed back and forth between two tasks through
 *              two channels, against two threads handing off with a mutex
 *              and condition variables
 *   timers     lateness of 10,000 sleeps of 1 ms (p50, p99, max)
 *   sleepers   100,000 tasks sleeping at once: wall time and peak RSS
 *
 * usage: native [spawn|pingpong|timers|sleepers ...]   (default: all)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cwrt/cwrt.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void run(const cw_backend *b, cw_config *cfg, cw_task_fn root, void *arg)
{
    cw_run_result res;
    int rc = cw_start(b, cfg, root, arg, &res);
    if (rc != CW_OK) {
        fprintf(stderr, "bench: run failed: %s: %s\n", cw_strerror(rc), res.message);
        exit(1);
    }
}

/* ---- spawn + join --------------------------------------------------------------- */

enum { SPAWNS = 50000 };

static void *empty_task(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

static void *spawn_root(cw_ctx *ctx, void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++) {
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

static double spawn_ns(const cw_backend *b)
{
    cw_config cfg;
    cw_config_default(&cfg);
    double t0 = now_ns();
    run(b, &cfg, spawn_root, (void *)(intptr_t)SPAWNS);
    return (now_ns() - t0) / SPAWNS;
}

static void bench_spawn(void)
{
    double native = spawn_ns(cw_backend_native());
    double det = spawn_ns(cw_backend_deterministic());
    long threads = SPAWNS / 5;
    double t0 = now_ns();
    for (long i = 0; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, empty_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
            abort();
    }
    double pt = (now_ns() - t0) / (double)threads;
    printf("bench spawn: native_ns=%.0f det_ns=%.0f pthread_ns=%.0f pthread/native=%.2f "
           "pthread/det=%.2f\n",
           native, det, pt, pt / native, pt / det);
}

/* ---- ping-pong ------------------------------------------------------------------- */

enum { PINGS = 200000 };

struct pp {
    cw_chan *to, *from;
};

static void *ponger(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct pp *p = arg;
    long v;
    while (cw_chan_recv(p->to, &v) == CW_OK)
        if (cw_chan_send(p->from, &v) != CW_OK)
            break;
    return NULL;
}

static void *pingpong_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pp p = {cw_chan_new(ctx, sizeof(long), 1), cw_chan_new(ctx, sizeof(long), 1)};
    cw_handle *h = cw_spawn(cw_child(ctx, "pong"), ponger, &p);
    for (long i = 0; i < PINGS; i++) {
        long v = i;
        cw_chan_send(p.to, &v);
        cw_chan_recv(p.from, &v);
    }
    cw_chan_sender_drop(p.to);
    cw_join(h, NULL);
    cw_handle_release(h);
    return NULL;
}

struct handoff {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    long turn; /* even: the pinger's turn, odd: the ponger's */
};

static void *handoff_thread(void *arg)
{
    struct handoff *h = arg;
    pthread_mutex_lock(&h->lock);
    for (long i = 0; i < PINGS; i++) {
        while (h->turn % 2 == 0)
            pthread_cond_wait(&h->cv, &h->lock);
        h->turn++;
        pthread_cond_signal(&h->cv);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static double pthread_pingpong_ns(void)
{
    struct handoff h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    pthread_t t;
    double t0 = now_ns();
    pthread_create(&t, NULL, handoff_thread, &h);
    pthread_mutex_lock(&h.lock);
    for (long i = 0; i < PINGS; i++) {
        h.turn++;
        pthread_cond_signal(&h.cv);
        while (h.turn % 2 == 1)
            pthread_cond_wait(&h.cv, &h.lock);
    }
    pthread_mutex_unlock(&h.lock);
    pthread_join(t, NULL);
    return (now_ns() - t0) / PINGS;
}

static double pingpong_ns(const cw_backend *b, unsigned workers)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.worker_threads = workers;
    double t0 = now_ns();
    run(b, &cfg, pingpong_root, NULL);
    return (now_ns() - t0) / PINGS;
}

static void bench_pingpong(void)
{
    double n1 = pingpong_ns(cw_backend_native(), 1);
    double n2 = pingpong_ns(cw_backend_native(), 2);
    double nd = pingpong_ns(cw_backend_native(), 0); /* one worker per CPU, as the peers */
    double det = pingpong_ns(cw_backend_deterministic(), 0);
    double pt = pthread_pingpong_ns();
    printf("bench pingpong: native_1_worker_ns=%.0f native_2_workers_ns=%.0f "
           "native_default_ns=%.0f det_ns=%.0f pthread_condvar_ns=%.0f pthread/native1=%.2f "
           "pthread/native2=%.2f\n",
           n1, n2, nd, det, pt, pt / n1, pt / n2);
}

/* ---- timer accuracy ---------------------------------------------------------------- */

enum { TIMER_TASKS = 100, SLEEPS_PER_TASK = 100 };

struct lateness {
    double *ns;
    atomic_int next;
};

static void *timer_task(cw_ctx *ctx, void *arg)
{
    struct lateness *l = arg;
    for (int i = 0; i < SLEEPS_PER_TASK; i++) {
        double target = now_ns() + 1e6;
        cw_sleep(ctx, CW_MSEC);
        l->ns[atomic_fetch_add(&l->next, 1)] = now_ns() - target;
    }
    return NULL;
}

static void *timers_root(cw_ctx *ctx, void *arg)
{
    cw_handle *h[TIMER_TASKS];
    for (int i = 0; i < TIMER_TASKS; i++)
        h[i] = cw_spawn(cw_child(ctx, "timer"), timer_task, arg);
    for (int i = 0; i < TIMER_TASKS; i++) {
        cw_join(h[i], NULL);
        cw_handle_release(h[i]);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench_timers(void)
{
    struct lateness l;
    l.ns = calloc(TIMER_TASKS * SLEEPS_PER_TASK, sizeof *l.ns);
    atomic_init(&l.next, 0);
    cw_config cfg;
    cw_config_default(&cfg);
    run(cw_backend_native(), &cfg, timers_root, &l);
    int n = atomic_load(&l.next);
    qsort(l.ns, (size_t)n, sizeof *l.ns, cmp_double);
    /* Baseline: the same sleeps with clock_nanosleep on one thread. */
    double base[1000];
    for (int i = 0; i < 1000; i++) {
        double target = now_ns() + 1e6;
        struct timespec d = {0, 1000000};
        clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
        base[i] = now_ns() - target;
    }
    qsort(base, 1000, sizeof *base, cmp_double);
    printf("bench timers: sleeps=%d late_p50_us=%.1f late_p99_us=%.1f late_max_us=%.1f "
           "nanosleep_p50_us=%.1f nanosleep_p99_us=%.1f\n",
           n, l.ns[n / 2] / 1e3, l.ns[n * 99 / 100] / 1e3, l.ns[n - 1] / 1e3, base[500] / 1e3,
           base[990] / 1e3);
    free(l.ns);
}

/* ---- many sleeping tasks ------------------------------------------------------------- */

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

/* The peak RSS of the calling process, in KiB. */
static long max_rss_kib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        abort();
    return ru.ru_maxrss;
}

/* In a child of its own, so that the peak is the run's. bytes_per_task is
 * what the run adds to the peak the child had before it, per task, as the
 * peers of bench/peers/ count theirs. */
static void bench_sleepers(const cw_backend *b, bool guard)
{
    long *base =
        mmap(NULL, sizeof *base, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        abort();
    double t0 = now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        cw_config cfg;
        cw_config_default(&cfg);
        cfg.stack_guard = guard;
        *base = max_rss_kib();
        run(b, &cfg, sleepers_root, NULL);
        _exit(0);
    }
    int status = 0;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    printf("bench sleepers: backend=%s tasks=%d guard=%d ok=%d wall_s=%.2f peak_rss_mib=%.0f "
           "bytes_per_task=%.0f\n",
           b->name, SLEEPERS, guard, WIFEXITED(status) && WEXITSTATUS(status) == 0,
           (now_ns() - t0) / 1e9, (double)ru.ru_maxrss / 1024.0,
           (double)(ru.ru_maxrss - *base) * 1024.0 / SLEEPERS);
    munmap(base, sizeof *base);
}

int main(int argc, char **argv)
{
    bool all = argc < 2;
    for (int i = all ? 0 : 1; i < (all ? 1 : argc); i++) {
        const char *w = all ? "" : argv[i];
        if (all || !strcmp(w, "spawn"))
            bench_spawn();
        if (all || !strcmp(w, "pingpong"))
            bench_pingpong();
        if (all || !strcmp(w, "timers"))
            bench_timers();
        if (all || !strcmp(w, "sleepers")) {
            bench_sleepers(cw_backend_native(), false);
            bench_sleepers(cw_backend_deterministic(), false);
        }
    }
    return 0;
}
