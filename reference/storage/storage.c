/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage.c - the run's storage and its three calls: open, remove, scan.
 *
 * A run makes its storage on the first storage call, so runs that never
 * touch storage pay nothing (and make no directory). Its driver is the one
 * the run's backend chose (cw_ext_driver): files under storage_directory on
 * the native backend, memory on the deterministic one. It ends with the
 * run, after the last task (its close hook), closing the handles left open.
 *
 * Every call checks its arguments, then records its audit event (on the
 * deterministic backend: at issue time, whatever the outcome), then checks
 * the partition name, then asks the driver.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "storage/storage.h"

static bool register_metrics(cw_storage *st)
{
    cw_rt *rt = st->rt;
    st->open_blobs =
        cw_rt_metric(rt, "runtime_open_blobs", "Number of open blobs", CW_METRIC_GAUGE, NULL, 0);
    st->reads = cw_rt_metric(rt, "runtime_storage_reads", "Total number of disk reads",
                             CW_METRIC_COUNTER, NULL, 0);
    st->read_bytes = cw_rt_metric(rt, "runtime_storage_read_bytes", "Total amount of data read",
                                  CW_METRIC_COUNTER, NULL, 0);
    st->writes = cw_rt_metric(rt, "runtime_storage_writes", "Total number of disk writes",
                              CW_METRIC_COUNTER, NULL, 0);
    st->write_bytes = cw_rt_metric(rt, "runtime_storage_write_bytes",
                                   "Total amount of data written", CW_METRIC_COUNTER, NULL, 0);
    st->syncs = cw_rt_metric(rt, "runtime_storage_syncs", "Total number of disk syncs",
                             CW_METRIC_COUNTER, NULL, 0);
    st->resizes = cw_rt_metric(rt, "runtime_storage_resizes", "Total number of blob resizes",
                               CW_METRIC_COUNTER, NULL, 0);
    return st->open_blobs && st->reads && st->read_bytes && st->writes && st->write_bytes &&
           st->syncs && st->resizes;
}

static void storage_free(cw_storage *st)
{
    pthread_mutex_destroy(&st->lock);
    free(st);
}

/* NULL when memory is exhausted: the next storage call tries again. */
static cw_storage *storage_new(cw_rt *rt)
{
    cw_storage *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->rt = rt;
    st->faults = cw_rt_config(rt)->storage_faults;
    st->driver = cw_ext_driver(rt, CW_EXT_STORAGE);
    pthread_mutex_init(&st->lock, NULL);
    cw_list_init(&st->handles);
    st->layouts = cw_rt_config(rt)->blob_layouts;
    /* Metrics made before a failure stay registered until the run ends. */
    if (!register_metrics(st) ||
        (st->broken = st->driver->init(st, st->why, sizeof st->why)) == ENOMEM) {
        storage_free(st);
        return NULL;
    }
    return st;
}

/* After the run's last task: wait for syncs in flight, close every blob
 * left open and free the run's storage. */
static void storage_close(cw_rt *rt, void *state)
{
    (void)rt;
    cw_storage *st = state;
    st->driver->drain(st);
    cw_blob_close_all(st);
    st->driver->free(st);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

cw_storage *cw_storage_of(cw_rt *rt)
{
    cw_rt_lock(rt);
    cw_storage *st = cw_ext_state(rt, CW_EXT_STORAGE);
    if (!st && (st = storage_new(rt)) != NULL)
        cw_ext_attach(rt, CW_EXT_STORAGE, st, storage_close);
    cw_rt_unlock(rt);
    return st;
}

int cw_storage_enter(cw_rt *rt, const char *what, cw_task **self)
{
    cw_task *t = cw_task_self(rt, what);
    *self = t;
    if (cw_task_unwinding(t))
        return CW_ERR_CLOSED;
    cw_task_check_abort(t);
    return CW_OK;
}

int cw_storage_refuse(cw_storage_error *err, int rc, const char *partition, const char *why)
{
    if (rc == CW_ERR_CLOSED)
        return cw_storage_fail(err, rc, partition, NULL, 0, "closed");
    return cw_storage_fail(err, rc, partition, NULL, 0, "invalid argument: %s", why ? why : "");
}

/* The run's storage, or the failure of one that could not be made
 * (memory) or whose directory could not be (I/O). */
static int usable(cw_rt *rt, const char *partition, cw_storage **out, cw_storage_error *err)
{
    cw_storage *st = *out = cw_storage_of(rt);
    if (!st)
        return cw_fail_nomem(err, partition, NULL);
    if (st->broken)
        return cw_storage_fail(err, CW_ERR_IO, partition, NULL, st->broken,
                               "io error: storage unusable: %s", st->why);
    return CW_OK;
}

static void audit_open(cw_rt *rt, const char *partition, const void *name, size_t len,
                       cw_blob_range v)
{
    uint8_t first[2] = {(uint8_t)(v.first >> 8), (uint8_t)v.first};
    uint8_t last[2] = {(uint8_t)(v.last >> 8), (uint8_t)v.last};
    cw_field fields[4] = {{partition, strlen(partition)}, {name, len}, {first, 2}, {last, 2}};
    cw_audit(rt, "open", fields, 4);
}

/* NULL when memory is exhausted. */
static cw_bfile *file_new(cw_storage *st, const char *partition, const void *name, size_t len)
{
    cw_bfile *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->st = st;
    f->partition = cw_strdup(partition);
    f->name = malloc(len);
    if (!f->partition || !f->name) {
        cw_bfile_free(f);
        return NULL;
    }
    memcpy(f->name, name, len);
    f->name_len = len;
    cw_hex_encode(f->name, len, f->hex);
    return f;
}

void cw_bfile_free(cw_bfile *f)
{
    free(f->partition);
    free(f->name);
    free(f);
}

static bool name_valid(const void *name, size_t len)
{
    return name && len > 0 && len <= CW_BLOB_NAME_MAX;
}

int cw_storage_open_entry(cw_ctx *ctx, const char *partition, const void *name, size_t name_len,
                          cw_blob_range versions, cw_blob **blob, uint64_t *size, uint16_t *version,
                          cw_storage_error *err)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task *t;
    *blob = NULL;
    int rc = cw_storage_enter(rt, "cw_storage_open", &t);
    if (rc != CW_OK)
        return cw_storage_refuse(err, rc, partition, NULL);
    if (!partition || !size || !name_valid(name, name_len) || versions.first > versions.last)
        return cw_storage_refuse(err, CW_ERR_INVALID, partition,
                                 "open needs a partition, a name of 1 to 127 bytes, a size "
                                 "pointer and versions with first <= last");
    audit_open(rt, partition, name, name_len, versions);
    if (!cw_partition_name_valid(partition))
        return cw_fail_partition_name(err, partition);
    cw_storage *st;
    if ((rc = usable(rt, partition, &st, err)) != CW_OK)
        return rc;

    if ((rc = cw_fault_inject(st, CW_FAULT_OPEN, partition, name, name_len, err)) != CW_OK)
        return rc;
    cw_bfile *f = file_new(st, partition, name, name_len);
    if (!f)
        return cw_fail_nomem(err, partition, NULL);
    uint64_t found = 0;
    rc = st->driver->open(f, versions, &found, err);
    if (rc != CW_OK) {
        cw_bfile_free(f);
        if (cw_task_aborted(t))
            cw_task_check_abort(t);
        return rc;
    }
    cw_blob *b = cw_blob_new(f);
    if (!b) { /* the driver's open is undone by closing its file */
        st->driver->close(f);
        cw_bfile_free(f);
        return cw_fail_nomem(err, partition, NULL);
    }
    if (cw_task_aborted(t)) {
        cw_blob_close_entry(b);
        cw_task_check_abort(t);
    }
    *blob = b;
    *size = found;
    if (version)
        *version = f->version;
    return CW_OK;
}

static void audit_remove(cw_rt *rt, const char *partition, const void *name, size_t len)
{
    uint8_t tagged[1 + CW_BLOB_NAME_MAX];
    tagged[0] = name ? 1 : 0;
    if (name)
        memcpy(tagged + 1, name, len);
    cw_field fields[2] = {{partition, strlen(partition)}, {tagged, name ? 1 + len : 1}};
    cw_audit(rt, "remove", fields, 2);
}

int cw_storage_remove_entry(cw_ctx *ctx, const char *partition, const void *name, size_t name_len,
                            cw_storage_error *err)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task *t;
    int rc = cw_storage_enter(rt, "cw_storage_remove", &t);
    if (rc != CW_OK)
        return cw_storage_refuse(err, rc, partition, NULL);
    if (!partition || (name && !name_valid(name, name_len)))
        return cw_storage_refuse(err, CW_ERR_INVALID, partition,
                                 "remove needs a partition, and a name of 1 to 127 bytes or NULL");
    audit_remove(rt, partition, name, name_len);
    if (!cw_partition_name_valid(partition))
        return cw_fail_partition_name(err, partition);
    cw_storage *st;
    if ((rc = usable(rt, partition, &st, err)) != CW_OK)
        return rc;
    rc = cw_fault_inject(st, CW_FAULT_REMOVE, partition, name, name ? name_len : 0, err);
    if (rc != CW_OK)
        return rc;
    rc = st->driver->remove(st, partition, name, name ? name_len : 0, err);
    if (cw_task_aborted(t))
        cw_task_check_abort(t);
    return rc;
}

int cw_storage_scan_entry(cw_ctx *ctx, const char *partition, cw_blob_names **out,
                          cw_storage_error *err)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task *t;
    *out = NULL;
    int rc = cw_storage_enter(rt, "cw_storage_scan", &t);
    if (rc != CW_OK)
        return cw_storage_refuse(err, rc, partition, NULL);
    if (!partition)
        return cw_storage_refuse(err, CW_ERR_INVALID, partition, "scan needs a partition");
    cw_field field = {partition, strlen(partition)};
    cw_audit(rt, "scan", &field, 1);
    if (!cw_partition_name_valid(partition))
        return cw_fail_partition_name(err, partition);
    cw_storage *st;
    if ((rc = usable(rt, partition, &st, err)) != CW_OK)
        return rc;
    if ((rc = cw_fault_inject(st, CW_FAULT_SCAN, partition, NULL, 0, err)) != CW_OK)
        return rc;
    cw_blob_names *names = cw_names_new(rt);
    if (!names)
        return cw_fail_nomem(err, partition, NULL);
    rc = st->driver->scan(st, partition, names, err);
    if (rc != CW_OK || cw_task_aborted(t)) {
        cw_names_release(names);
        cw_task_check_abort(t);
        return rc;
    }
    cw_names_sort(names);
    *out = names;
    return CW_OK;
}
