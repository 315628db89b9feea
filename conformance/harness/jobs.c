/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * jobs.c - --jobs N: the selected cases of a run, N at a time.
 *
 * Check keeps its fork mode's state (the message channel, the alarm of
 * the timeout, the process group to kill) in globals of the process, so
 * two cases cannot run under one harness process at once. Each case
 * therefore runs in a process of the harness's own, its job, forked for
 * it: the job runs the case exactly as a serial run does (cwc_run_case:
 * its --repeat, its I/O modes, its timeout times the time scale, the
 * memory ceiling set in the case's process) and sends its result back
 * through a pipe. The harness keeps the results in the suite's order, so
 * that every report, and what is said on stderr of a case's leftovers,
 * comes out as a serial run's does.
 *
 * Leftovers: a job is the subreaper of its own case (reaper.c), kills
 * what the case left behind once it has ended, and only then reports; the
 * harness, still the subreaper of everything, kills what reaches it
 * otherwise (the processes of a job that died, or that --fail-fast
 * stopped) and spares its running jobs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/progress.h"
#include "harness/reaper.h"
#include "harness/report.h"

typedef struct cwc_job {
    pid_t pid; /* 0: a free slot */
    int fd;    /* the read end of its result pipe */
    size_t index;
    double started;
} cwc_job;

typedef struct cwc_jobs {
    const cwc_options *opt;
    cwc_report *r;
    cwc_progress *pg;
    cwc_job *slots;        /* opt->jobs of them */
    struct pollfd *polled; /* room for each job: what take_results polls */
    pid_t *keep;           /* and what free_job spares */
    size_t running, started;
    bool *done;  /* per result: in, or never to come */
    size_t said; /* the results before this one have been said, in order */
} cwc_jobs;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The job's side: run the case, send the whole result, end. Nothing of
 * the harness's stdio is flushed here (_exit): the harness flushed it
 * before the fork, and still owns it. */
static _Noreturn void job_main(const cwc_jobs *s, size_t index, int fd)
{
    for (size_t k = 0; k < s->opt->jobs; k++)
        if (s->slots[k].pid)
            close(s->slots[k].fd);
    cwc_become_subreaper();
    cwc_result *x = &s->r->results[index];
    cwc_run_case(s->opt, s->r, x);
    ssize_t n = write(fd, x, sizeof *x); /* below PIPE_BUF: whole or not at all */
    _exit(n == (ssize_t)sizeof *x ? 0 : 1);
}

static cwc_job *free_slot(cwc_jobs *s)
{
    for (size_t k = 0; k < s->opt->jobs; k++)
        if (!s->slots[k].pid)
            return &s->slots[k];
    return NULL;
}

/* Start case `index` in a job of its own; -1 with errno when the system
 * has no pipe or process to spare. */
static int launch(cwc_jobs *s, size_t index)
{
    int p[2];
    cwc_job *j = free_slot(s);
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        job_main(s, index, p[1]);
    }
    int saved = errno;
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        errno = saved;
        return -1;
    }
    *j = (cwc_job){.pid = pid, .fd = p[0], .index = index, .started = now_seconds()};
    s->running++;
    s->started++;
    return 0;
}

/* The progress line names the job running longest: the lowest case. */
static void show(const cwc_jobs *s)
{
    const cwc_job *oldest = NULL;
    for (size_t k = 0; k < s->opt->jobs; k++)
        if (s->slots[k].pid && (!oldest || s->slots[k].index < oldest->index))
            oldest = &s->slots[k];
    if (oldest)
        cwc_progress_jobs(s->pg, s->started, s->running, s->r->results[oldest->index].c->name,
                          oldest->started);
}

/* What the cases left behind, said on stderr in the suite's order, as
 * far as the results have come in. */
static void say_in_order(cwc_jobs *s)
{
    while (s->said < s->r->n && (s->done[s->said] || !s->r->results[s->said].selected)) {
        if (s->r->results[s->said].selected)
            cwc_say_leftovers(&s->r->results[s->said]);
        s->said++;
    }
}

/* Read a whole result from a job's pipe; false at an end without one. */
static bool read_result(int fd, cwc_result *into)
{
    size_t got = 0;
    while (got < sizeof *into) {
        ssize_t n = read(fd, (char *)into + got, sizeof *into - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return true;
}

/* Close a job's pipe, reap it and free its slot; then kill what reached
 * the harness meanwhile, sparing the other jobs: how many. A job kills
 * its case's leftovers before it reports, so these come from a job that
 * could not (it died, or was stopped). */
static int free_job(cwc_jobs *s, cwc_job *j, int *status)
{
    close(j->fd);
    while (waitpid(j->pid, status, 0) < 0 && errno == EINTR)
        ;
    j->pid = 0;
    s->running--;
    size_t nkeep = 0;
    for (size_t k = 0; k < s->opt->jobs; k++)
        if (s->slots[k].pid)
            s->keep[nkeep++] = s->slots[k].pid;
    return cwc_reap_strays(s->keep, nkeep);
}

/* A job's result is in (or its pipe ended): take it into the report. */
static void finish(cwc_jobs *s, cwc_job *j)
{
    cwc_result *x = &s->r->results[j->index], got;
    bool whole = read_result(j->fd, &got) && got.c == x->c;
    int status = 0;
    size_t index = j->index;
    int strays = free_job(s, j, &status);
    x->left = strays;
    if (whole) {
        x->status = got.status;
        x->seconds = got.seconds;
        x->left += got.left;
        memcpy(x->reason, got.reason, sizeof x->reason);
    } else {
        x->status = CWC_FAIL;
        snprintf(x->reason, sizeof x->reason,
                 "the harness's process of this case ended without its result (%s %d)",
                 WIFSIGNALED(status) ? "signal" : "exit status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
    s->done[index] = true;
}

/* --fail-fast: the jobs of cases after the first failure stop at once,
 * and their processes with them. */
static void cancel_after(cwc_jobs *s, size_t stop)
{
    for (size_t k = 0; k < s->opt->jobs; k++) {
        cwc_job *j = &s->slots[k];
        if (j->pid && j->index > stop) {
            kill(j->pid, SIGKILL);
            s->done[j->index] = true;
            (void)free_job(s, j, &(int){0}); /* killed here: nothing to say */
        }
    }
}

/* Wait until a job reports, and take every result that is in. */
static void take_results(cwc_jobs *s, size_t *stop)
{
    nfds_t n = 0;
    for (size_t k = 0; k < s->opt->jobs; k++)
        if (s->slots[k].pid)
            s->polled[n++] = (struct pollfd){.fd = s->slots[k].fd, .events = POLLIN};
    if (poll(s->polled, n, -1) < 0)
        return; /* interrupted: the caller asks again */
    for (nfds_t i = 0; i < n; i++) {
        cwc_job *j = NULL;
        for (size_t k = 0; k < s->opt->jobs && !j; k++)
            if (s->slots[k].pid && s->slots[k].fd == s->polled[i].fd)
                j = &s->slots[k];
        if (!s->polled[i].revents || !j) /* quiet, or cancelled meanwhile */
            continue;
        size_t index = j->index;
        finish(s, j);
        const cwc_result *x = &s->r->results[index];
        if (index < *stop && cwc_stops_run(s->opt, x)) {
            *stop = index;
            cancel_after(s, index);
        }
    }
}

/* A case no process could be started for fails, as a serial run's case
 * does when the system cannot give it its process. */
static void cannot_start(cwc_jobs *s, size_t index)
{
    cwc_result *x = &s->r->results[index];
    x->status = CWC_FAIL;
    snprintf(x->reason, sizeof x->reason, "cannot start the case's process: %s", strerror(errno));
    s->done[index] = true;
}

static size_t next_selected(const cwc_report *r, size_t from)
{
    while (from < r->n && !r->results[from].selected)
        from++;
    return from;
}

int cwc_run_jobs(const cwc_options *opt, cwc_report *r, cwc_progress *pg, size_t *stop)
{
    cwc_jobs s = {.opt = opt, .r = r, .pg = pg};
    s.slots = calloc(opt->jobs, sizeof *s.slots);
    s.polled = calloc(opt->jobs, sizeof *s.polled);
    s.keep = calloc(opt->jobs, sizeof *s.keep);
    s.done = calloc(r->n ? r->n : 1, sizeof *s.done);
    size_t next = next_selected(r, 0);
    bool room = s.slots && s.polled && s.keep && s.done;
    while (room && (s.running || (next < r->n && next <= *stop))) {
        while (s.running < opt->jobs && next < r->n && next <= *stop) {
            if (launch(&s, next) != 0) {
                if (s.running)
                    break; /* again once a job has ended */
                cannot_start(&s, next);
            }
            next = next_selected(r, next + 1);
        }
        show(&s);
        if (s.running)
            take_results(&s, stop);
        say_in_order(&s);
    }
    free(s.slots);
    free(s.polled);
    free(s.keep);
    free(s.done);
    return room ? 0 : -1;
}
