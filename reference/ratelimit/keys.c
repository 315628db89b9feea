/*
 * keys.c - the table behind the keyed limiter.
 *
 * Linear probing keeps a lookup to one or two cache lines while the table
 * is at most half full. Keys are removed only in bulk (idle keys), with
 * backward-shift deletion, so the table never holds tombstones.
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
        if (s->hash == hash && s->len == len && memcmp(slot_key(s), key, len) == 0)
            return s;
    }
}

int cw_key_table_fill(cw_key_table *t, cw_key_slot *s, uint64_t hash, const void *key,
                      size_t len, cw_time tat)
{
    if (len > CW_KEY_INLINE) {
        s->key.heap = malloc(len);
        if (!s->key.heap)
            return CW_ERR_NOMEM;
        memcpy(s->key.heap, key, len);
    } else if (len) {
        memcpy(s->key.bytes, key, len);
    }
    s->hash = hash;
    s->len = (uint32_t)len;
    s->tat = tat;
    t->len++;
    return CW_OK;
}

/* Empty slot `hole`, pulling back the entries after it that probed past
 * it, so that every lookup still finds its key. */
static void remove_at(cw_key_table *t, size_t hole)
{
    slot_clear(&t->slots[hole]);
    for (size_t j = (hole + 1) & t->mask; t->slots[j].tat; j = (j + 1) & t->mask) {
        size_t home = t->slots[j].hash & t->mask;
        /* The entry at j may move to the hole unless its home lies in (hole, j]. */
        size_t dist_home = (j - home) & t->mask, dist_hole = (j - hole) & t->mask;
        if (dist_home >= dist_hole) {
            t->slots[hole] = t->slots[j];
            memset(&t->slots[j], 0, sizeof t->slots[j]);
            hole = j;
        }
    }
    t->len--;
}

void cw_key_table_remove_idle(cw_key_table *t, cw_time now)
{
    /* Start just after an empty slot and go round once: a shift never
     * moves an entry across an empty slot, so none is seen twice or missed. */
    size_t start = 0;
    while (t->slots[start].tat)
        start++;
    for (size_t k = 1; k <= t->mask + 1; k++) {
        size_t i = (start + k) & t->mask;
        while (t->slots[i].tat && t->slots[i].tat <= now)
            remove_at(t, i);
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
        size_t j = s->hash & mask;
        while (slots[j].tat)
            j = (j + 1) & mask;
        slots[j] = *s;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return CW_OK;
}
