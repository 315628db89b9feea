/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * keys.h - the keyed limiter's table: byte-string keys to TATs, open
 * addressing with linear probing, at most half full.
 */
#ifndef CW_KEYS_H
#define CW_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "cw/types.h"

/* Keys up to this long live in the slot; longer ones in memory of their own. */
#define CW_KEY_INLINE 16

/* 32 bytes: two slots to a cache line. */
typedef struct cw_key_slot {
    cw_time tat;   /* 0 marks an empty slot: a stored TAT is at least one interval */
    uint32_t hash; /* the low bits of the key's hash: its home slot, and a quick filter */
    uint32_t len;
    union {
        unsigned char bytes[CW_KEY_INLINE];
        unsigned char *heap;
    } key;
} cw_key_slot;

typedef struct cw_key_table {
    cw_key_slot *slots;
    size_t mask; /* capacity − 1; the capacity is a power of two */
    size_t len;
    uint64_t secret; /* keys the hash */
} cw_key_table;

/* The most slots a table may have: a stored hash has 32 bits. */
#define CW_KEY_TABLE_MAX ((size_t)1 << 32)

/* An empty table of `capacity` slots (a power of two). CW_ERR_NOMEM. */
int cw_key_table_init(cw_key_table *t, size_t capacity);
void cw_key_table_free(cw_key_table *t);

static inline size_t cw_key_table_capacity(const cw_key_table *t)
{
    return t->mask + 1;
}

uint64_t cw_key_hash(const cw_key_table *t, const void *key, size_t len);
/* The slot holding the key, or the empty slot where it would go. */
cw_key_slot *cw_key_table_find(cw_key_table *t, uint64_t hash, const void *key, size_t len);
/* Store the key, with `tat` (> 0), in the empty slot `s` that find gave for
 * it. CW_ERR_NOMEM leaves the table as it was. */
int cw_key_table_fill(cw_key_table *t, cw_key_slot *s, uint64_t hash, const void *key, size_t len,
                      cw_time tat);
/* Remove every key whose TAT is at most `now`. */
void cw_key_table_remove_idle(cw_key_table *t, cw_time now);
/* Move the keys to a table of `capacity` slots (a power of two, at most
 * CW_KEY_TABLE_MAX, above len). CW_ERR_NOMEM leaves the table as it was. */
int cw_key_table_resize(cw_key_table *t, size_t capacity);

#endif
