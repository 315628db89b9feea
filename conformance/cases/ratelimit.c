/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * ratelimit.c - quotas, GCRA decisions, keyed limiters and eviction
 * (spec/15-ratelimit.md). Exact times come from the `_at` functions, or
 * from the virtual clock on a deterministic backend.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cases/util.h"

#define DET CW_CAP_DETERMINISTIC
#define MS CW_MSEC

/* 3 cells per 30 ms: one every 10 ms, three at once. */
static cw_quota three_per_30ms(void)
{
    cw_quota q;
    ck_assert_int_eq(cw_quota_per(&q, 3, 30 * MS), CW_OK);
    return q;
}

/* One step of an expected sequence: at `at`, accept or refuse until `next`. */
typedef struct step {
    cw_time at;
    int rc;
    cw_time next;
} step;

#define OK_AT(t)                                                                                   \
    {                                                                                              \
        (t), CW_OK, 0                                                                              \
    }
#define NO_AT(t, n)                                                                                \
    {                                                                                              \
        (t), CW_ERR_WOULD_BLOCK, (n)                                                               \
    }

/* Accept/refuse sequence for three_per_30ms from time `t0`, checked with
 * the arithmetic of the spec worked out by hand. */
static const step gcra_steps[] = {
    OK_AT(0),
    OK_AT(0),
    OK_AT(0),
    NO_AT(0, 10 * MS),      /* burst of 3 */
    NO_AT(5 * MS, 10 * MS), /* not yet */
    OK_AT(10 * MS),
    NO_AT(10 * MS, 20 * MS), /* one refilled */
    OK_AT(25 * MS),
    NO_AT(25 * MS, 30 * MS), /* TAT 50 */
    OK_AT(100 * MS),
    OK_AT(100 * MS),
    OK_AT(100 * MS),
    NO_AT(100 * MS, 110 * MS), /* full again */
    OK_AT(115 * MS),
    NO_AT(116 * MS, 120 * MS),
};

static void run_steps(cw_limiter *l, cw_time t0)
{
    for (size_t i = 0; i < sizeof gcra_steps / sizeof gcra_steps[0]; i++) {
        const step *s = &gcra_steps[i];
        cw_time next = 0;
        int rc = cw_limiter_check_at(l, t0 + s->at, &next);
        ck_assert_msg(rc == s->rc, "step %zu: got %d, want %d", i, rc, s->rc);
        if (rc != CW_OK)
            ck_assert_uint_eq(next, t0 + s->next);
    }
}

CWC_CASE(quota_rejects_zero_cells_or_period, "ratelimit", "RATE-001 RUN-008", CWC_REPEATED)
{
    cw_quota q = {123, 4};
    ck_assert_int_eq(cw_quota_per(&q, 0, CW_SEC), CW_ERR_INVALID);
    ck_assert_int_eq(cw_quota_per(&q, 5, 0), CW_ERR_INVALID);
    ck_assert_uint_eq(q.interval, 123);
    ck_assert_uint_eq(q.burst, 4);
    ck_assert_int_eq(cw_quota_per(&q, 3, CW_SEC), CW_OK);
    ck_assert_uint_eq(q.interval, 333333333); /* rounded down */
    ck_assert_uint_eq(q.burst, 3);
    ck_assert_int_eq(cw_quota_per(&q, 7, 5), CW_OK);
    ck_assert_uint_eq(q.interval, 1); /* never below 1 ns */
    ck_assert_int_eq(cw_quota_allow_burst(&q, 0), CW_ERR_INVALID);
    ck_assert_uint_eq(q.burst, 7);
    ck_assert_int_eq(cw_quota_allow_burst(&q, 100), CW_OK);
    ck_assert_uint_eq(q.burst, 100);

    cw_quota bad[2] = {{0, 1}, {1, 0}};
    for (int i = 0; i < 2; i++) {
        cw_limiter *l = (cw_limiter *)&q;
        ck_assert_int_eq(cw_limiter_new(&bad[i], &l), CW_ERR_INVALID);
        ck_assert_ptr_null(l);
        cw_keyed_limiter *k = (cw_keyed_limiter *)&q;
        ck_assert_int_eq(cw_keyed_limiter_new(&bad[i], &k), CW_ERR_INVALID);
        ck_assert_ptr_null(k);
    }
}

CWC_CASE(limiter_gcra_exact_sequence, "ratelimit", "RATE-002 RUN-008", CWC_REPEATED)
{
    cw_quota q = three_per_30ms();
    for (cw_time t0 = 0; t0 <= 5 * CW_SEC; t0 += 5 * CW_SEC) {
        cw_limiter *l = NULL;
        ck_assert_int_eq(cw_limiter_new(&q, &l), CW_OK);
        run_steps(l, t0);
        ck_assert_int_eq(cw_limiter_check_at(l, t0 + 116 * MS, NULL), CW_ERR_WOULD_BLOCK);
        cw_limiter_free(l);
    }

    /* Burst 1: exactly one cell per interval. */
    cw_quota one;
    ck_assert_int_eq(cw_quota_per(&one, 1, 7), CW_OK);
    cw_limiter *l = NULL;
    ck_assert_int_eq(cw_limiter_new(&one, &l), CW_OK);
    cw_time next = 0;
    ck_assert_int_eq(cw_limiter_check_at(l, 1000, NULL), CW_OK);
    ck_assert_int_eq(cw_limiter_check_at(l, 1006, &next), CW_ERR_WOULD_BLOCK);
    ck_assert_uint_eq(next, 1007);
    ck_assert_int_eq(cw_limiter_check_at(l, 1007, NULL), CW_OK);
    ck_assert_int_eq(cw_limiter_check_at(l, 1013, &next), CW_ERR_WOULD_BLOCK);
    ck_assert_uint_eq(next, 1014);
    cw_limiter_free(l);

    /* Saturation: a TAT that would pass CW_TIME_MAX stays at it. */
    cw_quota huge = {CW_TIME_MAX / 2 + 1, 1};
    ck_assert_int_eq(cw_limiter_new(&huge, &l), CW_OK);
    ck_assert_int_eq(cw_limiter_check_at(l, 0, NULL), CW_OK);
    ck_assert_int_eq(cw_limiter_check_at(l, 0, &next), CW_ERR_WOULD_BLOCK);
    ck_assert_uint_eq(next, CW_TIME_MAX / 2 + 1);
    ck_assert_int_eq(cw_limiter_check_at(l, CW_TIME_MAX - 1, NULL), CW_OK);
    ck_assert_int_eq(cw_limiter_check_at(l, CW_TIME_MAX - 1, &next), CW_ERR_WOULD_BLOCK);
    ck_assert_uint_eq(next, CW_TIME_MAX);
    ck_assert_int_eq(cw_limiter_check_at(l, CW_TIME_MAX, NULL), CW_OK);
    cw_limiter_free(l);
}

/* ---- The runtime clock -------------------------------------------------------------- */

static void *clock_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_quota q = three_per_30ms();
    cw_limiter *l = NULL;
    ck_assert_int_eq(cw_limiter_new(&q, &l), CW_OK);
    cw_time t0 = cw_current(ctx);
    for (size_t i = 0; i < sizeof gcra_steps / sizeof gcra_steps[0]; i++) {
        const step *s = &gcra_steps[i];
        ck_assert_int_eq(cw_sleep_until(ctx, t0 + s->at), CW_OK);
        ck_assert_uint_eq(cw_current(ctx), t0 + s->at);
        cw_time next = 0;
        ck_assert_int_eq(cw_limiter_check(l, ctx, &next), s->rc);
        if (s->rc != CW_OK)
            ck_assert_uint_eq(next, t0 + s->next);
    }
    /* At 116 ms the next cell comes at 120 ms: until_ready sleeps exactly so. */
    ck_assert_int_eq(cw_limiter_until_ready(l, ctx), CW_OK);
    ck_assert_uint_eq(cw_current(ctx), t0 + 120 * MS);
    ck_assert_int_eq(cw_limiter_until_ready(l, ctx), CW_OK);
    ck_assert_uint_eq(cw_current(ctx), t0 + 130 * MS);
    cw_limiter_free(l);

    /* The keyed limiter on the same clock, and retain_recent at its `now`. */
    cw_keyed_limiter *k = NULL;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    cw_time t1 = cw_current(ctx);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(cw_keyed_limiter_check(k, ctx, "peer", 4, NULL), CW_OK);
    cw_time next = 0;
    ck_assert_int_eq(cw_keyed_limiter_check(k, ctx, "peer", 4, &next), CW_ERR_WOULD_BLOCK);
    ck_assert_uint_eq(next, t1 + 10 * MS);
    ck_assert_int_eq(cw_keyed_limiter_until_ready(k, ctx, "peer", 4), CW_OK);
    ck_assert_uint_eq(cw_current(ctx), t1 + 10 * MS);
    cw_keyed_limiter_retain_recent(k, ctx); /* TAT 40 ms > now: kept */
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 1);
    ck_assert_int_eq(cw_sleep_until(ctx, t1 + 40 * MS), CW_OK);
    cw_keyed_limiter_retain_recent(k, ctx); /* TAT == now: idle */
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 0);
    cw_keyed_limiter_free(k);
    return NULL;
}

CWC_CASE(limiter_decides_on_the_virtual_clock, "ratelimit", "RATE-003 RATE-005 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.start_time = 1700000000ull * CW_SEC;
    cwc_run_ok(&cfg, clock_root, NULL);
}

static void *until_ready_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_quota q;
    ck_assert_int_eq(cw_quota_per(&q, 1, 20 * MS), CW_OK);
    cw_limiter *l = NULL;
    ck_assert_int_eq(cw_limiter_new(&q, &l), CW_OK);
    cw_time t0 = cw_current(ctx);
    ck_assert_int_eq(cw_limiter_until_ready(l, ctx), CW_OK); /* a fresh cell: no wait */
    cw_time next = 0;
    ck_assert_int_eq(cw_limiter_check(l, ctx, &next), CW_ERR_WOULD_BLOCK);
    ck_assert_uint_ge(next, t0 + 20 * MS);
    ck_assert_int_eq(cw_limiter_until_ready(l, ctx), CW_OK);
    ck_assert_uint_ge(cw_current(ctx), next);
    ck_assert_uint_ge(cw_current(ctx), t0 + 20 * MS);
    cw_limiter_free(l);
    return NULL;
}

CWC_CASE(limiter_until_ready_sleeps_on_runtime_clock, "ratelimit", "RATE-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, until_ready_root, NULL);
}

/* ---- Keyed limiters ------------------------------------------------------------------ */

/* A small deterministic generator for the long sequences below. */
static uint64_t next_rand(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static const char *const keys[] = {"a", "b", "a\0", "",
                                   "a key much longer than sixteen bytes, stored apart"};
static const size_t key_lens[] = {1, 1, 2, 0, 51};
enum { NKEYS = 5 };

CWC_CASE(keyed_limiter_keys_are_independent, "ratelimit", "RATE-004 RUN-008", CWC_REPEATED)
{
    cw_quota q = three_per_30ms();
    cw_keyed_limiter *k = NULL;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    /* Exhausting "a" leaves "b", "a\0" and the empty key untouched. */
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(cw_keyed_limiter_check_at(k, "a", 1, 0, NULL), CW_OK);
    cw_time next = 0;
    ck_assert_int_eq(cw_keyed_limiter_check_at(k, "a", 1, 0, &next), CW_ERR_WOULD_BLOCK);
    ck_assert_uint_eq(next, 10 * MS);
    for (int key = 1; key < NKEYS; key++)
        for (int i = 0; i < 3; i++)
            ck_assert_int_eq(cw_keyed_limiter_check_at(k, keys[key], key_lens[key], 0, NULL),
                             CW_OK);
    ck_assert_uint_eq(cw_keyed_limiter_len(k), NKEYS);
    cw_keyed_limiter_free(k);

    /* Each key decides exactly as a limiter of its own. */
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    cw_limiter *direct[NKEYS];
    for (int i = 0; i < NKEYS; i++)
        ck_assert_int_eq(cw_limiter_new(&q, &direct[i]), CW_OK);
    uint64_t x = 1;
    cw_time now = 0;
    int accepted = 0;
    for (int i = 0; i < 20000; i++) {
        now += next_rand(&x) % MS;
        int key = (int)(next_rand(&x) % NKEYS);
        cw_time n1 = 0, n2 = 0;
        int rc = cw_keyed_limiter_check_at(k, keys[key], key_lens[key], now, &n1);
        int want = cw_limiter_check_at(direct[key], now, &n2);
        CWC_REQUIRE(rc == want && (rc == CW_OK || n1 == n2),
                    "check %d of key %d: %d, next %" PRIu64 "; its own limiter: %d, next %" PRIu64,
                    i, key, rc, n1, want, n2);
        accepted += rc == CW_OK;
    }
    ck_assert_int_gt(accepted, 1000);
    ck_assert_int_lt(accepted, 19000);
    for (int i = 0; i < NKEYS; i++)
        cw_limiter_free(direct[i]);
    cw_keyed_limiter_free(k);

    /* Many keys that go idle between checks, so that sweeps keep removing
     * and moving entries: every key still decides as its own limiter. */
    enum { MANY = 700 };
    static cw_limiter *model[MANY];
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    for (int i = 0; i < MANY; i++)
        ck_assert_int_eq(cw_limiter_new(&q, &model[i]), CW_OK);
    now = 0;
    for (int i = 0; i < 100000; i++) {
        now += next_rand(&x) % (60 * CW_USEC);
        uint32_t key = (uint32_t)(next_rand(&x) % MANY);
        cw_time n1 = 0, n2 = 0;
        int rc = cw_keyed_limiter_check_at(k, &key, sizeof key, now, &n1);
        int want = cw_limiter_check_at(model[key], now, &n2);
        CWC_REQUIRE(rc == want && (rc == CW_OK || n1 == n2),
                    "check %d of key %u: %d, next %" PRIu64 "; its own limiter: %d, next %" PRIu64,
                    i, key, rc, n1, want, n2);
    }
    ck_assert_uint_lt(cw_keyed_limiter_len(k), MANY);
    for (int i = 0; i < MANY; i++)
        cw_limiter_free(model[i]);
    cw_keyed_limiter_free(k);
}

/* Checks `key` from a copy between bytes that change at every call: a
 * limiter that reads outside a key finds another state each time. */
static int check_copy(cw_keyed_limiter *k, const char *key, size_t len)
{
    static uint64_t x = 7;
    char copy[80];
    for (size_t i = 0; i < sizeof copy; i++)
        copy[i] = (char)next_rand(&x);
    memcpy(copy + 32, key, len);
    return cw_keyed_limiter_check_at(k, copy + 32, len, 0, NULL);
}

/* Keys of every length around the word sizes a hash reads them in, two of
 * each length that differ in their last byte alone: each exhausts on its
 * own, and the same bytes always find the same state. */
CWC_CASE(keyed_limiter_keys_of_every_length, "ratelimit", "RATE-004 RUN-008", CWC_REPEATED)
{
    cw_quota q = three_per_30ms();
    cw_keyed_limiter *k = NULL;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    char a[40], b[40];
    for (size_t len = 1; len <= 33; len++) {
        memset(a, 'k', len);
        memcpy(b, a, len);
        b[len - 1] = 'q';
        for (int i = 0; i < 3; i++)
            ck_assert_int_eq(check_copy(k, a, len), CW_OK);
        ck_assert_msg(check_copy(k, a, len) == CW_ERR_WOULD_BLOCK,
                      "a key of %zu bytes was not held to its quota", len);
        for (int i = 0; i < 3; i++)
            ck_assert_msg(check_copy(k, b, len) == CW_OK, "a key of %zu bytes took another's state",
                          len);
        ck_assert_int_eq(check_copy(k, b, len), CW_ERR_WOULD_BLOCK);
    }
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 2 * 33);
    cw_keyed_limiter_free(k);
}

/* A limiter copies the keys it stores (15-ratelimit.md, Ownership) and is
 * freed by its release (00-conventions.md): keys too long to keep inline
 * are blocks of their own, and freeing the limiter gives every one back,
 * wherever the table's secret put it. Many limiters full of long keys,
 * each freed: one copy left behind in any place is counted by RUN-008. */
enum { LONG_KEY = 40, LONG_KEYS = 60, LIMITERS = 32 };

static void long_keys_freed(uint64_t *x)
{
    cw_quota q = three_per_30ms();
    cw_keyed_limiter *k = NULL;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    uint8_t key[LONG_KEY];
    for (int i = 0; i < LONG_KEYS; i++) {
        for (size_t b = 0; b < sizeof key; b++)
            key[b] = (uint8_t)next_rand(x);
        ck_assert_int_eq(cw_keyed_limiter_check_at(k, key, sizeof key, 0, NULL), CW_OK);
    }
    ck_assert_uint_eq(cw_keyed_limiter_len(k), LONG_KEYS);
    cw_keyed_limiter_free(k);
}

CWC_CASE(keyed_limiter_free_gives_back_long_keys, "ratelimit", "RATE-004 RUN-008", CWC_REPEATED)
{
    uint64_t x = 5;
    for (int i = 0; i < LIMITERS; i++)
        long_keys_freed(&x);
}

static int check_u32(cw_keyed_limiter *k, uint32_t key, cw_time now)
{
    return cw_keyed_limiter_check_at(k, &key, sizeof key, now, NULL);
}

/* Below the limit a new key is stored beside idle ones: a limiter that
 * swept at every new key would hold fewer (RATE-007). */
CWC_CASE(keyed_limiter_keeps_idle_keys_below_the_limit, "ratelimit", "RATE-007 RATE-005", 0)
{
    cw_quota q = three_per_30ms(); /* a key checked once at t is idle from t + 10 ms */
    cw_keyed_limiter *k = NULL;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    for (uint32_t i = 0; i < 8; i++) {
        ck_assert_int_eq(check_u32(k, i, (cw_time)i * 20 * MS), CW_OK); /* the others idle */
        ck_assert_uint_eq(cw_keyed_limiter_len(k), i + 1);
    }
    cw_keyed_limiter_free(k);
}

CWC_CASE(keyed_limiter_evicts_idle_keys, "ratelimit", "RATE-005", 0)
{
    cw_quota q = three_per_30ms(); /* a key checked once at t is idle from t + 10 ms */
    cw_keyed_limiter *k = NULL;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    for (uint32_t i = 0; i < 64; i++)
        ck_assert_int_eq(check_u32(k, i, 0), CW_OK);
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 64);
    /* A known key does not count as new. */
    ck_assert_int_eq(check_u32(k, 5, 10 * MS), CW_OK);
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 64);
    /* At the limit, a new key sweeps first: all but key 5 (TAT 20 ms) are idle. */
    ck_assert_int_eq(check_u32(k, 1000, 10 * MS), CW_OK);
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 2);

    /* Busy keys survive a sweep, and the limit doubles from what is left. */
    for (uint32_t i = 2000; i < 2062; i++)
        ck_assert_int_eq(check_u32(k, i, 15 * MS), CW_OK); /* TAT 25 ms */
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 64);
    ck_assert_int_eq(check_u32(k, 3000, 20 * MS), CW_OK); /* sweep: 5 and 1000 go */
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 63);       /* 62 kept, then 3000 */
    for (uint32_t i = 4000; i < 4061; i++)
        ck_assert_int_eq(check_u32(k, i, 20 * MS), CW_OK); /* limit 124: no sweep */
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 124);
    ck_assert_int_eq(check_u32(k, 5000, 20 * MS), CW_OK); /* sweep: none idle */
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 125);

    /* retain_recent removes exactly the idle keys. */
    cw_keyed_limiter_retain_recent_at(k, 25 * MS); /* the 62 keys of TAT 25 ms */
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 63);
    cw_keyed_limiter_retain_recent_at(k, 29 * MS);
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 63);
    cw_keyed_limiter_retain_recent_at(k, 30 * MS);
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 0);
    cw_keyed_limiter_free(k);

    /* Forgetting never changes a decision: the same checks with and
     * without frequent retain_recent, and with many keys passing through. */
    cw_keyed_limiter *kept = NULL, *swept = NULL;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &kept), CW_OK);
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &swept), CW_OK);
    uint64_t x = 7;
    cw_time now = 0;
    size_t most = 0;
    for (int i = 0; i < 200000; i++) {
        now += next_rand(&x) % 50000;
        uint32_t key = (uint32_t)(next_rand(&x) % 5000);
        cw_time n1 = 0, n2 = 0;
        int rc = cw_keyed_limiter_check_at(swept, &key, sizeof key, now, &n1);
        int want = cw_keyed_limiter_check_at(kept, &key, sizeof key, now, &n2);
        CWC_REQUIRE(rc == want && (rc == CW_OK || n1 == n2),
                    "check %d of key %u: %d, next %" PRIu64 " with retain_recent; %d, next %" PRIu64
                    " without",
                    i, key, rc, n1, want, n2);
        if (i % 1000 == 0)
            cw_keyed_limiter_retain_recent_at(swept, now);
        size_t len = cw_keyed_limiter_len(kept);
        most = len > most ? len : most;
    }
    /* A key is busy for 10 ms after a check, so a few hundred of the 5000
     * are busy at a time: the table without retain_recent follows them. */
    ck_assert_uint_lt(most, 1500);
    cw_keyed_limiter_free(kept);
    cw_keyed_limiter_free(swept);
}

/* A sweep that leaves between 33 and 64 keys sets the limit to twice
 * that, above 64 (RATE-005): new keys are then stored beside idle ones
 * (RATE-007) until the table holds that many. A limit of 64, or of the
 * keys left, would sweep the idle ones away sooner; and one that leaves
 * fewer sets it to 64, which a limit of twice the keys left would not. */
CWC_CASE(keyed_limiter_limit_doubles_what_a_sweep_left, "ratelimit", "RATE-005 RATE-007", 0)
{
    cw_quota q = three_per_30ms(); /* a key checked once at t is idle from t + 10 ms */
    cw_keyed_limiter *k = NULL;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    for (uint32_t i = 0; i < 64; i++) /* TAT 10 ms */
        ck_assert_int_eq(check_u32(k, i, 0), CW_OK);
    for (uint32_t i = 0; i < 40; i++) /* TAT 20 ms */
        ck_assert_int_eq(check_u32(k, i, 5 * MS), CW_OK);
    /* At the limit: keys 40 to 63 are idle at 15 ms and go; 40 are left,
     * so the limit becomes 80. */
    ck_assert_int_eq(check_u32(k, 100, 15 * MS), CW_OK);
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 41);
    for (uint32_t i = 101; i < 124; i++) /* TAT 25 ms */
        ck_assert_int_eq(check_u32(k, i, 15 * MS), CW_OK);
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 64);
    /* Keys 0 to 39 are idle at 22 ms, but 64 is below the limit: kept. */
    for (uint32_t i = 200; i < 216; i++) {
        ck_assert_int_eq(check_u32(k, i, 22 * MS), CW_OK);
        ck_assert_uint_eq(cw_keyed_limiter_len(k), 65 + (i - 200));
    }
    /* At 80 the next new key sweeps: the 40 idle keys go. */
    ck_assert_int_eq(check_u32(k, 300, 22 * MS), CW_OK);
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 41);
    cw_keyed_limiter_free(k);

    /* A sweep that leaves 30 keys: twice that is below 64, so the limit
     * is 64 again, not 60. */
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    for (uint32_t i = 0; i < 64; i++) /* TAT 10 ms */
        ck_assert_int_eq(check_u32(k, i, 0), CW_OK);
    for (uint32_t i = 0; i < 30; i++) /* TAT 20 ms */
        ck_assert_int_eq(check_u32(k, i, 5 * MS), CW_OK);
    ck_assert_int_eq(check_u32(k, 100, 15 * MS), CW_OK); /* sweep: 34 go */
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 31);
    /* Keys 0 to 29 are idle at 22 ms, but kept until the table holds 64. */
    for (uint32_t i = 101; i < 134; i++) {
        ck_assert_int_eq(check_u32(k, i, 22 * MS), CW_OK);
        ck_assert_uint_eq(cw_keyed_limiter_len(k), 32 + (i - 101));
    }
    ck_assert_int_eq(check_u32(k, 300, 22 * MS), CW_OK); /* sweep: the 30 go */
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 35);
    cw_keyed_limiter_free(k);
}

/* Idle and busy keys side by side, in tables of every load: after each
 * retain_recent every busy key is still there, which a limiter that lost
 * one shows by accepting it (burst 1: a busy key refuses). One round's
 * keys are in one limiter: `n` pairs, one key of each going idle. */
static void idle_beside_busy(uint32_t base, uint32_t n)
{
    cw_quota q;
    ck_assert_int_eq(cw_quota_per(&q, 1, 10 * MS), CW_OK);
    cw_keyed_limiter *k = NULL;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    cw_time t = CW_SEC;
    for (uint32_t i = 0; i < 2 * n; i++) /* TAT t + 10 ms */
        CWC_REQUIRE(check_u32(k, base + i, t) == CW_OK, "a new key (%u of %u) refused", i, 2 * n);
    for (uint32_t i = 1; i < 2 * n; i += 2) /* odd: TAT t + 20 ms */
        CWC_REQUIRE(check_u32(k, base + i, t + 10 * MS) == CW_OK,
                    "a key (%u of %u) refused when its quota allows", i, 2 * n);
    cw_keyed_limiter_retain_recent_at(k, t + 10 * MS); /* the even keys are idle */
    ck_assert_uint_eq(cw_keyed_limiter_len(k), n);
    for (uint32_t i = 1; i < 2 * n; i += 2)
        CWC_REQUIRE(check_u32(k, base + i, t + 15 * MS) == CW_ERR_WOULD_BLOCK,
                    "a busy key (%u of %u pairs) was forgotten by retain_recent", i / 2, n);
    cw_keyed_limiter_free(k);
}

CWC_CASE(keyed_limiter_keeps_busy_keys_at_every_load, "ratelimit", "RATE-005 RUN-008", CWC_REPEATED)
{
    uint64_t x = 11;
    for (uint32_t n = 1; n <= 700; n += 1 + n / 16)
        for (int round = 0; round < 8; round++)
            idle_beside_busy((uint32_t)next_rand(&x), n);
}

/* ---- Several threads at once --------------------------------------------------------- */

struct race {
    cw_limiter *direct;
    cw_keyed_limiter *keyed;
    atomic_int direct_ok, keyed_ok;
};

static void *racer(cw_ctx *ctx, void *arg)
{
    struct race *r = arg;
    for (uint32_t i = 0; i < 20000; i++) {
        if (cw_limiter_check_at(r->direct, 5 * MS, NULL) == CW_OK)
            atomic_fetch_add(&r->direct_ok, 1);
        uint32_t key = i % 8;
        if (cw_keyed_limiter_check_at(r->keyed, &key, sizeof key, 5 * MS, NULL) == CW_OK)
            atomic_fetch_add(&r->keyed_ok, 1);
        if (i % 1000 == 0)
            cw_yield(ctx);
    }
    return NULL;
}

static void *race_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct race r;
    cw_quota q;
    ck_assert_int_eq(cw_quota_per(&q, 1000, CW_SEC), CW_OK);
    ck_assert_int_eq(cw_limiter_new(&q, &r.direct), CW_OK);
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &r.keyed), CW_OK);
    atomic_init(&r.direct_ok, 0);
    atomic_init(&r.keyed_ok, 0);
    cw_handle *h[4];
    for (int i = 0; i < 4; i++)
        h[i] = cw_spawn(cw_child(ctx, "racer"), racer, &r);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    /* At one instant a fresh limiter holds exactly `burst` cells. */
    ck_assert_int_eq(atomic_load(&r.direct_ok), 1000);
    ck_assert_int_eq(atomic_load(&r.keyed_ok), 8 * 1000);
    cw_limiter_free(r.direct);
    cw_keyed_limiter_free(r.keyed);
    return NULL;
}

CWC_CASE(limiter_concurrent_checks_take_each_cell_once, "ratelimit", "RATE-006 RUN-008",
         CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 4;
    cwc_run_ok(&cfg, race_root, NULL);
}

CWC_CASE(keyed_limiter_refuses_unreadable_keys, "ratelimit", "RATE-004 RUN-008", CWC_REPEATED)
{
    cw_quota q;
    ck_assert_int_eq(cw_quota_per(&q, 1, CW_SEC), CW_OK);
    cw_keyed_limiter *k;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    cw_time next = 7;
    ck_assert_int_eq(cw_keyed_limiter_check_at(k, NULL, 3, 0, &next), CW_ERR_INVALID);
    ck_assert_int_eq(cw_keyed_limiter_check_at(k, "k", (size_t)1 << 32, 0, &next), CW_ERR_INVALID);
    /* The empty key is a key like any other: one cell, then a wait. */
    ck_assert_int_eq(cw_keyed_limiter_check_at(k, NULL, 0, 0, &next), CW_OK);
    ck_assert_int_ne(cw_keyed_limiter_check_at(k, "", 0, 0, &next), CW_OK);
    cw_keyed_limiter_free(k);
}

/* The bound of RATE-004 is 2^32 bytes: every shorter key is a key. The
 * longest, 2^32 - 1 bytes, cannot be checked here: the limiter copies the
 * key it stores, and the key and its copy are 8 GiB, twice the case's
 * address space (--memory-limit). So this case checks the bound from
 * above, where nothing is read (2^32, 2^32 + 1, SIZE_MAX: refused, and
 * deciding nothing for the keys that are held), and below with the longest
 * key it can afford, 16 MiB and 1 byte, two of them differing in their last
 * byte alone: each held to its quota on its own. */
CWC_CASE(keyed_limiter_key_length_bound, "ratelimit", "RATE-004", 0)
{
    enum { LONG = (16 << 20) + 1 };
    cw_quota q;
    ck_assert_int_eq(cw_quota_per(&q, 2, CW_SEC), CW_OK);
    cw_keyed_limiter *k;
    ck_assert_int_eq(cw_keyed_limiter_new(&q, &k), CW_OK);
    char *a = malloc(LONG), *b = malloc(LONG);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    memset(a, 'k', LONG);
    memcpy(b, a, LONG);
    b[LONG - 1] = 'q';
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(cw_keyed_limiter_check_at(k, a, LONG, 0, NULL), CW_OK);
    ck_assert_msg(cw_keyed_limiter_check_at(k, a, LONG, 0, NULL) == CW_ERR_WOULD_BLOCK,
                  "a key of %d bytes was not held to its quota", LONG);
    ck_assert_msg(cw_keyed_limiter_check_at(k, b, LONG, 0, NULL) == CW_OK,
                  "a key of %d bytes took the state of one differing in its last byte", LONG);
    const uint64_t too_long[] = {UINT64_C(1) << 32, (UINT64_C(1) << 32) + 1, SIZE_MAX};
    for (size_t i = 0; i < sizeof too_long / sizeof too_long[0]; i++) {
        cw_time next = 0;
        ck_assert_int_eq(cw_keyed_limiter_check_at(k, "k", (size_t)too_long[i], 0, &next),
                         CW_ERR_INVALID);
    }
    ck_assert_uint_eq(cw_keyed_limiter_len(k), 2);
    free(a);
    free(b);
    cw_keyed_limiter_free(k);
}
