/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * native.c - what a parallel backend promises about threads and time
 * (spec/13-native.md). Skipped on backends without CW_CAP_PARALLEL.
 */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cases/network_util.h"
#include "cases/util.h"

#define PAR CW_CAP_PARALLEL

/* Spin without ever suspending until `flag` is set, for at most `limit` ns. */
static int spin_within(atomic_int *flag, uint64_t limit)
{
    uint64_t give_up = cwc_mono_ns() + cwc_scaled(limit); /* a slower run waits longer */
    while (!atomic_load(flag))
        if (cwc_mono_ns() > give_up)
            return 0;
    return 1;
}

static int spin_until(atomic_int *flag)
{
    return spin_within(flag, 10ull * 1000000000u);
}

struct meet {
    atomic_int a, b;
};

static void *meet_a(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct meet *m = arg;
    atomic_store(&m->a, 1);
    return (void *)(intptr_t)spin_until(&m->b);
}

static void *meet_b(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct meet *m = arg;
    atomic_store(&m->b, 1);
    return (void *)(intptr_t)spin_until(&m->a);
}

static void *parallel_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct meet m;
    atomic_init(&m.a, 0);
    atomic_init(&m.b, 0);
    cw_handle *a = cw_spawn(cw_child(ctx, "a"), meet_a, &m);
    cw_handle *b = cw_spawn(cw_child(ctx, "b"), meet_b, &m);
    void *va = NULL, *vb = NULL;
    ck_assert_int_eq(cw_join(a, &va), CW_OK);
    ck_assert_int_eq(cw_join(b, &vb), CW_OK);
    ck_assert_msg(va && vb, "two shared tasks never ran at the same time");
    cw_handle_release(a);
    cw_handle_release(b);
    return NULL;
}

CWC_CASE(native_shared_tasks_run_in_parallel, "native", "NAT-001", PAR)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 2;
    cwc_run_ok(&cfg, parallel_root, NULL);
}

/* worker_threads is how many shared tasks run at once, also above the
 * CPU count: that many tasks, each spinning until all have arrived, all
 * arrive. With fewer workers the last ones never start while the first
 * spin: the case hangs, and its time limit (scaled to the machine's load)
 * fails it. */
struct gathering {
    atomic_int arrived;
    int expected;
};

static void *arrive_and_wait(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct gathering *g = arg;
    atomic_fetch_add(&g->arrived, 1);
    while (atomic_load(&g->arrived) < g->expected)
        sched_yield(); /* on a loaded machine, the CPU for the others' threads */
    return g;
}

static void *gathering_root(cw_ctx *ctx, void *arg)
{
    struct gathering *g = arg;
    cw_handle *h[16];
    for (int i = 0; i < g->expected; i++)
        h[i] = cw_spawn(cw_child(ctx, "w"), arrive_and_wait, g);
    for (int i = 0; i < g->expected; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    return NULL;
}

CWC_CASE(native_every_worker_runs_at_once, "native", "NAT-001", PAR)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct gathering g;
    atomic_init(&g.arrived, 0);
    g.expected = cpus > 0 && cpus < 14 ? (int)cpus + 2 : 16;
    cw_config cfg = cwc_config();
    cfg.worker_threads = (unsigned)g.expected;
    cwc_run_ok(&cfg, gathering_root, &g);
}

/* ...and no more than worker_threads threads run them: with two workers,
 * shared tasks that each spin a while (so that a third thread, were there
 * one, would take some) are seen on two threads at most. The bound holds
 * however the machine schedules; the spin only gives a wrong backend's
 * third worker the chance to show. */
enum { SEEN_MAX = 8, SPREAD_TASKS = 24 };

struct seen_threads {
    pthread_mutex_t lock;
    pthread_t thread[SEEN_MAX];
    int n;
};

static void *note_thread(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct seen_threads *s = arg;
    pthread_t self = pthread_self();
    pthread_mutex_lock(&s->lock);
    int i = 0;
    while (i < s->n && !pthread_equal(s->thread[i], self))
        i++;
    if (i == s->n && s->n < SEEN_MAX)
        s->thread[s->n++] = self;
    pthread_mutex_unlock(&s->lock);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do
        clock_gettime(CLOCK_MONOTONIC, &now);
    while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 2000000L);
    return NULL;
}

static void *spread_root(cw_ctx *ctx, void *arg)
{
    cw_handle *h[SPREAD_TASKS];
    for (int i = 0; i < SPREAD_TASKS; i++)
        h[i] = cw_spawn(cw_child(ctx, "spread"), note_thread, arg);
    for (int i = 0; i < SPREAD_TASKS; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    return NULL;
}

CWC_CASE(native_no_more_workers_than_asked, "native", "NAT-001", PAR)
{
    struct seen_threads s = {.n = 0};
    pthread_mutex_init(&s.lock, NULL);
    cw_config cfg = cwc_config();
    cfg.worker_threads = 2;
    cwc_run_ok(&cfg, spread_root, &s);
    pthread_mutex_destroy(&s.lock);
    ck_assert_msg(s.n <= 2, "shared tasks ran on %d threads with worker_threads 2", s.n);
}

/* A sleep ends while another task keeps the only worker busy yielding:
 * the backend still looks at its clock between tasks [CLK-001, TASK-009].
 * A backend that never did would spin here until the case's time limit. */
static void *sleep_then_flag(cw_ctx *ctx, void *arg)
{
    ck_assert_int_eq(cw_sleep(ctx, 5 * CW_MSEC), CW_OK);
    atomic_store((atomic_bool *)arg, true);
    return NULL;
}

static void *yield_until_flag(cw_ctx *ctx, void *arg)
{
    (void)arg;
    atomic_bool woke;
    atomic_init(&woke, false);
    cw_handle *h = cw_spawn(cw_child(ctx, "sleeper"), sleep_then_flag, &woke);
    while (!atomic_load(&woke))
        cw_yield(ctx);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    return NULL;
}

CWC_CASE(native_sleep_ends_beside_a_yielding_task, "native", "CLK-001 TASK-009 NAT-001", PAR)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 1;
    cwc_run_ok(&cfg, yield_until_flag, NULL);
}

/* A blocking or dedicated task holds its thread until a shared task runs:
 * with a single worker that is only possible if it is not on the worker. */
static void *hog(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return (void *)(intptr_t)spin_until(arg);
}

static void *spin_task_within_2s(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return (void *)(intptr_t)spin_within(arg, 2ull * 1000000000u);
}

static void *release_hog(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    atomic_store((atomic_int *)arg, 1);
    return NULL;
}

/* The same after a suspension: a task that slept and woke again is still
 * off the workers, on the same thread of its own. */
static void *sleepy_hog(cw_ctx *ctx, void *arg)
{
    pid_t before = gettid();
    ck_assert_int_eq(cw_sleep(ctx, CW_MSEC), CW_OK);
    ck_assert_msg(before == gettid(), "a dedicated task changed threads");
    return (void *)(intptr_t)spin_until(arg);
}

static void *off_worker_after_sleep_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    atomic_int flag;
    atomic_init(&flag, 0);
    cw_handle *h = cw_spawn(cw_dedicated(cw_child(ctx, "hog")), sleepy_hog, &flag);
    cw_sleep(ctx, 20 * CW_MSEC); /* the hog has slept, woken and is spinning */
    cw_handle *r = cw_spawn(cw_child(ctx, "release"), release_hog, &flag);
    void *v = NULL;
    ck_assert_int_eq(cw_join(h, &v), CW_OK);
    ck_assert_msg(v != NULL, "a shared task could not run while a dedicated one held its thread");
    ck_assert_int_eq(cw_join(r, NULL), CW_OK);
    cw_handle_release(h);
    cw_handle_release(r);
    return NULL;
}

CWC_CASE(native_dedicated_keeps_its_thread, "native", "NAT-002", PAR)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 1;
    cwc_run_ok(&cfg, off_worker_after_sleep_root, NULL);
}

/* ---- A dedicated task's thread is given back [NAT-002, RUN-009] ------------------------- */

/* The threads of the process: the entries of /proc/self/task. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    ck_assert_int_eq(closedir(d), 0);
    return n;
}

static void *returns_at_once(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

/* One dedicated task spawned and joined, the root alone alive after it. */
static void dedicated_in_turn(cw_ctx *ctx)
{
    cw_handle *h = cw_spawn(cw_dedicated(cw_child(ctx, "turn")), returns_at_once, ctx);
    void *v = NULL;
    ck_assert_int_eq(cw_join(h, &v), CW_OK);
    ck_assert_ptr_eq(v, ctx);
    cw_handle_release(h);
}

/* Dedicated tasks spawned one after another, never two alive at once:
 * the threads the process has after many are those it had after a few,
 * a bound that does not grow with the count. A thread whose task ended
 * may take a while to exit on a loaded machine, so the count is read
 * again, the root sleeping, until it is back within the bound. */
static void *dedicated_in_turn_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++)
        dedicated_in_turn(ctx);
    int before = thread_count();
    for (int i = 0; i < 200; i++)
        dedicated_in_turn(ctx);
    int after = thread_count();
    for (uint64_t waited = 0; after > before + 8 && waited < cwc_scaled(10 * CW_SEC);
         waited += 10 * CW_MSEC) {
        ck_assert_int_eq(cw_sleep(ctx, 10 * CW_MSEC), CW_OK);
        after = thread_count();
    }
    ck_assert_msg(after <= before + 8,
                  "%d threads after 4 dedicated tasks in turn, %d after 200 more", before, after);
    return NULL;
}

CWC_CASE(native_dedicated_threads_given_back, "native", "NAT-002 RUN-009", PAR)
{
    cwc_run_ok(NULL, dedicated_in_turn_root, NULL);
}

static void *off_worker_root(cw_ctx *ctx, void *arg)
{
    int execution = (int)(intptr_t)arg;
    atomic_int flag;
    atomic_init(&flag, 0);
    cw_ctx *c = cw_child(ctx, "hog");
    if (execution == CW_EXEC_DEDICATED)
        cw_dedicated(c);
    else
        cw_shared(c, true);
    cw_handle *h = cw_spawn(c, hog, &flag);
    cw_sleep(ctx, CW_MSEC); /* let the hog take its thread */
    cw_handle *r = cw_spawn(cw_child(ctx, "release"), release_hog, &flag);
    void *v = NULL;
    ck_assert_int_eq(cw_join(h, &v), CW_OK);
    ck_assert_msg(v != NULL, "a shared task could not run while a blocking one held its thread");
    ck_assert_int_eq(cw_join(r, NULL), CW_OK);
    cw_handle_release(h);
    cw_handle_release(r);
    return NULL;
}

CWC_CASE(native_blocking_and_dedicated_leave_workers_free, "native", "NAT-002", PAR)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 1;
    cwc_run_ok(&cfg, off_worker_root, (void *)(intptr_t)CW_EXEC_SHARED_BLOCKING);
    cwc_run_ok(&cfg, off_worker_root, (void *)(intptr_t)CW_EXEC_DEDICATED);
}

/* Blocking tasks that hold their thread 20 ms each, as a blocking system
 * call would, counting how many hold one at once. */
struct pool_load {
    atomic_int inside, most;
};

static void *hold_thread(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct pool_load *p = arg;
    int now = atomic_fetch_add(&p->inside, 1) + 1;
    int most = atomic_load(&p->most);
    while (now > most && !atomic_compare_exchange_weak(&p->most, &most, now))
        ;
    struct timespec hold = {0, 20 * 1000000L};
    nanosleep(&hold, NULL);
    atomic_fetch_sub(&p->inside, 1);
    return NULL;
}

#define HOLDERS 6

static void *bounded_pool_root(cw_ctx *ctx, void *arg)
{
    struct pool_load *p = arg;
    cw_handle *h[HOLDERS];
    for (int i = 0; i < HOLDERS; i++) {
        cw_ctx *c = cw_child(ctx, "holder");
        cw_shared(c, true);
        h[i] = cw_spawn(c, hold_thread, p);
    }
    for (int i = 0; i < HOLDERS; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    return NULL;
}

/* A dedicated task has a thread of its own even while every thread of the
 * blocking pool is held: here it releases the one blocking task. */
static void *pool_full_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    atomic_int flag;
    atomic_init(&flag, 0);
    cw_ctx *c = cw_child(ctx, "hog");
    cw_shared(c, true);
    cw_handle *hog = cw_spawn(c, spin_task_within_2s, &flag);
    cw_sleep(ctx, CW_MSEC); /* let the hog take the pool's one thread */
    cw_ctx *d = cw_child(ctx, "release");
    cw_dedicated(d);
    cw_handle *r = cw_spawn(d, release_hog, &flag);
    void *v = NULL;
    ck_assert_int_eq(cw_join(hog, &v), CW_OK);
    ck_assert_msg(v != NULL, "a dedicated task waited for the blocking pool");
    ck_assert_int_eq(cw_join(r, NULL), CW_OK);
    cw_handle_release(hog);
    cw_handle_release(r);
    return NULL;
}

CWC_CASE(native_blocking_pool_is_bounded, "native", "NAT-002", PAR)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 2;
    cfg.blocking_threads = 2;
    struct pool_load p;
    atomic_init(&p.inside, 0);
    atomic_init(&p.most, 0);
    cwc_run_ok(&cfg, bounded_pool_root, &p);
    ck_assert_int_ge(atomic_load(&p.most), 1);
    ck_assert_msg(atomic_load(&p.most) <= 2, "%d blocking tasks held a thread at once, bound 2",
                  atomic_load(&p.most));
    cfg.blocking_threads = 0; /* taken as 1 */
    atomic_store(&p.most, 0);
    cwc_run_ok(&cfg, bounded_pool_root, &p);
    ck_assert_msg(atomic_load(&p.most) == 1, "%d blocking tasks held a thread at once, bound 0 (1)",
                  atomic_load(&p.most));
    cfg.blocking_threads = 1;
    cwc_run_ok(&cfg, pool_full_root, NULL);
}

static void *clock_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    uint64_t wall = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec;
    cw_time now = cw_current(ctx);
    uint64_t skew = now > wall ? now - wall : wall - now;
    ck_assert_msg(skew < CW_SEC, "runtime clock is %llu ns away from the wall clock",
                  (unsigned long long)skew);
    uint64_t before = cwc_mono_ns();
    ck_assert_int_eq(cw_sleep(ctx, 20 * CW_MSEC), CW_OK);
    ck_assert_uint_ge(cwc_mono_ns() - before, 20 * CW_MSEC);
    cw_time last = cw_current(ctx);
    for (int i = 0; i < 1000; i++) {
        cw_time t = cw_current(ctx);
        ck_assert_uint_ge(t, last);
        last = t;
    }
    return NULL;
}

CWC_CASE(native_clock_is_wall_time_measured_monotonically, "native", "NAT-003 CLK-005", PAR)
{
    cwc_run_ok(NULL, clock_root, NULL);
}

/* ---- An idle run sleeps [NAT-010] ------------------------------------------------------- */

/* A short sleep, then one a second longer: what a backend spends each time
 * it goes idle (a brief spin before it parks, however many threads do it)
 * is in both and cancels out; what it spends for as long as it is idle
 * (a thread that polls) is in the second second-for-second. */
static void *idle_root(cw_ctx *ctx, void *arg)
{
    uint64_t *used = arg;
    used[0] = cwc_cpu_over_sleep(ctx, 200);
    used[1] = cwc_cpu_over_sleep(ctx, 1200);
    return NULL;
}

/* NAT-010's bound: 100 ms of CPU for the second more the run was idle. */
static void idle_cost_bounded(const uint64_t used[2], const char *run)
{
    uint64_t more = used[1] > used[0] ? used[1] - used[0] : 0;
    ck_assert_msg(more <= 100 * 1000 * 1000u,
                  "%s used %llu ms of CPU over a 200 ms sleep and %llu ms over a 1200 ms "
                  "one: %llu ms for the second more it was idle",
                  run, (unsigned long long)(used[0] / 1000000),
                  (unsigned long long)(used[1] / 1000000), (unsigned long long)(more / 1000000));
}

CWC_CASE(native_idle_run_keeps_no_cpu_busy, "native", "NAT-010", PAR)
{
    uint64_t used[2] = {0, 0};
    cwc_run_ok(NULL, idle_root, used);
    idle_cost_bounded(used, "an idle run");
}

/* The same sleeps with a connection open, dialed and accepted, both its
 * ends idle and writable: a socket waited on is a wait as any other, so
 * a backend whose poller keeps telling of the writable sockets (watched
 * level-triggered) spins a CPU for as long as the root sleeps. */
static void *idle_connected_root(cw_ctx *ctx, void *arg)
{
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    ck_assert_int_eq(send_text(a.sink, "idle"), CW_OK); /* both ways used once */
    recv_text(b.stream, "idle");
    ck_assert_int_eq(send_text(b.sink, "idle"), CW_OK);
    recv_text(a.stream, "idle");
    idle_root(ctx, arg);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(native_idle_run_with_a_connection_keeps_no_cpu_busy, "native", "NAT-010",
         PAR | CWC_NEEDS_NETWORK)
{
    uint64_t used[2] = {0, 0};
    cwc_run_ok(NULL, idle_connected_root, used);
    idle_cost_bounded(used, "an idle run holding a connection");
}

static void bump(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

struct held_count {
    atomic_int started, unwound;
};

static void *held(cw_ctx *ctx, void *arg)
{
    struct held_count *c = arg;
    CW_CLEANUP_PUSH(ctx, bump, &c->unwound);
    atomic_fetch_add(&c->started, 1);
    cwc_pending_task(ctx, NULL);
    CW_CLEANUP_POP(ctx, false);
    return NULL;
}

/* The root ends only once every task is parked with its handler pushed: a
 * task that had not started yet would be dropped without running at all. */
static void *end_root(cw_ctx *ctx, void *arg)
{
    struct held_count *count = arg;
    for (int i = 0; i < 8; i++) {
        cw_ctx *c = cw_child(ctx, "held");
        if (i % 4 == 1)
            cw_shared(c, true);
        if (i % 4 == 2)
            cw_dedicated(c);
        cw_handle_release(cw_spawn(c, held, count));
    }
    while (atomic_load(&count->started) < 8)
        cw_sleep(ctx, CW_MSEC);
    return NULL;
}

CWC_CASE(native_run_end_waits_for_every_task_and_thread, "native", "NAT-004 RUN-003", PAR)
{
    struct held_count count;
    atomic_init(&count.started, 0);
    atomic_init(&count.unwound, 0);
    /* A first run lets the C library and any sanitizer start the helper
     * threads they keep for the life of the process. */
    cwc_run_ok(NULL, end_root, &count);
    int before = cwc_thread_count();
    atomic_store(&count.started, 0);
    atomic_store(&count.unwound, 0);
    cwc_run_ok(NULL, end_root, &count);
    ck_assert_int_eq(atomic_load(&count.unwound), 8);
    ck_assert_msg(cwc_threads_at_most(before), "a thread of the run outlived it");
}

/* ---- zero_linger on every connection [NET-018] -------------------------------------- */

/* A plain socket listening on loopback, and the address a run dials it at. */
static int plain_listener(cw_addr *where)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(fd, 4), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *where = cw_addr_loopback4(ntohs(sa.sin_port));
    return fd;
}

struct linger_seen {
    bool zero_linger;
    int errno_seen; /* what the plain peer's recv said after the close: 0 for an end */
};

/* The run closes its halves of a connection to the plain socket `peer`,
 * which then reads what the close sent: a reset with zero_linger, an
 * orderly end without. */
static void close_and_see(struct linger_seen *seen, cw_sink *sink, cw_stream *stream, int peer)
{
    cw_stream_close(stream);
    cw_sink_close(sink);
    char byte;
    ssize_t n = recv(peer, &byte, 1, 0);
    seen->errno_seen = n < 0 ? errno : 0;
    ck_assert_msg(n <= 0, "bytes arrived from a connection that sent none");
    close(peer);
}

/* The run dials a plain peer and closes the connection. */
static void *dial_and_close_root(cw_ctx *ctx, void *arg)
{
    struct linger_seen *seen = arg;
    cw_addr where;
    int lfd = plain_listener(&where);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_OK);
    int peer = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    ck_assert_int_ge(peer, 0);
    close_and_see(seen, sink, stream, peer);
    close(lfd);
    return NULL;
}

/* The same, with the connection accepted by the run from a plain peer. */
static void *accept_and_close_root(cw_ctx *ctx, void *arg)
{
    struct linger_seen *seen = arg;
    cw_listener *l;
    cw_conn c;
    int peer = plain_peer_accepted(ctx, &l, &c);
    close_and_see(seen, c.sink, c.stream, peer);
    cw_listener_close(l);
    return NULL;
}

/* ---- A peer that ended before the accept [NET-014] -------------------------------------- */

/* A plain peer connects, sends three bytes and closes before the run
 * accepts: the connection's first news already tells of the end. After
 * the run went idle (whatever it learnt of the socket learnt), a recv
 * asking more than was sent gets the end, not a wait for more. */
static void *ended_before_accept_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    int peer = plain_peer_of(&where);
    ck_assert_int_eq(send(peer, "abc", 3, MSG_NOSIGNAL), 3);
    ck_assert_int_eq(close(peer), 0);
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    ck_assert_int_eq(cw_sleep(ctx, 20 * CW_MSEC), CW_OK);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(c.stream, 4, &got), CW_ERR_RECV_FAILED);
    ck_assert_ptr_null(got);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(native_peer_ended_before_accept, "network", "NET-014 NET-018", PAR | CWC_NEEDS_NETWORK)
{
    cwc_run_ok(NULL, ended_before_accept_root, NULL);
}

static void linger_each_way(cw_task_fn root)
{
    for (int on = 0; on < 2; on++) {
        struct linger_seen seen = {on != 0, -1};
        cw_config cfg = cwc_config();
        cfg.zero_linger = seen.zero_linger;
        cwc_run_ok(&cfg, root, &seen);
        if (on)
            ck_assert_msg(seen.errno_seen == ECONNRESET,
                          "with zero_linger a close should reset, the peer saw errno %d",
                          seen.errno_seen);
        else
            ck_assert_msg(seen.errno_seen == 0,
                          "without zero_linger a close should end, "
                          "the peer saw errno %d",
                          seen.errno_seen);
    }
}

CWC_CASE(native_zero_linger_on_dialed_connections, "network", "NET-018", PAR | CWC_NEEDS_NETWORK)
{
    linger_each_way(dial_and_close_root);
}

CWC_CASE(native_zero_linger_on_accepted_connections, "network", "NET-018", PAR | CWC_NEEDS_NETWORK)
{
    linger_each_way(accept_and_close_root);
}
