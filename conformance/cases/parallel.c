/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * parallel.c - strategies: fold, map, jobs, and where the work runs
 * (spec/14-parallel.md).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "cases/util.h"

#define DET CW_CAP_DETERMINISTIC

static cw_strategy *new_strategy(cw_ctx *ctx, size_t parallelism)
{
    cw_strategy *s = NULL;
    ck_assert_int_eq(cw_strategy_new(ctx, parallelism, &s), CW_OK);
    ck_assert_ptr_nonnull(s);
    return s;
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* ---- A sum, as the seed's test writes it ------------------------------------------ */

static void sum_identity(void *acc, void *arg)
{
    (void)arg;
    *(int64_t *)acc = 0;
}

static void sum_fold(void *acc, size_t begin, size_t end, void *arg)
{
    (void)arg;
    for (size_t i = begin; i < end; i++)
        *(int64_t *)acc += (int64_t)i;
}

static void sum_reduce(void *acc, void *other, void *arg)
{
    (void)arg;
    *(int64_t *)acc += *(int64_t *)other;
}

static const cw_fold sum = {sizeof(int64_t), sum_identity, sum_fold, sum_reduce, NULL, NULL};

static void *strategy_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *pool = cw_child(ctx, "pool");
    cw_strategy *s = new_strategy(pool, 4);
    ck_assert_uint_eq(cw_strategy_parallelism(s), 4);
    int64_t total = -1;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 10000, &sum, &total), CW_OK);
    ck_assert_int_eq(total, 10000 * 9999 / 2);
    cw_strategy_release(s);
    cw_ctx_release(pool);
    return NULL;
}

CWC_CASE(strategy, "parallel", "PAR-001 PAR-002 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, strategy_root, NULL);
}

/* ---- Nested use ------------------------------------------------------------------ */

static void plus_one(void *out, size_t i, void *arg)
{
    (void)arg;
    *(size_t *)out = i + 1;
}

static void *nested_job(cw_strategy *s, void *arg)
{
    size_t *out = arg;
    ck_assert_int_eq(cw_strategy_map(s, NULL, 0, 2, sizeof(size_t), plus_one, NULL, out), CW_OK);
    return out;
}

static void *nested_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *pool = cw_child(ctx, "pool");
    cw_strategy *s = new_strategy(pool, 1);
    size_t out[2] = {0, 0};
    cw_job *j = NULL;
    ck_assert_int_eq(cw_strategy_spawn(s, nested_job, out, &j), CW_OK);
    void *value = NULL;
    ck_assert_int_eq(cw_job_join(j, ctx, &value), CW_OK);
    ck_assert_ptr_eq(value, out);
    ck_assert_uint_eq(out[0], 1);
    ck_assert_uint_eq(out[1], 2);
    cw_strategy_release(s);
    cw_ctx_release(pool);
    return NULL;
}

CWC_CASE(nested_strategy_runs_inline, "parallel", "PAR-006 PAR-007 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, nested_root, NULL);
}

/* Inside a job of A, folds on A and on another strategy B run on the job's
 * own thread, even though both pools have a single thread. */
struct nest {
    cw_strategy *other;
    pthread_t job_thread;
    atomic_int foreign; /* chunks that ran on another thread */
};

static void same_thread_fold(void *acc, size_t begin, size_t end, void *arg)
{
    struct nest *n = arg;
    sum_fold(acc, begin, end, NULL);
    if (!pthread_equal(pthread_self(), n->job_thread))
        atomic_fetch_add(&n->foreign, 1);
}

static void *nest_two_job(cw_strategy *s, void *arg)
{
    struct nest *n = arg;
    n->job_thread = pthread_self();
    cw_fold f = sum;
    f.fold = same_thread_fold;
    f.arg = n;
    int64_t a = 0, b = 0;
    ck_assert_int_eq(cw_strategy_fold(s, NULL, 0, 100, &f, &a), CW_OK);
    ck_assert_int_eq(cw_strategy_fold(n->other, NULL, 0, 100, &f, &b), CW_OK);
    ck_assert_int_eq(a, 4950);
    ck_assert_int_eq(b, 4950);
    return NULL;
}

static void *nest_two_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct nest n;
    memset(&n, 0, sizeof n);
    atomic_init(&n.foreign, 0);
    cw_strategy *a = new_strategy(ctx, 1);
    n.other = new_strategy(ctx, 1);
    cw_job *j = NULL;
    ck_assert_int_eq(cw_strategy_spawn(a, nest_two_job, &n, &j), CW_OK);
    ck_assert_int_eq(cw_job_join(j, ctx, NULL), CW_OK);
    ck_assert_int_eq(atomic_load(&n.foreign), 0);
    cw_strategy_release(a);
    cw_strategy_release(n.other);
    return NULL;
}

CWC_CASE(strategy_nested_use_of_any_strategy_is_inline, "parallel", "PAR-006 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, nest_two_root, NULL);
}

/* ---- Bad input ------------------------------------------------------------------- */

static void *bad_input_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_strategy *s = (cw_strategy *)ctx; /* any non-NULL value: it must be cleared */
    ck_assert_int_eq(cw_strategy_new(ctx, 0, &s), CW_ERR_INVALID);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(cw_strategy_new(ctx, CW_STRATEGY_MAX_PARALLELISM + 1, &s), CW_ERR_INVALID);
    ck_assert_ptr_null(s);
    s = new_strategy(ctx, CW_STRATEGY_MAX_PARALLELISM);
    ck_assert_uint_eq(cw_strategy_parallelism(s), CW_STRATEGY_MAX_PARALLELISM);
    cw_strategy_release(s);

    s = new_strategy(ctx, 2);
    int64_t out = 7;
    cw_fold f = sum;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, 5, 4, &f, &out), CW_ERR_INVALID);
    f.acc_size = 0;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 4, &f, &out), CW_ERR_INVALID);
    f = sum;
    f.reduce = NULL;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 4, &f, &out), CW_ERR_INVALID);
    ck_assert_int_eq(out, 7); /* nothing was called */
    size_t m[4];
    ck_assert_int_eq(cw_strategy_map(s, ctx, 0, 4, 0, plus_one, NULL, m), CW_ERR_INVALID);
    ck_assert_int_eq(cw_strategy_map(s, ctx, 0, 4, sizeof(size_t), NULL, NULL, m), CW_ERR_INVALID);
    ck_assert_int_eq(cw_strategy_map(s, ctx, 4, 0, sizeof(size_t), plus_one, NULL, m),
                     CW_ERR_INVALID);
    cw_job *j = (cw_job *)ctx;
    ck_assert_int_eq(cw_strategy_spawn(s, NULL, NULL, &j), CW_ERR_INVALID);
    ck_assert_ptr_null(j);
    cw_strategy_release(s);
    return NULL;
}

CWC_CASE(strategy_rejects_bad_input, "parallel", "PAR-001 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, bad_input_root, NULL);
}

/* Accumulators too large to have, and results too large to address: the
 * call fails before it calls anything. */
static int huge_calls;

static void counted_identity(void *acc, void *arg)
{
    (void)acc;
    (void)arg;
    huge_calls++;
}

static void counted_map(void *out, size_t i, void *arg)
{
    (void)out;
    (void)i;
    (void)arg;
    huge_calls++;
}

static void *huge_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_strategy *s = new_strategy(ctx, 4);
    const size_t sizes[] = {SIZE_MAX, SIZE_MAX - 7, SIZE_MAX / 2, (size_t)1 << 60};
    int64_t out = 7;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        cw_fold f = sum;
        f.acc_size = sizes[i];
        f.identity = counted_identity;
        ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 1000, &f, &out), CW_ERR_NOMEM);
    }
    ck_assert_int_eq(out, 7);
    size_t m[1] = {7};
    ck_assert_int_eq(cw_strategy_map(s, ctx, 0, 3, SIZE_MAX / 2, counted_map, NULL, m),
                     CW_ERR_INVALID);
    ck_assert_int_eq(cw_strategy_map(s, ctx, 0, 2, SIZE_MAX / 2 + 1, counted_map, NULL, m),
                     CW_ERR_INVALID);
    ck_assert_int_eq(huge_calls, 0);
    ck_assert_uint_eq(m[0], 7);
    cw_strategy_release(s);
    return NULL;
}

CWC_CASE(strategy_refuses_what_memory_cannot_hold, "parallel", "PAR-010", 0)
{
    cwc_run_ok(NULL, huge_root, NULL);
}

/* ---- Fold: exact chunks, calls and order -------------------------------------------- */

enum { MAX_RANGES = 64 };

/* An accumulator that lists the ranges folded into it, in order. */
struct ranges {
    size_t n;
    size_t lo[MAX_RANGES], hi[MAX_RANGES];
};

struct calls {
    atomic_int identity, fold, reduce;
};

static void ranges_identity(void *acc, void *arg)
{
    atomic_fetch_add(&((struct calls *)arg)->identity, 1);
    ((struct ranges *)acc)->n = 0;
}

static void ranges_fold(void *acc, size_t begin, size_t end, void *arg)
{
    atomic_fetch_add(&((struct calls *)arg)->fold, 1);
    struct ranges *r = acc;
    ck_assert_uint_lt(r->n, MAX_RANGES);
    r->lo[r->n] = begin;
    r->hi[r->n] = end;
    r->n++;
}

static void ranges_reduce(void *acc, void *other, void *arg)
{
    atomic_fetch_add(&((struct calls *)arg)->reduce, 1);
    struct ranges *a = acc, *b = other;
    for (size_t i = 0; i < b->n; i++) {
        ck_assert_uint_lt(a->n, MAX_RANGES);
        a->lo[a->n] = b->lo[i];
        a->hi[a->n] = b->hi[i];
        a->n++;
    }
}

/* The chunks of spec/14-parallel.md, computed here independently. */
static void expect_chunks(size_t begin, size_t n, size_t p, const struct ranges *got)
{
    size_t c = n < p * CW_STRATEGY_CHUNKS_PER_THREAD ? n : p * CW_STRATEGY_CHUNKS_PER_THREAD;
    ck_assert_uint_eq(got->n, c);
    size_t at = begin;
    for (size_t j = 0; j < c; j++) {
        size_t len = n / c + (j < n % c);
        ck_assert_uint_eq(got->lo[j], at);
        ck_assert_uint_eq(got->hi[j], at + len);
        at += len;
    }
    ck_assert_uint_eq(at, begin + n);
}

static void check_fold_shape(cw_ctx *ctx, size_t p, size_t begin, size_t n)
{
    cw_strategy *s = new_strategy(ctx, p);
    struct calls calls;
    atomic_init(&calls.identity, 0);
    atomic_init(&calls.fold, 0);
    atomic_init(&calls.reduce, 0);
    cw_fold f = {sizeof(struct ranges), ranges_identity, ranges_fold, ranges_reduce, NULL, &calls};
    struct ranges got;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, begin, begin + n, &f, &got), CW_OK);
    expect_chunks(begin, n, p, &got);
    ck_assert_int_eq(atomic_load(&calls.identity), (int)got.n);
    ck_assert_int_eq(atomic_load(&calls.fold), (int)got.n);
    ck_assert_int_eq(atomic_load(&calls.reduce), (int)got.n - 1);
    cw_strategy_release(s);
}

/* A reduction that is neither associative nor commutative: its result
 * pins the exact chunks and the order of the reduce calls. */
static void poly_fold(void *acc, size_t begin, size_t end, void *arg)
{
    (void)arg;
    uint64_t *h = acc;
    for (size_t i = begin; i < end; i++)
        *h = *h * 31 + i;
}

static void poly_reduce(void *acc, void *other, void *arg)
{
    (void)arg;
    *(uint64_t *)acc = *(uint64_t *)acc * 1000003u - *(uint64_t *)other;
}

static uint64_t poly_expected(size_t begin, size_t n, size_t p)
{
    size_t c = n < p * CW_STRATEGY_CHUNKS_PER_THREAD ? n : p * CW_STRATEGY_CHUNKS_PER_THREAD;
    uint64_t result = 0;
    size_t at = begin;
    for (size_t j = 0; j < c; j++) {
        uint64_t h = 0;
        size_t len = n / c + (j < n % c);
        poly_fold(&h, at, at + len, NULL);
        at += len;
        if (j == 0)
            result = h;
        else
            poly_reduce(&result, &h, NULL);
    }
    return result;
}

static void *fold_shape_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    check_fold_shape(ctx, 1, 0, 3);
    check_fold_shape(ctx, 3, 10, 10);   /* fewer items than chunks: one item each */
    check_fold_shape(ctx, 3, 100, 100); /* 12 chunks: four of 9 items, eight of 8 */
    check_fold_shape(ctx, 2, 7, 1001);

    /* An empty range is the identity, with no fold and no reduce. */
    cw_strategy *s = new_strategy(ctx, 4);
    struct calls calls;
    atomic_init(&calls.identity, 0);
    atomic_init(&calls.fold, 0);
    atomic_init(&calls.reduce, 0);
    cw_fold f = {sizeof(struct ranges), ranges_identity, ranges_fold, ranges_reduce, NULL, &calls};
    struct ranges got;
    got.n = 99;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, 5, 5, &f, &got), CW_OK);
    ck_assert_uint_eq(got.n, 0);
    ck_assert_int_eq(atomic_load(&calls.identity), 1);
    ck_assert_int_eq(atomic_load(&calls.fold) + atomic_load(&calls.reduce), 0);

    cw_fold poly = {sizeof(uint64_t), sum_identity, poly_fold, poly_reduce, NULL, NULL};
    for (int round = 0; round < 3; round++) {
        uint64_t h = 0;
        ck_assert_int_eq(cw_strategy_fold(s, ctx, 3, 100003, &poly, &h), CW_OK);
        ck_assert_uint_eq(h, poly_expected(3, 100000, 4));
    }
    cw_strategy_release(s);
    return NULL;
}

CWC_CASE(strategy_fold_exact_chunks_and_reduce_order, "parallel", "PAR-002 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, fold_shape_root, NULL);
}

/* ---- Map ---------------------------------------------------------------------------- */

enum { MAP_N = 20000 };

struct map_check {
    atomic_int seen[MAP_N];
};

static void square_and_count(void *out, size_t i, void *arg)
{
    struct map_check *m = arg;
    atomic_fetch_add(&m->seen[i - 1000], 1);
    *(uint64_t *)out = (uint64_t)i * i;
}

static void *map_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct map_check m;
    static uint64_t out[MAP_N];
    for (size_t p = 1; p <= 5; p += 2) {
        for (size_t i = 0; i < MAP_N; i++)
            atomic_init(&m.seen[i], 0);
        memset(out, 0, sizeof out);
        cw_strategy *s = new_strategy(ctx, p);
        ck_assert_int_eq(cw_strategy_map(s, ctx, 1000, 1000 + MAP_N, sizeof(uint64_t),
                                         square_and_count, &m, out),
                         CW_OK);
        for (size_t i = 0; i < MAP_N; i++) {
            int seen = atomic_load(&m.seen[i]);
            CWC_REQUIRE(seen == 1, "parallelism %zu: item %zu mapped %d times", p, i + 1000, seen);
            CWC_REQUIRE(out[i] == (uint64_t)(i + 1000) * (i + 1000),
                        "parallelism %zu: item %zu's result is not in its place", p, i + 1000);
        }
        ck_assert_int_eq(
            cw_strategy_map(s, ctx, 9, 9, sizeof(uint64_t), square_and_count, &m, NULL), CW_OK);
        cw_strategy_release(s);
    }
    return NULL;
}

CWC_CASE(strategy_map_collects_in_input_order, "parallel", "PAR-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, map_root, NULL);
}

/* ---- Where the work runs ---------------------------------------------------------- */

enum { MAX_SEEN = 8 };

struct where {
    pthread_mutex_t lock;
    pthread_t seen[MAX_SEEN];
    int nseen;
    atomic_int flag; /* set by another task */
    atomic_int flag_seen;
};

static void note_thread(struct where *w)
{
    pthread_mutex_lock(&w->lock);
    int known = 0;
    for (int i = 0; i < w->nseen; i++)
        known |= pthread_equal(w->seen[i], pthread_self());
    if (!known && w->nseen < MAX_SEEN)
        w->seen[w->nseen++] = pthread_self();
    pthread_mutex_unlock(&w->lock);
}

/* Chunk 0 waits (up to 10 s) for a task that can only run while the
 * caller's single worker is free. */
static void where_fold(void *acc, size_t begin, size_t end, void *arg)
{
    struct where *w = arg;
    note_thread(w);
    if (begin == 0) {
        for (int i = 0; i < 100000 && !atomic_load(&w->flag); i++)
            pause_us(100);
        atomic_store(&w->flag_seen, atomic_load(&w->flag));
    }
    sum_fold(acc, begin, end, NULL);
}

static void *set_flag(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    atomic_store(&((struct where *)arg)->flag, 1);
    return NULL;
}

static void *no_work(void *arg)
{
    return arg;
}

static void *pool_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct where w;
    pthread_mutex_init(&w.lock, NULL);
    w.nseen = 0;
    atomic_init(&w.flag, 0);
    atomic_init(&w.flag_seen, 0);
    /* A thread started and joined first: ThreadSanitizer starts a thread of
     * its own with a process's first one, which must not count as the pool's
     * (a backend without threads has started none yet). */
    pthread_t warm;
    ck_assert_int_eq(pthread_create(&warm, NULL, no_work, NULL), 0);
    ck_assert_int_eq(pthread_join(warm, NULL), 0);
    int before = cwc_thread_count();
    cw_strategy *s = new_strategy(ctx, 2);
    ck_assert(cwc_threads_at_most(before)); /* no thread before the first use */
    cw_handle *h = cw_spawn(cw_child(ctx, "setter"), set_flag, &w);
    pthread_t me = pthread_self();
    cw_fold f = sum;
    f.fold = where_fold;
    f.arg = &w;
    int64_t total = 0;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 1000, &f, &total), CW_OK);
    ck_assert_int_eq(total, 999 * 1000 / 2);
    ck_assert_msg(atomic_load(&w.flag_seen), "the waiting task held up its worker");
    ck_assert_int_ge(w.nseen, 1);
    ck_assert_int_le(w.nseen, 2);
    for (int i = 0; i < w.nseen; i++)
        ck_assert_msg(!pthread_equal(w.seen[i], me), "a chunk ran on the caller's thread");
    ck_assert(cwc_threads_at_most(before + 2));
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cw_strategy_release(s);
    pthread_mutex_destroy(&w.lock);
    return NULL;
}

CWC_CASE(strategy_work_runs_on_pool_while_task_suspends, "parallel", "PAR-004 RUN-008",
         CWC_UNLESS_DETERMINISTIC | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 1;
    cwc_run_ok(&cfg, pool_root, NULL);
}

static void note_fold(void *acc, size_t begin, size_t end, void *arg)
{
    note_thread(arg);
    sum_fold(acc, begin, end, NULL);
}

static void note_map(void *out, size_t i, void *arg)
{
    note_thread(arg);
    *(size_t *)out = i;
}

static void *note_job(cw_strategy *s, void *arg)
{
    (void)s;
    note_thread(arg);
    return arg;
}

static void *inline_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct where w;
    pthread_mutex_init(&w.lock, NULL);
    w.nseen = 0;
    atomic_init(&w.flag, 0);
    int before = cwc_thread_count();
    /* Spawned before the strategy is made: making it suspends nothing either. */
    cw_handle *h = cw_spawn(cw_child(ctx, "setter"), set_flag, &w);
    cw_strategy *s = new_strategy(ctx, 8);
    cw_fold f = sum;
    f.fold = note_fold;
    f.arg = &w;
    int64_t total = 0;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 5000, &f, &total), CW_OK);
    size_t out[100];
    ck_assert_int_eq(cw_strategy_map(s, ctx, 0, 100, sizeof(size_t), note_map, &w, out), CW_OK);
    cw_job *j = NULL;
    ck_assert_int_eq(cw_strategy_spawn(s, note_job, &w, &j), CW_OK);
    ck_assert_int_eq(w.nseen, 1); /* the job already ran, inside spawn */
    ck_assert_int_eq(cw_job_join(j, ctx, NULL), CW_OK);
    /* Nothing suspended: the task spawned first has not run yet. */
    ck_assert_msg(atomic_load(&w.flag) == 0,
                  "PAR-005: the task spawned first ran: making the strategy or one of its "
                  "operations suspended the caller");
    ck_assert_int_eq(w.nseen, 1);
    ck_assert(pthread_equal(w.seen[0], pthread_self()));
    ck_assert_msg(cwc_threads_at_most(before), "a thread of the run outlived it");
    cw_strategy_release(s);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    pthread_mutex_destroy(&w.lock);
    return (void *)(intptr_t)total;
}

CWC_CASE(strategy_deterministic_runs_inline, "parallel", "PAR-005 DET-001 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cw_run_result a, b;
    ck_assert_int_eq(cwc_run(&cfg, inline_root, NULL, &a), CW_OK);
    ck_assert_int_eq(cwc_run(&cfg, inline_root, NULL, &b), CW_OK);
    ck_assert_int_eq((intptr_t)a.value, 4999 * 5000 / 2);
    ck_assert_str_eq(a.digest, b.digest);
    ck_assert_uint_eq(a.end_time, b.end_time);
    ck_assert_uint_eq(a.iterations, b.iterations);
}

/* ---- Jobs ------------------------------------------------------------------------- */

static void *count_job(cw_strategy *s, void *arg)
{
    ck_assert_ptr_nonnull(s);
    pause_us(2000);
    atomic_fetch_add((atomic_int *)arg, 1);
    return arg;
}

static void *jobs_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static atomic_int runs;
    atomic_init(&runs, 0);
    cw_strategy *s = new_strategy(ctx, 2);
    cw_job *joined = NULL, *released[4];
    ck_assert_int_eq(cw_strategy_spawn(s, count_job, &runs, &joined), CW_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(cw_strategy_spawn(s, count_job, &runs, &released[i]), CW_OK);
    for (int i = 0; i < 4; i++)
        cw_job_release(released[i]);
    void *value = NULL;
    ck_assert_int_eq(cw_job_join(joined, ctx, &value), CW_OK);
    ck_assert_ptr_eq(value, &runs);
    cw_strategy_release(s); /* waits for the queue: the released jobs ran too */
    ck_assert_int_eq(atomic_load(&runs), 5);
    return NULL;
}

CWC_CASE(strategy_jobs_run_once_joined_or_released, "parallel", "PAR-007 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, jobs_root, NULL);
}

/* Jobs queued behind one that holds the pool's only thread: a job spawned
 * while another still waits in the queue runs after it, and each runs
 * once (PAR-007). */
static void *holding_job(cw_strategy *s, void *arg)
{
    (void)s;
    cwc_hold_thread(arg);
    return (void *)(intptr_t)1;
}

static void *its_arg(cw_strategy *s, void *arg)
{
    (void)s;
    return arg;
}

static void *queued_jobs_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cwc_hold h;
    cwc_hold_init(&h);
    cw_strategy *s = new_strategy(ctx, 1);
    cw_job *j[3];
    ck_assert_int_eq(cw_strategy_spawn(s, holding_job, &h, &j[0]), CW_OK);
    ck_assert_int_eq(cw_strategy_spawn(s, its_arg, (void *)(intptr_t)2, &j[1]), CW_OK);
    while (!atomic_load(&h.started))
        ck_assert_int_eq(cw_sleep(ctx, CW_MSEC), CW_OK);
    /* The second job waits in the queue: the third goes behind it. */
    ck_assert_int_eq(cw_strategy_spawn(s, its_arg, (void *)(intptr_t)3, &j[2]), CW_OK);
    atomic_store(&h.release, 1);
    for (intptr_t i = 0; i < 3; i++) {
        void *v = NULL;
        ck_assert_int_eq(cw_job_join(j[i], ctx, &v), CW_OK);
        ck_assert_int_eq((intptr_t)v, i + 1);
    }
    cw_strategy_release(s);
    return NULL;
}

CWC_CASE(strategy_jobs_queued_behind_a_running_one, "parallel", "PAR-007 PAR-004 RUN-008",
         CW_CAP_PARALLEL | CWC_REPEATED)
{
    cwc_run_ok(NULL, queued_jobs_root, NULL);
}

/* ---- The pool's lifetime -------------------------------------------------------------- */

static void *make_and_use(cw_ctx *ctx, void *arg)
{
    cw_strategy *s = new_strategy(ctx, 2);
    int64_t total = 0;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 1000, &sum, &total), CW_OK);
    ck_assert_int_eq(total, 499500);
    (void)arg;
    return s; /* not released: the pool ends with this task */
}

/* Fold 0..999 and say whether every chunk ran on the calling thread. */
static bool fold_inline(cw_strategy *s, cw_ctx *ctx)
{
    static struct where w;
    pthread_mutex_init(&w.lock, NULL);
    w.nseen = 0;
    cw_fold f = sum;
    f.fold = note_fold;
    f.arg = &w;
    int64_t total = 0;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 1000, &f, &total), CW_OK);
    ck_assert_int_eq(total, 499500);
    pthread_mutex_destroy(&w.lock);
    return w.nseen == 1 && pthread_equal(w.seen[0], pthread_self());
}

static void *creator_ends_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h = cw_spawn(cw_child(ctx, "maker"), make_and_use, NULL);
    void *v = NULL;
    ck_assert_int_eq(cw_join(h, &v), CW_OK);
    cw_handle_release(h);
    cw_strategy *s = v;
    /* The maker ended, so its pool stops (its keeper may take a moment to
     * unwind); the strategy still works, inline, with the same result. */
    bool inline_now = false;
    for (int i = 0; i < 1000 && !inline_now; i++) {
        inline_now = fold_inline(s, ctx);
        if (!inline_now)
            cw_sleep(ctx, CW_MSEC);
    }
    ck_assert_msg(inline_now, "the pool outlived the task that made it");
    cw_strategy_release(s);
    return NULL;
}

static void *outlive_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_strategy *s = new_strategy(ctx, 2);
    int64_t total = 0;
    ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 1000, &sum, &total), CW_OK);
    return s; /* not released: the run's end stops the pool */
}

CWC_CASE(strategy_pool_ends_with_run_or_maker, "parallel", "PAR-008 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, creator_ends_root, NULL);
    /* A first run lets any helper threads of the process start. */
    cw_strategy_release(cwc_run_ok(NULL, outlive_root, NULL));
    int before = cwc_thread_count();
    cw_strategy *s = cwc_run_ok(NULL, outlive_root, NULL);
    ck_assert_msg(cwc_threads_at_most(before), "a thread of the run outlived it");
    /* After the run, from a plain thread: inline, same result. */
    int64_t total = 0;
    ck_assert_int_eq(cw_strategy_fold(s, NULL, 0, 1000, &sum, &total), CW_OK);
    ck_assert_int_eq(total, 499500);
    ck_assert_msg(cwc_threads_at_most(before), "a thread of the run outlived it");
    cw_strategy_release(s);
}

/* A strategy made by a task already aborted, from its cleanup handler: the
 * pool stops at the latest when that task ends (PAR-008), though nothing
 * under its aborted context could be spawned to hold the pool (TASK-002),
 * so after the join the strategy works inline on its caller. */
struct aborted_maker {
    cw_ctx *ctx;
    cw_strategy *s;
    int rc;
    atomic_bool ready;
};

static void make_while_unwinding(void *arg)
{
    struct aborted_maker *m = arg;
    m->rc = cw_strategy_new(m->ctx, 2, &m->s);
}

static void *wait_to_be_aborted(cw_ctx *ctx, void *arg)
{
    struct aborted_maker *m = arg;
    m->ctx = ctx;
    CW_CLEANUP_PUSH(ctx, make_while_unwinding, m);
    atomic_store(&m->ready, true);
    cw_wait forever = cw_wait_pending(ctx);
    cw_select(&forever, 1);
    CW_CLEANUP_POP(ctx, false);
    return NULL;
}

static void *aborted_maker_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct aborted_maker m;
    m = (struct aborted_maker){.rc = -1};
    cw_handle *h = cw_spawn(cw_child(ctx, "maker"), wait_to_be_aborted, &m);
    while (!atomic_load(&m.ready))
        cw_sleep(ctx, CW_MSEC);
    cw_abort(h);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    ck_assert_int_eq(m.rc, CW_OK);
    ck_assert_ptr_nonnull(m.s);
    bool inline_now = false;
    for (int i = 0; i < 1000 && !inline_now; i++) {
        inline_now = fold_inline(m.s, ctx);
        if (!inline_now)
            cw_sleep(ctx, CW_MSEC);
    }
    ck_assert_msg(inline_now, "the pool outlived the aborted task that made it");
    cw_strategy_release(m.s);
    return NULL;
}

CWC_CASE(strategy_made_while_unwinding_stops_with_its_maker, "parallel", "PAR-008 TASK-002",
         CWC_REPEATED)
{
    cwc_run_ok(NULL, aborted_maker_root, NULL);
}

/* ---- Abort while waiting ---------------------------------------------------------------- */

struct slow {
    atomic_int running, chunks, identities, discards;
    /* While set, gated work waits: the case, not the machine's speed,
     * decides what is still running when an abort lands. */
    atomic_bool gated;
    atomic_bool last_in; /* the range's last chunk has begun */
};

/* A case's counters are static, so that a chunk still running after a
 * failed assertion never writes to a dead stack frame. */
static void slow_reset(struct slow *sl)
{
    atomic_init(&sl->running, 0);
    atomic_init(&sl->chunks, 0);
    atomic_init(&sl->identities, 0);
    atomic_init(&sl->discards, 0);
    atomic_init(&sl->gated, false);
    atomic_init(&sl->last_in, false);
}

static void wait_for_gate(struct slow *sl)
{
    while (atomic_load(&sl->gated))
        pause_us(1000);
}

static void slow_identity(void *acc, void *arg)
{
    atomic_fetch_add(&((struct slow *)arg)->identities, 1);
    *(int64_t *)acc = 0;
}

static void slow_fold(void *acc, size_t begin, size_t end, void *arg)
{
    struct slow *sl = arg;
    atomic_fetch_add(&sl->running, 1);
    pause_us(20000);
    wait_for_gate(sl);
    sum_fold(acc, begin, end, NULL);
    atomic_fetch_add(&sl->chunks, 1);
    atomic_fetch_sub(&sl->running, 1);
}

static void slow_discard(void *acc, void *arg)
{
    (void)acc;
    atomic_fetch_add(&((struct slow *)arg)->discards, 1);
}

struct abort_arg {
    cw_strategy *s;
    struct slow *sl;
};

static void *slow_folder(cw_ctx *ctx, void *arg)
{
    struct abort_arg *a = arg;
    cw_fold f = {sizeof(int64_t), slow_identity, slow_fold, sum_reduce, slow_discard, a->sl};
    int64_t total = 0;
    cw_strategy_fold(a->s, ctx, 0, 1000000, &f, &total);
    ck_abort_msg("an aborted fold returned");
    return NULL;
}

static void *slow_job(cw_strategy *s, void *arg)
{
    (void)s;
    struct slow *sl = arg;
    wait_for_gate(sl);
    atomic_fetch_add(&sl->chunks, 1);
    return NULL;
}

static void *joiner(cw_ctx *ctx, void *arg)
{
    cw_job_join(arg, ctx, NULL);
    ck_abort_msg("an aborted join returned");
    return NULL;
}

static void *abort_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct slow sl;
    slow_reset(&sl);
    atomic_store(&sl.gated, true);
    struct abort_arg a = {new_strategy(ctx, 2), &sl};
    cw_handle *h = cw_spawn(cw_child(ctx, "folder"), slow_folder, &a);
    /* The abort lands while a chunk runs: every chunk waits at the gate,
     * so the fold cannot end first however slow the machine. */
    while (atomic_load(&sl.running) == 0)
        cw_sleep(ctx, CW_MSEC);
    cw_abort(h);
    atomic_store(&sl.gated, false);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    /* The fold's unwinding waited for its running chunks and skipped the
     * rest: only chunks claimed before the abort ran, at most one for each
     * of the strategy's two threads and one for the caller. */
    ck_assert_int_eq(atomic_load(&sl.running), 0);
    int chunks = atomic_load(&sl.chunks);
    ck_assert_int_le(chunks, 3);
    ck_assert_int_eq(atomic_load(&sl.discards), atomic_load(&sl.identities));
    pause_us(20000);
    ck_assert_int_eq(atomic_load(&sl.chunks), chunks);

    /* A joiner aborted: the job runs on, detached. The job waits at the
     * gate, so the join cannot end before the abort. */
    slow_reset(&sl);
    atomic_store(&sl.gated, true);
    cw_job *j = NULL;
    ck_assert_int_eq(cw_strategy_spawn(a.s, slow_job, &sl, &j), CW_OK);
    cw_handle *jh = cw_spawn(cw_child(ctx, "joiner"), joiner, j);
    cw_sleep(ctx, 5 * CW_MSEC);
    cw_abort(jh);
    ck_assert_int_eq(cw_join(jh, NULL), CW_ERR_CLOSED);
    cw_handle_release(jh);
    atomic_store(&sl.gated, false);
    cw_strategy_release(a.s); /* drains the pool */
    ck_assert_int_eq(atomic_load(&sl.chunks), 1);
    return NULL;
}

CWC_CASE(strategy_abort_waits_for_running_chunks, "parallel", "PAR-009 RUN-008",
         CWC_UNLESS_DETERMINISTIC | CWC_REPEATED)
{
    cwc_run_ok(NULL, abort_root, NULL);
}

/* Only the last chunk is slow: when the abort comes, one runner is still
 * in it and the others have left the pool, and the unwinding still waits
 * for that one chunk. It waits at the gate, so the abort lands while it
 * runs however slow the machine. */
static void last_slow_fold(void *acc, size_t begin, size_t end, void *arg)
{
    struct slow *sl = arg;
    atomic_fetch_add(&sl->running, 1);
    if (end == 1000) {
        atomic_store(&sl->last_in, true);
        pause_us(20000);
        wait_for_gate(sl);
    }
    sum_fold(acc, begin, end, NULL);
    atomic_fetch_add(&sl->chunks, 1);
    atomic_fetch_sub(&sl->running, 1);
}

static void *last_slow_folder(cw_ctx *ctx, void *arg)
{
    struct abort_arg *a = arg;
    cw_fold f = {sizeof(int64_t), slow_identity, last_slow_fold, sum_reduce, slow_discard, a->sl};
    int64_t total = 0;
    cw_strategy_fold(a->s, ctx, 0, 1000, &f, &total);
    ck_abort_msg("an aborted fold returned");
    return NULL;
}

static void *last_chunk_abort_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct slow sl;
    slow_reset(&sl);
    atomic_store(&sl.gated, true);
    struct abort_arg a = {new_strategy(ctx, 2), &sl};
    cw_handle *h = cw_spawn(cw_child(ctx, "folder"), last_slow_folder, &a);
    while (!atomic_load(&sl.last_in))
        cw_sleep(ctx, CW_MSEC);
    cw_abort(h);
    atomic_store(&sl.gated, false);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    ck_assert_msg(atomic_load(&sl.running) == 0,
                  "the aborted fold's unwinding left a chunk running");
    ck_assert_int_eq(atomic_load(&sl.discards), atomic_load(&sl.identities));
    cw_strategy_release(a.s);
    return NULL;
}

CWC_CASE(strategy_abort_waits_for_the_last_running_chunk, "parallel", "PAR-009 RUN-008",
         CWC_UNLESS_DETERMINISTIC | CWC_REPEATED)
{
    cwc_run_ok(NULL, last_chunk_abort_root, NULL);
}

/* A task aborted while it waits in a map, on the pool: the same unwinding
 * as a fold's, without the accumulators a fold has. The first calls hold
 * their chunks until the root has aborted the mapper, so the abort comes
 * before the map is done; no call of the map runs after the join. */
struct held_map {
    atomic_int entered, released, running, calls;
    atomic_int seen[1000];
};

static void held_item(void *out, size_t i, void *arg)
{
    struct held_map *m = arg;
    atomic_fetch_add(&m->running, 1);
    atomic_fetch_add(&m->seen[i], 1);
    atomic_store(&m->entered, 1);
    while (!atomic_load(&m->released))
        pause_us(1000);
    *(size_t *)out = i;
    atomic_fetch_add(&m->calls, 1);
    atomic_fetch_sub(&m->running, 1);
}

struct map_abort {
    cw_strategy *s;
    struct held_map *m;
};

/* The abort comes while the map waits, or (a mapper that had not parked
 * yet when every chunk was done) before its next suspension point: the
 * task ends there either way [TASK-002]. */
static void *held_mapper(cw_ctx *ctx, void *arg)
{
    struct map_abort *a = arg;
    static size_t out[1000];
    cw_strategy_map(a->s, ctx, 0, 1000, sizeof(size_t), held_item, a->m, out);
    return cwc_pending_task(ctx, NULL);
}

static void *map_abort_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct held_map m;
    memset(&m, 0, sizeof m);
    struct map_abort a = {new_strategy(ctx, 2), &m};
    cw_handle *h = cw_spawn(cw_child(ctx, "mapper"), held_mapper, &a);
    while (!atomic_load(&m.entered)) /* the map is on the pool and waits for it */
        cw_sleep(ctx, CW_MSEC);
    cw_abort(h);
    atomic_store(&m.released, 1);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    ck_assert_msg(atomic_load(&m.running) == 0, "a call of the aborted map runs after its task");
    int calls = atomic_load(&m.calls);
    ck_assert_int_ge(calls, 1);
    for (size_t i = 0; i < 1000; i++)
        CWC_REQUIRE(atomic_load(&m.seen[i]) <= 1, "item %zu mapped twice", i);
    cw_strategy_release(a.s); /* drains the pool: nothing of the map is left on it */
    ck_assert_int_eq(atomic_load(&m.calls), calls);
    return NULL;
}

CWC_CASE(strategy_abort_in_map_unwinds, "parallel", "PAR-009 PAR-003 RUN-008",
         CWC_UNLESS_DETERMINISTIC | CWC_REPEATED)
{
    cwc_run_ok(NULL, map_abort_root, NULL);
}

/* ---- Accumulators of every size ------------------------------------------------------ */

/* A fold over accumulators of `size` bytes: item i adds itself into byte
 * i % size. Bytewise sums in any grouping give the same bytes, so the
 * result is known without the chunks; each accumulator must be aligned
 * for any type and wholly writable. */
struct sized {
    size_t size;
    atomic_int misaligned;
};

static void sized_identity(void *acc, void *arg)
{
    struct sized *z = arg;
    if ((uintptr_t)acc % _Alignof(max_align_t) != 0)
        atomic_store(&z->misaligned, 1);
    memset(acc, 0, z->size);
}

static void sized_fold(void *acc, size_t begin, size_t end, void *arg)
{
    size_t size = ((struct sized *)arg)->size;
    for (size_t i = begin; i < end; i++)
        ((uint8_t *)acc)[i % size] += (uint8_t)i;
}

static void sized_reduce(void *acc, void *other, void *arg)
{
    size_t size = ((struct sized *)arg)->size;
    for (size_t k = 0; k < size; k++)
        ((uint8_t *)acc)[k] += ((uint8_t *)other)[k];
}

static void *sized_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const size_t sizes[] = {1,  2,  3,  7,  8,  9,   15,  16,  17,  24,   31,
                                   32, 33, 48, 64, 80, 100, 128, 255, 256, 1000, 4096};
    enum { N = 5000, GUARD = 16 };
    static uint8_t out[4096 + GUARD], want[4096];
    cw_strategy *s = new_strategy(ctx, 3);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t size = sizes[k];
        struct sized z = {size, 0};
        cw_fold f = {size, sized_identity, sized_fold, sized_reduce, NULL, &z};
        memset(want, 0, size);
        for (size_t i = 0; i < N; i++)
            want[i % size] += (uint8_t)i;
        memset(out, 0xa5, sizeof out);
        int rc = cw_strategy_fold(s, ctx, 0, N, &f, out);
        ck_assert_msg(rc == CW_OK, "a fold of %zu-byte accumulators returned %d", size, rc);
        ck_assert_msg(memcmp(out, want, size) == 0, "a fold of %zu-byte accumulators is wrong",
                      size);
        for (size_t g = size; g < size + GUARD; g++)
            ck_assert_msg(out[g] == 0xa5, "a fold of %zu-byte accumulators wrote past them", size);
        ck_assert_msg(!atomic_load(&z.misaligned),
                      "an accumulator of %zu bytes is not aligned for any type", size);
    }
    cw_strategy_release(s);
    return NULL;
}

CWC_CASE(strategy_fold_accumulators_of_any_size, "parallel", "PAR-002 PAR-010 RUN-008",
         CWC_REPEATED)
{
    cwc_run_ok(NULL, sized_root, NULL);
}

/* ---- A fold waits for its slowest chunk ------------------------------------------- */

/* The later a chunk, the longer it takes: the last one ends well after the
 * others, so a fold that stopped waiting one chunk early would miss it. */
static void slow_sum_fold(void *acc, size_t begin, size_t end, void *arg)
{
    (void)arg;
    pause_us((long)(begin / 100) * 1000); /* up to 30 ms for the chunk at 3000 */
    sum_fold(acc, begin, end, NULL);
}

/* The same fold from a program thread that is not a task (NULL ctx): it
 * blocks until the slowest chunk is in too. */
typedef struct outside_fold {
    cw_strategy *s;
    int rc;
    int64_t total;
} outside_fold;

static void *fold_outside(void *arg)
{
    outside_fold *o = arg;
    cw_fold f = sum;
    f.fold = slow_sum_fold;
    o->total = -1;
    o->rc = cw_strategy_fold(o->s, NULL, 0, 4000, &f, &o->total);
    return NULL;
}

static void *slowest_chunk_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_strategy *s = new_strategy(cw_child(ctx, "pool"), 4);
    cw_fold f = sum;
    f.fold = slow_sum_fold;
    for (int round = 0; round < 3; round++) {
        int64_t total = -1;
        ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 4000, &f, &total), CW_OK);
        ck_assert_int_eq(total, (int64_t)4000 * 3999 / 2);
    }
    outside_fold o = {s, -1, -1};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, fold_outside, &o), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_int_eq(o.rc, CW_OK);
    ck_assert_int_eq(o.total, (int64_t)4000 * 3999 / 2);
    cw_strategy_release(s);
    return NULL;
}

CWC_CASE(strategy_fold_waits_for_every_chunk, "parallel", "PAR-002 PAR-004", 0)
{
    cwc_run_ok(NULL, slowest_chunk_root, NULL);
}

/* ---- A pool's threads block signals [PAR-012] -------------------------------------------- */

/* Signals a program may block in all of its threads, to take them with
 * sigwait: one sent to the process must then never reach a pool thread. */
static const int program_signals[] = {SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH};

static void program_signals_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < sizeof program_signals / sizeof program_signals[0]; i++)
        sigaddset(set, program_signals[i]);
}

/* A chunk counts the program's signals its thread does not block: on a
 * pool thread none, and inline (PAR-005) the program's own thread, which
 * blocks them all. */
static void unblocked_fold(void *acc, size_t begin, size_t end, void *arg)
{
    sigset_t now;
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
    for (size_t i = 0; i < sizeof program_signals / sizeof program_signals[0]; i++)
        if (!sigismember(&now, program_signals[i]))
            atomic_fetch_add((atomic_int *)arg, 1);
    sum_fold(acc, begin, end, NULL);
}

static void *signals_blocked_root(cw_ctx *ctx, void *arg)
{
    cw_strategy *s = new_strategy(ctx, 4);
    cw_fold f = sum;
    f.fold = unblocked_fold;
    f.arg = arg;
    for (int round = 0; round < 4; round++) {
        int64_t total = 0;
        ck_assert_int_eq(cw_strategy_fold(s, ctx, 0, 1000, &f, &total), CW_OK);
        ck_assert_int_eq(total, 999 * 1000 / 2);
    }
    cw_strategy_release(s);
    return NULL;
}

/* The program blocks its signals in its thread before the run (so in every
 * thread it starts); the pool's threads must have them blocked too. */
CWC_CASE(strategy_pool_threads_block_signals, "parallel", "PAR-012 PAR-002", 0)
{
    sigset_t set, old;
    program_signals_set(&set);
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
    atomic_int unblocked;
    atomic_init(&unblocked, 0);
    cwc_run_ok(NULL, signals_blocked_root, &unblocked);
    ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
    ck_assert_msg(atomic_load(&unblocked) == 0,
                  "%d times a chunk ran on a thread that took signals the program blocked",
                  atomic_load(&unblocked));
}
