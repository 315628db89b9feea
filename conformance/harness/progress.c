/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * progress.c - the progress line: a thread redraws it twice a second so
 * that the elapsed time moves while a slow or hanging case runs.
 *
 * Each case runs in a forked child, and a fork copies only the forking
 * thread: the drawing thread therefore shares nothing with it but atomics
 * and draws with write(2), never holding a stdio lock a child could inherit.
 * With --jobs, several cases run at once: the line names the one running
 * longest (the one the rest of the report waits for) and how many run.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness/progress.h"

struct cwc_progress {
    pthread_t thread;
    size_t total;
    atomic_size_t index, running;
    _Atomic(const char *) name;
    atomic_int stop;
    atomic_llong case_start_ns;
};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void draw(cwc_progress *p, long long start_ns)
{
    char line[256];
    const char *name = atomic_load(&p->name);
    long long now = now_ns();
    double in_case = (double)(now - atomic_load(&p->case_start_ns)) / 1e9;
    size_t running = atomic_load(&p->running);
    char others[32] = "";
    if (running > 1)
        snprintf(others, sizeof others, ", %zu running", running);
    int n = snprintf(line, sizeof line, "\r\033[K[%zu/%zu] %.60s  %.1f s%s (total %.0f s)",
                     atomic_load(&p->index), p->total, name ? name : "", in_case, others,
                     (double)(now - start_ns) / 1e9);
    if (n <= 0)
        return;
    ssize_t done =
        write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    (void)done; /* a lost progress line is harmless */
}

static void *drawer(void *arg)
{
    cwc_progress *p = arg;
    long long start = now_ns();
    struct timespec half = {0, 500000000L};
    while (!atomic_load(&p->stop)) {
        draw(p, start);
        nanosleep(&half, NULL);
    }
    return NULL;
}

cwc_progress *cwc_progress_start(size_t total)
{
    if (!isatty(STDERR_FILENO))
        return NULL;
    cwc_progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL; /* no progress line is no loss */
    p->total = total;
    atomic_store(&p->case_start_ns, now_ns());
    if (pthread_create(&p->thread, NULL, drawer, p) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

void cwc_progress_case(cwc_progress *p, const char *name)
{
    if (!p)
        return;
    atomic_store(&p->name, name);
    atomic_store(&p->case_start_ns, now_ns());
    atomic_fetch_add(&p->index, 1);
}

void cwc_progress_jobs(cwc_progress *p, size_t started, size_t running, const char *oldest,
                       double since)
{
    if (!p)
        return;
    atomic_store(&p->name, oldest);
    atomic_store(&p->case_start_ns, (long long)(since * 1e9));
    atomic_store(&p->index, started);
    atomic_store(&p->running, running);
}

void cwc_progress_stop(cwc_progress *p)
{
    if (!p)
        return;
    atomic_store(&p->stop, 1);
    pthread_join(p->thread, NULL);
    static const char erase[] = "\r\033[K";
    ssize_t done = write(STDERR_FILENO, erase, sizeof erase - 1);
    (void)done; /* a line left on the terminal is harmless */
    free(p);
}
