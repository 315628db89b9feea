/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * peer.c - the workloads of bench/native.c and bench/storage.c the way a
 * libuv program would write them, so that `make bench` can set cwrt's
 * native backend beside libuv in the same run. libuv has no tasks: each
 * workload uses what libuv offers for it, and says so.
 *
 *   spawn      uv_queue_work of an empty function, its completion on the
 *              loop queuing the next: a unit of work handed to libuv's
 *              thread pool and joined back
 *   pingpong   none: libuv has neither tasks nor channels (one line says so)
 *   timers     100 uv_timer_t, each re-armed 100 times for 1 ms: how late
 *              each callback runs past its deadline
 *   sleepers   100,000 uv_timer_t of 1 s pending at once: wall time and
 *              the peak RSS they add, per timer
 *   write      uv_fs_write of SIZE-byte blocks with a uv_fs_fdatasync every
 *              SYNC_EVERY, chained by their callbacks: one run of
 *              bench/storage.c's synced writes, which storage.c runs
 *              between its own
 *
 * Echo on TCP is bench/network.c's libuv server, in that program.
 * Each prints one "peer libuv ..." row in the key=value form
 * bench/summary.py reads.
 *
 * usage: peer spawn|pingpong|timers|sleepers
 *        peer write DIR SIZE COUNT SYNC_EVERY
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <uv.h>

enum { SPAWNS = 50000, TIMER_TASKS = 100, SLEEPS_PER_TASK = 100, SLEEPERS = 100000 };

static double peer_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void peer_check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "libuv peer: %s: %s\n", what, uv_strerror(rc));
        exit(1);
    }
}

/* ---- spawn: uv_queue_work, one at a time ------------------------------------------------ */

typedef struct peer_spawns {
    uv_work_t req;
    long left;
} peer_spawns;

static void peer_empty_work(uv_work_t *req)
{
    (void)req;
}

static void peer_work_done(uv_work_t *req, int status)
{
    peer_check(status, "work");
    peer_spawns *s = (peer_spawns *)req;
    if (--s->left > 0)
        peer_check(uv_queue_work(req->loop, req, peer_empty_work, peer_work_done), "queue_work");
}

static void peer_spawn(uv_loop_t *loop)
{
    peer_spawns s = {.left = SPAWNS};
    double t0 = peer_now_ns();
    peer_check(uv_queue_work(loop, &s.req, peer_empty_work, peer_work_done), "queue_work");
    peer_check(uv_run(loop, UV_RUN_DEFAULT), "run");
    printf("peer libuv spawn: ns=%.0f\n", (peer_now_ns() - t0) / SPAWNS);
}

/* ---- timers: lateness of 1 ms timers ------------------------------------------------------ */

typedef struct peer_timer {
    uv_timer_t timer;
    double target;
    int left;
    double *late; /* this timer's SLEEPS_PER_TASK slots */
} peer_timer;

static void peer_timer_fired(uv_timer_t *handle)
{
    peer_timer *t = (peer_timer *)handle;
    t->late[SLEEPS_PER_TASK - t->left] = peer_now_ns() - t->target;
    if (--t->left > 0) {
        t->target = peer_now_ns() + 1e6;
        peer_check(uv_timer_start(handle, peer_timer_fired, 1, 0), "timer_start");
    }
}

static int peer_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void peer_timers(uv_loop_t *loop)
{
    enum { N = TIMER_TASKS * SLEEPS_PER_TASK };
    static peer_timer t[TIMER_TASKS];
    static double late[N];
    for (int i = 0; i < TIMER_TASKS; i++) {
        peer_check(uv_timer_init(loop, &t[i].timer), "timer_init");
        t[i].left = SLEEPS_PER_TASK;
        t[i].late = &late[i * SLEEPS_PER_TASK];
        t[i].target = peer_now_ns() + 1e6;
        peer_check(uv_timer_start(&t[i].timer, peer_timer_fired, 1, 0), "timer_start");
    }
    peer_check(uv_run(loop, UV_RUN_DEFAULT), "run");
    for (int i = 0; i < TIMER_TASKS; i++) /* the loop closes only once its handles are */
        uv_close((uv_handle_t *)&t[i].timer, NULL);
    peer_check(uv_run(loop, UV_RUN_DEFAULT), "run");
    qsort(late, N, sizeof *late, peer_cmp_double);
    printf("peer libuv timers: sleeps=%d late_p50_us=%.1f late_p99_us=%.1f late_max_us=%.1f\n", N,
           late[N / 2] / 1e3, late[N * 99 / 100] / 1e3, late[N - 1] / 1e3);
}

/* ---- sleepers: 100,000 pending timers ------------------------------------------------------ */

static double peer_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        perror("libuv peer: getrusage");
        exit(1);
    }
    return (double)ru.ru_maxrss * 1024.0;
}

static void peer_sleeper_closed(uv_handle_t *h)
{
    free(h);
}

static void peer_sleeper_woke(uv_timer_t *t)
{
    uv_close((uv_handle_t *)t, peer_sleeper_closed);
}

static void peer_sleepers(uv_loop_t *loop)
{
    double base = peer_peak_rss(), t0 = peer_now_ns();
    for (int i = 0; i < SLEEPERS; i++) {
        uv_timer_t *t = malloc(sizeof *t);
        if (!t)
            peer_check(UV_ENOMEM, "malloc");
        peer_check(uv_timer_init(loop, t), "timer_init");
        peer_check(uv_timer_start(t, peer_sleeper_woke, 1000, 0), "timer_start");
    }
    peer_check(uv_run(loop, UV_RUN_DEFAULT), "run");
    double peak = peer_peak_rss();
    printf("peer libuv sleepers: tasks=%d wall_s=%.2f peak_rss_mib=%.0f bytes_per_task=%.0f\n",
           SLEEPERS, (peer_now_ns() - t0) / 1e9, peak / (1 << 20), (peak - base) / SLEEPERS);
}

/* ---- storage: synced writes through uv_fs_* ------------------------------------------------- */

typedef struct peer_writes {
    uv_fs_t req;
    uv_file fd;
    uv_buf_t block;
    int count, sync_every, done; /* writes asked for, writes per sync, writes done */
} peer_writes;

static void peer_wrote(uv_fs_t *req);

/* The next write, at the end of what is written. */
static void peer_write_next(peer_writes *w)
{
    int64_t at = (int64_t)w->done * (int64_t)w->block.len;
    peer_check(uv_fs_write(w->req.loop, &w->req, w->fd, &w->block, 1, at, peer_wrote), "write");
}

static void peer_synced(uv_fs_t *req)
{
    peer_writes *w = (peer_writes *)req;
    peer_check((int)req->result, "fdatasync");
    uv_fs_req_cleanup(req);
    if (w->done < w->count)
        peer_write_next(w);
}

static void peer_wrote(uv_fs_t *req)
{
    peer_writes *w = (peer_writes *)req;
    if (req->result != (ssize_t)w->block.len)
        peer_check(req->result < 0 ? (int)req->result : UV_EIO, "write");
    uv_fs_req_cleanup(req);
    w->done++;
    if (w->done % w->sync_every == 0)
        peer_check(uv_fs_fdatasync(req->loop, req, w->fd, peer_synced), "fdatasync");
    else if (w->done < w->count)
        peer_write_next(w);
}

/* `count` blocks of `size` bytes to a new file in `dir`, an fdatasync
 * every `sync_every`: microseconds per write. */
static double peer_write_load(uv_loop_t *loop, const char *dir, size_t size, int count,
                              int sync_every)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/libuv-peer", dir);
    uv_fs_t open_req;
    int fd = uv_fs_open(loop, &open_req, path, O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
    uv_fs_req_cleanup(&open_req);
    peer_check(fd, path);
    peer_writes w = {.fd = fd, .count = count, .sync_every = sync_every};
    w.block = uv_buf_init(malloc(size), (unsigned)size);
    if (!w.block.base)
        peer_check(UV_ENOMEM, "malloc");
    memset(w.block.base, 0x5A, size);
    w.req.loop = loop;
    double t0 = peer_now_ns();
    peer_write_next(&w);
    peer_check(uv_run(loop, UV_RUN_DEFAULT), "run");
    double us = (peer_now_ns() - t0) / 1e3 / count;
    uv_fs_t req;
    peer_check(uv_fs_close(loop, &req, fd, NULL), "close");
    uv_fs_req_cleanup(&req);
    peer_check(uv_fs_unlink(loop, &req, path, NULL), "unlink");
    uv_fs_req_cleanup(&req);
    free(w.block.base);
    return us;
}

/* A positive count from the command line, or exit with why. */
static long peer_count(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v <= 0 || v > (1L << 30)) {
        fprintf(stderr, "libuv peer: not a positive count: \"%s\"\n", s);
        exit(2);
    }
    return v;
}

static void peer_write(uv_loop_t *loop, char **args)
{
    double us = peer_write_load(loop, args[0], (size_t)peer_count(args[1]),
                                (int)peer_count(args[2]), (int)peer_count(args[3]));
    printf("peer libuv write: us=%.2f\n", us);
}

int main(int argc, char **argv)
{
    uv_loop_t *loop = uv_default_loop();
    const char *w = argc >= 2 ? argv[1] : "";
    if (argc == 2 && !strcmp(w, "spawn"))
        peer_spawn(loop);
    else if (argc == 2 && !strcmp(w, "pingpong"))
        printf("peer libuv pingpong: skipped: libuv has neither tasks nor channels\n");
    else if (argc == 2 && !strcmp(w, "timers"))
        peer_timers(loop);
    else if (argc == 2 && !strcmp(w, "sleepers"))
        peer_sleepers(loop);
    else if (argc == 6 && !strcmp(w, "write"))
        peer_write(loop, argv + 2);
    else {
        fprintf(
            stderr,
            "usage: peer spawn|pingpong|timers|sleepers | peer write DIR SIZE COUNT SYNC_EVERY\n");
        return 2;
    }
    peer_check(uv_loop_close(loop), "loop_close");
    return 0;
}
