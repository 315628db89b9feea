/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * stress.c - many tasks spawning, sleeping, aborting and joining at once
 * (spec/04-tasks.md). On a parallel backend they do so across threads.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cases/util.h"
#include "harness/instrumented.h"

enum { STRESS_TASKS = 10000, STRESS_CHILDREN = 4 };

struct stress {
    atomic_int started, finished, cleaned;
};

static void count_cleanup(void *arg)
{
    struct stress *s = arg;
    atomic_fetch_add(&s->cleaned, 1);
}

static void *stress_leaf(cw_ctx *ctx, void *arg)
{
    struct stress *s = arg;
    atomic_fetch_add(&s->started, 1);
    CW_CLEANUP_PUSH(ctx, count_cleanup, s);
    cw_sleep(ctx, (cw_duration)(cw_random_u64(ctx) % 3) * CW_MSEC);
    if (cw_random_u64(ctx) % 2)
        cw_yield(ctx);
    CW_CLEANUP_POP(ctx, true);
    atomic_fetch_add(&s->finished, 1);
    return (void *)(intptr_t)1;
}

/* A middle task spawns leaves, aborts some, joins all: each handle must
 * resolve exactly once, to OK or to CLOSED. */
static void *stress_middle(cw_ctx *ctx, void *arg)
{
    struct stress *s = arg;
    cw_handle *h[STRESS_CHILDREN];
    for (int i = 0; i < STRESS_CHILDREN; i++)
        h[i] = cw_spawn(cw_child(ctx, "leaf"), stress_leaf, s);
    if (cw_random_u64(ctx) % 2)
        cw_abort(h[0]);
    long ok = 0;
    for (int i = 0; i < STRESS_CHILDREN; i++) {
        void *v = NULL;
        int rc = cw_join(h[i], &v);
        CWC_REQUIRE(rc == CW_OK || rc == CW_ERR_CLOSED, "join gave %s", cw_strerror(rc));
        CWC_REQUIRE(rc != CW_OK || v == (void *)(intptr_t)1, "a joined leaf gave %p, not 1", v);
        ok += rc == CW_OK;
        cw_handle_release(h[i]);
    }
    return (void *)(intptr_t)ok;
}

static void *stress_root(cw_ctx *ctx, void *arg)
{
    struct stress *s = arg;
    enum { MIDDLES = STRESS_TASKS / (STRESS_CHILDREN + 1) };
    cw_handle **h = calloc(MIDDLES, sizeof *h);
    ck_assert_ptr_nonnull(h);
    for (int i = 0; i < MIDDLES; i++)
        h[i] = cw_spawn(cw_child(ctx, "middle"), stress_middle, s);
    for (int i = 0; i < MIDDLES; i += 7) /* abort some middles and so their leaves */
        cw_abort(h[i]);
    for (int i = 0; i < MIDDLES; i++) {
        int rc = cw_join(h[i], NULL);
        CWC_REQUIRE(rc == CW_OK || rc == CW_ERR_CLOSED, "join gave %s", cw_strerror(rc));
        /* Joining again gives the same answer: resolved exactly once. */
        int again = cw_join(h[i], NULL);
        CWC_REQUIRE(again == rc, "a second join gave %s after %s", cw_strerror(again),
                    cw_strerror(rc));
        cw_handle_release(h[i]);
    }
    free(h);
    return NULL;
}

CWC_CASE(stress_spawn_sleep_abort_join, "tasks", "TASK-002 TASK-005 TASK-008 RUN-003", 0)
{
    struct stress s;
    atomic_init(&s.started, 0);
    atomic_init(&s.finished, 0);
    atomic_init(&s.cleaned, 0);
    cwc_run_ok(NULL, stress_root, &s);
    /* Every leaf that started either finished or was unwound, and each ran
     * its cleanup exactly once: no task was leaked or run twice. */
    ck_assert_int_eq(atomic_load(&s.cleaned), atomic_load(&s.started));
    ck_assert_int_ge(atomic_load(&s.finished), 0);
    ck_assert_int_le(atomic_load(&s.finished), atomic_load(&s.started));
}

/* `n` rounds of a race on a parallel backend, n / `fewer` on one without
 * threads: there the race cannot happen, and the rounds only cost time. */
static int race_rounds(int n, int fewer)
{
    return cwc_backend->capabilities & CW_CAP_PARALLEL ? n : n / fewer;
}

/* ---- The last two references of a pooled buffer at once [BUF-003, BUF-025] ------------- */

/* Two threads each hold a reference to one pooled buffer and release it
 * at the same moment, round after round. Whichever release is the last
 * must park the buffer once, ready for the next: the pool has one buffer
 * a class and no thread caches, so each round's allocation finds it parked,
 * and at the end the class has created one buffer and holds it parked. A
 * release that got the count wrong in the race loses the buffer (the pool
 * runs dry) or parks it twice (more parked than created). */
enum { RELEASE_ROUNDS = 50000 };

typedef struct release_race {
    atomic_int round; /* the round whose reference `theirs` is, published last */
    atomic_int ready; /* threads at the start line of the round */
    atomic_int done;  /* rounds the other thread finished */
    int rounds;
    cw_iobuf theirs;
} release_race;

/* Spinning keeps the two threads within a few instructions of each other
 * at the start line, which is what makes the releases meet; after a while
 * it yields, as on a loaded machine the other thread needs the core. */
static void spin_until(atomic_int *v, int at_least)
{
    for (unsigned spins = 0; atomic_load(v) < at_least; spins++)
        if (spins >= 4096)
            sched_yield();
}

static void *release_partner(void *arg)
{
    release_race *x = arg;
    for (int r = 1; r <= x->rounds; r++) {
        spin_until(&x->round, r);
        atomic_fetch_add(&x->ready, 1);
        spin_until(&x->ready, 2);
        cw_iobuf_release(&x->theirs);
        atomic_store(&x->done, r);
    }
    return NULL;
}

/* One round: a buffer taken, shared, and released on both threads at once. */
static void release_round(cw_bufpool *p, release_race *x, int r)
{
    cw_iobuf_mut m;
    int why = 0;
    int rc = cw_bufpool_try_alloc(p, 64, &m, &why);
    ck_assert_msg(rc == CW_OK,
                  "round %d: the pool's one buffer was not parked again (%s, %s) "
                  "after the last two references of it were released at once [BUF-003]",
                  r, cw_strerror(rc), cw_bufpool_strfailure(why));
    ck_assert_int_eq(cw_iobuf_mut_put(&m, "race", 4), CW_OK);
    cw_iobuf mine;
    cw_iobuf_mut_freeze(&m, &mine);
    x->theirs = cw_iobuf_clone(&mine);
    atomic_store(&x->ready, 0);
    atomic_store(&x->round, r);
    atomic_fetch_add(&x->ready, 1);
    spin_until(&x->ready, 2);
    cw_iobuf_release(&mine);
    spin_until(&x->done, r);
}

CWC_CASE(stress_pooled_buffer_released_twice_at_once, "buffers", "BUF-003 BUF-025 BUF-023", 0)
{
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cfg.min_size = 64;
    cfg.max_size = 64;
    cfg.alignment = 64;
    cfg.max_per_class = 1;
    cfg.thread_cache = 0;
    cw_bufpool *p;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &p), CW_OK);
    release_race x = {.rounds = RUNNING_ON_VALGRIND ? RELEASE_ROUNDS / 20 : RELEASE_ROUNDS};
    pthread_t partner;
    ck_assert_int_eq(pthread_create(&partner, NULL, release_partner, &x), 0);
    for (int r = 1; r <= x.rounds; r++)
        release_round(p, &x, r);
    ck_assert_int_eq(pthread_join(partner, NULL), 0);
    cw_bufpool_stats st;
    ck_assert_int_eq(cw_bufpool_class_stats(p, 0, &st), CW_OK);
    ck_assert_msg(st.created == 1 && st.idle == 1,
                  "after %d rounds of two releases at once, the pool's class created %llu "
                  "buffers and holds %llu parked, where one buffer parked once is right "
                  "[BUF-003]",
                  x.rounds, (unsigned long long)st.created, (unsigned long long)st.idle);
    cw_bufpool_release(p);
}

/* ---- Both ends of oneshots at once [CHN-005] ------------------------------------------- */

enum { ONESHOT_PAIRS = 100000, ONESHOT_BATCH = 64 };

static void *oneshot_sender(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    int v = 7;
    int rc = cw_oneshot_send(arg, &v);
    return (void *)(intptr_t)(rc == CW_OK || rc == CW_ERR_CLOSED);
}

static void *oneshot_dropper(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_oneshot_receiver_drop(arg);
    return (void *)(intptr_t)1;
}

/* A send and a drop of the receiver racing on other threads: whichever
 * comes first, the send says OK or CLOSED and the oneshot ends once. */
static void *oneshot_race_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h[2 * ONESHOT_BATCH];
    int pairs = race_rounds(ONESHOT_PAIRS, 10);
    for (int done = 0; done < pairs; done += ONESHOT_BATCH) {
        for (int i = 0; i < ONESHOT_BATCH; i++) {
            cw_oneshot *o = cw_oneshot_new(ctx, sizeof(int));
            CWC_REQUIRE(o != NULL, "cw_oneshot_new gave NULL");
            h[2 * i] = cw_spawn(cw_child(ctx, "send"), oneshot_sender, o);
            h[2 * i + 1] = cw_spawn(cw_child(ctx, "drop"), oneshot_dropper, o);
        }
        for (int i = 0; i < 2 * ONESHOT_BATCH; i++) {
            void *ok = NULL;
            int rc = cw_join(h[i], &ok);
            CWC_REQUIRE(rc == CW_OK && ok == (void *)(intptr_t)1,
                        "pair %d: the %s joined with %d and said %p (want CW_OK and 1)",
                        done + i / 2, i % 2 ? "drop" : "send", rc, ok);
            cw_handle_release(h[i]);
        }
    }
    return NULL;
}

CWC_CASE(stress_oneshot_send_and_drop, "channels", "CHN-005", 0)
{
    cwc_run_ok(NULL, oneshot_race_root, NULL);
}

/* ---- One metric family changed from every thread [MET-012] ---------------------------- */

enum { FAMILY_TASKS = 8, FAMILY_ROUNDS = 20000, FAMILY_KEYS = 4 };

struct family_stress {
    cw_metric *family;
    int task, rounds;
};

/* Each task gets, counts and removes children of its own keys, while the
 * others insert and remove theirs in the same family: the counts that
 * stay are exactly this task's since each key's last removal. */
static void *family_churn(cw_ctx *ctx, void *arg)
{
    struct family_stress *s = arg;
    char key[32];
    const char *values[1] = {key};
    for (int i = 0; i < s->rounds; i++) {
        snprintf(key, sizeof key, "t%d_%d", s->task, i % FAMILY_KEYS);
        cw_metric *child = cw_family_get(s->family, values);
        CWC_REQUIRE(child != NULL, "cw_family_get of %s gave NULL", key);
        cw_counter_inc(child);
        if (i % 3 == 2) {
            int rc = cw_family_remove(s->family, values);
            CWC_REQUIRE(rc == CW_OK, "cw_family_remove of %s: %d", key, rc);
        }
        if (i % 64 == 0)
            cw_yield(ctx);
    }
    return NULL;
}

static void *family_stress_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const char *const label[1] = {"k"};
    cw_metric *f = cw_family(ctx, "churn", "h", CW_METRIC_COUNTER, label, 1);
    ck_assert_ptr_nonnull(f);
    struct family_stress s[FAMILY_TASKS];
    cw_handle *h[FAMILY_TASKS];
    int rounds = race_rounds(FAMILY_ROUNDS, 5);
    for (int t = 0; t < FAMILY_TASKS; t++) {
        s[t] = (struct family_stress){f, t, rounds};
        h[t] = cw_spawn(cw_child(ctx, "churn"), family_churn, &s[t]);
    }
    for (int t = 0; t < FAMILY_TASKS; t++) {
        ck_assert_int_eq(cw_join(h[t], NULL), CW_OK);
        cw_handle_release(h[t]);
    }
    /* Round i counts key i % 4 and removes it when i % 3 == 2: the last
     * removal of key j is at the last such i, and each later round of j
     * counted 1. */
    char key[32];
    const char *values[1] = {key};
    for (int t = 0; t < FAMILY_TASKS; t++)
        for (int j = 0; j < FAMILY_KEYS; j++) {
            uint64_t want = 0;
            for (int i = rounds - 1; i >= 0 && !(i % FAMILY_KEYS == j && i % 3 == 2); i--)
                want += i % FAMILY_KEYS == j;
            snprintf(key, sizeof key, "t%d_%d", t, j);
            ck_assert_uint_eq(cw_counter_get(cw_family_get(f, values)), want);
        }
    cw_metric_release(f);
    return NULL;
}

CWC_CASE(stress_metric_family_from_every_thread, "metrics", "MET-012", 0)
{
    cwc_run_ok(NULL, family_stress_root, NULL);
}

/* ---- One counter, gauge and histogram updated from every thread [MET-011] -------------- */

enum { UPDATE_THREADS = 4, UPDATE_ROUNDS = 200000 };

struct updates {
    cw_metric *counter, *gauge, *histogram;
    int rounds;
    atomic_int ready; /* threads at the start line */
};

/* Values that are sums of halves: every partial sum of the whole run is a
 * double held exactly, so the sum read back owes nothing to the order in
 * which the threads' observations landed. */
static const double observed[3] = {0.5, 1.5, 3.0};

/* Program threads rather than tasks: MET-011 lets any thread update a
 * metric, and threads of the process run at once on any backend. */
static void *update_all(void *arg)
{
    struct updates *u = arg;
    atomic_fetch_add(&u->ready, 1);
    while (atomic_load(&u->ready) < UPDATE_THREADS)
        sched_yield();
    for (int i = 0; i < u->rounds; i++) {
        cw_counter_add(u->counter, 2);
        cw_gauge_add(u->gauge, i % 2 ? -1 : 3);
        cw_histogram_observe(u->histogram, observed[i % 3]);
    }
    return NULL;
}

/* The sum of what `rounds` rounds of update_all observe. */
static double observed_sum(int rounds)
{
    double sum = 0;
    for (int i = 0; i < rounds; i++)
        sum += observed[i % 3];
    return sum;
}

static void *updates_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const double bounds[2] = {1.0, 2.0};
    struct updates u = {cw_counter(ctx, "adds", "h"), cw_gauge(ctx, "level", "h"),
                        cw_histogram(ctx, "sizes", "h", bounds, 2), UPDATE_ROUNDS, 0};
    ck_assert(u.counter && u.gauge && u.histogram);
    pthread_t t[UPDATE_THREADS];
    for (int i = 0; i < UPDATE_THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, update_all, &u), 0);
    for (int i = 0; i < UPDATE_THREADS; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    uint64_t n = (uint64_t)UPDATE_THREADS * (uint64_t)u.rounds;
    int64_t odd = u.rounds / 2, even = u.rounds - odd;
    ck_assert_uint_eq(cw_counter_get(u.counter), 2 * n);
    ck_assert_int_eq(cw_gauge_get(u.gauge), UPDATE_THREADS * (3 * even - odd));
    ck_assert_uint_eq(cw_histogram_count(u.histogram), n);
    ck_assert(cw_histogram_sum(u.histogram) == UPDATE_THREADS * observed_sum(u.rounds));
    cw_metric_release(u.counter);
    cw_metric_release(u.gauge);
    cw_metric_release(u.histogram);
    return NULL;
}

/* Updates from several threads at once: none may be lost, the sum's
 * included (a sum kept as a double is changed by a compare-and-swap loop,
 * which must try again when another thread's update came between). */
CWC_CASE(stress_metric_updates_from_every_thread, "metrics", "MET-011", 0)
{
    cwc_run_ok(NULL, updates_root, NULL);
}

/* ---- Wakes from a thread that is not a task [TASK-009, TASK-010] ------------------------- */

/* A program thread wakes a task's waker again and again while the task
 * parks in a loop and another task yields round after round: the
 * backend's ready queue is changed by the thread and by the scheduler at
 * once. A wake or a yield lost in that race leaves a task that never runs
 * again, and the run never ends. No round trip paces the thread, so the
 * case takes the same work on a loaded machine, only spread out. */
enum { FOREIGN_WAKES = 1000000 };

struct foreign {
    _Atomic(cw_waker *) waker;
    atomic_int parks, wakes_done, stop;
    int wakes;
};

static void *waking_thread(void *arg)
{
    struct foreign *f = arg;
    for (int i = 0; i < f->wakes; i++)
        cw_waker_wake(atomic_load(&f->waker));
    atomic_store(&f->wakes_done, 1);
    return NULL;
}

static void *parking_task(cw_ctx *ctx, void *arg)
{
    struct foreign *f = arg;
    atomic_store(&f->waker, cw_waker_current(ctx)); /* released by the root, after the thread */
    while (!atomic_load(&f->stop)) {
        cw_park(ctx);
        atomic_fetch_add(&f->parks, 1);
    }
    return NULL;
}

static void *foreign_root(cw_ctx *ctx, void *arg)
{
    struct foreign *f = arg;
    cw_handle *h = cw_spawn(cw_child(ctx, "parker"), parking_task, f);
    while (!atomic_load(&f->waker))
        cw_yield(ctx);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, waking_thread, f), 0);
    /* valgrind runs one thread at a time: a task yielding in a loop can
     * keep the waking thread from ever taking a lock the yields hold most
     * of the time. There the root blocks its thread in the join instead,
     * and the case looks for memory errors only. */
    while (!RUNNING_ON_VALGRIND && !atomic_load(&f->wakes_done))
        cw_yield(ctx);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    atomic_store(&f->stop, 1);
    cw_waker_wake(atomic_load(&f->waker));
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cw_waker_release(atomic_load(&f->waker));
    return NULL;
}

CWC_CASE(stress_wakes_from_a_program_thread, "tasks", "TASK-009 TASK-010", 0)
{
    struct foreign f;
    atomic_init(&f.waker, NULL);
    atomic_init(&f.parks, 0);
    atomic_init(&f.wakes_done, 0);
    atomic_init(&f.stop, 0);
    f.wakes = RUNNING_ON_VALGRIND ? 100 : FOREIGN_WAKES; /* see foreign_root */
    cwc_run_ok(NULL, foreign_root, &f);
    ck_assert_int_gt(atomic_load(&f.parks), 0);
}
