/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * keys.c - the table behind the keyed limiter.
 *
 * Linear probing keeps a lookup to one or two cache lines while the table
 * is at most two thirds full. Keys are removed only in bulk (idle keys):
 * clear them, then put every other entry back, so the table never holds
 * tombstones.
 *
 * Keys may come from peers, so the hash is keyed with a secret drawn per
 * table: without it a peer could pick keys that all land in one cluster.
 * It is a multiply-fold hash, not a cryptographic one; it makes colliding
 * keys hard to aim at, which is what the table needs.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cw/error.h"
#include "ratelimit/keys.h"

static uint64_t fold_mul(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static const uint64_t K0 = 0xa0761d6478bd642full, K1 = 0xe7037ed1a0b428dbull,
                      K2 = 0x8ebc6af09c88c6e3ull;

uint64_t cw_key_hash(const cw_key_table *t, const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = fold_mul(t->secret ^ K0, (uint64_t)len ^ K1);
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = fold_mul(h ^ w, t->secret ^ K1);
    }
    uint64_t w = 0;
    if (len)
        memcpy(&w, p, len);
    h = fold_mul(h ^ w ^ K2, t->secret ^ K0);
    return fold_mul(h, K2);
}

/* Drawn per table; nothing observable depends on it. */
static uint64_t draw_secret(const void *salt)
{
    uint64_t s;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) == (ssize_t)sizeof s)
        return s;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return fold_mul((uint64_t)(uintptr_t)salt ^ K1, (uint64_t)ts.tv_nsec ^ K2);
}

int cw_key_table_init(cw_key_table *t, size_t capacity)
{
    t->slots = calloc(capacity, sizeof *t->slots);
    if (!t->slots)
        return CW_ERR_NOMEM;
    t->mask = capacity - 1;
    t->len = 0;
    t->secret = draw_secret(t);
    return CW_OK;
}

static const unsigned char *slot_key(const cw_key_slot *s)
{
    return s->len <= CW_KEY_INLINE ? s->key.bytes : s->key.heap;
}

static void slot_clear(cw_key_slot *s)
{
    if (s->len > CW_KEY_INLINE)
        free(s->key.heap);
    memset(s, 0, sizeof *s);
}

void cw_key_table_free(cw_key_table *t)
{
    for (size_t i = 0; i <= t->mask; i++)
        if (t->slots[i].tat)
            slot_clear(&t->slots[i]);
    free(t->slots);
    t->slots = NULL;
}

cw_key_slot *cw_key_table_find(cw_key_table *t, uint64_t hash, const void *key, size_t len)
{
    for (size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
        cw_key_slot *s = &t->slots[i];
        if (!s->tat)
            return s;
        if (s->hash == (uint32_t)hash && s->len == len && memcmp(slot_key(s), key, len) == 0)
            return s;
    }
}

int cw_key_table_fill(cw_key_table *t, cw_key_slot *s, uint64_t hash, const void *key, size_t len,
                      cw_time tat)
{
    if (len > CW_KEY_INLINE) {
        s->key.heap = malloc(len);
        if (!s->key.heap)
            return CW_ERR_NOMEM;
        memcpy(s->key.heap, key, len);
    } else if (len) {
        memcpy(s->key.bytes, key, len);
    }
    s->hash = (uint32_t)hash;
    s->len = (uint32_t)len;
    s->tat = tat;
    t->len++;
    return CW_OK;
}

/* Put an entry that is out of the table back, at the first free slot from
 * its home. */
static void place(cw_key_slot *slots, size_t mask, const cw_key_slot *e)
{
    size_t j = e->hash & mask;
    while (slots[j].tat)
        j = (j + 1) & mask;
    slots[j] = *e;
}

void cw_key_table_remove_idle(cw_key_table *t, cw_time now)
{
    /* A slot empty before any removal: no probe path crosses it. */
    size_t start = 0;
    while (t->slots[start].tat)
        start++;
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].tat && t->slots[i].tat <= now) {
            slot_clear(&t->slots[i]);
            t->len--;
        }
    }
    /* Close the holes: going round once from `start`, take each entry out
     * and put it back. It lands at or before where it was, and the entries
     * of its probe path were placed before it, so every lookup still finds
     * every key. */
    for (size_t k = 1; k <= t->mask; k++) {
        cw_key_slot *s = &t->slots[(start + k) & t->mask];
        if (!s->tat)
            continue;
        cw_key_slot e = *s;
        memset(s, 0, sizeof *s);
        place(t->slots, t->mask, &e);
    }
}

int cw_key_table_resize(cw_key_table *t, size_t capacity)
{
    cw_key_slot *slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return CW_ERR_NOMEM;
    size_t mask = capacity - 1;
    for (size_t i = 0; i <= t->mask; i++) {
        cw_key_slot *s = &t->slots[i];
        if (!s->tat)
            continue;
        place(slots, mask, s);
    }
    free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return CW_OK;
}
