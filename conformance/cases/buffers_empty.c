/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * buffers_empty.c - what an empty handle is (spec/12-buffers.md, BUF-029
 * to BUF-031): the empty handles a backend hands back still name it, an
 * unset handle takes every operation on 0 bytes, and lists drop a buffer
 * with nothing to add whatever it names.
 */
#include <string.h>

#include "cases/buffers.h"

/* The backend's empty handle: its backend, no bytes, a non-NULL data. */
static void assert_empty(const cw_iobuf *b)
{
    ck_assert_ptr_eq(b->hdr.backend, cwc_backend);
    ck_assert_uint_eq(b->len, 0);
    ck_assert_ptr_nonnull(b->data);
    ck_assert(!cw_iobuf_is_pooled(b));
}

static void assert_empty_mut(const cw_iobuf_mut *m)
{
    ck_assert_ptr_eq(m->hdr.backend, cwc_backend);
    ck_assert_uint_eq(m->len, 0);
    ck_assert_uint_eq(m->cap, 0);
    ck_assert_ptr_nonnull(m->data);
}

/* A named empty handle is an operand like any other: slicing or splitting
 * 0 bytes of it gives the backend's empty handle, and a range past its
 * end is refused with an empty (not unset) result. */
static void assert_usable(cw_iobuf *b)
{
    cw_iobuf out;
    memset(&out, 0xA5, sizeof out);
    CWC_OK(cw_iobuf_slice(b, 0, 0, &out));
    assert_empty(&out);
    memset(&out, 0xA5, sizeof out);
    ck_assert_int_eq(cw_iobuf_slice(b, 0, 1, &out), CW_ERR_INVALID);
    assert_empty(&out);
    CWC_OK(cw_iobuf_split_to(b, 0, &out));
    assert_empty(&out);
    assert_empty(b);
}

CWC_CASE(buffer_empty_handles_name_backend, "buffers", "BUF-029 RUN-008", CWC_REPEATED)
{
    cwc_buffer_ops();
    cw_iobuf b, head, e;
    cw_iobuf_mut m;

    CWC_OK(cw_iobuf_copy(cwc_backend, "abcd", 4, &b));
    cw_iobuf_release(&b); /* released */
    assert_empty(&b);
    assert_usable(&b);

    CWC_OK(cw_iobuf_copy(cwc_backend, "abcd", 4, &b));
    CWC_OK(cw_iobuf_split_to(&b, 4, &head)); /* the rest of a split that took all */
    assert_empty(&b);
    assert_usable(&b);
    CWC_OK(cw_iobuf_advance(&head, 4)); /* an advance that took all */
    assert_empty(&head);
    assert_usable(&head);

    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 16, &m));
    cw_iobuf_mut_freeze(&m, &e); /* the freeze of an empty buffer, and what it leaves */
    assert_empty(&e);
    assert_empty_mut(&m);
    assert_usable(&e);

    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 16, &m));
    CWC_OK(cw_iobuf_mut_put(&m, "xy", 2));
    cw_iobuf_mut_freeze(&m, &b);
    assert_empty_mut(&m);                     /* a freeze leaves the mutable buffer empty */
    ck_assert(cw_iobuf_try_into_mut(&b, &m)); /* ... and try_into_mut the view */
    assert_empty(&b);
    cw_iobuf_mut_release(&m);
    assert_empty_mut(&m);

    /* Failed constructors and allocations leave `*out` empty. */
    memset(&m, 0xA5, sizeof m);
    ck_assert_int_eq(cw_iobuf_mut_with_alignment(cwc_backend, 8, 3, &m), CW_ERR_INVALID);
    assert_empty_mut(&m);
    cw_bufpool *p = cwc_small_pool(1);
    int why = 0;
    memset(&m, 0xA5, sizeof m);
    ck_assert_int_eq(cw_bufpool_try_alloc(p, 4096, &m, &why), CW_ERR_POOL);
    assert_empty_mut(&m);
    cw_bufpool_release(p);

    /* A failed try_into_mut leaves `*out` empty. */
    CWC_OK(cw_iobuf_copy(cwc_backend, "ab", 2, &b));
    cw_iobuf c = cw_iobuf_clone(&b);
    ck_assert(!cw_iobuf_try_into_mut(&b, &m));
    assert_empty_mut(&m);
    cw_iobuf_release(&c);

    /* A list takes the buffer in and leaves the handle empty. */
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    CWC_OK(cw_iobufs_append(l, &b));
    assert_empty(&b);
    assert_usable(&b);
    CWC_OK(cw_iobufs_coalesce(l, NULL, &b)); /* and an emptied list coalesces to empty */
    ck_assert(cw_iobuf_equal_bytes(&b, "ab", 2));
    CWC_OK(cw_iobufs_coalesce(l, NULL, &e));
    assert_empty(&e);
    cw_iobufs_release(l);
    cw_iobuf_release(&b);
}

CWC_CASE(buffer_unset_zero_counts, "buffers", "BUF-030 BUF-001 RUN-008", CWC_REPEATED)
{
    cwc_buffer_ops();
    cw_iobuf unset, out;
    cw_iobuf_mut um, mout;
    char dst[1];
    memset(&unset, 0, sizeof unset);
    memset(&um, 0, sizeof um);

    memset(&out, 0xA5, sizeof out);
    CWC_OK(cw_iobuf_slice(&unset, 0, 0, &out));
    ck_assert_ptr_null(out.hdr.backend);
    ck_assert_uint_eq(out.len, 0);
    memset(&out, 0xA5, sizeof out);
    ck_assert_int_eq(cw_iobuf_slice(&unset, 0, 1, &out), CW_ERR_INVALID);
    ck_assert_ptr_null(out.hdr.backend);
    ck_assert_int_eq(cw_iobuf_slice(&unset, 1, 0, &out), CW_ERR_INVALID);
    memset(&out, 0xA5, sizeof out);
    CWC_OK(cw_iobuf_split_to(&unset, 0, &out));
    ck_assert_ptr_null(out.hdr.backend);
    ck_assert_int_eq(cw_iobuf_split_to(&unset, 1, &out), CW_ERR_INVALID);
    CWC_OK(cw_iobuf_advance(&unset, 0));
    ck_assert_int_eq(cw_iobuf_advance(&unset, 1), CW_ERR_INVALID);
    CWC_OK(cw_iobuf_copy_out(&unset, dst, 0));
    ck_assert_int_eq(cw_iobuf_copy_out(&unset, dst, 1), CW_ERR_INVALID);
    CWC_OK(cw_iobuf_mut_advance(&um, 0));
    ck_assert_int_eq(cw_iobuf_mut_advance(&um, 1), CW_ERR_INVALID);
    CWC_OK(cw_iobuf_mut_copy_out(&um, dst, 0));
    ck_assert_int_eq(cw_iobuf_mut_copy_out(&um, dst, 1), CW_ERR_INVALID);
    memset(&out, 0xA5, sizeof out);
    cw_iobuf_mut_freeze(&um, &out);
    ck_assert_ptr_null(out.hdr.backend);
    ck_assert_uint_eq(out.len, 0);
    ck_assert(cw_iobuf_try_into_mut(&unset, &mout));
    ck_assert_ptr_null(mout.hdr.backend);
    /* Nothing of the unset operands changed. */
    ck_assert_ptr_null(unset.hdr.backend);
    ck_assert_ptr_null(um.hdr.backend);
}

CWC_CASE(buffer_lists_drop_nothing_to_add, "buffers", "BUF-031 BUF-013 RUN-008", CWC_REPEATED)
{
    cwc_buffer_ops();
    cw_iobuf unset, empty, one;
    cw_iobuf_mut munset, mempty;
    memset(&unset, 0, sizeof unset);
    memset(&munset, 0, sizeof munset);
    CWC_OK(cw_iobuf_copy(cwc_backend, NULL, 0, &empty));
    CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 0, &mempty));
    CWC_OK(cw_iobuf_copy(cwc_backend, "z", 1, &one));

    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    CWC_OK(cw_iobufs_append(l, &one));
    CWC_OK(cw_iobufs_append(l, &unset));
    CWC_OK(cw_iobufs_prepend(l, &unset));
    CWC_OK(cw_iobufs_append(l, &empty));
    CWC_OK(cw_iobufs_prepend(l, &empty));
    ck_assert_ptr_null(unset.hdr.backend); /* released: still unset */
    ck_assert_uint_eq(empty.len, 0);
    ck_assert_uint_eq(cw_iobufs_len(l), 1);
    ck_assert_uint_eq(cw_iobufs_chunk_count(l), 1);
    cw_iobufs_release(l);

    cw_iobufs_mut *ml = cw_iobufs_mut_new(cwc_backend);
    CWC_OK(cw_iobufs_mut_append(ml, &munset));
    CWC_OK(cw_iobufs_mut_append(ml, &mempty));
    ck_assert_ptr_null(munset.hdr.backend);
    ck_assert_uint_eq(cw_iobufs_mut_chunk_count(ml), 0);
    ck_assert_uint_eq(cw_iobufs_mut_capacity(ml), 0);
    cw_iobufs_mut_release(ml);

    cw_bufpool *p = cwc_small_pool(1);
    cw_iobufs_builder *bld = cw_iobufs_builder_new(p, 8);
    CWC_OK(cw_iobufs_builder_push(bld, &unset));
    CWC_OK(cw_iobufs_builder_push(bld, &empty));
    cw_iobufs *fin = cw_iobufs_builder_finish(bld);
    ck_assert_uint_eq(cw_iobufs_len(fin), 0);
    cw_iobufs_release(fin);
    cw_bufpool_release(p);
}
