/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * keyed.c - one GCRA state per key, with idle keys forgotten.
 *
 * An idle key (TAT <= now) decides exactly like a key never seen, so
 * dropping it changes nothing but memory. The table is swept when it
 * reaches its limit, and the limit is then set to twice what survived:
 * between two sweeps at least as many keys are added as the sweep visited,
 * so sweeping costs O(1) per new key, and the memory held follows the
 * number of keys that are busy rather than every key ever seen.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cw/clock.h"
#include "ratelimit/gcra.h"
#include "ratelimit/keys.h"

#define MIN_LIMIT 64

struct cw_keyed_limiter {
    pthread_mutex_t lock;
    cw_gcra gcra;
    cw_key_table table;
    size_t limit; /* a sweep comes before the table grows past it */
};

/* At most two thirds full at the limit: the smallest power of two at
 * least 1.5 × limit. */
static size_t capacity_for(size_t limit)
{
    size_t c = 1;
    while (c < limit + limit / 2)
        c *= 2;
    return c;
}

int cw_keyed_limiter_new(const cw_quota *q, cw_keyed_limiter **out)
{
    *out = NULL;
    if (!cw_quota_valid(q))
        return CW_ERR_INVALID;
    cw_keyed_limiter *l = malloc(sizeof *l);
    if (!l)
        return CW_ERR_NOMEM;
    if (cw_key_table_init(&l->table, capacity_for(MIN_LIMIT)) != CW_OK) {
        free(l);
        return CW_ERR_NOMEM;
    }
    pthread_mutex_init(&l->lock, NULL);
    l->gcra = cw_gcra_of(q);
    l->limit = MIN_LIMIT;
    *out = l;
    return CW_OK;
}

void cw_keyed_limiter_free(cw_keyed_limiter *l)
{
    cw_key_table_free(&l->table);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

/* Drop idle keys and set the limit from what is left. A table that became
 * far larger than needed gives memory back (if it cannot, it stays). */
static void sweep(cw_keyed_limiter *l, cw_time now)
{
    cw_key_table_remove_idle(&l->table, now);
    l->limit = l->table.len * 2 > MIN_LIMIT ? l->table.len * 2 : MIN_LIMIT;
    size_t want = capacity_for(l->limit);
    if (cw_key_table_capacity(&l->table) >= 4 * want)
        cw_key_table_resize(&l->table, want);
}

/* Make sure one more key fits below the limit, in a table at most two
 * thirds full. Sets *moved when slots moved (a slot found before is stale). */
static int make_room(cw_keyed_limiter *l, cw_time now, bool *moved)
{
    *moved = false;
    if (l->table.len >= l->limit) {
        sweep(l, now);
        *moved = true;
    }
    size_t want = capacity_for(l->limit);
    if (cw_key_table_capacity(&l->table) >= want)
        return CW_OK;
    if (want > CW_KEY_TABLE_MAX)
        return CW_ERR_NOMEM;
    *moved = true;
    return cw_key_table_resize(&l->table, want);
}

int cw_keyed_limiter_check_at(cw_keyed_limiter *l, const void *key, size_t len, cw_time now,
                              cw_time *next)
{
    if ((uint64_t)len > UINT32_MAX || (!key && len))
        return CW_ERR_INVALID;
    pthread_mutex_lock(&l->lock);
    uint64_t hash = cw_key_hash(&l->table, key, len);
    cw_key_slot *s = cw_key_table_find(&l->table, hash, key, len);
    cw_time tat = s->tat;
    int rc = CW_OK;
    if (!cw_gcra_check(&l->gcra, &tat, now, next)) {
        rc = CW_ERR_WOULD_BLOCK;
    } else if (s->tat) {
        s->tat = tat;
    } else {
        bool moved;
        rc = make_room(l, now, &moved);
        if (rc == CW_OK && moved)
            s = cw_key_table_find(&l->table, hash, key, len);
        if (rc == CW_OK)
            rc = cw_key_table_fill(&l->table, s, hash, key, len, tat);
    }
    pthread_mutex_unlock(&l->lock);
    return rc;
}

int cw_keyed_limiter_check(cw_keyed_limiter *l, cw_ctx *ctx, const void *key, size_t len,
                           cw_time *next)
{
    return cw_keyed_limiter_check_at(l, key, len, cw_current(ctx), next);
}

int cw_keyed_limiter_until_ready(cw_keyed_limiter *l, cw_ctx *ctx, const void *key, size_t len)
{
    for (;;) {
        cw_time next = 0;
        int rc = cw_keyed_limiter_check(l, ctx, key, len, &next);
        if (rc != CW_ERR_WOULD_BLOCK)
            return rc;
        cw_sleep_until(ctx, next);
    }
}

void cw_keyed_limiter_retain_recent_at(cw_keyed_limiter *l, cw_time now)
{
    pthread_mutex_lock(&l->lock);
    sweep(l, now);
    pthread_mutex_unlock(&l->lock);
}

void cw_keyed_limiter_retain_recent(cw_keyed_limiter *l, cw_ctx *ctx)
{
    cw_keyed_limiter_retain_recent_at(l, cw_current(ctx));
}

size_t cw_keyed_limiter_len(cw_keyed_limiter *l)
{
    pthread_mutex_lock(&l->lock);
    size_t n = l->table.len;
    pthread_mutex_unlock(&l->lock);
    return n;
}
