/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * owner.c - the records that keep a buffer's bytes alive, and the
 * reference count they share.
 *
 * A heap buffer is one allocation: the bytes first (so an aligned request
 * gets aligned bytes) and the record after them. Adopted bytes get a small
 * box holding the caller's release callback. Pool slots are in pool.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers/buffers.h"

uint8_t cw_buf_none[1];

/* Past this a count is surely corrupt, or a leak of clones: end loudly
 * rather than wrap to zero and free bytes still in use. */
#define REFS_LIMIT (SIZE_MAX / 2)

typedef struct cw_adopted {
    cw_owner own;
    cw_release_fn release;
    void *arg;
} cw_adopted;

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

int cw_owner_heap(size_t cap, size_t align, bool zeroed, cw_owner **out)
{
    *out = NULL;
    size_t rec_align = _Alignof(cw_owner);
    if (cap > SIZE_MAX - sizeof(cw_owner) - rec_align - align)
        return CW_ERR_NOMEM;
    size_t off = round_up(cap, rec_align);
    size_t total = off + sizeof(cw_owner);
    uint8_t *base;
    if (align <= _Alignof(max_align_t)) {
        base = zeroed ? calloc(1, total) : malloc(total);
    } else {
        void *p = NULL;
        if (posix_memalign(&p, align, total) != 0)
            p = NULL;
        base = p;
        if (base && zeroed)
            memset(base, 0, off);
    }
    if (!base)
        return CW_ERR_NOMEM;
    cw_owner *o = (cw_owner *)(base + off);
    atomic_init(&o->refs, 1);
    o->kind = CW_OWNER_HEAP;
    o->base = base;
    o->end = base + cap;
    *out = o;
    return CW_OK;
}

cw_owner *cw_owner_adopted(void *data, size_t len, cw_release_fn release, void *arg)
{
    cw_adopted *a = malloc(sizeof *a);
    if (!a)
        return NULL;
    atomic_init(&a->own.refs, 1);
    a->own.kind = CW_OWNER_ADOPTED;
    a->own.base = data;
    a->own.end = (uint8_t *)data + len;
    a->release = release;
    a->arg = arg;
    return &a->own;
}

void cw_owner_ref(cw_owner *o)
{
    size_t old = atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
    if (old > REFS_LIMIT)
        cw_fatal("[BUF-003] buffer reference count overflow");
}

void cw_owner_free(cw_owner *o)
{
    switch (o->kind) {
    case CW_OWNER_HEAP:
        free(o->base);
        break;
    case CW_OWNER_ADOPTED: {
        cw_adopted *a = (cw_adopted *)o;
        a->release(o->base, a->arg);
        free(a);
        break;
    }
    case CW_OWNER_POOLED:
        cw_bufpool_return((cw_bufpool_slot *)o);
        break;
    default:
        cw_fatal("buffer owner record of unknown kind %d: memory corrupt", o->kind);
    }
}

/* The count rests at 1 with one handle. Reading 1 means no other handle
 * exists (only a holder can clone), so the last release frees without
 * writing, and a pool slot comes back with its count already at 1. When a
 * decrement finds 1 instead, the other holders all let go meanwhile: this
 * release is the last, and it restores the resting value. */
void cw_owner_unref(cw_owner *o)
{
    if (atomic_load_explicit(&o->refs, memory_order_acquire) == 1) {
        cw_owner_free(o);
        return;
    }
    /* acq_rel rather than release and an acquire fence: the same order on
     * every machine, and one ThreadSanitizer can follow (it does not model
     * standalone fences, and reported the free as racing the other
     * holder's decrement). */
    if (atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&o->refs, 1, memory_order_relaxed);
        cw_owner_free(o);
    }
}

bool cw_owner_unique(cw_owner *o)
{
    return atomic_load_explicit(&o->refs, memory_order_acquire) == 1;
}

bool cw_owner_native(const cw_owner *o)
{
    return o->kind == CW_OWNER_HEAP || o->kind == CW_OWNER_POOLED;
}
