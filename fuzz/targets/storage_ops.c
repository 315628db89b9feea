/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_ops.c - sequences of storage calls across crashes and
 * recoveries on a deterministic backend with CW_CAP_RECOVER, checked
 * against a model of what each blob's open handle holds and what is
 * durable (spec/17-storage.md: STOR-002 to STOR-016, STOR-033; DET-008,
 * DET-009).
 *
 * INPUT. Operations of four bytes each, op a b c (a byte past the end
 * reads 0), on the blobs "b0" to "b3" (name a % 4) of one partition:
 *
 *   op%10  name        what happens
 *     0    OPEN        open the blob if it is not open
 *     1    CLOSE       sync, then close it
 *     2    WRITE       c%64+1 bytes at b*16; with CW_WRITE_SYNC when a & 4
 *     3    READ        c%128+1 bytes at b*16
 *     4    RESIZE      to b*16 + c%16
 *     5    SYNC        cw_blob_sync
 *     6    START_SYNC  cw_blob_start_sync, then join it
 *     7    REMOVE      remove the blob when it is not open
 *     8    SCAN        list the partition
 *     9    CRASH       end the run with a checkpoint and recover it
 *
 * A call on a blob that is not open is skipped. THE MODEL: for each name,
 * whether it exists, its durable bytes, and while open the bytes its handle
 * sees. An open gives the durable bytes (a new blob is empty and durable at
 * once); a write or resize changes the handle's bytes; a sync makes them
 * durable; a synced write makes only its own bytes durable (zeros filling
 * any gap); a crash with no storage faults keeps exactly what is durable
 * (STOR-033); a remove ends the blob; a scan lists exactly the blobs that
 * exist, once the partition was made. At the end every blob is closed,
 * opened again and read whole. Any difference aborts with the operation.
 * STORAGE_OPS_TRACE=1 prints each operation.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cwrt/cwrt.h"
#define FUZZ_TARGET_NEEDS (FUZZ_NEEDS_STORAGE | FUZZ_NEEDS_DETERMINISTIC | FUZZ_NEEDS_RECOVER)
#include "driver/candidate.h"
#include "driver/target.h"

enum { NAMES = 4, BLOB_MAX = 4096 + 64, MAX_OPS = 300, MAX_CRASHES = 8 };

typedef struct bytes {
    uint8_t b[BLOB_MAX];
    size_t len;
} bytes;

typedef struct blob_model {
    bool exists, open;
    bytes durable, live;
    cw_blob *handle;
} blob_model;

static struct {
    const uint8_t *in;
    size_t n, at, ops;
    int crashes;
    unsigned writes;
    bool partition_made, trace, done;
    blob_model blobs[NAMES];
} S;

static const char *const names[NAMES] = {"b0", "b1", "b2", "b3"};

static _Noreturn void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "storage_ops: after %zu operations and %d crashes: ", S.ops, S.crashes);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static void trace(const char *fmt, ...)
{
    if (!S.trace)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static uint8_t next_byte(void)
{
    return S.at < S.n ? S.in[S.at++] : 0;
}

static void expect_rc(int got, int want, const char *what, int name)
{
    if (got != want)
        fail("%s of %s returned %d, the model says %d", what, names[name], got, want);
}

/* ---- The model's bytes ------------------------------------------------------------------- */

static void bytes_write(bytes *to, size_t off, const uint8_t *data, size_t len)
{
    if (off > to->len)
        memset(to->b + to->len, 0, off - to->len);
    memcpy(to->b + off, data, len);
    if (off + len > to->len)
        to->len = off + len;
}

static void bytes_resize(bytes *to, size_t len)
{
    if (len > to->len)
        memset(to->b + to->len, 0, len - to->len);
    to->len = len;
}

/* Read `len` bytes at `off` through the handle and compare. */
static void read_and_compare(int name, size_t off, size_t len)
{
    blob_model *m = &S.blobs[name];
    static uint8_t got[BLOB_MAX];
    int rc = cw_blob_read_into(m->handle, off, got, len, CW_READ_DEFAULT, NULL);
    if (off + len > m->live.len) {
        expect_rc(rc, CW_ERR_BLOB_INSUFFICIENT_LENGTH, "a read past the end", name);
        return;
    }
    expect_rc(rc, CW_OK, "a read", name);
    if (memcmp(got, m->live.b + off, len) != 0)
        fail("a read of %zu bytes at %zu of %s gave other bytes", len, off, names[name]);
}

/* ---- Operations --------------------------------------------------------------------------- */

static void op_open(cw_ctx *ctx, int name)
{
    blob_model *m = &S.blobs[name];
    uint64_t size = 0;
    int rc = cw_storage_open(ctx, "ops", names[name], 2, &m->handle, &size, NULL);
    expect_rc(rc, CW_OK, "an open", name);
    if (!m->exists)
        m->durable.len = 0;
    m->exists = m->open = S.partition_made = true;
    m->live = m->durable;
    if (size != m->live.len)
        fail("an open of %s gave size %llu, the model %zu", names[name], (unsigned long long)size,
             m->live.len);
}

static void op_sync(int name, bool started)
{
    blob_model *m = &S.blobs[name];
    int rc;
    if (started) {
        cw_handle *h = cw_blob_start_sync(m->handle);
        rc = cw_join(h, NULL);
        cw_handle_release(h);
    } else {
        rc = cw_blob_sync(m->handle, NULL);
    }
    expect_rc(rc, CW_OK, started ? "a started sync" : "a sync", name);
    m->durable = m->live;
}

static void op_close(int name)
{
    op_sync(name, false);
    cw_blob_close(S.blobs[name].handle);
    S.blobs[name].open = false;
}

static void op_write(int name, uint8_t a, uint8_t b, uint8_t c)
{
    blob_model *m = &S.blobs[name];
    uint8_t data[64];
    size_t off = (size_t)b * 16, len = c % 64u + 1;
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(S.writes * 31 + i * 7 + 1);
    S.writes++;
    bool synced = a & 4;
    int rc = cw_blob_write_at(m->handle, off, data, len, synced ? CW_WRITE_SYNC : 0, NULL);
    expect_rc(rc, CW_OK, synced ? "a synced write" : "a write", name);
    bytes_write(&m->live, off, data, len);
    if (synced)
        bytes_write(&m->durable, off, data, len);
}

static void op_resize(int name, uint8_t b, uint8_t c)
{
    blob_model *m = &S.blobs[name];
    size_t len = (size_t)b * 16 + c % 16u;
    expect_rc(cw_blob_resize(m->handle, len, NULL), CW_OK, "a resize", name);
    bytes_resize(&m->live, len);
}

static void op_remove(cw_ctx *ctx, int name)
{
    blob_model *m = &S.blobs[name];
    int rc = cw_storage_remove(ctx, "ops", names[name], 2, NULL);
    int want = !S.partition_made ? CW_ERR_PARTITION_MISSING
               : m->exists       ? CW_OK
                                 : CW_ERR_BLOB_MISSING;
    expect_rc(rc, want, "a remove", name);
    m->exists = false;
}

static void op_scan(cw_ctx *ctx)
{
    cw_blob_names *list = NULL;
    int rc = cw_storage_scan(ctx, "ops", &list, NULL);
    expect_rc(rc, S.partition_made ? CW_OK : CW_ERR_PARTITION_MISSING, "a scan", 0);
    for (int i = 0; rc == CW_OK && i < NAMES; i++)
        if (cw_blob_names_contains(list, names[i], 2) != S.blobs[i].exists)
            fail("a scan %s %s", S.blobs[i].exists ? "left out" : "listed", names[i]);
    size_t listed = 0;
    for (int i = 0; i < NAMES; i++)
        listed += S.blobs[i].exists;
    if (rc == CW_OK && list->count != listed)
        fail("a scan listed %zu blobs, the model %zu", list->count, listed);
    cw_blob_names_release(list);
}

/* One operation; false for a crash. */
static bool step(cw_ctx *ctx)
{
    uint8_t op = next_byte() % 10, a = next_byte(), b = next_byte(), c = next_byte();
    int name = a % NAMES;
    bool open = S.blobs[name].open;
    S.ops++;
    trace("op %u on %s: %u %u", op, names[name], b, c);
    switch (op) {
    case 0:
        if (!open)
            op_open(ctx, name);
        break;
    case 1:
        if (open)
            op_close(name);
        break;
    case 2:
        if (open)
            op_write(name, a, b, c);
        break;
    case 3:
        if (open)
            read_and_compare(name, (size_t)b * 16, c % 128u + 1);
        break;
    case 4:
        if (open)
            op_resize(name, b, c);
        break;
    case 5:
        if (open)
            op_sync(name, false);
        break;
    case 6:
        if (open)
            op_sync(name, true);
        break;
    case 7:
        if (!open)
            op_remove(ctx, name);
        break;
    case 8:
        op_scan(ctx);
        break;
    default:
        return false;
    }
    return true;
}

/* The end: every blob closed (synced), opened again and read whole. */
static void verify_all(cw_ctx *ctx)
{
    for (int i = 0; i < NAMES; i++) {
        if (S.blobs[i].open)
            op_close(i);
        if (!S.blobs[i].exists)
            continue;
        op_open(ctx, i);
        if (S.blobs[i].live.len)
            read_and_compare(i, 0, S.blobs[i].live.len);
        op_close(i);
    }
}

static void *root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    while (S.at < S.n && S.ops < MAX_OPS)
        if (!step(ctx) && S.crashes < MAX_CRASHES)
            return NULL; /* the run ends: a crash */
    verify_all(ctx);
    S.done = true;
    return NULL;
}

/* A crash keeps what is durable; handles and their bytes are gone. */
static void crashed(void)
{
    S.crashes++;
    trace("crash");
    for (int i = 0; i < NAMES; i++)
        S.blobs[i].open = false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const cw_backend *b = fuzz_candidate(NULL);
    uint64_t need = CW_CAP_DETERMINISTIC | CW_CAP_RECOVER;
    if ((b->capabilities & need) != need)
        return 0;
    memset(&S, 0, sizeof S);
    S.in = data;
    S.n = size;
    S.trace = getenv("STORAGE_OPS_TRACE") != NULL;
    cw_config cfg;
    cw_config_default(&cfg);
    cw_run_result res;
    cw_checkpoint *cp = NULL, *next = NULL;
    int rc = cw_start_checkpoint(b, &cfg, root, NULL, &res, &cp);
    while (rc == CW_OK && !S.done) {
        crashed();
        rc = cw_recover(cp, root, NULL, &res, &next);
        cp = next;
    }
    if (cp)
        cw_checkpoint_free(cp);
    if (rc != CW_OK)
        fail("a run ended with %d: %s", rc, res.message);
    return 0;
}
