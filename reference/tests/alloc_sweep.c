/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The allocation sweep: each workload runs once to count its allocations,
 * then once per allocation with that one failing, and once more with it
 * and every later one failing (memory gone for good). Every run must end
 * in its own process with the workload's checks passed: a call that could
 * not allocate returned its error and the program went on; no abort, no
 * crash, no hang (each run has ten seconds), and under ASan no leak.
 *
 * A place is where a refused allocation was asked for: its three innermost
 * callers, so that each use of a helper such as cw_grow counts on its own.
 *
 * CW_SWEEP=full runs every failure point of every workload; by default a
 * workload with more points than CW_SWEEP_POINTS (400) is sampled evenly,
 * so make check stays quick. CW_SWEEP_ONLY=name runs one workload, and
 * CW_SWEEP_AT=n only its n-th failure point (with CW_SWEEP_TRACE set, the
 * failing allocation's stack is printed).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cwrt/cwrt.h"
#include "tests/alloc_fail.h"
#include "tests/sweep_workloads.h"

enum { RUN_SECONDS = 10 };

typedef struct outcome {
    int passed, aborted, crashed, wrong, leaked, hung;
} outcome;

/* What a run's child tells: how many allocations it made, and where the
 * first refused one was asked for (0: none was). */
typedef struct report {
    long count;
    unsigned long site;
} report;

/* The places allocations were refused at: of a workload, of the sweep. */
typedef struct site_set {
    unsigned long at[1 << 13];
    size_t n;
} site_set;

static site_set workload_sites, all_sites;

static void site_add(site_set *set, unsigned long site)
{
    for (size_t i = 0; i < set->n; i++)
        if (set->at[i] == site)
            return;
    if (site && set->n < sizeof set->at / sizeof *set->at)
        set->at[set->n++] = site;
}

/* One run of `w` in a child with the n-th allocation failing; how it ended. */
static int run_child(const cw_sweep_workload *w, long n, bool and_after, report *out)
{
    *out = (report){-1, 0};
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(NULL); /* or the child's exit writes the parent's buffered lines again */
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(RUN_SECONDS);
        cw_alloc_fail_arm(n, and_after);
        int rc = cw_sweep_run(w);
        report r = {cw_alloc_count(), cw_alloc_failed_site()};
        cw_alloc_fail_arm(0, false);
        ssize_t wrote = write(fds[1], &r, sizeof r);
        (void)wrote;
        exit(rc == 0 ? 0 : 3); /* exit, not _exit: LeakSanitizer checks at exit */
    }
    close(fds[1]);
    int status;
    waitpid(pid, &status, 0);
    if (read(fds[0], out, sizeof *out) != sizeof *out)
        *out = (report){-1, 0};
    close(fds[0]);
    return status;
}

static void tally(outcome *o, int status, const char *name, long n, bool and_after)
{
    const char *what = NULL;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        o->passed++;
        return;
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)
        o->aborted++, what = "aborted";
    else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        o->hung++, what = "hung";
    else if (WIFSIGNALED(status))
        o->crashed++, what = "crashed";
    else if (WEXITSTATUS(status) == 3)
        o->wrong++, what = "failed its checks";
    else
        o->leaked++, what = "leaked or reported a memory error";
    fprintf(stderr, "sweep: %s with allocation %ld failing%s: %s\n", name, n,
            and_after ? " and every later one" : "", what);
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

/* Every failure point of `w`, or an even sample of them. */
static int sweep(const cw_sweep_workload *w, bool full, long max_points, long *points)
{
    report first;
    int status = run_child(w, 0, false, &first);
    long count = first.count;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || count <= 0) {
        fprintf(stderr, "sweep: %s fails without any allocation failing\n", w->name);
        return 1;
    }
    if (w->max_points && w->max_points < max_points)
        max_points = w->max_points;
    long step = full || count <= max_points ? 1 : (count + max_points - 1) / max_points;
    long only_at = env_long("CW_SWEEP_AT", 0);
    outcome o = {0};
    long run = 0;
    workload_sites.n = 0;
    for (long n = only_at ? only_at : 1; n <= (only_at ? only_at : count); n += step) {
        for (int after = 0; after < 2; after++) {
            report r;
            tally(&o, run_child(w, n, after, &r), w->name, n, after);
            site_add(&workload_sites, r.site);
            site_add(&all_sites, r.site);
            run++;
        }
    }
    *points += run;
    int bad = o.aborted + o.crashed + o.wrong + o.leaked + o.hung;
    printf("sweep: %-17s %5ld allocations, %4ld failure points at %3zu places: %d passed, "
           "%d aborted, %d crashed, %d wrong, %d leaked, %d hung\n",
           w->name, count, run, workload_sites.n, o.passed, o.aborted, o.crashed, o.wrong, o.leaked,
           o.hung);
    return bad != 0;
}

int main(void)
{
    const char *mode = getenv("CW_SWEEP");
    bool full = mode && strcmp(mode, "full") == 0;
    long max_points = env_long("CW_SWEEP_POINTS", 400);
    const char *only = getenv("CW_SWEEP_ONLY");
    int failed = 0;
    long points = 0;
    for (const cw_sweep_workload *w = cw_sweep_workloads; w->name; w++)
        if (!only || strcmp(only, w->name) == 0)
            failed += sweep(w, full, max_points, &points);
    printf("sweep: %ld failure points at %zu places (distinct innermost three callers), %d "
           "workload(s) with a failure\n",
           points, all_sites.n, failed);
    return failed ? 1 : 0;
}
