/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * run.c - carrying out a sweep: up to `jobs` child processes at once, each
 * one seed, each in a process group of its own so that a run that times
 * out is killed with everything it started.
 *
 * The parent polls its children every millisecond rather than waiting on
 * SIGCHLD: a sweep's runs last from milliseconds to minutes, and a poll
 * loop keeps the timeouts, the reaping and the progress line in one place
 * with no signal handler to reason about.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "sweep.h"

typedef struct slot {
    pid_t pid; /* 0: free */
    uint64_t seed;
    double started;
    bool timed_out;
} slot;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t cw_sweep_shard_size(const cw_sweep_plan *p)
{
    uint64_t span = p->end - p->first;
    return span / p->shard_n + (span % p->shard_n > p->shard_k ? 1 : 0);
}

uint64_t cw_sweep_shard_seed(const cw_sweep_plan *p, uint64_t i)
{
    return p->first + p->shard_k + i * p->shard_n;
}

/* argv with every "{seed}" replaced; the strings are the child's, which
 * execs or exits right after, so nothing is freed. */
static char **seeded_argv(char **argv, uint64_t seed)
{
    size_t n = 0;
    while (argv[n])
        n++;
    char **out = calloc(n + 1, sizeof *out);
    char num[24];
    snprintf(num, sizeof num, "%" PRIu64, seed);
    for (size_t i = 0; out && i < n; i++) {
        const char *at = strstr(argv[i], "{seed}");
        if (!at) {
            out[i] = argv[i];
            continue;
        }
        size_t len = strlen(argv[i]) + strlen(num);
        out[i] = malloc(len + 1);
        if (!out[i])
            return NULL;
        snprintf(out[i], len + 1, "%.*s%s%s", (int)(at - argv[i]), argv[i], num, at + 6);
    }
    return out;
}

/* Where a run's output goes: its log file, or nowhere. */
static int output_fd(const cw_sweep_plan *p, uint64_t seed)
{
    if (!p->logs)
        return open("/dev/null", O_WRONLY | O_CLOEXEC);
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%" PRIu64 ".log", p->logs, seed);
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

/* In the child: never returns. */
static void child(const cw_sweep_plan *p, uint64_t seed)
{
    setpgid(0, 0);
    char num[24];
    snprintf(num, sizeof num, "%" PRIu64, seed);
    int fd = output_fd(p, seed);
    char **argv = seeded_argv(p->argv, seed);
    if (fd < 0 || !argv || !argv[0] || setenv(p->seed_env, num, 1) != 0)
        _exit(126);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    int null_in = open("/dev/null", O_RDONLY);
    if (null_in >= 0)
        dup2(null_in, STDIN_FILENO);
    execvp(argv[0], argv);
    fprintf(stderr, "cw-sweep: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

static int start(const cw_sweep_plan *p, slot *s, uint64_t seed)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "cw-sweep: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0)
        child(p, seed);
    setpgid(pid, pid); /* also here: the kill on timeout must not race the child's own */
    *s = (slot){pid, seed, now_s(), false};
    return 0;
}

static int add_failure(cw_sweep_report *r, const cw_sweep_failure *f)
{
    if (r->nfailures == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        cw_sweep_failure *grown = realloc(r->failures, cap * sizeof *grown);
        if (!grown)
            return -1;
        r->failures = grown;
        r->cap = cap;
    }
    r->failures[r->nfailures++] = *f;
    return 0;
}

/* A child of slot `s` ended with `status`: count it, keep or drop its log. */
static int finished(const cw_sweep_plan *p, cw_sweep_report *r, slot *s, int status)
{
    cw_sweep_failure f = {s->seed, CW_SWEEP_EXITED, 0, now_s() - s->started};
    s->pid = 0;
    r->ran++;
    if (s->timed_out) {
        f.how = CW_SWEEP_TIMED_OUT;
    } else if (WIFSIGNALED(status)) {
        f.how = CW_SWEEP_SIGNALED;
        f.code = WTERMSIG(status);
    } else if (WEXITSTATUS(status) != 0) {
        f.code = WEXITSTATUS(status);
    } else {
        r->passed++;
        if (p->logs) {
            char path[4096];
            snprintf(path, sizeof path, "%s/seed-%" PRIu64 ".log", p->logs, s->seed);
            unlink(path);
        }
        return 0;
    }
    return add_failure(r, &f);
}

static slot *slot_of(slot *slots, unsigned n, pid_t pid)
{
    for (unsigned i = 0; i < n; i++)
        if (slots[i].pid == pid)
            return &slots[i];
    return NULL;
}

/* Kill the process group of every run past its time. */
static void enforce_timeouts(const cw_sweep_plan *p, slot *slots)
{
    if (!p->timeout_s)
        return;
    double t = now_s();
    for (unsigned i = 0; i < p->jobs; i++)
        if (slots[i].pid && !slots[i].timed_out && t - slots[i].started > p->timeout_s) {
            slots[i].timed_out = true;
            kill(-slots[i].pid, SIGKILL);
        }
}

/* Reap whatever ended; the number of runs still going. */
static int reap(const cw_sweep_plan *p, cw_sweep_report *r, slot *slots, unsigned *running)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        slot *s = slot_of(slots, p->jobs, pid);
        if (!s)
            continue;
        if (s->timed_out || WIFSIGNALED(status) || WEXITSTATUS(status))
            kill(-pid, SIGKILL); /* what the run left behind goes with it */
        (*running)--;
        if (finished(p, r, s, status) != 0)
            return -1;
    }
    return 0;
}

static void progress(const cw_sweep_plan *p, const cw_sweep_report *r, uint64_t total)
{
    if (p->progress)
        fprintf(stderr, "\rcw-sweep: %" PRIu64 "/%" PRIu64 " run, %zu failed", r->ran, total,
                r->nfailures);
}

static int by_seed(const void *a, const void *b)
{
    uint64_t x = ((const cw_sweep_failure *)a)->seed, y = ((const cw_sweep_failure *)b)->seed;
    return x < y ? -1 : x > y;
}

static int prepare_logs(const cw_sweep_plan *p)
{
    if (!p->logs || mkdir(p->logs, 0755) == 0 || errno == EEXIST)
        return 0;
    fprintf(stderr, "cw-sweep: cannot make %s: %s\n", p->logs, strerror(errno));
    return -1;
}

int cw_sweep_run(const cw_sweep_plan *p, cw_sweep_report *out)
{
    memset(out, 0, sizeof *out);
    slot *slots = calloc(p->jobs, sizeof *slots);
    if (!slots || prepare_logs(p) != 0) {
        free(slots);
        return -1;
    }
    double t0 = now_s();
    uint64_t total = cw_sweep_shard_size(p), next = 0;
    unsigned running = 0;
    int rc = 0;
    while (rc == 0 && (running > 0 || next < total)) {
        bool room = out->nfailures < p->max_failures;
        for (unsigned i = 0; room && rc == 0 && i < p->jobs && next < total; i++)
            if (!slots[i].pid && (rc = start(p, &slots[i], cw_sweep_shard_seed(p, next))) == 0) {
                next++;
                running++;
            }
        if (!room && running == 0)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
        enforce_timeouts(p, slots);
        if (rc == 0)
            rc = reap(p, out, slots, &running);
        progress(p, out, total);
    }
    if (p->progress)
        fputc('\n', stderr);
    out->stopped_early = next < total;
    out->seconds = now_s() - t0;
    qsort(out->failures, out->nfailures, sizeof *out->failures, by_seed);
    free(slots);
    return rc;
}

void cw_sweep_report_free(cw_sweep_report *r)
{
    free(r->failures);
    r->failures = NULL;
}
