/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_system_errors.c - a disk that fails under a blob (STOR-039): the
 * system's read, write, resize and flush calls on the blob's file fail, as
 * a failing disk (EIO) or a full one (ENOSPC) makes them fail, and each
 * storage call must say so with the code and errno of STOR-018, never
 * report bytes it did not read or write, and leave the open usable.
 *
 * The failures come from the suite's file calls (harness/syscalls.h). A
 * backend that reaches its files another way is not seen: where the seam
 * failed no call, the storage call could not have met a failure and only
 * has to do its ordinary work, so such a backend passes on what the other
 * cases check of it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cases/storage.h"
#include "harness/syscalls.h"

enum { LEN = 64, PART_AT = 16, PART_LEN = 16 };

static char blob_path[512]; /* the file of blob "blob" of partition "p" */
static uint8_t before[LEN]; /* what the blob holds before a failure */

/* The message of `err` is `<head><p>/<n><...>(os error <errno>)`. */
static void expect_message(const cw_storage_error *err, const char *head, int error)
{
    char want[256], tail[32];
    snprintf(want, sizeof want, "%s%s/%s", head, "p", "626c6f62"); /* "blob" */
    snprintf(tail, sizeof tail, "(os error %d)", error);
    size_t len = strlen(err->message), tail_len = strlen(tail);
    ck_assert_msg(strncmp(err->message, want, strlen(want)) == 0 && len >= tail_len &&
                      strcmp(err->message + len - tail_len, tail) == 0,
                  "message \"%s\": wanted \"%s...%s\" [STOR-018]", err->message, want, tail);
}

/* A call that met the failure: `code`, with the errno and its message. */
static void expect_failed(int rc, const cw_storage_error *err, int code, const char *head,
                          int error)
{
    ck_assert_msg(rc == code, "status %d (%s), wanted %d [STOR-039]", rc, cw_strerror(rc), code);
    ck_assert_int_eq(err->code, code);
    ck_assert_msg(err->os_error == error, "os_error %d, wanted %d [STOR-039]", err->os_error,
                  error);
    expect_message(err, head, error);
}

static void arm(unsigned kind, int error)
{
    cwc_syscalls_fail(blob_path, kind, error);
}

/* ---- Each kind of call -------------------------------------------------------------- */

/* A read that fails gives CW_ERR_IO, never bytes it did not read; the
 * next read reads them. */
static void read_fails(cw_blob *b)
{
    uint8_t got[LEN];
    memset(got, 0x5a, sizeof got);
    cw_storage_error err;
    arm(CWC_SYS_READ, EIO);
    int rc = cw_blob_read_into(b, 0, got, LEN, CW_READ_DEFAULT, &err);
    cwc_syscalls_off();
    if (rc == CW_OK)
        ck_assert_msg(memcmp(got, before, LEN) == 0, "a read reported CW_OK over a failed "
                                                     "read of the disk, with other bytes");
    else
        expect_failed(rc, &err, CW_ERR_IO, "io error: ", EIO);
    cwc_read_eq(b, 0, before, LEN);
}

/* A write that fails gives CW_ERR_IO and leaves each byte as it was or as
 * written; once the disk takes writes again the handle writes. */
static void write_fails(cw_blob *b)
{
    uint8_t part[PART_LEN], got[LEN];
    memset(part, 'w', sizeof part);
    cw_storage_error err;
    arm(CWC_SYS_WRITE, ENOSPC);
    int rc = cw_blob_write_at(b, PART_AT, part, PART_LEN, CW_WRITE_DEFAULT, &err);
    cwc_syscalls_off();
    if (rc != CW_OK)
        expect_failed(rc, &err, CW_ERR_IO, "io error: ", ENOSPC);
    ck_assert_int_eq(cw_blob_read_into(b, 0, got, LEN, CW_READ_DEFAULT, NULL), CW_OK);
    for (size_t i = 0; i < LEN; i++) {
        bool written = i >= PART_AT && i < PART_AT + PART_LEN;
        ck_assert_msg(got[i] == before[i] || (written && got[i] == 'w'),
                      "byte %zu is %#x after a write that %s [STOR-039]", i, got[i],
                      rc == CW_OK ? "returned CW_OK" : "failed");
        ck_assert_msg(rc != CW_OK || !written || got[i] == 'w',
                      "byte %zu not written by a write that returned CW_OK", i);
    }
    cwc_write(b, 0, before, LEN);
    cwc_read_eq(b, 0, before, LEN);
}

/* A resize that fails gives CW_ERR_BLOB_RESIZE_FAILED and keeps the old
 * length; the next one resizes. */
static void resize_fails(cw_blob *b)
{
    cw_storage_error err;
    arm(CWC_SYS_RESIZE, EIO);
    int rc = cw_blob_resize(b, 2 * LEN, &err);
    cwc_syscalls_off();
    if (rc != CW_OK)
        expect_failed(rc, &err, CW_ERR_BLOB_RESIZE_FAILED, "blob resize failed: ", EIO);
    ck_assert_int_eq(cwc_read_rc(b, 2 * LEN - 1, 1),
                     rc == CW_OK ? CW_OK : CW_ERR_BLOB_INSUFFICIENT_LENGTH);
    cwc_read_eq(b, 0, before, LEN);
    ck_assert_int_eq(cw_blob_resize(b, LEN, NULL), CW_OK);
    ck_assert_int_eq(cw_blob_resize(b, 2 * LEN, NULL), CW_OK);
    ck_assert_int_eq(cwc_read_rc(b, 2 * LEN - 1, 1), CW_OK);
    ck_assert_int_eq(cw_blob_resize(b, LEN, NULL), CW_OK);
}

/* A sync whose flush failed gives CW_ERR_BLOB_SYNC_FAILED, and so does
 * every later sync of the open (STOR-037); reads and writes go on. */
static void sync_fails(cw_blob *b)
{
    cw_storage_error err;
    cwc_write(b, 0, before, LEN);
    arm(CWC_SYS_SYNC, EIO);
    int rc = cw_blob_sync(b, &err);
    cwc_syscalls_off();
    if (cwc_syscalls_failed(CWC_SYS_SYNC) == 0 && rc == CW_OK)
        return; /* the backend flushed some way the suite does not see */
    expect_failed(rc, &err, CW_ERR_BLOB_SYNC_FAILED, "blob sync failed: ", EIO);
    ck_assert_int_eq(cw_blob_sync(b, NULL), CW_ERR_BLOB_SYNC_FAILED);
    cwc_write(b, 0, before, LEN);
    cwc_read_eq(b, 0, before, LEN);
}

/* An open whose header cannot be read gives CW_ERR_BLOB_OPEN_FAILED and
 * no handle; the next open finds the blob as it was. */
static void open_fails(cw_ctx *ctx)
{
    cw_blob *b = NULL;
    uint64_t size = 0;
    cw_storage_error err;
    arm(CWC_SYS_READ, EIO);
    int rc = cw_storage_open(ctx, "p", "blob", 4, &b, &size, &err);
    cwc_syscalls_off();
    if (rc == CW_OK) {
        cw_blob_close(b);
    } else {
        expect_failed(rc, &err, CW_ERR_BLOB_OPEN_FAILED, "blob open failed: ", EIO);
        ck_assert_ptr_null(b);
    }
    b = cwc_open(ctx, "p", "blob", &size);
    ck_assert_uint_eq(size, LEN);
    cwc_read_eq(b, 0, before, LEN);
    cw_blob_close(b);
}

static void *failing_disk_root(cw_ctx *ctx, void *arg)
{
    snprintf(blob_path, sizeof blob_path, "%s/p/626c6f62", (const char *)arg); /* "blob" */
    for (size_t i = 0; i < LEN; i++)
        before[i] = (uint8_t)('a' + i % 26);
    cw_blob *b = cwc_open(ctx, "p", "blob", NULL);
    cwc_write(b, 0, before, LEN);
    cwc_sync(b);
    read_fails(b);
    write_fails(b);
    resize_fails(b);
    cwc_sync(b);
    sync_fails(b);
    cw_blob_close(b);
    open_fails(ctx);
    return NULL;
}

/* With the blobs on I/O threads (NAT-008), where the system's calls are
 * the C library's; a backend without CW_CAP_PARALLEL ignores the field. */
CWC_CASE(storage_files_system_errors, "storage", "STOR-039 STOR-018 STOR-037 NAT-008", PERSIST)
{
    cwc_store s;
    cwc_store_begin(&s);
    s.cfg.io_backend = CW_IO_THREADS;
    cwc_run_ok(&s.cfg, failing_disk_root, s.dir);
    cwc_store_end(&s);
}
