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
        ck_assert_msg(rc == CW_OK || rc == CW_ERR_CLOSED, "join gave %s", cw_strerror(rc));
        ck_assert(rc != CW_OK || v == (void *)(intptr_t)1);
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
        ck_assert_msg(rc == CW_OK || rc == CW_ERR_CLOSED, "join gave %s", cw_strerror(rc));
        /* Joining again gives the same answer: resolved exactly once. */
        ck_assert_int_eq(cw_join(h[i], NULL), rc);
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
            ck_assert_ptr_nonnull(o);
            h[2 * i] = cw_spawn(cw_child(ctx, "send"), oneshot_sender, o);
            h[2 * i + 1] = cw_spawn(cw_child(ctx, "drop"), oneshot_dropper, o);
        }
        for (int i = 0; i < 2 * ONESHOT_BATCH; i++) {
            void *ok = NULL;
            ck_assert_int_eq(cw_join(h[i], &ok), CW_OK);
            ck_assert_ptr_eq(ok, (void *)(intptr_t)1);
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
        ck_assert_ptr_nonnull(child);
        cw_counter_inc(child);
        if (i % 3 == 2)
            ck_assert_int_eq(cw_family_remove(s->family, values), CW_OK);
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

/* ---- Wakes from a thread that is not a task [TASK-009, TASK-010] ------------------------- */

/* A task and a program thread play ping-pong: the task announces round i
 * and parks until the thread answers it and wakes the task's waker. All
 * the while another task yields round after round, so the backend's ready
 * queue is being changed by its own scheduler when the foreign wakes come:
 * a wake lost in that race leaves the task parked for good. */
enum { PING_ROUNDS = 20000 };

struct ping {
    _Atomic(cw_waker *) waker;
    atomic_int ping, pong, done;
    int rounds;
};

static void *pong_thread(void *arg)
{
    struct ping *p = arg;
    for (int i = 1; i <= p->rounds; i++) {
        while (atomic_load(&p->ping) < i)
            sched_yield();
        atomic_store(&p->pong, i);
        cw_waker_wake(atomic_load(&p->waker));
    }
    return NULL;
}

static void *ping_task(cw_ctx *ctx, void *arg)
{
    struct ping *p = arg;
    atomic_store(&p->waker, cw_waker_current(ctx)); /* released by the root, after the thread */
    for (int i = 1; i <= p->rounds; i++) {
        atomic_store(&p->ping, i);
        while (atomic_load(&p->pong) < i)
            cw_park(ctx);
    }
    atomic_store(&p->done, 1);
    return NULL;
}

static void *ping_root(cw_ctx *ctx, void *arg)
{
    struct ping *p = arg;
    cw_handle *h = cw_spawn(cw_child(ctx, "ping"), ping_task, p);
    while (atomic_load(&p->ping) == 0)
        cw_yield(ctx);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, pong_thread, p), 0);
    while (!atomic_load(&p->done))
        cw_yield(ctx);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    cw_waker_release(atomic_load(&p->waker));
    return NULL;
}

CWC_CASE(stress_wakes_from_a_program_thread, "tasks", "TASK-009 TASK-010", 0)
{
    struct ping p;
    atomic_init(&p.waker, NULL);
    atomic_init(&p.ping, 0);
    atomic_init(&p.pong, 0);
    atomic_init(&p.done, 0);
    p.rounds = race_rounds(PING_ROUNDS, 100);
    cwc_run_ok(NULL, ping_root, &p);
    ck_assert_int_eq(atomic_load(&p.pong), p.rounds);
}
