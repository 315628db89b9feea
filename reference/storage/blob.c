/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * blob.c - blob handles and the blob calls.
 *
 * The calls work in logical offsets; here they are checked, audited and
 * counted, turned into physical offsets (past the header) and a list of
 * iovecs, and handed to the driver. A handle is a small object of its own
 * so each clone is closed once; all clones share one cw_bfile, which lives
 * while a handle or a pending start_sync needs it.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "storage/storage.h"

/* ---- Handles ---------------------------------------------------------------------- */

static cw_blob *handle_new(cw_bfile *f)
{
    cw_storage *st = f->st;
    cw_blob *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->hdr.backend = cw_rt_backend(st->rt);
    b->f = f;
    pthread_mutex_lock(&st->lock);
    f->handles++;
    cw_list_push_back(&st->handles, &b->link);
    pthread_mutex_unlock(&st->lock);
    return b;
}

cw_blob *cw_blob_new(cw_bfile *f)
{
    cw_blob *b = handle_new(f);
    if (b)
        cw_metric_gauge_add(f->st->open_blobs, 1);
    return b;
}

cw_blob *cw_blob_clone_entry(cw_blob *b)
{
    return handle_new(b->f);
}

/* With st->lock held: true when nothing needs `f` any more. */
static bool unused(const cw_bfile *f)
{
    return f->handles == 0 && f->pins == 0;
}

static void file_close(cw_bfile *f)
{
    f->st->driver->close(f);
    cw_bfile_free(f);
}

void cw_blob_close_entry(cw_blob *b)
{
    cw_bfile *f = b->f;
    cw_storage *st = f->st;
    pthread_mutex_lock(&st->lock);
    cw_list_remove(&b->link);
    bool last_handle = --f->handles == 0;
    bool close = unused(f);
    pthread_mutex_unlock(&st->lock);
    free(b);
    if (last_handle)
        cw_metric_gauge_add(st->open_blobs, -1);
    if (close)
        file_close(f);
}

void cw_blob_close_all(cw_storage *st)
{
    for (cw_list *it = st->handles.next, *next; it != &st->handles; it = next) {
        next = it->next; /* closing one handle leaves the others where they are */
        cw_blob_close_entry(cw_container_of(it, cw_blob, link));
    }
}

/* ---- Checks and events ------------------------------------------------------------ */

/* True when [offset, offset + len) past the header fits a file offset. */
static bool fits(const cw_bfile *f, uint64_t offset, uint64_t len)
{
    const uint64_t limit = INT64_MAX;
    return offset <= limit - f->data_offset && len <= limit - f->data_offset - offset;
}

static int overflow(const cw_bfile *f, cw_storage_error *err)
{
    return cw_storage_fail(err, CW_ERR_OFFSET_OVERFLOW, f->partition, f->hex, 0, "offset overflow");
}

static int refuse(const cw_bfile *f, int rc, const char *why, cw_storage_error *err)
{
    if (rc == CW_ERR_CLOSED)
        return cw_storage_fail(err, rc, f->partition, f->hex, 0, "closed");
    if (rc == CW_ERR_NOMEM)
        return cw_fail_nomem(err, f->partition, f->hex);
    return cw_storage_fail(err, rc, f->partition, f->hex, 0, "invalid argument: %s",
                           why ? why : "");
}

/* A sync of `f` ended with `rc`. After a failed one, the system may have
 * dropped the bytes it was to make durable while still saying a later
 * sync succeeded (Linux marks the pages clean): this open never reports
 * a sync as done again [STOR-037]. */
static int sync_ended(cw_bfile *f, int rc)
{
    if (rc == CW_ERR_BLOB_SYNC_FAILED)
        atomic_store(&f->sync_failed, true);
    return rc;
}

/* What a sync of an open whose earlier sync failed gives, at once. */
static int sync_refused(const cw_bfile *f, cw_storage_error *err)
{
    return cw_storage_fail(err, CW_ERR_BLOB_SYNC_FAILED, f->partition, f->hex, 0,
                           "blob sync failed: %s/%s error: an earlier sync of this open failed",
                           f->partition, f->hex);
}

/* An event on `f`: partition, name, then up to three more fields. */
static void audit(const cw_bfile *f, const char *label, const cw_field *more, size_t n)
{
    cw_rt *rt = f->st->rt;
    if (!cw_audited(rt))
        return;
    cw_field fields[5] = {{f->partition, strlen(f->partition)}, {f->name, f->name_len}};
    for (size_t i = 0; i < n; i++)
        fields[2 + i] = more[i];
    cw_audit(rt, label, fields, 2 + n);
}

static void audit_read(const cw_bfile *f, const char *label, uint64_t offset, size_t len,
                       uint8_t options)
{
    uint8_t off[8], n[8];
    cw_be64(off, offset);
    cw_be64(n, len);
    cw_field more[3] = {{off, 8}, {n, 8}, {&options, 1}};
    audit(f, label, more, 3);
}

/* ---- Reads ------------------------------------------------------------------------ */

/* The common path of the three reads, after the task was let in:
 * checks, event, counts, driver. */
/* The checks, event and counts every read makes before the driver. */
static int read_begin(cw_bfile *f, const char *label, uint64_t offset, size_t len,
                      cw_read_options options, cw_storage_error *err)
{
    cw_storage *st = f->st;
    if (options & ~CW_READ_ALL)
        return refuse(f, CW_ERR_INVALID, "unknown read option", err);
    audit_read(f, label, offset, len, options);
    cw_metric_counter_add(st->reads, 1);
    cw_metric_counter_add(st->read_bytes, len);
    if (!fits(f, offset, len))
        return overflow(f, err);
    return CW_OK;
}

static int read_iov(cw_blob *b, const char *label, uint64_t offset, const struct iovec *iov, int n,
                    size_t len, cw_read_options options, cw_storage_error *err)
{
    cw_bfile *f = b->f;
    int rc = read_begin(f, label, offset, len, options, err);
    if (rc != CW_OK)
        return rc;
    if ((rc = cw_fault_inject_file(f, CW_FAULT_READ, err)) != CW_OK)
        return rc;
    if (len == 0)
        return CW_OK;
    return f->st->driver->read(f, f->data_offset + offset, iov, n, len, options, err);
}

/* cw_blob_read_at could not allocate `len` bytes. A read past the end is
 * refused for that reason whatever the host's memory [STOR-006], so the
 * last byte of the range decides which error the caller gets; the read
 * is still recorded as asked [STOR-029]. */
static int read_unallocated(cw_bfile *f, uint64_t offset, size_t len, cw_read_options options,
                            cw_storage_error *err)
{
    int rc = read_begin(f, "read_at", offset, len, options, err);
    if (rc != CW_OK)
        return rc;
    if ((rc = cw_fault_inject_file(f, CW_FAULT_READ, err)) != CW_OK)
        return rc;
    if (len == 0) /* the range is empty: nothing to ask the driver */
        return cw_fail_nomem(err, f->partition, f->hex);
    uint8_t last;
    struct iovec iov = {&last, 1};
    rc = f->st->driver->read(f, f->data_offset + offset + len - 1, &iov, 1, 1, options, err);
    if (rc == CW_ERR_BLOB_INSUFFICIENT_LENGTH)
        return rc;
    return cw_fail_nomem(err, f->partition, f->hex);
}

int cw_blob_read_at_entry(cw_blob *b, uint64_t offset, size_t len, cw_read_options options,
                          cw_iobuf_mut *out, cw_storage_error *err)
{
    cw_rt *rt = b->f->st->rt;
    memset(out, 0, sizeof *out);
    cw_task *t;
    int rc = cw_storage_enter(rt, "cw_blob_read_at", &t);
    if (rc != CW_OK)
        return refuse(b->f, rc, NULL, err);
    cw_iobuf_mut buf;
    if (cw_bufpool_alloc(cw_rt_pool(rt, CW_BUFPOOL_STORAGE), len, &buf) != CW_OK) {
        rc = read_unallocated(b->f, offset, len, options, err);
        cw_task_check_abort(t);
        return rc;
    }
    struct iovec iov = {buf.data, len};
    rc = read_iov(b, "read_at", offset, &iov, 1, len, options, err);
    if (rc != CW_OK || cw_task_aborted(t)) {
        cw_iobuf_mut_release(&buf);
        cw_task_check_abort(t);
        return rc;
    }
    buf.len = len;
    *out = buf;
    return CW_OK;
}

int cw_blob_read_into_entry(cw_blob *b, uint64_t offset, void *dst, size_t len,
                            cw_read_options options, cw_storage_error *err)
{
    cw_task *t;
    int rc = cw_storage_enter(b->f->st->rt, "cw_blob_read_into", &t);
    if (rc != CW_OK)
        return refuse(b->f, rc, NULL, err);
    if (!dst && len > 0)
        return refuse(b->f, CW_ERR_INVALID, "no destination", err);
    struct iovec iov = {dst, len};
    rc = read_iov(b, "read_at_buf", offset, &iov, 1, len, options, err);
    cw_task_check_abort(t);
    return rc;
}

/* The chunks of `bufs` as iovecs, each up to its capacity, covering `len`
 * bytes. malloc'd: the caller frees it. */
static struct iovec *chunks_iov(const cw_iobufs_mut *bufs, size_t len, int *n)
{
    size_t count = cw_iobufs_mut_chunk_count(bufs);
    struct iovec *iov = calloc(count ? count : 1, sizeof *iov);
    int k = 0;
    if (!iov)
        return NULL;
    for (size_t i = 0; i < count && len > 0; i++) {
        const cw_iobuf_mut *c = cw_iobufs_mut_chunk(bufs, i);
        size_t take = c->cap < len ? c->cap : len;
        if (take == 0)
            continue;
        iov[k].iov_base = c->data;
        iov[k].iov_len = take;
        k++;
        len -= take;
    }
    *n = k;
    return iov;
}

int cw_blob_read_at_buf_entry(cw_blob *b, uint64_t offset, size_t len, cw_iobufs_mut *bufs,
                              cw_read_options options, cw_storage_error *err)
{
    cw_task *t;
    int rc = cw_storage_enter(b->f->st->rt, "cw_blob_read_at_buf", &t);
    if (rc != CW_OK)
        return refuse(b->f, rc, NULL, err);
    if (!bufs || cw_iobufs_mut_capacity(bufs) < len)
        return refuse(b->f, CW_ERR_INVALID, "the buffers hold fewer bytes than the read", err);
    int n;
    struct iovec *iov = chunks_iov(bufs, len, &n);
    if (!iov)
        return refuse(b->f, CW_ERR_NOMEM, NULL, err);
    rc = read_iov(b, "read_at_buf", offset, iov, n, len, options, err);
    free(iov);
    if (rc == CW_OK)
        cw_iobufs_mut_set_len(bufs, len);
    cw_task_check_abort(t);
    return rc;
}

/* ---- Writes ----------------------------------------------------------------------- */

/* The data is one field of the event whatever its chunks: joined into
 * one block when there are several. False when that block cannot be had:
 * the write then fails before anything, its event included. */
static bool audit_write(const cw_bfile *f, uint64_t offset, const struct iovec *iov, int n,
                        size_t len, uint8_t options)
{
    if (!cw_audited(f->st->rt))
        return true;
    uint8_t *joined = NULL;
    const void *data = n == 1 ? iov[0].iov_base : NULL;
    if (n > 1) {
        joined = malloc(len ? len : 1);
        if (!joined)
            return false;
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            memcpy(joined + at, iov[i].iov_base, iov[i].iov_len);
            at += iov[i].iov_len;
        }
        data = joined;
    }
    uint8_t off[8];
    cw_be64(off, offset);
    cw_field more[3] = {{off, 8}, {data, len}, {&options, 1}};
    audit(f, "write_at", more, 3);
    free(joined);
    return true;
}

/* The common path of both writes, after the task was let in. */
static int write_iov(cw_blob *b, uint64_t offset, const struct iovec *iov, int n, size_t len,
                     cw_write_options options, cw_storage_error *err)
{
    cw_bfile *f = b->f;
    cw_storage *st = f->st;
    if (options & ~CW_WRITE_ALL)
        return refuse(f, CW_ERR_INVALID, "unknown write option", err);
    if (!audit_write(f, offset, iov, n, len, options))
        return refuse(f, CW_ERR_NOMEM, NULL, err);
    cw_metric_counter_add(st->writes, 1);
    cw_metric_counter_add(st->write_bytes, len);
    if (options & CW_WRITE_SYNC)
        cw_metric_counter_add(st->syncs, 1);
    if (!fits(f, offset, len))
        return overflow(f, err);
    bool synced = options & CW_WRITE_SYNC;
    if (synced && atomic_load(&f->sync_failed))
        return sync_refused(f, err); /* nothing written [STOR-037] */
    int rc = cw_fault_inject_file(f, CW_FAULT_WRITE, err);
    if (rc != CW_OK) {
        cw_fault_torn_write(f, f->data_offset + offset, iov, n, len);
        return rc;
    }
    if (len == 0)
        return CW_OK; /* an empty write changes nothing, synced or not */
    rc = st->driver->write(f, f->data_offset + offset, iov, n, len, options, err);
    return synced ? sync_ended(f, rc) : rc;
}

int cw_blob_write_at_entry(cw_blob *b, uint64_t offset, const void *src, size_t len,
                           cw_write_options options, cw_storage_error *err)
{
    cw_task *t;
    int rc = cw_storage_enter(b->f->st->rt, "cw_blob_write_at", &t);
    if (rc != CW_OK)
        return refuse(b->f, rc, NULL, err);
    if (!src && len > 0)
        return refuse(b->f, CW_ERR_INVALID, "no source", err);
    struct iovec iov = {(void *)src, len};
    rc = write_iov(b, offset, &iov, 1, len, options, err);
    cw_task_check_abort(t);
    return rc;
}

int cw_blob_write_bufs_entry(cw_blob *b, uint64_t offset, const cw_iobufs *bufs,
                             cw_write_options options, cw_storage_error *err)
{
    cw_task *t;
    int rc = cw_storage_enter(b->f->st->rt, "cw_blob_write_bufs", &t);
    if (rc != CW_OK)
        return refuse(b->f, rc, NULL, err);
    if (!bufs)
        return refuse(b->f, CW_ERR_INVALID, "no buffers", err);
    size_t count = cw_iobufs_chunk_count(bufs);
    struct iovec *iov = calloc(count ? count : 1, sizeof *iov);
    if (!iov)
        return refuse(b->f, CW_ERR_NOMEM, NULL, err);
    for (size_t i = 0; i < count; i++) {
        const cw_iobuf *c = cw_iobufs_chunk(bufs, i);
        iov[i].iov_base = (void *)c->data;
        iov[i].iov_len = c->len;
    }
    rc = write_iov(b, offset, iov, (int)count, cw_iobufs_len(bufs), options, err);
    free(iov);
    cw_task_check_abort(t);
    return rc;
}

/* ---- Resize and sync -------------------------------------------------------------- */

/* An injected resize failure may stop between the two lengths (physical,
 * as the driver counts them) [STOR-032]. */
static void stop_halfway(cw_bfile *f, uint64_t asked)
{
    uint64_t old = f->st->driver->length(f);
    uint64_t reached = cw_fault_partial_length(f->st, old, asked);
    if (reached != old)
        (void)f->st->driver->resize(f, reached, NULL);
}

int cw_blob_resize_entry(cw_blob *b, uint64_t len, cw_storage_error *err)
{
    cw_bfile *f = b->f;
    cw_storage *st = f->st;
    cw_task *t;
    int rc = cw_storage_enter(st->rt, "cw_blob_resize", &t);
    if (rc != CW_OK)
        return refuse(f, rc, NULL, err);
    uint8_t n[8];
    cw_be64(n, len);
    cw_field more[1] = {{n, 8}};
    audit(f, "resize", more, 1);
    cw_metric_counter_add(st->resizes, 1);
    if (!fits(f, len, 0))
        return overflow(f, err);
    if ((rc = cw_fault_inject_file(f, CW_FAULT_RESIZE, err)) != CW_OK) {
        stop_halfway(f, f->data_offset + len);
        return rc;
    }
    rc = st->driver->resize(f, f->data_offset + len, err);
    cw_task_check_abort(t);
    return rc;
}

int cw_blob_sync_entry(cw_blob *b, cw_storage_error *err)
{
    cw_bfile *f = b->f;
    cw_storage *st = f->st;
    cw_task *t;
    int rc = cw_storage_enter(st->rt, "cw_blob_sync", &t);
    if (rc != CW_OK)
        return refuse(f, rc, NULL, err);
    audit(f, "sync", NULL, 0);
    cw_metric_counter_add(st->syncs, 1);
    if ((rc = cw_fault_inject_file(f, CW_FAULT_SYNC, err)) != CW_OK)
        return sync_ended(f, rc);
    if (atomic_load(&f->sync_failed))
        return sync_refused(f, err);
    rc = sync_ended(f, st->driver->sync(f, err));
    cw_task_check_abort(t);
    return rc;
}

cw_handle *cw_blob_start_sync_entry(cw_blob *b)
{
    cw_bfile *f = b->f;
    cw_storage *st = f->st;
    cw_rt *rt = st->rt;
    cw_task *t;
    int rc = cw_storage_enter(rt, "cw_blob_start_sync", &t);
    cw_rt_lock(rt);
    cw_handle *h = rc == CW_OK ? cw_handle_new(rt) : NULL;
    bool started = h != NULL;
    if (started)
        cw_handle_ref(h); /* the sync's own, given back by cw_blob_sync_done */
    else                  /* refused, or no handle to report a sync with [STOR-016] */
        h = cw_handle_resolved(rt, rc != CW_OK ? rc : CW_ERR_NOMEM);
    cw_rt_unlock(rt);
    if (!started)
        return h;
    audit(f, "start_sync", NULL, 0);
    cw_metric_counter_add(st->syncs, 1);
    pthread_mutex_lock(&st->lock);
    f->pins++;
    pthread_mutex_unlock(&st->lock);
    if ((rc = cw_fault_inject_file(f, CW_FAULT_SYNC, NULL)) != CW_OK)
        cw_blob_sync_done(f, h, rc);
    else if (atomic_load(&f->sync_failed))
        cw_blob_sync_done(f, h, CW_ERR_BLOB_SYNC_FAILED);
    else
        st->driver->start_sync(f, h);
    return h;
}

void cw_blob_sync_done(cw_bfile *f, cw_handle *h, int rc)
{
    cw_storage *st = f->st;
    sync_ended(f, rc);
    cw_rt_lock(st->rt);
    cw_handle_complete(h, rc, NULL);
    cw_handle_unref(h);
    cw_rt_unlock(st->rt);
    pthread_mutex_lock(&st->lock);
    f->pins--;
    bool close = unused(f);
    pthread_mutex_unlock(&st->lock);
    if (close)
        file_close(f);
}
