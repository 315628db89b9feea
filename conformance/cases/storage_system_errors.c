/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_system_errors.c - a disk that fails under a blob (STOR-039): the
 * system's read, write, resize and flush calls on the blob's file fail, as
 * a failing disk (EIO) or a full one (ENOSPC) makes them fail, and each
 * storage call must say so with the code and errno of STOR-018, never
 * report bytes it did not read or write, and leave the open usable; and
 * a disk whose reads and writes move half of what they are asked
 * (STOR-040), which a backend must take up where it stopped.
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
#include <sys/stat.h>
#include <unistd.h>

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
    cw_iobuf_mut out;
    arm(CWC_SYS_READ, EIO);
    rc = cw_blob_read_at(b, 0, LEN, CW_READ_DEFAULT, &out, &err);
    cwc_syscalls_off();
    if (rc == CW_OK) {
        ck_assert_msg(memcmp(cw_iobuf_mut_data(&out), before, LEN) == 0,
                      "a read reported CW_OK over a failed read of the disk, with other bytes");
        cw_iobuf_mut_release(&out);
    } else {
        expect_failed(rc, &err, CW_ERR_IO, "io error: ", EIO);
    }
    cwc_read_eq(b, 0, before, LEN);
}

/* `n` chunks of `each` bytes from `bytes` on, copied into a new list. */
static cw_iobufs *chunks_of(const uint8_t *bytes, int n, size_t each)
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    ck_assert_ptr_nonnull(l);
    for (int i = 0; i < n; i++) {
        cw_iobuf c;
        ck_assert_int_eq(cw_iobuf_copy(cwc_backend, bytes + (size_t)i * each, each, &c), CW_OK);
        ck_assert_int_eq(cw_iobufs_append(l, &c), CW_OK);
    }
    return l;
}

/* `part` written at PART_AT: from one buffer, or as a list of two chunks. */
static int write_part(cw_blob *b, const uint8_t *part, bool as_list, cw_storage_error *err)
{
    if (!as_list)
        return cw_blob_write_at(b, PART_AT, part, PART_LEN, CW_WRITE_DEFAULT, err);
    cw_iobufs *l = chunks_of(part, 2, PART_LEN / 2);
    int rc = cw_blob_write_bufs(b, PART_AT, l, CW_WRITE_DEFAULT, err);
    cw_iobufs_release(l);
    return rc;
}

/* A write that fails gives CW_ERR_IO and leaves each byte as it was or as
 * written; once the disk takes writes again the handle writes. */
static void write_fails(cw_blob *b, bool as_list)
{
    uint8_t part[PART_LEN], got[LEN];
    memset(part, 'w', sizeof part);
    cw_storage_error err;
    arm(CWC_SYS_WRITE, ENOSPC);
    int rc = write_part(b, part, as_list, &err);
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
    if (cwc_syscalls_met(CWC_SYS_SYNC) == 0 && rc == CW_OK)
        return; /* the backend flushed some way the suite does not see */
    expect_failed(rc, &err, CW_ERR_BLOB_SYNC_FAILED, "blob sync failed: ", EIO);
    ck_assert_int_eq(cw_blob_sync(b, NULL), CW_ERR_BLOB_SYNC_FAILED);
    cwc_write(b, 0, before, LEN);
    cwc_read_eq(b, 0, before, LEN);
}

/* The handle of a sync started when the flush fails gives
 * CW_ERR_BLOB_SYNC_FAILED on its join (STOR-016), and so does a later
 * sync of the open (STOR-037). */
static void started_sync_fails(cw_ctx *ctx)
{
    cw_blob *b = cwc_open(ctx, "p", "blob", NULL);
    cwc_write(b, 0, before, LEN);
    arm(CWC_SYS_SYNC, EIO);
    cw_handle *h = cw_blob_start_sync(b);
    ck_assert_ptr_nonnull(h);
    int rc = cw_join(h, NULL);
    cwc_syscalls_off();
    cw_handle_release(h);
    if (cwc_syscalls_met(CWC_SYS_SYNC) > 0 || rc != CW_OK) {
        ck_assert_msg(rc == CW_ERR_BLOB_SYNC_FAILED,
                      "a started sync whose flush failed joined with %d (%s) [STOR-039]", rc,
                      cw_strerror(rc));
        ck_assert_int_eq(cw_blob_sync(b, NULL), CW_ERR_BLOB_SYNC_FAILED);
    }
    cw_blob_close(b);
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

/* An open the system refuses to open the file for gives
 * CW_ERR_BLOB_OPEN_FAILED and no handle; a blob it was to make is not
 * made. */
static void open_refused(cw_ctx *ctx, const char *name, const char *hex)
{
    char path[512];
    snprintf(path, sizeof path, "%.*s/%s", (int)(strrchr(blob_path, '/') - blob_path), blob_path,
             hex);
    cw_blob *b = NULL;
    uint64_t size = 0;
    cw_storage_error err;
    cwc_syscalls_fail(path, CWC_SYS_OPEN, EACCES);
    int rc = cw_storage_open(ctx, "p", name, strlen(name), &b, &size, &err);
    cwc_syscalls_off();
    if (cwc_syscalls_met(CWC_SYS_OPEN) == 0 && rc == CW_OK) {
        cw_blob_close(b);
        return; /* the backend opens its files some way the suite does not see */
    }
    ck_assert_msg(rc == CW_ERR_BLOB_OPEN_FAILED && b == NULL,
                  "an open whose file the system refused to open gave %d (%s) [STOR-039]", rc,
                  cw_strerror(rc));
    ck_assert_msg(err.os_error == EACCES, "os_error %d, wanted EACCES [STOR-039]", err.os_error);
    if (strcmp(name, "blob") != 0)
        ck_assert_msg(!cwc_scan_has(ctx, "p", name, strlen(name)),
                      "an open refused its file left a blob a scan lists [STOR-039]");
}

/* A removal the system refuses gives CW_ERR_IO and leaves the blob. */
static void remove_refused(cw_ctx *ctx)
{
    cw_storage_error err;
    arm(CWC_SYS_REMOVE, EIO);
    int rc = cw_storage_remove(ctx, "p", "blob", 4, &err);
    cwc_syscalls_off();
    if (cwc_syscalls_met(CWC_SYS_REMOVE) == 0 && rc == CW_OK)
        return;
    expect_failed(rc, &err, CW_ERR_IO, "io error: ", EIO);
    ck_assert(cwc_scan_has(ctx, "p", "blob", 4));
    uint64_t size = 0;
    cw_blob *b = cwc_open(ctx, "p", "blob", &size);
    cwc_read_eq(b, 0, before, LEN);
    cw_blob_close(b);
    ck_assert_int_eq(cw_storage_remove(ctx, "p", "blob", 4, NULL), CW_OK);
    ck_assert(!cwc_scan_has(ctx, "p", "blob", 4));
}

/* An open refused its new file in a partition whose blobs were all
 * removed leaves the partition as it was: there, listing none [STOR-013]. */
static void refused_open_keeps_empty_partition(cw_ctx *ctx)
{
    open_refused(ctx, "new", "6e6577");
    cw_blob_names *names = NULL;
    int rc = cw_storage_scan(ctx, "p", &names, NULL);
    ck_assert_msg(rc == CW_OK,
                  "a partition emptied, then refused a new blob's file: scan %s "
                  "[STOR-013]",
                  cw_strerror(rc));
    ck_assert_uint_eq(names->count, 0);
    cw_blob_names_release(names);
}

/* The removal of partition "q", whose directory the system refuses to
 * open for reading, gives CW_ERR_IO with that errno; removed again with
 * the system well, it is gone. */
static void partition_remove_refused(cw_ctx *ctx, const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/q", dir);
    cw_blob_close(cwc_open(ctx, "q", "blob", NULL));
    cw_storage_error err;
    cwc_syscalls_fail(path, CWC_SYS_OPEN, EACCES);
    int rc = cw_storage_remove(ctx, "q", NULL, 0, &err);
    cwc_syscalls_off();
    if (cwc_syscalls_met(CWC_SYS_OPEN) == 0 && rc == CW_OK)
        return; /* the backend reads its directories some way the suite does not see */
    ck_assert_msg(rc == CW_ERR_IO, "a partition whose directory could not be opened: %s [STOR-039]",
                  cw_strerror(rc));
    ck_assert_msg(err.os_error == EACCES, "os_error %d, wanted EACCES [STOR-039]", err.os_error);
    ck_assert_int_eq(cw_storage_remove(ctx, "q", NULL, 0, NULL), CW_OK);
    cw_blob_names *names = NULL;
    ck_assert_int_eq(cw_storage_scan(ctx, "q", &names, NULL), CW_ERR_PARTITION_MISSING);
}

/* A blob made in partition "r", whose directory the system refuses to
 * flush: its name is not durable, so the open cannot report it made
 * (STOR-002); it fails, and returns. */
static void partition_flush_refused(cw_ctx *ctx, const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/r", dir);
    cw_blob_close(cwc_open(ctx, "r", "first", NULL)); /* the partition exists */
    cw_blob *b = NULL;
    uint64_t size = 0;
    cw_storage_error err;
    cwc_syscalls_fail(path, CWC_SYS_SYNC, EIO);
    int rc = cw_storage_open(ctx, "r", "second", 6, &b, &size, &err);
    cwc_syscalls_off();
    if (cwc_syscalls_met(CWC_SYS_SYNC) == 0 && rc == CW_OK) {
        cw_blob_close(b);
        return; /* the backend flushes its directories some way the suite does not see */
    }
    ck_assert_msg(rc != CW_OK && b == NULL,
                  "a blob whose partition could not be flushed was reported made [STOR-002]");
    /* The directory refused to a flush's open: the open fails the same,
     * with the errno of the call that failed [STOR-039]. */
    cwc_syscalls_fail(path, CWC_SYS_OPEN, EACCES);
    rc = cw_storage_open(ctx, "r", "third", 5, &b, &size, &err);
    cwc_syscalls_off();
    if (cwc_syscalls_met(CWC_SYS_OPEN) == 0 && rc == CW_OK) {
        cw_blob_close(b);
        return; /* the backend opens its directories some way the suite does not see */
    }
    ck_assert_msg(rc != CW_OK && b == NULL,
                  "a blob whose partition could not be opened to flush was reported made "
                  "[STOR-002]");
    ck_assert_msg(err.os_error == EACCES, "os_error %d, wanted EACCES [STOR-039]", err.os_error);
}

/* Blob "blob" of partition "p" under the store `dir`, `before` (letters
 * from `first`) written and synced; blob_path names its file. */
static cw_blob *synced_blob(cw_ctx *ctx, const char *dir, char first)
{
    snprintf(blob_path, sizeof blob_path, "%s/p/626c6f62", dir); /* "blob" */
    for (size_t i = 0; i < LEN; i++)
        before[i] = (uint8_t)(first + i % 26);
    cw_blob *b = cwc_open(ctx, "p", "blob", NULL);
    cwc_write(b, 0, before, LEN);
    cwc_sync(b);
    return b;
}

static void *failing_disk_root(cw_ctx *ctx, void *arg)
{
    cw_blob *b = synced_blob(ctx, arg, 'a');
    read_fails(b);
    write_fails(b, false);
    write_fails(b, true);
    resize_fails(b);
    cwc_sync(b);
    sync_fails(b);
    cw_blob_close(b);
    started_sync_fails(ctx);
    open_fails(ctx);
    open_refused(ctx, "blob", "626c6f62");
    open_refused(ctx, "new", "6e6577");
    remove_refused(ctx);
    refused_open_keeps_empty_partition(ctx);
    partition_remove_refused(ctx, arg);
    partition_flush_refused(ctx, arg);
    return NULL;
}

/* With the blobs on I/O threads (NAT-008), where the system's calls are
 * the C library's; a backend without CW_CAP_PARALLEL ignores the field. `root` is
 * given the store's directory. */
static void threaded_store_run(cw_task_fn root)
{
    cwc_store s;
    cwc_store_begin(&s);
    s.cfg.io_backend = CW_IO_THREADS;
    cwc_run_ok(&s.cfg, root, s.dir);
    cwc_store_end(&s);
}

CWC_CASE(storage_files_system_errors, "storage", "STOR-039 STOR-018 STOR-037 STOR-013 NAT-008",
         PERSIST)
{
    threaded_store_run(failing_disk_root);
}

/* ---- A partition the program made read-only [STOR-039, STOR-027] -------------------- */

#define NOBODY 65534

/* The process takes the user "nobody" (keeping root as its saved user,
 * when it is root, whom the kernel lets write anywhere), so that the
 * permissions of a directory hold for it. */
static uid_t saved_uid;

static void as_nobody(void)
{
    saved_uid = geteuid();
    if (saved_uid == 0)
        ck_assert_msg(setresuid(NOBODY, NOBODY, 0) == 0, "setresuid: %s", strerror(errno));
}

static void as_before(void)
{
    if (saved_uid == 0)
        ck_assert_int_eq(setresuid(0, 0, 0), 0);
}

/* The partition's directory (STOR-027) lets its files be read and written
 * but no file be made: opening a blob it does not hold finds no file, and
 * making one the system refuses with EACCES, the errno the open reports
 * (a refusal to make the file is no "not found"); the blob it holds still
 * opens. With the permission back, the new blob is made. */
static void *read_only_partition_root(cw_ctx *ctx, void *arg)
{
    const char *dir = arg;
    cw_blob *b = cwc_open(ctx, "p", "there", NULL);
    cwc_write(b, 0, "kept", 4);
    cwc_sync(b);
    cw_blob_close(b);
    char path[512], file[600];
    snprintf(path, sizeof path, "%s/p", dir);
    snprintf(file, sizeof file, "%s/%s", path, "7468657265"); /* "there" */
    ck_assert_int_eq(chmod(dir, 0777), 0);                    /* nobody may walk into the storage */
    ck_assert_int_eq(chmod(file, 0666), 0);
    ck_assert_int_eq(chmod(path, 0555), 0);
    cw_storage_error err;
    memset(&err, 0, sizeof err);
    b = NULL;
    uint64_t size = 0;
    as_nobody();
    int refused = cw_storage_open(ctx, "p", "new", 3, &b, &size, &err);
    cw_blob *kept = NULL;
    int reopened = cw_storage_open(ctx, "p", "there", 5, &kept, &size, NULL);
    as_before();
    ck_assert_int_eq(chmod(path, 0755), 0);
    ck_assert_msg(refused == CW_ERR_BLOB_OPEN_FAILED && b == NULL,
                  "an open whose file the system refused to make gave %d (%s) [STOR-039]", refused,
                  cw_strerror(refused));
    ck_assert_msg(err.os_error == EACCES, "os_error %d (%s), wanted EACCES [STOR-039]",
                  err.os_error, err.message);
    ck_assert_int_eq(reopened, CW_OK);
    ck_assert_uint_eq(size, 4);
    cwc_read_eq(kept, 0, "kept", 4);
    cw_blob_close(kept);
    ck_assert(!cwc_scan_has(ctx, "p", "new", 3));
    cw_blob_close(cwc_open(ctx, "p", "new", NULL));
    return NULL;
}

CWC_CASE(storage_files_partition_read_only, "storage", "STOR-039 STOR-027 STOR-018", PERSIST)
{
    cwc_store s;
    cwc_store_begin(&s);
    cwc_run_ok(&s.cfg, read_only_partition_root, s.dir);
    cwc_store_end(&s);
}

/* ---- Short transfers [STOR-040] ---------------------------------------------------- */

enum { LONG_LEN = 96 * 1024, CHUNK = 1000, SYNCED_AT = 10 };

static char long_path[512]; /* the file of blob "long" of partition "p" */
static uint8_t long_bytes[LONG_LEN + 3 * CHUNK];

static uint8_t long_byte(size_t i)
{
    return (uint8_t)(i * 7 + (i >> 8) + 1);
}

/* Three chunks written as one list at LONG_LEN, asked not to be cached. */
static void write_chunks(cw_blob *b)
{
    cw_iobufs *l = chunks_of(long_bytes + LONG_LEN, 3, CHUNK);
    ck_assert_int_eq(cw_blob_write_bufs(b, LONG_LEN, l, CW_WRITE_DONT_CACHE, NULL), CW_OK);
    cw_iobufs_release(l);
}

/* The whole blob read back, into one buffer and into a buffer of the
 * backend's (asked not to be cached); then once more from its second byte
 * (a read after one the system refused a flag for must still read all). */
static void read_all_back(cw_blob *b)
{
    cwc_read_eq(b, 0, long_bytes, sizeof long_bytes);
    cwc_read_eq(b, 1, long_bytes + 1, sizeof long_bytes - 1);
    cw_iobuf_mut out;
    ck_assert_int_eq(cw_blob_read_at(b, CHUNK, LONG_LEN, CW_READ_DONT_CACHE, &out, NULL), CW_OK);
    ck_assert_msg(memcmp(cw_iobuf_mut_data(&out), long_bytes + CHUNK, LONG_LEN) == 0,
                  "a read the system made in parts returned other bytes [STOR-040]");
    cw_iobuf_mut_release(&out);
}

/* Where the store is, and how the system's calls on the blob's file go. */
typedef struct odd_system {
    const char *dir;
    void (*arm)(const char *path);
} odd_system;

/* Made, written, read and synced with the file's calls armed; then opened
 * again, to read back, armed and then not. */
static void *odd_transfers_root(cw_ctx *ctx, void *arg)
{
    const odd_system *sys = arg;
    snprintf(long_path, sizeof long_path, "%s/p/6c6f6e67", sys->dir); /* "long" */
    for (size_t i = 0; i < sizeof long_bytes; i++)
        long_bytes[i] = long_byte(i);
    sys->arm(long_path);
    cw_blob *b = cwc_open(ctx, "p", "long", NULL);
    cwc_write(b, 0, long_bytes, LONG_LEN);
    write_chunks(b);
    ck_assert_int_eq(
        cw_blob_write_at(b, SYNCED_AT, long_bytes + SYNCED_AT, 2 * CHUNK, CW_WRITE_SYNC, NULL),
        CW_OK);
    read_all_back(b);
    cwc_sync(b);
    cw_blob_close(b);
    uint64_t size = 0;
    b = cwc_open(ctx, "p", "long", &size);
    ck_assert_uint_eq(size, sizeof long_bytes);
    read_all_back(b);
    cw_blob_close(b);
    cwc_syscalls_off();
    b = cwc_open(ctx, "p", "long", &size);
    ck_assert_uint_eq(size, sizeof long_bytes);
    read_all_back(b);
    cw_blob_close(b);
    return NULL;
}

/* The workload on a system whose calls of the blob's file are armed by
 * `arming`, with I/O threads (a ring's calls are not the suite's to see). */
static void on_odd_system(void (*arming)(const char *path))
{
    cwc_store s;
    cwc_store_begin(&s);
    s.cfg.io_backend = CW_IO_THREADS;
    odd_system sys = {s.dir, arming};
    cwc_run_ok(&s.cfg, odd_transfers_root, &sys);
    cwc_store_end(&s);
}

/* Every read and write of the file moves half of what was asked. */
static void halves(const char *path)
{
    cwc_syscalls_short(path, CWC_SYS_READ | CWC_SYS_WRITE);
}

CWC_CASE(storage_files_short_transfers, "storage", "STOR-040 STOR-006 STOR-008 NAT-008", PERSIST)
{
    on_odd_system(halves);
}

/* ---- Flags the system does not take [STOR-041] ----------------------------------------- */

CWC_CASE(storage_files_io_flags_refused, "storage", "STOR-041 STOR-006 STOR-008 NAT-008", PERSIST)
{
    on_odd_system(cwc_syscalls_refuse_flags);
}

/* ---- A durable write made durable another way, which fails [STOR-041, STOR-039] ------- */

/* The system refuses the durable write's flag (RWF_DSYNC), so the backend
 * makes the bytes durable another way: a flush after them, which fails
 * (the write is then a sync that failed, CW_ERR_BLOB_SYNC_FAILED with its
 * errno), a write through a descriptor opened O_DSYNC, or a flush that
 * names no file (msync, sync). A write the suite saw that returned CW_OK
 * with none of these made nothing durable. A backend whose writes the
 * suite does not see (its own system call instructions, a mapping) is
 * not judged. */
static void *flagless_sync_root(cw_ctx *ctx, void *arg)
{
    cw_blob *b = synced_blob(ctx, arg, 'A');
    cwc_syscalls_refuse_flags_fail_flushes(blob_path, EIO);
    cw_storage_error err;
    int rc = cw_blob_write_at(b, 0, before, LEN, CW_WRITE_SYNC, &err);
    uint64_t flushes = cwc_syscalls_met(CWC_SYS_SYNC), seen = cwc_syscalls_writes_seen();
    uint64_t durable = cwc_syscalls_durable_writes();
    cwc_syscalls_off();
    if (flushes > 0 || rc != CW_OK)
        expect_failed(rc, &err, CW_ERR_BLOB_SYNC_FAILED, "blob sync failed: ", EIO);
    else
        ck_assert_msg(seen == 0 || durable > 0,
                      "a durable write returned CW_OK with RWF_DSYNC refused, no flush after "
                      "it, no write through a descriptor opened O_DSYNC and no msync or sync: "
                      "its bytes were not made durable [STOR-041]");
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(storage_files_flagless_sync_fails, "storage", "STOR-041 STOR-039 STOR-037 NAT-008",
         PERSIST)
{
    cwc_store s;
    cwc_store_begin(&s);
    s.cfg.io_backend = CW_IO_THREADS; /* a ring's calls are not the suite's to see */
    cwc_run_ok(&s.cfg, flagless_sync_root, s.dir);
    cwc_store_end(&s);
}

/* ---- Calls a signal interrupted [NAT-005] ------------------------------------------ */

/* Every other call on the blob's file that a signal can interrupt fails
 * with EINTR: reads, writes, resizes, flushes and opens (a removal, like
 * unlink, cannot be interrupted). */
static void interrupted(const char *path)
{
    cwc_syscalls_interrupt(path, CWC_SYS_READ | CWC_SYS_WRITE | CWC_SYS_RESIZE | CWC_SYS_SYNC |
                                     CWC_SYS_OPEN);
}

/* Partition "q" made, its blob made, resized, synced and removed, then the
 * partition removed, with every other call on the partition's directory
 * (its opening, its flush) interrupted, and on the blob's file. */
static void *interrupted_partition_root(cw_ctx *ctx, void *arg)
{
    char dir[512], file[600];
    snprintf(dir, sizeof dir, "%s/q", (const char *)arg);
    snprintf(file, sizeof file, "%s/61", dir); /* "a" */
    cwc_syscalls_interrupt(dir, CWC_SYS_SYNC | CWC_SYS_OPEN);
    cw_blob *b = cwc_open(ctx, "q", "a", NULL);
    cwc_write(b, 0, "interrupted", 11);
    ck_assert_int_eq(cw_blob_resize(b, 5, NULL), CW_OK);
    cwc_sync(b);
    cw_blob_close(b);
    interrupted(file);
    ck_assert_int_eq(cw_storage_remove(ctx, "q", "a", 1, NULL), CW_OK);
    cwc_syscalls_interrupt(dir, CWC_SYS_SYNC | CWC_SYS_OPEN);
    ck_assert(!cwc_scan_has(ctx, "q", "a", 1));
    cw_blob_close(cwc_open(ctx, "q", "b", NULL));
    ck_assert_int_eq(cw_storage_remove(ctx, "q", NULL, 0, NULL), CW_OK);
    cwc_syscalls_off();
    cw_blob_names *names = NULL;
    ck_assert_int_eq(cw_storage_scan(ctx, "q", &names, NULL), CW_ERR_PARTITION_MISSING);
    return NULL;
}

/* A call a signal handler interrupted is made again: no storage call
 * fails for it, and the bytes are the ones written. */
CWC_CASE(storage_files_interrupted_calls, "storage", "NAT-005 STOR-040 STOR-011 STOR-012 NAT-008",
         PERSIST)
{
    on_odd_system(interrupted);
    threaded_store_run(interrupted_partition_root);
}
