/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_limits.c - reads whose length no host could allocate
 * (spec/17-storage.md, STOR-006 and STOR-010): the answer is the one the
 * blob's size and the offset limit give, never an allocation failure.
 */
#include <errno.h>
#include <stdint.h>

#include "cases/storage.h"

/* The status of a read_at of `len` bytes at `offset`; a failed read must
 * leave its output unset (STOR-006). */
static int read_huge(cw_blob *b, uint64_t offset, size_t len)
{
    cw_iobuf_mut out, unset;
    memset(&out, 0xA5, sizeof out);
    memset(&unset, 0, sizeof unset);
    int rc = cw_blob_read_at(b, offset, len, CW_READ_DEFAULT, &out, NULL);
    ck_assert_int_ne(rc, CW_OK); /* no host can hold any of these ranges */
    ck_assert_mem_eq(&out, &unset, sizeof out);
    return rc;
}

static void *huge_reads_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = cwc_open(ctx, "limits", "ten_bytes", NULL);
    cwc_write(b, 0, "0123456789", 10);
    ck_assert_int_eq(read_huge(b, 0, (size_t)1 << 62), CW_ERR_BLOB_INSUFFICIENT_LENGTH);
    ck_assert_int_eq(read_huge(b, 4, (size_t)1 << 40), CW_ERR_BLOB_INSUFFICIENT_LENGTH);
    ck_assert_int_eq(read_huge(b, 1, (size_t)INT64_MAX), CW_ERR_OFFSET_OVERFLOW);
    ck_assert_int_eq(read_huge(b, 0, SIZE_MAX), CW_ERR_OFFSET_OVERFLOW);
    ck_assert_int_eq(read_huge(b, 0, SIZE_MAX / 2 + 1), CW_ERR_OFFSET_OVERFLOW);
    /* Far past the end, with a length that alone fits: the extent's end is
     * INT64_MAX + 1 past the header whatever its size, so the offset is
     * what overflows it [STOR-010]. */
    const uint64_t far = (uint64_t)1 << 40;
    ck_assert_int_eq(read_huge(b, far, (size_t)(INT64_MAX - far + 1)), CW_ERR_OFFSET_OVERFLOW);
    cwc_read_eq(b, 0, "0123456789", 10); /* and the blob is as it was */
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(blob_read_huge_length, "storage", "STOR-006 STOR-010", 0)
{
    cwc_store_run(huge_reads_root, NULL);
}

/* What a read that memory refused says [STOR-018]: the code, "out of
 * memory", the blob's partition and name, and no errno but ENOMEM (0 when
 * no system call failed, as when the C library's allocation did). */
static void nomem_reported(cw_blob *b, size_t len)
{
    cw_iobuf_mut out;
    cw_storage_error err;
    memset(&err, 0x5A, sizeof err);
    ck_assert_int_eq(cw_blob_read_at(b, 0, len, CW_READ_DEFAULT, &out, &err), CW_ERR_NOMEM);
    ck_assert_int_eq(err.code, CW_ERR_NOMEM);
    ck_assert_msg(err.os_error == 0 || err.os_error == ENOMEM, "os_error %d [STOR-018]",
                  err.os_error);
    ck_assert_str_eq(err.message, "out of memory");
    ck_assert_str_eq(err.partition, "limits");
    ck_assert_str_eq(err.name, "737061727365"); /* "sparse" */
}

/* A blob of 2^40 bytes, all of it a hole, read 2^40 bytes at a time: the
 * read that ends one byte past the end is refused as past the end, the
 * one that ends at the end is a range the blob holds, which only memory
 * can refuse. No host allocates 2^40 bytes, so both come back unread. */
static void *edge_reads_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    const uint64_t size = (uint64_t)1 << 40;
    cw_blob *b = cwc_open(ctx, "limits", "sparse", NULL);
    ck_assert_int_eq(cw_blob_resize(b, size, NULL), CW_OK);
    ck_assert_int_eq(read_huge(b, 1, (size_t)size), CW_ERR_BLOB_INSUFFICIENT_LENGTH);
    ck_assert_int_eq(read_huge(b, 0, (size_t)size), CW_ERR_NOMEM);
    nomem_reported(b, (size_t)size);
    ck_assert_int_eq(cw_blob_resize(b, 0, NULL), CW_OK);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(blob_read_huge_length_at_the_end, "storage", "STOR-006 STOR-018", PERSIST)
{
    cwc_store_run(edge_reads_root, NULL);
}

/* ---- A failed read gives its buffer back [STOR-006, BUF-023] ----------------------------- */

enum { FAILED_READS = 5 };

/* Every buffer the storage pool created is parked (idle): with no thread
 * caches each parked buffer is seen from every thread, and the program
 * holds none, so one not parked is one the backend kept. */
static void no_buffer_held(cw_ctx *ctx)
{
    cw_bufpool *pool = cw_storage_buffer_pool(ctx);
    cw_bufpool_stats st;
    for (size_t i = 0; cw_bufpool_class_stats(pool, i, &st) == CW_OK; i++)
        ck_assert_msg(st.idle == st.created,
                      "after %d reads past the end, the storage pool's class of %zu bytes has "
                      "created %llu buffers and holds %llu parked: a failed read kept a buffer "
                      "it took [STOR-006]",
                      FAILED_READS, st.size, (unsigned long long)st.created,
                      (unsigned long long)st.idle);
}

/* Reads past the end fail, and must leave the run's storage pool as they
 * found it: no buffer taken for them is kept. */
static void *failed_reads_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = cwc_open(ctx, "limits", "ten_bytes", NULL);
    cwc_write(b, 0, "0123456789", 10);
    for (int i = 0; i < FAILED_READS; i++)
        ck_assert_int_eq(cwc_read_rc(b, 4, 100 + 5000 * (size_t)i),
                         CW_ERR_BLOB_INSUFFICIENT_LENGTH);
    no_buffer_held(ctx);
    cwc_read_eq(b, 0, "0123456789", 10);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(blob_failed_reads_keep_no_buffer, "storage", "STOR-006 BUF-023 RUN-009", 0)
{
    cwc_store s;
    cwc_store_begin(&s);
    s.cfg.storage_buffer_pool.thread_cache = 0;
    cwc_run_ok(&s.cfg, failed_reads_root, NULL);
    cwc_store_end(&s);
}
