/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_util.c - the helpers of cases/storage.h.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cases/storage.h"

bool cwc_persistent(void)
{
    return (cwc_backend->capabilities & CW_CAP_PERSISTENT_STORAGE) != 0;
}

void cwc_store_begin(cwc_store *s)
{
    s->cfg = cwc_config();
    s->dir[0] = '\0';
    if (!cwc_persistent())
        return;
    const char *tmp = getenv("TMPDIR"); /* the case's own (harness/scratch.c) */
    int n = snprintf(s->dir, sizeof s->dir, "%s/cwc-storage-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    ck_assert_msg(n > 0 && (size_t)n < sizeof s->dir, "TMPDIR too long: %s", tmp);
    ck_assert_ptr_nonnull(mkdtemp(s->dir));
    s->cfg.storage_directory = s->dir;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void cwc_store_end(cwc_store *s)
{
    if (s->dir[0])
        ck_assert_int_eq(nftw(s->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

void *cwc_store_run(cw_task_fn root, void *arg)
{
    cwc_store s;
    cwc_store_begin(&s);
    void *out = cwc_run_ok(&s.cfg, root, arg);
    cwc_store_end(&s);
    return out;
}

cw_blob *cwc_open(cw_ctx *ctx, const char *partition, const char *name, uint64_t *size)
{
    cw_blob *b;
    uint64_t got;
    cw_storage_error err;
    int rc = cw_storage_open(ctx, partition, name, strlen(name), &b, &got, &err);
    ck_assert_msg(rc == CW_OK, "open %s/%s: %s", partition, name, err.message);
    if (size)
        *size = got;
    return b;
}

void cwc_write(cw_blob *b, uint64_t offset, const void *data, size_t len)
{
    cw_storage_error err;
    int rc = cw_blob_write_at(b, offset, data, len, CW_WRITE_DEFAULT, &err);
    ck_assert_msg(rc == CW_OK, "write: %s", err.message);
}

void cwc_sync(cw_blob *b)
{
    cw_storage_error err;
    int rc = cw_blob_sync(b, &err);
    ck_assert_msg(rc == CW_OK, "sync: %s", err.message);
}

void cwc_read_eq(cw_blob *b, uint64_t offset, const void *expect, size_t len)
{
    cw_iobuf_mut out;
    cw_storage_error err;
    int rc = cw_blob_read_at(b, offset, len, CW_READ_DEFAULT, &out, &err);
    ck_assert_msg(rc == CW_OK, "read: %s", err.message);
    ck_assert(cw_iobuf_mut_equal_bytes(&out, expect, len));
    cw_iobuf_mut_release(&out);
}

int cwc_read_rc(cw_blob *b, uint64_t offset, size_t len)
{
    cw_iobuf_mut out;
    int rc = cw_blob_read_at(b, offset, len, CW_READ_DEFAULT, &out, NULL);
    if (rc != CW_OK)
        ck_assert_uint_eq(out.len, 0);
    cw_iobuf_mut_release(&out);
    return rc;
}

bool cwc_scan_has(cw_ctx *ctx, const char *partition, const void *name, size_t len)
{
    cw_blob_names *names;
    ck_assert_int_eq(cw_storage_scan(ctx, partition, &names, NULL), CW_OK);
    bool has = cw_blob_names_contains(names, name, len);
    cw_blob_names_release(names);
    return has;
}

bool cwc_metrics_show(cw_ctx *ctx, const char *needle)
{
    char *text = cw_metrics_encode(ctx);
    if (!text)
        return true;
    bool found = strstr(text, needle) != NULL;
    free(text);
    return found;
}

void cwc_file_put(const char *dir, const char *partition, const char *hex, const void *data,
                  size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, partition);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", dir, partition, hex);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
    close(fd);
}

uint8_t *cwc_file_get(const char *dir, const char *partition, const char *hex, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/%s", dir, partition, hex);
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    struct stat sb;
    ck_assert_int_eq(fstat(fd, &sb), 0);
    uint8_t *data = malloc((size_t)sb.st_size + 1);
    ck_assert_int_eq(read(fd, data, (size_t)sb.st_size), sb.st_size);
    close(fd);
    *len = (size_t)sb.st_size;
    return data;
}
