/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * faults.c - injected storage faults (spec/17-storage.md, STOR-030 to
 * STOR-034): the decision each call makes, the error it then returns, and
 * what a torn write or a half-done resize leaves.
 *
 * The decision lives here, above the drivers, because a call is one
 * decision however many driver calls it makes (a read_at asks the driver
 * twice when it cannot allocate). What a failed write keeps goes down as
 * ordinary writes of the kept runs of bytes, so the driver's journal
 * treats them as the unsynced changes they are, and a crash can tear them
 * again. Only a deterministic run draws: the settings of any other run are
 * ignored (STOR-035).
 */
#include <stdlib.h>
#include <string.h>

#include "storage/storage.h"

/* A kind's name is its field's: "open", "read", ... [STOR-030]. */
static const char *const kind_names[] = {
#define NAME_OF(KIND, field) #field,
    CW_STORAGE_FAULT_CALLS(NAME_OF)
#undef NAME_OF
};

static cw_rate rate_of(const cw_storage_faults *f, cw_fault_kind kind)
{
    switch (kind) {
#define RATE_OF(KIND, field)                                                                       \
    case CW_FAULT_##KIND:                                                                          \
        return f->field;
        CW_STORAGE_FAULT_CALLS(RATE_OF)
#undef RATE_OF
    }
    return CW_RATE_NEVER;
}

/* Only a deterministic run injects faults or has a storage audit. */
static bool simulated(cw_rt *rt)
{
    return cw_rt_backend(rt)->capabilities & CW_CAP_DETERMINISTIC;
}

/* The settings in force, or NULL on a run that does not simulate. */
static const cw_storage_faults *faults_of(const cw_storage *st)
{
    return simulated(st->rt) ? &st->faults : NULL;
}

static void audit_fault(cw_rt *rt, cw_fault_kind kind, const char *partition, const uint8_t *name,
                        size_t len)
{
    if (!cw_audited(rt))
        return;
    const char *k = kind_names[kind];
    cw_field f[3] = {{k, strlen(k)}, {partition, strlen(partition)}, {name, name ? len : 0}};
    cw_audit(rt, "fault", f, 3);
}

/* The error of an injected failure of `kind` [STOR-030]. */
static int fail(cw_storage_error *err, cw_fault_kind kind, const char *partition, const char *hex)
{
    const char *p = partition, *n = hex ? hex : "", *sep = hex ? "/" : "";
    switch (kind) {
    case CW_FAULT_OPEN:
        return cw_storage_fail(err, CW_ERR_BLOB_OPEN_FAILED, p, hex, 0,
                               "blob open failed: %s/%s error: injected fault", p, n);
    case CW_FAULT_SYNC:
        return cw_storage_fail(err, CW_ERR_BLOB_SYNC_FAILED, p, hex, 0,
                               "blob sync failed: %s/%s error: injected fault", p, n);
    case CW_FAULT_RESIZE:
        return cw_storage_fail(err, CW_ERR_BLOB_RESIZE_FAILED, p, hex, 0,
                               "blob resize failed: %s/%s error: injected fault", p, n);
    default:
        return cw_storage_fail(err, CW_ERR_IO, p, hex, 0, "io error: %s%s%s: %s: injected fault", p,
                               sep, n, kind_names[kind]);
    }
}

int cw_fault_inject(cw_storage *st, cw_fault_kind kind, const char *partition, const uint8_t *name,
                    size_t len, cw_storage_error *err)
{
    const cw_storage_faults *f = faults_of(st);
    if (!f || !cw_rt_chance(st->rt, rate_of(f, kind)))
        return CW_OK;
    audit_fault(st->rt, kind, partition, name, len);
    char hex[2 * CW_BLOB_NAME_MAX + 1];
    if (name)
        cw_hex_encode(name, len, hex);
    return fail(err, kind, partition, name ? hex : NULL);
}

int cw_fault_inject_file(const cw_bfile *f, cw_fault_kind kind, cw_storage_error *err)
{
    return cw_fault_inject(f->st, kind, f->partition, f->name, f->name_len, err);
}

/* ---- What survives of a write ------------------------------------------------------- */

void cw_keep_begin(cw_keep *k, const cw_storage *st)
{
    const cw_storage_faults *f = faults_of(st);
    k->rt = st->rt;
    k->rate = f ? f->write_kept : CW_RATE_NEVER;
    k->subset = f && f->write_mode == CW_KEEP_SUBSET;
    k->stopped = false;
}

bool cw_keep_next(cw_keep *k)
{
    if (k->stopped)
        return false;
    bool kept = cw_rt_chance(k->rt, k->rate);
    k->stopped = !kept && !k->subset; /* a prefix ends at its first lost byte */
    return kept;
}

/* The byte at `at` of the write's iovec. */
static uint8_t byte_at(const struct iovec *iov, int n, size_t at)
{
    for (int i = 0; i < n; i++) {
        if (at < iov[i].iov_len)
            return ((const uint8_t *)iov[i].iov_base)[at];
        at -= iov[i].iov_len;
    }
    return 0;
}

/* Write the run [from, to) of the failed write's bytes as a write of its own. */
static int write_run(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t from,
                     size_t to)
{
    uint8_t *run = malloc(to - from);
    if (!run)
        return CW_ERR_NOMEM;
    for (size_t i = from; i < to; i++)
        run[i - from] = byte_at(iov, n, i);
    struct iovec one = {run, to - from};
    int rc = f->st->driver->write(f, offset + from, &one, 1, to - from, CW_WRITE_DEFAULT, NULL);
    free(run);
    return rc;
}

void cw_fault_torn_write(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t len)
{
    cw_keep k;
    cw_keep_begin(&k, f->st);
    size_t run = 0; /* the start of the run of kept bytes that `i` is in */
    for (size_t i = 0; i < len; i++) {
        if (cw_keep_next(&k))
            continue;
        if (run < i)
            (void)write_run(f, offset, iov, n, run, i); /* a failure already */
        run = i + 1;
        if (k.stopped)
            return;
    }
    if (run < len)
        (void)write_run(f, offset, iov, n, run, len);
}

uint64_t cw_fault_partial_length(const cw_storage *st, uint64_t old, uint64_t asked)
{
    uint64_t lo = old < asked ? old : asked, gap = old < asked ? asked - old : old - asked;
    const cw_storage_faults *f = faults_of(st);
    if (!f || gap < 2 || !cw_rt_chance(st->rt, f->resize_partial))
        return old;
    return lo + 1 + cw_rt_draw(st->rt) % (gap - 1);
}

/* ---- Settings ------------------------------------------------------------------------- */

int cw_storage_set_faults_entry(cw_ctx *ctx, const cw_storage_faults *faults)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task_self(rt, "cw_storage_set_faults"); /* on every backend [STOR-019] */
    if (!simulated(rt))
        return CW_ERR_UNSUPPORTED;
    if (!faults || !cw_storage_faults_valid(faults))
        return CW_ERR_INVALID;
    cw_storage *st = cw_storage_of(rt);
    if (!st)
        return CW_ERR_NOMEM;
    pthread_mutex_lock(&st->lock);
    st->faults = *faults;
    pthread_mutex_unlock(&st->lock);
    return CW_OK;
}

int cw_storage_audit_entry(cw_ctx *ctx, char out[65])
{
    cw_rt *rt = cw_ctx_rt(ctx);
    out[0] = '\0';
    cw_task_self(rt, "cw_storage_audit");
    cw_storage *st = cw_storage_of(rt);
    if (!st)
        return CW_ERR_NOMEM;
    if (!simulated(rt) || !st->driver->audit)
        return CW_ERR_UNSUPPORTED;
    return st->driver->audit(st, out);
}
