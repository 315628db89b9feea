/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * ratelimit.c - limiter checks per second next to a plain token bucket,
 * on the same sequence of times (and keys), in one run:
 *
 *   direct  one GCRA limiter against one token bucket (a refill from the
 *           elapsed time, in double, then take a token)
 *   keyed   a keyed limiter over 10^5 keys (4-byte keys, in a scattered
 *           order) against one token bucket per key in an array indexed
 *           by the key, the cheapest keyed baseline there is, bare and
 *           behind a mutex (a limiter shared by threads needs one)
 *
 * Both sides see a clock that moves 100 ns per check and a burst of 10.
 * The direct limiter allows 1,000 cells per second, so most checks are
 * refused. A key comes back about every 10 ms; keyed "churn" allows 1,000
 * cells per second per key, so a key is idle again 1 ms after a check and
 * most checks store a key that a sweep dropped; keyed "busy" allows 10, so
 * every key stays busy and held. Best of three runs each.
 *
 * usage: ratelimit
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cwrt/cwrt.h"

enum { CHECKS = 10000000, KEYS = 100000, ROUNDS = 3, BURST = 10 };
#define RATE_PER_SEC 1000
#define STEP_NS 100

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct bucket {
    double tokens;
    uint64_t last;
} bucket;

static int bucket_take(bucket *b, uint64_t now, double per_second)
{
    b->tokens += (double)(now - b->last) * (per_second / 1e9);
    if (b->tokens > BURST)
        b->tokens = BURST;
    b->last = now;
    if (b->tokens < 1.0)
        return 0;
    b->tokens -= 1.0;
    return 1;
}

static uint32_t *key_order; /* the key of each check */

static double best(double a, double b)
{
    return a < b ? a : b;
}

static cw_quota quota(uint32_t per_second)
{
    cw_quota q;
    if (cw_quota_per(&q, per_second, CW_SEC) != CW_OK || cw_quota_allow_burst(&q, BURST) != CW_OK)
        abort();
    return q;
}

static void bench_direct(void)
{
    cw_quota q = quota(RATE_PER_SEC);
    double gcra = 1e30, tb = 1e30;
    long ok_gcra = 0, ok_tb = 0;
    for (int round = 0; round < ROUNDS; round++) {
        cw_limiter *l = NULL;
        if (cw_limiter_new(&q, &l) != CW_OK)
            abort();
        ok_gcra = 0;
        double t0 = now_ns();
        for (uint64_t i = 0; i < CHECKS; i++)
            ok_gcra += cw_limiter_check_at(l, i * STEP_NS, NULL) == CW_OK;
        gcra = best(gcra, (now_ns() - t0) / CHECKS);
        cw_limiter_free(l);

        bucket b = {BURST, 0};
        ok_tb = 0;
        t0 = now_ns();
        for (uint64_t i = 0; i < CHECKS; i++)
            ok_tb += bucket_take(&b, i * STEP_NS, RATE_PER_SEC);
        tb = best(tb, (now_ns() - t0) / CHECKS);
    }
    printf("bench ratelimit direct: checks=%d gcra_ns=%.2f token_bucket_ns=%.2f "
           "gcra/token_bucket=%.2f accepted_gcra=%ld accepted_bucket=%ld\n",
           CHECKS, gcra, tb, gcra / tb, ok_gcra, ok_tb);
}

static void bench_keyed(const char *name, uint32_t per_second)
{
    cw_quota q = quota(per_second);
    bucket *buckets = malloc(KEYS * sizeof *buckets);
    if (!buckets)
        abort();
    double gcra = 1e30, tb = 1e30, locked = 1e30;
    long ok_gcra = 0, ok_tb = 0;
    size_t held = 0;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    for (int round = 0; round < ROUNDS; round++) {
        cw_keyed_limiter *l = NULL;
        if (cw_keyed_limiter_new(&q, &l) != CW_OK)
            abort();
        ok_gcra = 0;
        double t0 = now_ns();
        for (uint64_t i = 0; i < CHECKS; i++) {
            uint32_t key = key_order[i];
            ok_gcra += cw_keyed_limiter_check_at(l, &key, sizeof key, i * STEP_NS, NULL) == CW_OK;
        }
        gcra = best(gcra, (now_ns() - t0) / CHECKS);
        held = cw_keyed_limiter_len(l);
        cw_keyed_limiter_free(l);

        for (size_t k = 0; k < KEYS; k++)
            buckets[k] = (bucket){BURST, 0};
        ok_tb = 0;
        t0 = now_ns();
        for (uint64_t i = 0; i < CHECKS; i++)
            ok_tb += bucket_take(&buckets[key_order[i]], i * STEP_NS, per_second);
        tb = best(tb, (now_ns() - t0) / CHECKS);

        /* The same behind a lock, as a limiter shared by threads needs. */
        for (size_t k = 0; k < KEYS; k++)
            buckets[k] = (bucket){BURST, 0};
        t0 = now_ns();
        for (uint64_t i = 0; i < CHECKS; i++) {
            pthread_mutex_lock(&lock);
            bucket_take(&buckets[key_order[i]], i * STEP_NS, per_second);
            pthread_mutex_unlock(&lock);
        }
        locked = best(locked, (now_ns() - t0) / CHECKS);
    }
    printf("bench ratelimit keyed %s: keys=%d checks=%d gcra_ns=%.2f array_token_buckets_ns=%.2f "
           "locked_array_token_buckets_ns=%.2f gcra/token_buckets=%.2f "
           "gcra/locked_token_buckets=%.2f accepted_gcra=%ld accepted_bucket=%ld "
           "keys_held_at_end=%zu\n",
           name, KEYS, CHECKS, gcra, tb, locked, gcra / tb, gcra / locked, ok_gcra, ok_tb, held);
    free(buckets);
}

int main(void)
{
    key_order = malloc(CHECKS * sizeof *key_order);
    if (!key_order)
        abort();
    uint64_t x = 42;
    for (size_t i = 0; i < CHECKS; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        key_order[i] = (uint32_t)((x >> 33) % KEYS);
    }
    bench_direct();
    bench_keyed("churn", RATE_PER_SEC);
    bench_keyed("busy", 10);
    free(key_order);
    return 0;
}
