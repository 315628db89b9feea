/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * buffers.c - buffers, chunk lists and the builder (spec/12-buffers.md,
 * BUF-001 .. BUF-018). Pools are in bufpools.c, the vector in
 * buffers_vector.c.
 *
 * Buffer functions need no task, so most cases call them directly on the
 * backend under test; BUF-018 also checks them from inside a run.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cases/buffers.h"

/* ---- BUF-001: handles and the table ------------------------------------------------ */

CWC_CASE(buffer_handles, "buffers", "BUF-001 RUN-008", CWC_REPEATED)
{
    const cw_buffer_ops *ops = cwc_buffer_ops();
    ck_assert_uint_ge(ops->size, offsetof(cw_buffer_ops, runtime_pool) + sizeof ops->runtime_pool);

    cw_iobuf b, e;
    CWC_OK(cw_iobuf_copy(cwc_backend, "abc", 3, &b));
    ck_assert_ptr_eq(b.hdr.backend, cwc_backend);
    CWC_OK(cw_iobuf_copy(cwc_backend, NULL, 0, &e));
    ck_assert_ptr_eq(e.hdr.backend, cwc_backend);
    ck_assert_ptr_nonnull(e.data);
    ck_assert_uint_eq(e.len, 0);
    cw_iobuf_mut m;
    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 0, &m));
    ck_assert_ptr_nonnull(m.data);
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobufs_mut *ml = cw_iobufs_mut_new(cwc_backend);
    cw_bufpool *p = cwc_small_pool(1);
    cw_iobufs_builder *bld = cw_iobufs_builder_new(p, 8);
    ck_assert_ptr_eq(cw__backend_of(l), cwc_backend);
    ck_assert_ptr_eq(cw__backend_of(ml), cwc_backend);
    ck_assert_ptr_eq(cw__backend_of(p), cwc_backend);
    ck_assert_ptr_eq(cw__backend_of(bld), cwc_backend);
    cw_iobufs_builder_release(bld);
    cw_iobufs_mut_release(ml);
    cw_iobufs_release(l);
    cw_bufpool_release(p);

    /* An unset handle reads as empty and only releases. */
    cw_iobuf unset = {0}, out;
    ck_assert_uint_eq(cw_iobuf_len(&unset), 0);
    cw_iobuf_release(&unset);
    ck_assert_int_eq(cw_iobuf_slice(&unset, 0, 1, &out), CW_ERR_INVALID);
    ck_assert_ptr_null(out.hdr.backend);
    ck_assert_int_eq(cw_iobuf_split_to(&unset, 1, &out), CW_ERR_INVALID);
    ck_assert_int_eq(cw_iobuf_advance(&unset, 1), CW_ERR_INVALID);
    cw_iobuf_mut um;
    ck_assert(cw_iobuf_try_into_mut(&unset, &um));
    ck_assert_ptr_null(um.hdr.backend);
    cw_iobuf_mut_release(&um);
    cw_iobuf_release(&e);
    cw_iobuf_release(&b);
}

/* ---- BUF-002: making buffers ----------------------------------------------------------- */

CWC_CASE(buffer_constructors, "buffers", "BUF-002 RUN-008", CWC_REPEATED)
{
    cw_iobuf b;
    CWC_OK(cw_iobuf_copy(cwc_backend, "hello", 5, &b));
    ck_assert(cw_iobuf_equal_bytes(&b, "hello", 5));
    ck_assert(!cw_iobuf_is_pooled(&b));
    cw_iobuf_release(&b);

    cw_iobuf_mut m;
    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 100, &m));
    ck_assert_uint_eq(m.len, 0);
    ck_assert_uint_eq(m.cap, 100);
    cw_iobuf_mut_release(&m);

    size_t aligns[] = {1, 8, 64, 4096};
    for (size_t i = 0; i < 4; i++) {
        CWC_OK(cw_iobuf_mut_with_alignment(cwc_backend, 100, aligns[i], &m));
        ck_assert_uint_ge(m.cap, 100);
        ck_assert_uint_eq((uintptr_t)m.data % aligns[i], 0);
        memset(m.data, 1, m.cap);
        cw_iobuf_mut_release(&m);
    }
    ck_assert_int_eq(cw_iobuf_mut_with_alignment(cwc_backend, 100, 3, &m), CW_ERR_INVALID);
    ck_assert_uint_eq(m.cap, 0);
    ck_assert_int_eq(cw_iobuf_mut_with_alignment(cwc_backend, 100, 0, &m), CW_ERR_INVALID);

    CWC_OK(cw_iobuf_mut_zeroed(cwc_backend, 33, &m));
    ck_assert_uint_eq(m.len, 33);
    ck_assert_uint_eq(m.cap, 33);
    for (size_t i = 0; i < 33; i++)
        ck_assert_uint_eq(m.data[i], 0);
    cw_iobuf_mut_release(&m);

    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 0, &m));
    ck_assert_uint_eq(m.cap, 0);
    ck_assert_int_eq(cw_iobuf_mut_put(&m, "x", 1), CW_ERR_INVALID);
    cw_iobuf_mut_release(&m);
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, NULL, 3, &b), CW_ERR_INVALID);
    ck_assert_int_eq(cw_iobuf_mut_with_capacity(cwc_backend, SIZE_MAX - 8, &m), CW_ERR_NOMEM);
    ck_assert_uint_eq(m.cap, 0);
}

/* ---- BUF-003: sharing and release ------------------------------------------------------- */

static atomic_int releases;

static void count_release(void *data, void *arg)
{
    (void)arg;
    free(data);
    atomic_fetch_add(&releases, 1);
}

static void *release_on_thread(void *arg)
{
    cw_iobuf *b = arg;
    for (int i = 0; i < 200; i++) {
        cw_iobuf c = cw_iobuf_clone(b);
        cw_iobuf_release(&c);
    }
    cw_iobuf_release(b);
    return NULL;
}

CWC_CASE(buffer_sharing, "buffers", "BUF-003 RUN-008", CWC_REPEATED)
{
    cw_iobuf a;
    CWC_OK(cw_iobuf_copy(cwc_backend, "shared", 6, &a));
    cw_iobuf b = cw_iobuf_clone(&a);
    ck_assert_ptr_eq(b.data, a.data);
    ck_assert_uint_eq(b.len, a.len);
    cw_iobuf_release(&a);
    ck_assert_uint_eq(a.len, 0);
    cw_iobuf_release(&a); /* released twice: nothing */
    ck_assert(cw_iobuf_equal_bytes(&b, "shared", 6));
    cw_iobuf_release(&b);

    /* Clones released on four threads at once: the bytes go exactly once. */
    for (int round = 0; round < 20; round++) {
        atomic_store(&releases, 0);
        char *bytes = malloc(4);
        memcpy(bytes, "four", 4);
        cw_iobuf copies[4];
        CWC_OK(cw_iobuf_adopt(cwc_backend, bytes, 4, count_release, NULL, &copies[0]));
        for (int i = 1; i < 4; i++)
            copies[i] = cw_iobuf_clone(&copies[0]);
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            ck_assert_int_eq(pthread_create(&t[i], NULL, release_on_thread, &copies[i]), 0);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        ck_assert_int_eq(atomic_load(&releases), 1);
    }
}

/* The last two references of adopted buffers dropped on two threads at
 * the same instant, round after round: each buffer's bytes are released
 * exactly once (BUF-004), whichever thread lets go last and however close
 * the two come. A spin barrier starts the two threads together on a row of
 * buffers, one releasing its references from the row's first, the other
 * from its last, so that they cross on some buffer whatever their speeds;
 * how close they come there decides only how likely a wrong count shows,
 * never the outcome of a right one. The case's thread
 * is one of the two, so that no third one spins beside them. */
enum { LAST_TWO_ROUNDS = 2048, LAST_TWO_ROW = 64 };

typedef struct last_two {
    cw_iobuf bufs[LAST_TWO_ROW][2];
    atomic_int released[LAST_TWO_ROW]; /* calls of each buffer's release this round */
    atomic_int go;                     /* the round whose buffers are ready */
    atomic_int arrived;                /* arrivals at the barrier, 2 a round */
    atomic_int done;                   /* the other thread's rows released, 1 a round */
} last_two;

/* Spin until `*at` reaches `want`, letting other threads have the core
 * now and then (the machine may have fewer cores than spinners). */
static void cwc_spin_until(atomic_int *at, int want)
{
    for (unsigned spins = 1; atomic_load(at) < want; spins++)
        if (spins % 1024 == 0)
            sched_yield();
}

/* One side of round `round`: the barrier, then its reference to each
 * buffer of the row let go. */
static void release_at_the_barrier(last_two *l, int side, int round)
{
    atomic_fetch_add(&l->arrived, 1);
    cwc_spin_until(&l->arrived, 2 * round);
    for (int i = 0; i < LAST_TWO_ROW; i++)
        cw_iobuf_release(&l->bufs[side ? LAST_TWO_ROW - 1 - i : i][side]);
}

static void *release_in_step(void *arg)
{
    last_two *l = arg;
    for (int round = 1; round <= LAST_TWO_ROUNDS; round++) {
        cwc_spin_until(&l->go, round);
        release_at_the_barrier(l, 1, round);
        atomic_fetch_add(&l->done, 1);
    }
    return NULL;
}

static void count_slot_release(void *data, void *arg)
{
    free(data);
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* A row of adopted buffers, each with a clone. */
static void adopt_row(last_two *l)
{
    for (int i = 0; i < LAST_TWO_ROW; i++) {
        char *bytes = malloc(4);
        ck_assert_ptr_nonnull(bytes);
        memcpy(bytes, "both", 4);
        atomic_store(&l->released[i], 0);
        CWC_OK(cw_iobuf_adopt(cwc_backend, bytes, 4, count_slot_release, &l->released[i],
                              &l->bufs[i][0]));
        l->bufs[i][1] = cw_iobuf_clone(&l->bufs[i][0]);
    }
}

CWC_CASE(buffer_last_two_released_at_once, "buffers", "BUF-004 BUF-003", 0)
{
    static last_two l;
    atomic_store(&l.go, 0);
    atomic_store(&l.arrived, 0);
    atomic_store(&l.done, 0);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, release_in_step, &l), 0);
    for (int round = 1; round <= LAST_TWO_ROUNDS; round++) {
        adopt_row(&l);
        atomic_store(&l.go, round);
        release_at_the_barrier(&l, 0, round);
        cwc_spin_until(&l.done, round);
        for (int i = 0; i < LAST_TWO_ROW; i++)
            CWC_REQUIRE(atomic_load(&l.released[i]) == 1, "round %d: buffer %d released %d times",
                        round, i, atomic_load(&l.released[i]));
    }
    ck_assert_int_eq(pthread_join(t, NULL), 0);
}

/* ---- BUF-004, BUF-005: adopted and static bytes --------------------------------------- */

CWC_CASE(buffer_adopt, "buffers", "BUF-004 RUN-008", CWC_REPEATED)
{
    atomic_store(&releases, 0);
    char *bytes = malloc(10);
    memcpy(bytes, "0123456789", 10);
    cw_iobuf b, s;
    CWC_OK(cw_iobuf_adopt(cwc_backend, bytes, 10, count_release, NULL, &b));
    ck_assert_ptr_eq(b.data, (uint8_t *)bytes);
    CWC_OK(cw_iobuf_slice(&b, 2, 4, &s));
    cw_iobuf_release(&b);
    ck_assert_int_eq(atomic_load(&releases), 0); /* the slice still holds them */
    cw_iobuf_mut m;
    ck_assert(!cw_iobuf_try_into_mut(&s, &m)); /* adopted: never mutable again */
    ck_assert(cw_iobuf_equal_bytes(&s, "23", 2));
    cw_iobuf_release(&s);
    ck_assert_int_eq(atomic_load(&releases), 1);

    CWC_OK(cw_iobuf_adopt(cwc_backend, malloc(1), 0, count_release, NULL, &b));
    ck_assert_int_eq(atomic_load(&releases), 2); /* nothing to view: released at once */
    ck_assert_uint_eq(b.len, 0);
    cw_iobuf_release(&b);
    ck_assert_int_eq(atomic_load(&releases), 2);

    char keep[4] = "keep";
    ck_assert_int_eq(cw_iobuf_adopt(cwc_backend, keep, 4, NULL, NULL, &b), CW_ERR_INVALID);
    ck_assert_uint_eq(b.len, 0);
}

/* Nothing to view where bytes were promised: refused, nothing released. */
CWC_CASE(buffer_null_data_refused, "buffers", "BUF-033 RUN-008", CWC_REPEATED)
{
    atomic_store(&releases, 0);
    cw_iobuf b;
    for (size_t len = 1; len <= 4; len += 3) { /* one byte promised is already too many */
        ck_assert_int_eq(cw_iobuf_adopt(cwc_backend, NULL, len, count_release, NULL, &b),
                         CW_ERR_INVALID);
        ck_assert_uint_eq(b.len, 0);
        ck_assert_ptr_nonnull(b.data); /* the empty handle (BUF-029) */
        ck_assert_int_eq(atomic_load(&releases), 0);
        ck_assert_int_eq(cw_iobuf_copy(cwc_backend, NULL, len, &b), CW_ERR_INVALID);
        ck_assert_uint_eq(b.len, 0);
        ck_assert_ptr_nonnull(b.data);
    }
    CWC_OK(cw_iobuf_copy(cwc_backend, NULL, 0, &b)); /* no bytes promised */
    ck_assert_uint_eq(b.len, 0);
    cw_iobuf_release(&b);
}

static const char lit[] = "a static table";

CWC_CASE(buffer_static, "buffers", "BUF-005 RUN-008", CWC_REPEATED)
{
    cw_iobuf b, s;
    CWC_OK(cw_iobuf_static(cwc_backend, lit, sizeof lit - 1, &b));
    ck_assert_ptr_eq(b.data, (const uint8_t *)lit);
    cw_iobuf c = cw_iobuf_clone(&b);
    CWC_OK(cw_iobuf_slice(&c, 2, 8, &s));
    ck_assert_ptr_eq(s.data, (const uint8_t *)lit + 2);
    cw_iobuf_release(&c);
    cw_iobuf_mut m;
    ck_assert(!cw_iobuf_try_into_mut(&b, &m));
    ck_assert_uint_eq(b.len, sizeof lit - 1);
    cw_iobuf_release(&b);
    cw_iobuf_release(&s);
    ck_assert_int_eq(cw_iobuf_static(cwc_backend, NULL, 1, &b), CW_ERR_INVALID);
}

/* ---- BUF-006, BUF-007: views ----------------------------------------------------------- */

CWC_CASE(buffer_views, "buffers", "BUF-006 RUN-008", CWC_REPEATED)
{
    cw_iobuf b, s, h;
    CWC_OK(cw_iobuf_copy(cwc_backend, "0123456789", 10, &b));
    CWC_OK(cw_iobuf_slice(&b, 3, 7, &s));
    ck_assert_ptr_eq(s.data, b.data + 3);
    ck_assert(cw_iobuf_equal_bytes(&s, "3456", 4));
    cw_iobuf_release(&s);
    CWC_OK(cw_iobuf_slice(&b, 0, 10, &s));
    ck_assert(cw_iobuf_equal(&s, &b));
    cw_iobuf_release(&s);

    size_t bad[][2] = {{4, 3}, {0, 11}, {11, 11}, {SIZE_MAX, SIZE_MAX}};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_int_eq(cw_iobuf_slice(&b, bad[i][0], bad[i][1], &s), CW_ERR_INVALID);
        ck_assert_uint_eq(s.len, 0);
        cw_iobuf_release(&s);
    }
    ck_assert_int_eq(cw_iobuf_split_to(&b, 11, &h), CW_ERR_INVALID);
    ck_assert_uint_eq(h.len, 0);
    ck_assert_uint_eq(b.len, 10);
    ck_assert_int_eq(cw_iobuf_advance(&b, 11), CW_ERR_INVALID);
    ck_assert_uint_eq(b.len, 10);

    const uint8_t *base = b.data;
    CWC_OK(cw_iobuf_split_to(&b, 4, &h));
    ck_assert_ptr_eq(h.data, base);
    ck_assert(cw_iobuf_equal_bytes(&h, "0123", 4));
    ck_assert(cw_iobuf_equal_bytes(&b, "456789", 6));
    ck_assert_ptr_eq(b.data, base + 4);
    CWC_OK(cw_iobuf_advance(&b, 2));
    ck_assert(cw_iobuf_equal_bytes(&b, "6789", 4));
    cw_iobuf rest;
    CWC_OK(cw_iobuf_split_to(&b, 4, &rest)); /* all of it: `b` is left empty */
    ck_assert(cw_iobuf_equal_bytes(&rest, "6789", 4));
    ck_assert_uint_eq(b.len, 0);
    cw_iobuf_release(&rest);
    cw_iobuf_release(&h);
    cw_iobuf_release(&b);
}

CWC_CASE(buffer_empty_views_do_not_pin, "buffers", "BUF-007 RUN-008", CWC_REPEATED)
{
    cw_bufpool *p = cwc_small_pool(1); /* one buffer per class */
    cw_iobuf_mut m;
    cw_iobuf b, views[4];
    CWC_OK(cw_bufpool_try_alloc(p, 64, &m, NULL));
    CWC_OK(cw_iobuf_mut_put(&m, "pinned?", 7));
    cw_iobuf_mut_freeze(&m, &b);
    CWC_OK(cw_iobuf_slice(&b, 3, 3, &views[0]));
    CWC_OK(cw_iobuf_slice(&b, 7, 7, &views[1]));
    CWC_OK(cw_iobuf_split_to(&b, 0, &views[2]));
    views[3] = cw_iobuf_clone(&b);
    CWC_OK(cw_iobuf_advance(&views[3], 7)); /* advanced to the end */
    cw_iobuf_release(&b);
    /* Only empty views are left: the buffer is back in its class. */
    CWC_OK(cw_bufpool_try_alloc(p, 64, &m, NULL));
    ck_assert(cw_iobuf_mut_is_pooled(&m));

    /* Freezing nothing hands the buffer back at once. */
    cw_iobuf_mut_freeze(&m, &b);
    ck_assert_uint_eq(b.len, 0);
    CWC_OK(cw_bufpool_try_alloc(p, 64, &m, NULL));

    /* A mutable buffer advanced to the end of its capacity holds nothing. */
    CWC_OK(cw_iobuf_mut_set_len(&m, m.cap));
    CWC_OK(cw_iobuf_mut_advance(&m, m.cap));
    ck_assert_uint_eq(m.cap, 0);
    CWC_OK(cw_bufpool_try_alloc(p, 64, &m, NULL));

    /* Splitting all of a view away leaves an empty one behind. */
    cw_iobuf_mut_put(&m, "x", 1);
    cw_iobuf_mut_freeze(&m, &b);
    cw_iobuf all;
    CWC_OK(cw_iobuf_split_to(&b, 1, &all));
    cw_iobuf_release(&all);
    CWC_OK(cw_bufpool_try_alloc(p, 64, &m, NULL));
    cw_iobuf_mut_release(&m);
    cw_iobuf_release(&b);
    for (int i = 0; i < 4; i++)
        cw_iobuf_release(&views[i]);
    cw_bufpool_release(p);
}

/* ---- BUF-008: copy out ------------------------------------------------------------------ */

CWC_CASE(buffer_copy_out, "buffers", "BUF-008 RUN-008", CWC_REPEATED)
{
    char out[16];
    cw_iobuf b;
    CWC_OK(cw_iobuf_copy(cwc_backend, "abcdef", 6, &b));
    ck_assert_int_eq(cw_iobuf_copy_out(&b, out, 7), CW_ERR_INVALID);
    ck_assert_uint_eq(b.len, 6);
    CWC_OK(cw_iobuf_copy_out(&b, out, 2));
    ck_assert(!memcmp(out, "ab", 2));
    ck_assert(cw_iobuf_equal_bytes(&b, "cdef", 4));

    cw_iobuf_mut m;
    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 8, &m));
    cw_iobuf_mut_put(&m, "uvwxyz", 6);
    ck_assert_int_eq(cw_iobuf_mut_copy_out(&m, out, 7), CW_ERR_INVALID);
    CWC_OK(cw_iobuf_mut_copy_out(&m, out, 3));
    ck_assert(!memcmp(out, "uvw", 3));
    ck_assert(cw_iobuf_mut_equal_bytes(&m, "xyz", 3));
    ck_assert_uint_eq(m.cap, 5);

    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf parts[2];
    CWC_OK(cw_iobuf_copy(cwc_backend, "123", 3, &parts[0]));
    CWC_OK(cw_iobuf_copy(cwc_backend, "45", 2, &parts[1]));
    CWC_OK(cw_iobufs_append(l, &parts[0]));
    CWC_OK(cw_iobufs_append(l, &parts[1]));
    ck_assert_int_eq(cw_iobufs_copy_out(l, out, 6), CW_ERR_INVALID);
    ck_assert_uint_eq(cw_iobufs_len(l), 5);
    CWC_OK(cw_iobufs_copy_out(l, out, 4));
    ck_assert(!memcmp(out, "1234", 4));
    ck_assert(cw_iobufs_equal_bytes(l, "5", 1));

    cw_iobufs_mut *ml = cw_iobufs_mut_new(cwc_backend);
    CWC_OK(cw_iobufs_mut_append(ml, &m));
    ck_assert_int_eq(cw_iobufs_mut_copy_out(ml, out, 4), CW_ERR_INVALID);
    CWC_OK(cw_iobufs_mut_copy_out(ml, out, 2));
    ck_assert(!memcmp(out, "xy", 2));
    ck_assert(cw_iobufs_mut_equal_bytes(ml, "z", 1));
    cw_iobufs_mut_release(ml);
    cw_iobufs_release(l);
    cw_iobuf_release(&b);
}

/* ---- BUF-009 .. BUF-012: mutable buffers, freeze, back to mutable, equality ----------- */

CWC_CASE(buffer_mut_writes, "buffers", "BUF-009 RUN-008", CWC_REPEATED)
{
    cw_iobuf_mut m;
    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 8, &m));
    uint8_t *base = m.data;
    CWC_OK(cw_iobuf_mut_put(&m, "abc", 3));
    ck_assert_int_eq(cw_iobuf_mut_put(&m, "123456", 6), CW_ERR_INVALID);
    ck_assert(cw_iobuf_mut_equal_bytes(&m, "abc", 3));
    CWC_OK(cw_iobuf_mut_put(&m, "12345", 5));
    ck_assert_uint_eq(cw_iobuf_mut_spare(&m), 0);
    ck_assert_int_eq(cw_iobuf_mut_set_len(&m, 9), CW_ERR_INVALID);
    cw_iobuf_mut_truncate(&m, 20);
    ck_assert_uint_eq(m.len, 8);
    cw_iobuf_mut_truncate(&m, 2);
    ck_assert(cw_iobuf_mut_equal_bytes(&m, "ab", 2));
    memcpy(m.data + 2, "CD", 2); /* written in place, then declared */
    CWC_OK(cw_iobuf_mut_set_len(&m, 4));
    ck_assert(cw_iobuf_mut_equal_bytes(&m, "abCD", 4));
    ck_assert_int_eq(cw_iobuf_mut_advance(&m, 5), CW_ERR_INVALID);
    CWC_OK(cw_iobuf_mut_advance(&m, 3));
    ck_assert_ptr_eq(m.data, base + 3);
    ck_assert_uint_eq(m.len, 1);
    ck_assert_uint_eq(m.cap, 5);
    CWC_OK(cw_iobuf_mut_put(&m, "wxyz", 4));
    ck_assert(cw_iobuf_mut_equal_bytes(&m, "Dwxyz", 5));
    ck_assert_uint_eq(m.cap, 5); /* never grows */
    cw_iobuf_mut_release(&m);
    ck_assert_uint_eq(m.cap, 0);
    cw_iobuf_mut_release(&m);
}

CWC_CASE(buffer_freeze, "buffers", "BUF-010 RUN-008", CWC_REPEATED)
{
    cw_iobuf_mut m;
    cw_iobuf b;
    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 16, &m));
    cw_iobuf_mut_put(&m, "frozen", 6);
    uint8_t *data = m.data;
    cw_iobuf_mut_freeze(&m, &b);
    ck_assert_ptr_eq(b.data, data);
    ck_assert(cw_iobuf_equal_bytes(&b, "frozen", 6));
    ck_assert_uint_eq(m.len, 0);
    ck_assert_uint_eq(m.cap, 0);
    cw_iobuf_release(&b);

    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 16, &m));
    cw_iobuf_mut_freeze(&m, &b);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_uint_eq(m.cap, 0);
    cw_iobuf_release(&b);
}

CWC_CASE(buffer_try_into_mut, "buffers", "BUF-011 RUN-008", CWC_REPEATED)
{
    cw_iobuf b, s;
    cw_iobuf_mut m;
    CWC_OK(cw_iobuf_copy(cwc_backend, "0123456789", 10, &b));
    const uint8_t *data = b.data;
    cw_iobuf c = cw_iobuf_clone(&b);
    ck_assert(!cw_iobuf_try_into_mut(&b, &m)); /* shared */
    ck_assert_uint_eq(m.cap, 0);
    ck_assert_uint_eq(b.len, 10);
    cw_iobuf_release(&c);
    ck_assert(cw_iobuf_try_into_mut(&b, &m));
    ck_assert_ptr_eq(m.data, data);
    ck_assert_uint_eq(m.len, 10);
    ck_assert_uint_eq(m.cap, 10);
    ck_assert_uint_eq(b.len, 0);

    /* A unique slice comes back with the space after it. */
    cw_iobuf_mut_freeze(&m, &b);
    CWC_OK(cw_iobuf_slice(&b, 2, 5, &s));
    cw_iobuf_release(&b);
    ck_assert(cw_iobuf_try_into_mut(&s, &m));
    ck_assert_ptr_eq(m.data, data + 2);
    ck_assert_uint_eq(m.len, 3);
    ck_assert_uint_eq(m.cap, 8);
    CWC_OK(cw_iobuf_mut_put(&m, "abcde", 5));
    ck_assert(cw_iobuf_mut_equal_bytes(&m, "234abcde", 8));
    cw_iobuf_mut_release(&m);

    /* Pooled bytes too: capacity to the end of the class buffer. */
    cw_bufpool *p = cwc_small_pool(1);
    CWC_OK(cw_bufpool_try_alloc(p, 100, &m, NULL));
    size_t cap = m.cap;
    cw_iobuf_mut_put(&m, "pool", 4);
    cw_iobuf_mut_freeze(&m, &b);
    CWC_OK(cw_iobuf_advance(&b, 1));
    ck_assert(cw_iobuf_try_into_mut(&b, &m));
    ck_assert_uint_eq(m.cap, cap - 1);
    ck_assert(cw_iobuf_mut_is_pooled(&m));
    cw_iobuf_mut_release(&m);

    CWC_OK(cw_iobuf_copy(cwc_backend, NULL, 0, &b));
    ck_assert(cw_iobuf_try_into_mut(&b, &m)); /* empty: always */
    ck_assert_uint_eq(m.cap, 0);
    cw_iobuf_mut_release(&m);
    cw_bufpool_release(p);
}

CWC_CASE(buffer_equality, "buffers", "BUF-012 RUN-008", CWC_REPEATED)
{
    cw_iobuf a, b, c;
    CWC_OK(cw_iobuf_copy(cwc_backend, "same bytes", 10, &a));
    CWC_OK(cw_iobuf_static(cwc_backend, "same bytes", 10, &b));
    CWC_OK(cw_iobuf_copy(cwc_backend, "same bytez", 10, &c));
    ck_assert(cw_iobuf_equal(&a, &b));
    ck_assert(!cw_iobuf_equal(&a, &c));
    ck_assert(!cw_iobuf_equal_bytes(&a, "same", 4));

    cw_iobufs *x = CWC_LIST("sa", "me b", "ytes");
    cw_iobufs *y = CWC_LIST("same ", "bytes");
    cw_iobufs *z = CWC_LIST("same ", "bytez");
    ck_assert(cw_iobufs_equal(x, y));
    ck_assert(!cw_iobufs_equal(x, z));
    ck_assert(cw_iobufs_equal_bytes(x, "same bytes", 10));
    cw_iobufs_release(x);
    cw_iobufs_release(y);
    cw_iobufs_release(z);
    cw_iobuf_release(&a);
    cw_iobuf_release(&b);
    cw_iobuf_release(&c);
}

/* ---- BUF-013 .. BUF-017: lists and the builder ------------------------------------------- */

CWC_CASE(buffer_list_basics, "buffers", "BUF-013 RUN-008", CWC_REPEATED)
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf a, b, e;
    CWC_OK(cw_iobuf_copy(cwc_backend, "world", 5, &a));
    CWC_OK(cw_iobuf_copy(cwc_backend, "hello ", 6, &b));
    CWC_OK(cw_iobuf_copy(cwc_backend, NULL, 0, &e));
    const uint8_t *da = a.data, *db = b.data;
    CWC_OK(cw_iobufs_append(l, &a));
    ck_assert_uint_eq(a.len, 0);
    CWC_OK(cw_iobufs_prepend(l, &b));
    CWC_OK(cw_iobufs_append(l, &e)); /* dropped */
    ck_assert_uint_eq(cw_iobufs_len(l), 11);
    ck_assert_uint_eq(cw_iobufs_chunk_count(l), 2);
    ck_assert_ptr_eq(cw_iobufs_chunk(l, 0)->data, db);
    ck_assert_ptr_eq(cw_iobufs_chunk(l, 1)->data, da);
    ck_assert_ptr_null(cw_iobufs_chunk(l, 2));
    ck_assert(cw_iobufs_equal_bytes(l, "hello world", 11));

    /* Many prepends and appends keep their order. */
    for (int ch = 'a'; ch <= 'j'; ch++) {
        cw_iobuf one;
        char byte = (char)ch;
        CWC_OK(cw_iobuf_copy(cwc_backend, &byte, 1, &one));
        CWC_OK(ch % 2 ? cw_iobufs_prepend(l, &one) : cw_iobufs_append(l, &one));
    }
    ck_assert(cw_iobufs_equal_bytes(l, "igecahello worldbdfhj", 21));

    cw_iobufs *c = cw_iobufs_clone(l);
    ck_assert_uint_eq(cw_iobufs_chunk_count(c), cw_iobufs_chunk_count(l));
    for (size_t i = 0; i < cw_iobufs_chunk_count(l); i++)
        ck_assert_ptr_eq(cw_iobufs_chunk(c, i)->data, cw_iobufs_chunk(l, i)->data);
    cw_iobufs_release(c);

    /* A buffer of another backend is refused and stays the caller's. */
    cw_backend other = *cwc_backend;
    cw_iobuf alien;
    CWC_OK(cw_iobuf_copy(&other, "alien", 5, &alien));
    ck_assert_int_eq(cw_iobufs_append(l, &alien), CW_ERR_INVALID);
    ck_assert_int_eq(cw_iobufs_prepend(l, &alien), CW_ERR_INVALID);
    ck_assert_uint_eq(alien.len, 5);
    cw_iobuf_release(&alien);
    cw_iobufs_release(l);
}

CWC_CASE(buffer_list_split_advance, "buffers", "BUF-014 RUN-008", CWC_REPEATED)
{
    cw_iobufs *l = CWC_LIST("abc", "defg", "hi");
    const uint8_t *d1 = cw_iobufs_chunk(l, 1)->data;
    cw_iobufs *h = NULL;
    ck_assert_int_eq(cw_iobufs_split_to(l, 10, &h), CW_ERR_INVALID);
    ck_assert_ptr_null(h);
    ck_assert_uint_eq(cw_iobufs_len(l), 9);
    CWC_OK(cw_iobufs_split_to(l, 5, &h));
    ck_assert(cw_iobufs_equal_bytes(h, "abcde", 5));
    ck_assert(cw_iobufs_equal_bytes(l, "fghi", 4));
    ck_assert_uint_eq(cw_iobufs_chunk_count(h), 2);
    ck_assert_ptr_eq(cw_iobufs_chunk(h, 1)->data, d1); /* no byte copied */
    ck_assert_ptr_eq(cw_iobufs_chunk(l, 0)->data, d1 + 2);
    cw_iobufs_release(h);
    CWC_OK(cw_iobufs_split_to(l, 0, &h));
    ck_assert_uint_eq(cw_iobufs_len(h), 0);
    cw_iobufs_release(h);
    ck_assert_int_eq(cw_iobufs_advance(l, 5), CW_ERR_INVALID);
    CWC_OK(cw_iobufs_advance(l, 3));
    ck_assert(cw_iobufs_equal_bytes(l, "i", 1));
    CWC_OK(cw_iobufs_advance(l, 1));
    ck_assert_uint_eq(cw_iobufs_chunk_count(l), 0);
    cw_iobufs_release(l);

    /* A list advanced past its first chunks takes appends after what is
     * left of it, however its chunks are laid out. */
    l = CWC_LIST("ab", "cd", "ef", "gh");
    CWC_OK(cw_iobufs_advance(l, 6));
    for (int i = 0; i < 3; i++) {
        cw_iobuf more;
        CWC_OK(cw_iobuf_copy(cwc_backend, &"ijklmn"[2 * i], 2, &more));
        CWC_OK(cw_iobufs_append(l, &more));
    }
    ck_assert(cw_iobufs_equal_bytes(l, "ghijklmn", 8));
    ck_assert_uint_eq(cw_iobufs_chunk_count(l), 4);
    cw_iobufs_release(l);
}

/* Every split point of a list of several chunks, the chunk boundaries and
 * the bytes either side of them included: the head holds exactly the first
 * `at` bytes in as few chunks as cover them, the list the rest. */
CWC_CASE(buffer_list_split_everywhere, "buffers", "BUF-014 BUF-013 RUN-008", CWC_REPEATED)
{
    static const char all[] = "abcdefghijk";
    for (size_t at = 0; at <= 11; at++) {
        cw_iobufs *l = CWC_LIST("abc", "d", "efgh", "ijk");
        cw_iobufs *h = NULL;
        CWC_OK(cw_iobufs_split_to(l, at, &h));
        ck_assert_msg(cw_iobufs_len(h) == at && cw_iobufs_equal_bytes(h, all, at),
                      "the head of a split at %zu", at);
        ck_assert_msg(cw_iobufs_len(l) == 11 - at && cw_iobufs_equal_bytes(l, all + at, 11 - at),
                      "the rest of a split at %zu", at);
        size_t chunks = at == 0 ? 0 : at <= 3 ? 1 : at <= 4 ? 2 : at <= 8 ? 3 : 4;
        ck_assert_uint_eq(cw_iobufs_chunk_count(h), chunks);
        cw_iobufs_release(h);
        cw_iobufs_release(l);
        l = CWC_LIST("abc", "d", "efgh", "ijk");
        CWC_OK(cw_iobufs_advance(l, at));
        ck_assert_msg(cw_iobufs_equal_bytes(l, all + at, 11 - at), "advance by %zu", at);
        cw_iobufs_release(l);
    }
}

CWC_CASE(buffer_coalesce, "buffers", "BUF-015 RUN-008", CWC_REPEATED)
{
    cw_iobuf out;
    cw_iobufs *l = CWC_LIST("only");
    const uint8_t *d = cw_iobufs_chunk(l, 0)->data;
    CWC_OK(cw_iobufs_coalesce(l, NULL, &out));
    ck_assert_ptr_eq(out.data, d);
    ck_assert_uint_eq(cw_iobufs_len(l), 0);
    cw_iobuf_release(&out);
    cw_iobufs_release(l);

    cw_bufpool *p = cwc_small_pool(2);
    l = CWC_LIST("co", "al", "esce");
    CWC_OK(cw_iobufs_coalesce(l, NULL, &out));
    ck_assert(cw_iobuf_equal_bytes(&out, "coalesce", 8));
    ck_assert(!cw_iobuf_is_pooled(&out));
    ck_assert_uint_eq(cw_iobufs_chunk_count(l), 0);
    cw_iobuf_release(&out);
    cw_iobufs_release(l);
    l = CWC_LIST("po", "oled");
    CWC_OK(cw_iobufs_coalesce(l, p, &out));
    ck_assert(cw_iobuf_equal_bytes(&out, "pooled", 6));
    ck_assert(cw_iobuf_is_pooled(&out));
    cw_iobuf_release(&out);
    cw_iobufs_release(l);

    cw_iobufs_mut *ml = cw_iobufs_mut_new(cwc_backend);
    cw_iobuf_mut m, mo;
    for (int i = 0; i < 2; i++) {
        CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 4, &m));
        cw_iobuf_mut_put(&m, i ? "cd" : "ab", 2);
        CWC_OK(cw_iobufs_mut_append(ml, &m));
    }
    CWC_OK(cw_iobufs_mut_coalesce(ml, p, &mo));
    ck_assert(cw_iobuf_mut_equal_bytes(&mo, "abcd", 4));
    ck_assert(cw_iobuf_mut_is_pooled(&mo));
    ck_assert_uint_eq(cw_iobufs_mut_chunk_count(ml), 0);
    uint8_t *single = mo.data;
    CWC_OK(cw_iobufs_mut_append(ml, &mo));
    CWC_OK(cw_iobufs_mut_coalesce(ml, NULL, &mo));
    ck_assert_ptr_eq(mo.data, single);
    cw_iobuf_mut_release(&mo);
    cw_iobufs_mut_release(ml);
    cw_bufpool_release(p);
}

CWC_CASE(buffer_list_mut, "buffers", "BUF-016 RUN-008", CWC_REPEATED)
{
    cw_iobufs_mut *l = cw_iobufs_mut_new(cwc_backend);
    cw_iobuf_mut m;
    size_t caps[3] = {3, 20, 2};
    for (int i = 0; i < 3; i++) {
        CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, caps[i], &m));
        CWC_OK(cw_iobufs_mut_append(l, &m));
    }
    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 0, &m));
    CWC_OK(cw_iobufs_mut_append(l, &m)); /* no capacity: dropped */
    ck_assert_uint_eq(cw_iobufs_mut_chunk_count(l), 3);
    ck_assert_uint_eq(cw_iobufs_mut_capacity(l), 25);
    ck_assert_int_eq(cw_iobufs_mut_set_len(l, 26), CW_ERR_INVALID);
    CWC_OK(cw_iobufs_mut_set_len(l, 18));
    ck_assert_uint_eq(cw_iobufs_mut_chunk(l, 0)->len, 3);
    ck_assert_uint_eq(cw_iobufs_mut_chunk(l, 1)->len, 15);
    ck_assert_uint_eq(cw_iobufs_mut_chunk(l, 2)->len, 0);
    CWC_OK(cw_iobufs_mut_set_len(l, 0));

    ck_assert_uint_eq(cw_iobufs_mut_spare(l), 25);
    CWC_OK(cw_iobufs_mut_put(l, "abcdefgh", 8));
    ck_assert_uint_eq(cw_iobufs_mut_chunk(l, 0)->len, 3);
    ck_assert_uint_eq(cw_iobufs_mut_chunk(l, 1)->len, 5);
    ck_assert_int_eq(cw_iobufs_mut_put(l, "0123456789abcdefghij", 18), CW_ERR_INVALID);
    ck_assert_uint_eq(cw_iobufs_mut_len(l), 8);

    /* A chunk read dry with no room left goes; one with room stays. */
    char out[8];
    CWC_OK(cw_iobufs_mut_copy_out(l, out, 3));
    ck_assert_uint_eq(cw_iobufs_mut_chunk_count(l), 2);
    CWC_OK(cw_iobufs_mut_put(l, "ij", 2));
    ck_assert(cw_iobufs_mut_equal_bytes(l, "defghij", 7));
    ck_assert_uint_eq(cw_iobufs_mut_spare(l), 15);
    CWC_OK(cw_iobufs_mut_copy_out(l, out, 7));
    ck_assert_uint_eq(cw_iobufs_mut_chunk_count(l), 2);
    ck_assert_uint_eq(cw_iobufs_mut_capacity(l), 15);
    CWC_OK(cw_iobufs_mut_put(l, "defghij", 7)); /* from the first chunk again */
    ck_assert_uint_eq(cw_iobufs_mut_chunk(l, 0)->len, 7);

    /* Advance: past the bytes nothing moves; within them data, len and cap
     * move forward together. */
    ck_assert_int_eq(cw_iobufs_mut_advance(l, 8), CW_ERR_INVALID);
    ck_assert(cw_iobufs_mut_equal_bytes(l, "defghij", 7));
    ck_assert_uint_eq(cw_iobufs_mut_capacity(l), 15);
    CWC_OK(cw_iobufs_mut_advance(l, 2));
    ck_assert(cw_iobufs_mut_equal_bytes(l, "fghij", 5));
    ck_assert_uint_eq(cw_iobufs_mut_capacity(l), 13);
    CWC_OK(cw_iobufs_mut_advance(l, 1)); /* the smallest step moves too */
    ck_assert(cw_iobufs_mut_equal_bytes(l, "ghij", 4));
    ck_assert_uint_eq(cw_iobufs_mut_capacity(l), 12);

    cw_iobufs *f = cw_iobufs_mut_freeze(l);
    ck_assert(cw_iobufs_equal_bytes(f, "ghij", 4));
    ck_assert_uint_eq(cw_iobufs_chunk_count(f), 1);
    ck_assert_uint_eq(cw_iobufs_mut_chunk_count(l), 0);
    cw_iobufs_release(f);

    /* Two chunks of one byte each, then an empty one: the free room of the
     * first is behind the last readable byte, so a put fills the second,
     * then goes on into the third. */
    for (int i = 0; i < 3; i++) {
        CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 4, &m));
        if (i < 2)
            CWC_OK(cw_iobuf_mut_put(&m, i ? "b" : "a", 1));
        CWC_OK(cw_iobufs_mut_append(l, &m));
    }
    ck_assert_uint_eq(cw_iobufs_mut_spare(l), 7);
    ck_assert_int_eq(cw_iobufs_mut_put(l, "cdefghij", 8), CW_ERR_INVALID);
    CWC_OK(cw_iobufs_mut_put(l, "cdefg", 5));
    ck_assert(cw_iobufs_mut_equal_bytes(l, "abcdefg", 7));
    ck_assert_uint_eq(cw_iobufs_mut_chunk(l, 0)->len, 1);
    ck_assert_uint_eq(cw_iobufs_mut_chunk(l, 1)->len, 4);
    ck_assert_uint_eq(cw_iobufs_mut_chunk(l, 2)->len, 2);
    cw_iobufs_mut_release(l);
}

/* Only more than the spare room is refused: a put of exactly the spare
 * bytes fills every chunk to its capacity, after which the list takes
 * nothing more but an empty put [BUF-016]. */
CWC_CASE(buffer_list_mut_put_fills_to_spare, "buffers", "BUF-016 RUN-008", CWC_REPEATED)
{
    cw_iobufs_mut *l = cw_iobufs_mut_new(cwc_backend);
    cw_iobuf_mut m;
    for (int i = 0; i < 2; i++) {
        CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 4, &m));
        CWC_OK(cw_iobufs_mut_append(l, &m));
    }
    size_t spare = cw_iobufs_mut_spare(l);
    ck_assert_uint_eq(spare, 8); /* exactly the capacities asked for */
    const char bytes[] = "abcdefgh";
    CWC_OK(cw_iobufs_mut_put(l, bytes, spare));
    ck_assert(cw_iobufs_mut_equal_bytes(l, bytes, spare));
    ck_assert_uint_eq(cw_iobufs_mut_len(l), cw_iobufs_mut_capacity(l));
    ck_assert_uint_eq(cw_iobufs_mut_spare(l), 0);
    ck_assert_int_eq(cw_iobufs_mut_put(l, "z", 1), CW_ERR_INVALID);
    CWC_OK(cw_iobufs_mut_put(l, "z", 0));
    ck_assert(cw_iobufs_mut_equal_bytes(l, bytes, spare));
    cw_iobufs_mut_release(l);
}

CWC_CASE(buffer_builder, "buffers", "BUF-017 BUF-013 BUF-004 RUN-008", CWC_REPEATED)
{
    cw_bufpool *p = cwc_small_pool(2);
    cw_iobufs_builder *bld = cw_iobufs_builder_new(p, 16);
    ck_assert_ptr_nonnull(bld);
    cw_iobuf payload, second;
    CWC_OK(cw_iobuf_copy(cwc_backend, "PAYLOAD", 7, &payload));
    CWC_OK(cw_iobuf_copy(cwc_backend, "2nd", 3, &second));
    const uint8_t *pd = payload.data;
    CWC_OK(cw_iobufs_builder_put(bld, "hdr:", 4));
    CWC_OK(cw_iobufs_builder_push(bld, &payload));
    ck_assert_uint_eq(payload.len, 0);
    CWC_OK(cw_iobufs_builder_push(bld, &second));
    CWC_OK(cw_iobufs_builder_put(bld, ":end", 4));
    static const char big[4096];
    ck_assert_int_eq(cw_iobufs_builder_put(bld, big, sizeof big), CW_ERR_INVALID);
    cw_iobufs *l = cw_iobufs_builder_finish(bld);
    ck_assert(cw_iobufs_equal_bytes(l, "hdr:PAYLOAD2nd:end", 18));
    ck_assert_ptr_eq(cw_iobufs_chunk(l, 1)->data, pd);
    /* No inline bytes between the two pushes: the list holds no empty
     * chunk for them (BUF-013), so "hdr:", PAYLOAD, 2nd, ":end". */
    ck_assert_uint_eq(cw_iobufs_chunk_count(l), 4);
    cw_iobufs_release(l);

    /* Only pushed: no inline chunk before or after it. */
    bld = cw_iobufs_builder_new(p, 8);
    CWC_OK(cw_iobuf_copy(cwc_backend, "alone", 5, &payload));
    CWC_OK(cw_iobufs_builder_push(bld, &payload));
    l = cw_iobufs_builder_finish(bld);
    ck_assert_uint_eq(cw_iobufs_chunk_count(l), 1);
    ck_assert(cw_iobufs_equal_bytes(l, "alone", 5));
    cw_iobufs_release(l);

    bld = cw_iobufs_builder_new(p, 8); /* nothing pushed: one inline chunk */
    CWC_OK(cw_iobufs_builder_put(bld, "inline", 6));
    l = cw_iobufs_builder_finish(bld);
    ck_assert_uint_eq(cw_iobufs_chunk_count(l), 1);
    ck_assert(cw_iobufs_equal_bytes(l, "inline", 6));
    cw_iobufs_release(l);
    cw_iobufs_builder_release(cw_iobufs_builder_new(p, 8));

    /* Released unfinished, the builder gives back what was pushed into it:
     * an adopted buffer's release runs once, by then at the latest
     * [BUF-004]. */
    atomic_store(&releases, 0);
    char *bytes = malloc(64);
    memset(bytes, 'x', 64);
    bld = cw_iobufs_builder_new(p, 8);
    CWC_OK(cw_iobufs_builder_put(bld, "hdr", 3));
    CWC_OK(cw_iobuf_adopt(cwc_backend, bytes, 64, count_release, NULL, &payload));
    CWC_OK(cw_iobufs_builder_push(bld, &payload));
    cw_iobufs_builder_release(bld);
    ck_assert_int_eq(atomic_load(&releases), 1);
    cw_bufpool_release(p);
}

/* ---- BUF-018: misuse is reported, inside a task or not ---------------------------------- */

static void misuse(void)
{
    cw_iobuf b, o;
    cw_iobuf_mut m;
    CWC_OK(cw_iobuf_copy(cwc_backend, "abc", 3, &b));
    ck_assert_int_eq(cw_iobuf_slice(&b, 2, 1, &o), CW_ERR_INVALID);
    ck_assert_int_eq(cw_iobuf_split_to(&b, 4, &o), CW_ERR_INVALID);
    ck_assert_int_eq(cw_iobuf_advance(&b, 4), CW_ERR_INVALID);
    char out[8];
    ck_assert_int_eq(cw_iobuf_copy_out(&b, out, 4), CW_ERR_INVALID);
    ck_assert_int_eq(cw_iobuf_copy_out(&b, NULL, 1), CW_ERR_INVALID);
    ck_assert(cw_iobuf_equal_bytes(&b, "abc", 3));
    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 2, &m));
    ck_assert_int_eq(cw_iobuf_mut_put(&m, "abc", 3), CW_ERR_INVALID);
    ck_assert_int_eq(cw_iobuf_mut_put(&m, NULL, 1), CW_ERR_INVALID);
    ck_assert_int_eq(cw_iobuf_mut_set_len(&m, 3), CW_ERR_INVALID);
    ck_assert_int_eq(cw_iobuf_mut_advance(&m, 1), CW_ERR_INVALID);
    ck_assert_uint_eq(m.len, 0);
    cw_bufpool *p = cwc_small_pool(1);
    cw_bufpool_stats st;
    ck_assert_int_eq(cw_bufpool_class_stats(p, 99, &st), CW_ERR_INVALID);
    cw_bufpool_config bad;
    cw_bufpool_get_config(p, &bad);
    bad.alignment = 3;
    cw_bufpool *q;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &bad, &q), CW_ERR_INVALID);
    ck_assert_ptr_null(q);
    cw_bufpool_release(p);
    cw_iobuf_mut_release(&m);
    cw_iobuf_release(&b);
}

static void *misuse_root(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    misuse();
    return (void *)(intptr_t)7;
}

CWC_CASE(buffer_misuse_is_reported, "buffers", "BUF-018 RUN-008", CWC_REPEATED)
{
    misuse(); /* outside any task */
    ck_assert_int_eq((int)(intptr_t)cwc_run_ok(NULL, misuse_root, NULL), 7);
}
