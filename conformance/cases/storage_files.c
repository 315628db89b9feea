/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_files.c - storage kept in files (spec/17-storage.md, "Files",
 * STOR-027), on a backend with CW_CAP_PERSISTENT_STORAGE: the bytes on
 * disk, what a later run finds, and files written here by hand (torn,
 * corrupt, of the old layout) as an open meets them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include "cases/storage.h"

static void *write_named_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b;
    uint64_t size;
    ck_assert_int_eq(cw_storage_open(ctx, "p",
                                     "\x00\xff"
                                     "ab",
                                     4, &b, &size, NULL),
                     CW_OK);
    cwc_write(b, 0, "payload", 7);
    cwc_sync(b);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(storage_files_layout, "storage", "STOR-027 STOR-020 RUN-008", PERSIST | CWC_REPEATED)
{
    cwc_store s;
    cwc_store_begin(&s);
    cwc_run_ok(&s.cfg, write_named_root, NULL);
    size_t len;
    uint8_t *raw = cwc_file_get(s.dir, "p", "00ff6162", &len);
    ck_assert_uint_eq(len, 4096 + 7);
    ck_assert_mem_eq(raw, "CWIK\x00\x01\x00\x00\x28\x13\xD8\xDC", 12);
    ck_assert_mem_eq(raw + 4096, "payload", 7);
    free(raw);
    /* Files and directories another tool of the same user can read back. */
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/p/00ff6162", s.dir);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_msg((st.st_mode & 0600) == 0600, "blob file mode %o", (unsigned)st.st_mode & 0777);
    snprintf(path, sizeof path, "%s/p", s.dir);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_msg((st.st_mode & 0700) == 0700, "partition mode %o", (unsigned)st.st_mode & 0777);
    cwc_store_end(&s);
}

/* ---- Bytes no longer in the page cache [STOR-006, STOR-027] ---------------------------- */

enum { COLD_LEN = 2 * 1024 * 1024, COLD_AT = 3 * COLD_LEN / 4 };

static uint8_t cold_byte(size_t i)
{
    return (uint8_t)(i * 131 + (i >> 9) + 7);
}

static void *cold_write_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    uint8_t *bytes = malloc(COLD_LEN);
    ck_assert_ptr_nonnull(bytes);
    for (size_t i = 0; i < COLD_LEN; i++)
        bytes[i] = cold_byte(i);
    cw_blob *b = cwc_open(ctx, "p", "cold", NULL);
    cwc_write(b, 0, bytes, COLD_LEN);
    cwc_sync(b);
    cw_blob_close(b);
    free(bytes);
    return NULL;
}

/* One assertion for the whole range: Check reports every passing one to
 * its parent, which for two million bytes takes seconds. */
static void expect_cold(const uint8_t *got, size_t from, size_t to)
{
    size_t i = from;
    while (i < to && got[i] == cold_byte(i))
        i++;
    ck_assert_msg(i == to, "byte %zu of a read from disk", i);
}

/* A read into two chunks, the first of bytes just read (cached), the
 * second running to the end, mostly beyond what the kernel read ahead:
 * the part the cache has and the part it must read from disk meet past the
 * first chunk, and each chunk still gets its own bytes. */
static void cold_read_in_chunks(cw_blob *b)
{
    const cw_backend *be = cwc_backend;
    const size_t lens[2] = {4096, COLD_LEN - COLD_AT - 4096};
    cw_iobufs_mut *bufs = cw_iobufs_mut_new(be);
    ck_assert_ptr_nonnull(bufs);
    for (int i = 0; i < 2; i++) {
        cw_iobuf_mut m;
        ck_assert_int_eq(cw_iobuf_mut_with_capacity(be, lens[i], &m), CW_OK);
        ck_assert_int_eq(cw_iobufs_mut_append(bufs, &m), CW_OK);
    }
    ck_assert_int_eq(
        cw_blob_read_at_buf(b, COLD_AT, lens[0] + lens[1], bufs, CW_READ_DEFAULT, NULL), CW_OK);
    for (size_t i = 0, at = COLD_AT; i < 2; at += lens[i], i++) {
        const cw_iobuf_mut *c = cw_iobufs_mut_chunk(bufs, i);
        ck_assert_uint_eq(c->len, lens[i]);
        size_t k = 0;
        while (k < lens[i] && c->data[k] == cold_byte(at + k))
            k++;
        ck_assert_msg(k == lens[i], "chunk %zu: byte %zu of a read from disk", i, at + k);
    }
    cw_iobufs_mut_release(bufs);
}

static void *cold_read_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    uint64_t size;
    cw_blob *b = cwc_open(ctx, "p", "cold", &size);
    ck_assert_uint_eq(size, COLD_LEN);
    uint8_t *got = malloc(COLD_LEN);
    ck_assert_ptr_nonnull(got);
    for (size_t i = 0; i < COLD_LEN; i++)
        got[i] = (uint8_t)~cold_byte(i); /* no byte as the blob has it */
    /* Far from the header, which the open read (and the kernel read ahead of). */
    ck_assert_int_eq(cw_blob_read_into(b, COLD_AT, got + COLD_AT, 4096, CW_READ_DEFAULT, NULL),
                     CW_OK);
    expect_cold(got, COLD_AT, COLD_AT + 4096);
    cold_read_in_chunks(b);
    ck_assert_int_eq(cw_blob_read_into(b, 0, got, COLD_LEN, CW_READ_DEFAULT, NULL), CW_OK);
    expect_cold(got, 0, COLD_LEN);
    free(got);
    cw_blob_close(b);
    return NULL;
}

/* A read of bytes the page cache no longer holds reads them from disk, not
 * some of them: a backend that first asks the cache alone must not take
 * its refusal for bytes. */
CWC_CASE(storage_files_uncached_read, "storage", "STOR-006 STOR-027 RUN-008",
         PERSIST | CWC_REPEATED)
{
    cwc_store s;
    cwc_store_begin(&s);
    cwc_run_ok(&s.cfg, cold_write_root, NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/p/636f6c64", s.dir); /* "cold" */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    close(fd);
    cwc_run_ok(&s.cfg, cold_read_root, NULL);
    cwc_store_end(&s);
}

static void *persist_first(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = cwc_open(ctx, "p", "kept", NULL);
    cwc_write(b, 0, "synced by sync", 14);
    cwc_sync(b);
    ck_assert_int_eq(cw_blob_write_at(b, 14, ", and by a SYNC write", 21, CW_WRITE_SYNC, NULL),
                     CW_OK);
    cw_blob_close(b);
    b = cwc_open(ctx, "p", "resized", NULL);
    ck_assert_int_eq(cw_blob_resize(b, 5000, NULL), CW_OK);
    cwc_sync(b);
    cw_blob_close(b);
    return NULL;
}

static void *persist_second(cw_ctx *ctx, void *arg)
{
    (void)arg;
    uint64_t size;
    cw_blob *b = cwc_open(ctx, "p", "kept", &size);
    ck_assert_uint_eq(size, 35);
    cwc_read_eq(b, 0, "synced by sync, and by a SYNC write", 35);
    cw_blob_close(b);
    b = cwc_open(ctx, "p", "resized", &size);
    ck_assert_uint_eq(size, 5000);
    cw_blob_close(b);
    ck_assert(cwc_scan_has(ctx, "p", "kept", 4));
    return NULL;
}

CWC_CASE(storage_files_persist, "storage", "STOR-027 STOR-015 RUN-008", PERSIST | CWC_REPEATED)
{
    cwc_store s;
    cwc_store_begin(&s);
    cwc_run_ok(&s.cfg, persist_first, NULL);
    cwc_run_ok(&s.cfg, persist_second, NULL);
    cwc_store_end(&s);
}

/* ---- A sync leaves nothing for the kernel to write [STOR-015, STOR-027] ----------------- */

/* cachestat(2) (Linux 6.5): how many of a file's cached pages are dirty or
 * under writeback. Declared here: older C libraries have no wrapper. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct cwc_cachestat_range {
    uint64_t off, len;
};
struct cwc_cachestat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

enum { DURABLE_LEN = 256 * 1024 };
#define TMPFS_MAGIC_NUMBER 0x01021994

/* The pages of `path` the kernel still has to write: -1 when this kernel or
 * file system cannot say (no cachestat, or tmpfs, whose pages never reach
 * a disk and count as dirty for ever), or a sandbox refuses the call (a
 * seccomp filter that does not know it answers EPERM or ENOSYS). */
static long pages_unwritten(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_msg(fd >= 0, "open %s: errno %d", path, errno);
    struct statfs fs;
    ck_assert_int_eq(fstatfs(fd, &fs), 0);
    struct cwc_cachestat_range range = {0, 0}; /* len 0: to the end of the file */
    struct cwc_cachestat cs;
    long n = -1;
    if (fs.f_type != TMPFS_MAGIC_NUMBER && syscall(__NR_cachestat, fd, &range, &cs, 0) == 0)
        n = (long)(cs.nr_dirty + cs.nr_writeback);
    else
        ck_assert_msg(fs.f_type == TMPFS_MAGIC_NUMBER || errno == ENOSYS || errno == EPERM ||
                          errno == EACCES,
                      "cachestat: errno %d", errno);
    close(fd);
    return n;
}

/* Writes a blob, syncs it, and asks the kernel whether any of the file's
 * pages are still to be written: a sync that returned CW_OK made every byte
 * durable, so none may be (a backend writing around the page cache leaves
 * none either). The flusher writes dirty pages back only after seconds, so
 * a sync that was skipped leaves the write's pages dirty here. */
static void *durable_root(cw_ctx *ctx, void *arg)
{
    const char *dir = arg;
    static uint8_t bytes[DURABLE_LEN];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)(i * 7 + 3);
    cw_blob *b = cwc_open(ctx, "p", "durable", NULL);
    cwc_write(b, 0, bytes, sizeof bytes);
    cwc_sync(b);
    char path[512];
    snprintf(path, sizeof path, "%s/p/%s", dir, "64757261626c65"); /* "durable" */
    long unwritten = pages_unwritten(path);
    ck_assert_msg(unwritten <= 0, "%ld pages of a synced blob still to be written", unwritten);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(storage_files_sync_writes_back, "storage", "STOR-015 STOR-027", PERSIST)
{
    cwc_store s;
    cwc_store_begin(&s);
    cwc_run_ok(&s.cfg, durable_root, s.dir);
    cwc_store_end(&s);
}

static void *heal_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    const char *fresh[3] = {"zeros", "prefix", "short"};
    for (int i = 0; i < 3; i++) {
        uint64_t size = 1;
        cw_blob *b = cwc_open(ctx, "p", fresh[i], &size);
        ck_assert_uint_eq(size, 0);
        cwc_write(b, 0, "works", 5);
        cwc_sync(b);
        cw_blob_close(b);
    }
    static const struct {
        const char *name, *hex, *reason;
    } corrupt[2] = {{"padding", "70616464696e67", "reason: invalid header padding"},
                    {"magic", "6d61676963", "reason: invalid magic"}};
    for (int i = 0; i < 2; i++) {
        cw_blob *b;
        uint64_t size;
        cw_storage_error err;
        close(0); /* the open's file may take it (run_freeing_zero) */
        ck_assert_int_eq(
            cw_storage_open(ctx, "p", corrupt[i].name, strlen(corrupt[i].name), &b, &size, &err),
            CW_ERR_BLOB_CORRUPT);
        ck_assert_str_eq(err.partition, "p");
        ck_assert_str_eq(err.name, corrupt[i].hex);
        ck_assert_ptr_nonnull(strstr(err.message, corrupt[i].reason));
        ck_assert_int_eq(strncmp(err.message, "blob corrupt: p/", 16), 0);
        ck_assert_int_eq(err.os_error, 0); /* the bytes were read: no call failed */
    }
    return NULL;
}

/* A run of `root`, which closes descriptor 0 before its failing opens, so
 * that a blob's file may be opened on 0: on a native backend, descriptor 0
 * is free again once the run has ended, whatever the run opened on it
 * (NAT-006, NAT-009: an open that failed after its file was opened on 0
 * closes it as any other). The process's own 0 is put back after. */
static void run_freeing_zero(const cw_config *cfg, cw_task_fn root)
{
    int saved_zero = fcntl(0, F_DUPFD_CLOEXEC, 100);
    cwc_run_ok(cfg, root, NULL);
    if (cwc_backend->capabilities & CW_CAP_PARALLEL)
        ck_assert_msg(fcntl(0, F_GETFD) == -1 && errno == EBADF,
                      "descriptor 0, free during the run, is open after it");
    if (saved_zero >= 0) {
        ck_assert_int_eq(dup2(saved_zero, 0), 0);
        close(saved_zero);
    }
}

CWC_CASE(storage_files_heal, "storage", "STOR-027 STOR-023 STOR-018 NAT-006 NAT-009 RUN-008",
         PERSIST | CWC_REPEATED)
{
    cwc_store s;
    cwc_store_begin(&s);
    uint8_t raw[4100] = {0};
    cwc_file_put(s.dir, "p", "7a65726f73", raw, 4096); /* zeros: the length, not the bytes */
    memcpy(raw, "CWIK\x00\x01\x00\x05\x1D\xE2", 10);
    cwc_file_put(s.dir, "p", "707265666978", raw, 10); /* torn in the CRC */
    cwc_file_put(s.dir, "p", "73686f7274", "junk", 4); /* under 8 bytes */
    uint8_t header[4096];
    size_t len;
    ck_assert_int_eq(
        cw_blob_header_create(cwc_backend, CW_BLOB_LAYOUT_V1, 0, header, sizeof header, &len),
        CW_OK);
    header[100] = 1;
    cwc_file_put(s.dir, "p", "70616464696e67", header, 4096);
    cwc_file_put(s.dir, "p", "6d61676963", "XXXXXXXXdata", 12);
    run_freeing_zero(&s.cfg, heal_root);

    /* Healed: a whole header now, then the data written after. */
    uint8_t *got = cwc_file_get(s.dir, "p", "707265666978", &len);
    ck_assert_uint_eq(len, 4101);
    ck_assert_mem_eq(got, "CWIK\x00\x01\x00\x00\x28\x13\xD8\xDC", 12);
    ck_assert_mem_eq(got + 4096, "works", 5);
    free(got);
    /* Corrupt: left as it was. */
    got = cwc_file_get(s.dir, "p", "6d61676963", &len);
    ck_assert_uint_eq(len, 12);
    ck_assert_mem_eq(got, "XXXXXXXXdata", 12);
    free(got);
    cwc_store_end(&s);
}

static void *legacy_root(cw_ctx *ctx, void *arg)
{
    int mode = (int)(intptr_t)arg;
    cw_blob *b;
    uint64_t size;
    uint16_t version;
    cw_storage_error err;
    int rc = cw_storage_open_versioned(ctx, "p", "old", 3, cw_blob_range_of(2, 2), &b, &size,
                                       &version, &err);
    if (mode == 1) { /* a run that refuses V0 */
        ck_assert_int_eq(rc, CW_ERR_BLOB_LAYOUT_MISMATCH);
        ck_assert_str_eq(err.message, "blob layout mismatch: expected one of V1..=V1, found V0");
        ck_assert_uint_eq(err.found, CW_BLOB_LAYOUT_V0);
        ck_assert_int_eq(err.os_error, 0); /* no system call failed [STOR-018] */
        return NULL;
    }
    ck_assert_int_eq(rc, CW_OK);
    ck_assert_uint_eq(size, 8);
    ck_assert_uint_eq(version, 2);
    cwc_read_eq(b, 0, "old ", 4);
    cwc_write(b, 4, "DATA", 4);
    cwc_sync(b);
    cwc_read_eq(b, 0, "old DATA", 8);
    cw_blob_close(b);
    if (mode == 2) { /* a run that creates V0 */
        b = cwc_open(ctx, "p", "new", NULL);
        cwc_write(b, 0, "v0", 2);
        cwc_sync(b);
        cw_blob_close(b);
    }
    return NULL;
}

CWC_CASE(storage_files_layouts, "storage", "STOR-027 STOR-025 STOR-020 RUN-008",
         PERSIST | CWC_REPEATED)
{
    cwc_store s;
    cwc_store_begin(&s);
    cwc_file_put(s.dir, "p", "6f6c64", "CWIC\x00\x00\x00\x02old data", 16);
    s.cfg.blob_layouts = cw_blob_range_of(CW_BLOB_LAYOUT_V1, CW_BLOB_LAYOUT_V1);
    cwc_run_ok(&s.cfg, legacy_root, (void *)(intptr_t)1);
    s.cfg.blob_layouts = cw_blob_range_of(CW_BLOB_LAYOUT_V0, CW_BLOB_LAYOUT_V1);
    cwc_run_ok(&s.cfg, legacy_root, (void *)(intptr_t)0);
    size_t len;
    uint8_t *got = cwc_file_get(s.dir, "p", "6f6c64", &len);
    ck_assert_uint_eq(len, 16); /* written in place, not converted */
    ck_assert_mem_eq(got, "CWIC\x00\x00\x00\x02old DATA", 16);
    free(got);
    s.cfg.blob_layouts = cw_blob_range_of(CW_BLOB_LAYOUT_V0, CW_BLOB_LAYOUT_V0);
    cwc_run_ok(&s.cfg, legacy_root, (void *)(intptr_t)2);
    got = cwc_file_get(s.dir, "p", "6e6577", &len);
    ck_assert_uint_eq(len, 10);
    ck_assert_mem_eq(got, "CWIC\x00\x00\x00\x00v0", 10);
    free(got);
    cwc_store_end(&s);
}

static void *scan_corrupt_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    const char *partitions[4] = {"subdir", "upper", "odd", "nothex"};
    for (int i = 0; i < 4; i++) {
        cw_blob_names *names;
        cw_storage_error err;
        ck_assert_int_eq(cw_storage_scan(ctx, partitions[i], &names, &err),
                         CW_ERR_PARTITION_CORRUPT);
        ck_assert_ptr_null(names);
        ck_assert_str_eq(err.partition, partitions[i]);
        ck_assert_int_eq(strncmp(err.message, "partition corrupt: ", 19), 0);
        ck_assert_int_eq(err.os_error, 0); /* no system call failed (STOR-018) */
    }
    ck_assert(cwc_scan_has(ctx, "fine", "ab", 2));
    return NULL;
}

CWC_CASE(storage_files_scan_corrupt, "storage", "STOR-027 STOR-018 RUN-008", PERSIST | CWC_REPEATED)
{
    cwc_store s;
    cwc_store_begin(&s);
    char path[512];
    snprintf(path, sizeof path, "%s/subdir", s.dir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/subdir/6162", s.dir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    cwc_file_put(s.dir, "upper", "6A", "", 0);
    cwc_file_put(s.dir, "odd", "616", "", 0);
    cwc_file_put(s.dir, "nothex", "zz", "", 0);
    cwc_file_put(s.dir, "fine", "6162", "", 0);
    cwc_run_ok(&s.cfg, scan_corrupt_root, NULL);
    cwc_store_end(&s);
}

/* Entries of directory `path`, "." and ".." aside. */
static int dir_entries(const char *path)
{
    DIR *d = opendir(path);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int entries = 0;
    while ((e = readdir(d)))
        entries += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return entries;
}

static void *default_directory_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = cwc_open(ctx, "p", "blob", NULL);
    ck_assert_msg(dir_entries(getenv("TMPDIR")) > 0, "no directory of the run's under $TMPDIR");
    cwc_write(b, 0, "temporary", 9);
    cwc_sync(b);
    cwc_read_eq(b, 0, "temporary", 9);
    cw_blob_close(b); /* and one left open for the run to close */
    (void)cwc_open(ctx, "p", "left", NULL);
    return NULL;
}

/* $TMPDIR given as the store's path, then as "." with the store the
 * working directory: a path of one character is a path. */
CWC_CASE(storage_files_default_directory, "storage", "STOR-027", PERSIST)
{
    cwc_store s;
    cwc_store_begin(&s); /* used as $TMPDIR: the run's own directory goes there */
    int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(here, 0);
    const char *was = getenv("TMPDIR");
    char *saved = was ? strdup(was) : NULL;
    for (int relative = 0; relative < 2; relative++) {
        ck_assert_int_eq(relative ? chdir(s.dir) : 0, 0);
        ck_assert_int_eq(setenv("TMPDIR", relative ? "." : s.dir, 1), 0);
        cw_config cfg = cwc_config();
        cwc_run_ok(&cfg, default_directory_root, NULL);
        ck_assert_int_eq(dir_entries(s.dir), 0); /* removed when the run ended */
    }
    ck_assert_int_eq(fchdir(here), 0);
    close(here);
    ck_assert_int_eq(saved ? setenv("TMPDIR", saved, 1) : unsetenv("TMPDIR"), 0);
    free(saved);
    cwc_store_end(&s);
}

/* $TMPDIR names a file, under which no directory can be made: the run's
 * storage cannot be had, and a storage call fails with CW_ERR_IO, the
 * system's errno as os_error and its text in the message [STOR-018]. */
static void *tmpdir_a_file_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = NULL;
    uint64_t size = 0;
    cw_storage_error err;
    memset(&err, 0, sizeof err);
    int rc = cw_storage_open(ctx, "p", "blob", 4, &b, &size, &err);
    ck_assert_msg(rc == CW_ERR_IO && b == NULL, "an open without a directory gave %d (%s)", rc,
                  cw_strerror(rc));
    ck_assert_int_eq(err.code, CW_ERR_IO);
    ck_assert_int_eq(err.os_error, ENOTDIR);
    ck_assert_msg(strstr(err.message, strerror(ENOTDIR)) != NULL,
                  "message \"%s\" without the system's text [STOR-018]", err.message);
    return NULL;
}

CWC_CASE(storage_files_tmpdir_a_file, "storage", "STOR-018 STOR-027", PERSIST)
{
    const char *was = getenv("TMPDIR");
    char *saved = was ? strdup(was) : NULL;
    ck_assert_int_eq(setenv("TMPDIR", "/dev/null", 1), 0);
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, tmpdir_a_file_root, NULL);
    ck_assert_int_eq(saved ? setenv("TMPDIR", saved, 1) : unsetenv("TMPDIR"), 0);
    free(saved);
}

/* A storage directory that is a dangling symbolic link (to a directory
 * in one that does not exist): a blob open finds no partition, and the
 * partition cannot be made there, which is what the open says, rather
 * than that the blob's file could not be opened. Descriptor 0, which the
 * program holds, is still its own afterwards: the failed open had no
 * descriptor of its own to close (NAT-009). */
static void *partition_not_made_root(cw_ctx *ctx, void *arg)
{
    const struct stat *zero = arg;
    cw_blob *b = NULL;
    uint64_t size;
    cw_storage_error err;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(cw_storage_open(ctx, "p", "blob", 4, &b, &size, &err),
                     CW_ERR_PARTITION_CREATION_FAILED);
    ck_assert_ptr_null(b);
    ck_assert_int_eq(err.os_error, ENOENT);
    struct stat now;
    ck_assert_msg(fstat(0, &now) == 0, "descriptor 0 was closed by a failed open");
    ck_assert(now.st_dev == zero->st_dev && now.st_ino == zero->st_ino);
    return NULL;
}

/* Descriptor 0 open (the case's own /dev/null if the process had none),
 * and what it is, for the root to find it unchanged. */
static void zero_held_open(struct stat *zero)
{
    if (fcntl(0, F_GETFD) == -1)
        ck_assert_int_eq(open("/dev/null", O_RDONLY | O_CLOEXEC), 0);
    ck_assert_int_eq(fstat(0, zero), 0);
}

CWC_CASE(storage_files_partition_not_made, "storage", "STOR-018 STOR-027 NAT-009 RUN-008",
         PERSIST | CWC_REPEATED)
{
    cwc_store s;
    struct stat zero;
    zero_held_open(&zero);
    cwc_store_begin(&s);
    char link[512], target[512];
    snprintf(link, sizeof link, "%s/link", s.dir);
    snprintf(target, sizeof target, "%s/missing/store", s.dir);
    ck_assert_int_eq(symlink(target, link), 0);
    s.cfg.storage_directory = link;
    cwc_run_ok(&s.cfg, partition_not_made_root, &zero);
    cwc_store_end(&s);
}
