/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_faults.c - injected storage faults of a deterministic backend
 * (17-storage.md, STOR-030 to STOR-035): calls of each kind failing, torn
 * writes, resizes that stop halfway, a crash keeping part of what was not
 * synced, and what other backends answer.
 *
 * Where a rate decides, the expected outcome comes from the values the
 * run would have drawn: a model run makes the same calls up to the point
 * of the draw and then calls cw_random_u64 instead, so the cases follow
 * the decision rule of 11-deterministic.md without depending on where the
 * backend's random stream stands when the root starts.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases/storage.h"
#include "cases/vrng.h"

#define DET CW_CAP_DETERMINISTIC
#define RECOVER (CW_CAP_DETERMINISTIC | CW_CAP_RECOVER)

static cw_storage_faults no_faults(void)
{
    cw_storage_faults f;
    memset(&f, 0, sizeof f);
    return f;
}

static void set_faults(cw_ctx *ctx, cw_storage_faults f)
{
    ck_assert_int_eq(cw_storage_set_faults(ctx, &f), CW_OK);
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* An injected failure as STOR-030 spells it. */
static void expect_injected(int rc, const cw_storage_error *err, int code)
{
    ck_assert_int_eq(rc, code);
    ck_assert_int_eq(err->code, code);
    ck_assert_int_eq(err->os_error, 0);
    ck_assert_int_eq(err->fault, 0); /* no header check failed [STOR-018] */
    ck_assert_msg(ends_with(err->message, "injected fault"), "message: %s", err->message);
}

/* As expect_injected, for a call that named `partition` and blob `hex`. */
static void expect_injected_at(int rc, const cw_storage_error *err, int code, const char *partition,
                               const char *hex)
{
    expect_injected(rc, err, code);
    ck_assert_str_eq(err->partition, partition);
    ck_assert_str_eq(err->name, hex);
}

/* The message of `err`, exactly (STOR-030 spells each injected fault's). */
static void expect_message(const cw_storage_error *err, const char *text)
{
    ck_assert_msg(strcmp(err->message, text) == 0, "message: %s, not %s", err->message, text);
}

/* ---- Each kind fails [STOR-030] ------------------------------------------------------- */

static void *kinds_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_storage_error err;
    cw_blob *b = cwc_open(ctx, "p", "kept", NULL);
    cwc_write(b, 0, "durable", 7);
    cwc_sync(b);
    cw_storage_faults f = no_faults();

    f.open = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    cw_blob *nb = (cw_blob *)1;
    uint64_t size;
    expect_injected_at(cw_storage_open(ctx, "p", "new", 3, &nb, &size, &err), &err,
                       CW_ERR_BLOB_OPEN_FAILED, "p", "6e6577");
    expect_message(&err, "blob open failed: p/6e6577 error: injected fault");
    ck_assert_ptr_null(nb);
    /* A refusal for its arguments comes first and draws nothing. */
    ck_assert_int_eq(cw_storage_open(ctx, "bad name!", "x", 1, &nb, &size, &err),
                     CW_ERR_PARTITION_NAME_INVALID);
    f.open = CW_RATE_NEVER;
    set_faults(ctx, f);
    ck_assert(!cwc_scan_has(ctx, "p", "new", 3)); /* the failed open created nothing */

    f.read = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    cw_iobuf_mut m;
    expect_injected(cw_blob_read_at(b, 0, 7, CW_READ_DEFAULT, &m, &err), &err, CW_ERR_IO);
    expect_message(&err, "io error: p/6b657074: read: injected fault");
    uint8_t into[7];
    expect_injected(cw_blob_read_into(b, 0, into, 7, CW_READ_DEFAULT, &err), &err, CW_ERR_IO);
    ck_assert_int_eq(cw_blob_read_at(b, 0, 7, 0x80, &m, &err), CW_ERR_INVALID);
    /* The order of a read's checks: the overflow (no draw), then the draw,
     * then the length; a read of 0 bytes or past the end draws too. */
    expect_injected(cw_blob_read_at(b, 0, 100, CW_READ_DEFAULT, &m, &err), &err, CW_ERR_IO);
    expect_injected(cw_blob_read_at(b, 0, 0, CW_READ_DEFAULT, &m, &err), &err, CW_ERR_IO);
    ck_assert_int_eq(cw_blob_read_at(b, INT64_MAX, 0, CW_READ_DEFAULT, &m, &err),
                     CW_ERR_OFFSET_OVERFLOW);
    expect_message(&err, "offset overflow");
    f.read = CW_RATE_NEVER;
    set_faults(ctx, f);
    ck_assert_int_eq(cw_blob_read_at(b, 1000, 0, CW_READ_DEFAULT, &m, &err), CW_OK);
    ck_assert_uint_eq(m.len, 0);
    cw_iobuf_mut_release(&m);

    f.read = CW_RATE_NEVER;
    f.write = CW_RATE_ALWAYS; /* write_kept never: nothing of it is kept */
    set_faults(ctx, f);
    expect_injected(cw_blob_write_at(b, 0, "XXXXXXX", 7, CW_WRITE_DEFAULT, &err), &err, CW_ERR_IO);
    expect_message(&err, "io error: p/6b657074: write: injected fault");
    expect_injected(cw_blob_write_at(b, 0, "XXXXXXX", 7, CW_WRITE_SYNC, &err), &err, CW_ERR_IO);
    ck_assert_int_eq(cw_blob_write_at(b, UINT64_MAX, "X", 1, CW_WRITE_DEFAULT, &err),
                     CW_ERR_OFFSET_OVERFLOW);

    /* All of a failed write kept: the bytes are there, the call failed. */
    f.write_kept = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    expect_injected(cw_blob_write_at(b, 7, "+tail", 5, CW_WRITE_DEFAULT, &err), &err, CW_ERR_IO);
    f.write = CW_RATE_NEVER;
    f.write_kept = CW_RATE_NEVER;
    set_faults(ctx, f);
    cwc_read_eq(b, 0, "durable+tail", 12);
    ck_assert_int_eq(cw_blob_resize(b, 7, &err), CW_OK);

    f.resize = CW_RATE_ALWAYS; /* resize_partial never: the length stays */
    set_faults(ctx, f);
    expect_injected(cw_blob_resize(b, 100, &err), &err, CW_ERR_BLOB_RESIZE_FAILED);
    expect_message(&err, "blob resize failed: p/6b657074 error: injected fault");

    f.resize = CW_RATE_NEVER;
    f.sync = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    expect_injected(cw_blob_sync(b, &err), &err, CW_ERR_BLOB_SYNC_FAILED);
    expect_message(&err, "blob sync failed: p/6b657074 error: injected fault");
    cw_handle *h = cw_blob_start_sync(b);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_BLOB_SYNC_FAILED);
    cw_handle_release(h);

    f.sync = CW_RATE_NEVER;
    f.remove = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    expect_injected_at(cw_storage_remove(ctx, "p", "kept", 4, &err), &err, CW_ERR_IO, "p",
                       "6b657074");
    expect_message(&err, "io error: p/6b657074: remove: injected fault");
    expect_injected_at(cw_storage_remove(ctx, "p", NULL, 0, &err), &err, CW_ERR_IO, "p", "");
    expect_message(&err, "io error: p: remove: injected fault");

    f.remove = CW_RATE_NEVER;
    f.scan = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    cw_blob_names *names = (cw_blob_names *)1;
    expect_injected(cw_storage_scan(ctx, "p", &names, &err), &err, CW_ERR_IO);
    expect_message(&err, "io error: p: scan: injected fault");
    ck_assert_ptr_null(names);

    /* Nothing of it changed the blob, and no fault is left. */
    set_faults(ctx, no_faults());
    ck_assert(cwc_scan_has(ctx, "p", "kept", 4));
    cwc_read_eq(b, 0, "durable", 7);
    ck_assert_int_eq(cwc_read_rc(b, 7, 1), CW_ERR_BLOB_INSUFFICIENT_LENGTH);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(storage_faults_each_kind_fails, "storage",
         "STOR-030 STOR-034 STOR-018 STOR-006 STOR-010 RUN-008", DET | CWC_REPEATED)
{
    cwc_store_run(kinds_root, NULL);
}

/* From the configuration, too: a run that starts with every open failing. */
static void *configured_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b;
    uint64_t size;
    cw_storage_error err;
    expect_injected(cw_storage_open(ctx, "p", "b", 1, &b, &size, &err), &err,
                    CW_ERR_BLOB_OPEN_FAILED);
    return NULL;
}

CWC_CASE(storage_faults_from_the_configuration, "storage", "STOR-030 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.storage_faults.open = CW_RATE_ALWAYS;
    cwc_run_ok(&cfg, configured_root, NULL);
}

/* ---- Torn writes and partial resizes [STOR-031, STOR-032] ----------------------------- */

#define OLD_LEN 16
#define TORN_AT 8
#define TORN_LEN 24
#define TORN_CHUNKS 3

/* Byte `i` of the torn write: no two alike, none 'o' or 0. */
static uint8_t torn_byte(size_t i)
{
    return (uint8_t)('A' + i);
}

struct torn {
    uint32_t mode;
    uint32_t skip; /* random values drawn first, so that the write's draws differ */
    uint64_t drawn[TORN_LEN + 1];
    uint8_t seen[TORN_AT + TORN_LEN];
    uint64_t len;
    uint64_t after; /* the next random value after the failed write */
};

/* What both runs do before the failed write: a synced blob of OLD_LEN
 * bytes 'o', and every write from now on failing, two bytes in three kept. */
static cw_blob *torn_setup(cw_ctx *ctx, const struct torn *t)
{
    uint8_t old[OLD_LEN];
    memset(old, 'o', sizeof old);
    cw_blob *b = cwc_open(ctx, "p", "torn", NULL);
    cwc_write(b, 0, old, sizeof old);
    cwc_sync(b);
    cw_storage_faults f = no_faults();
    f.write = CW_RATE_ALWAYS;
    f.write_kept = (cw_rate){2, 3};
    f.write_mode = t->mode;
    set_faults(ctx, f);
    return b;
}

/* The model: the same calls up to the failed write, then the draws. */
static void *torn_model_root(cw_ctx *ctx, void *arg)
{
    struct torn *t = arg;
    for (uint32_t i = 0; i < t->skip; i++)
        (void)cw_random_u64(ctx);
    cw_blob *b = torn_setup(ctx, t);
    for (size_t i = 0; i <= TORN_LEN; i++)
        t->drawn[i] = cw_random_u64(ctx);
    cw_blob_close(b);
    return NULL;
}

/* The same run, reading through the handle that wrote. */
static void *torn_read_root(cw_ctx *ctx, void *arg)
{
    struct torn *t = arg;
    /* The write's bytes in TORN_CHUNKS chunks, each byte its own value:
     * a kept byte is the write's byte at its place, across the chunks. */
    cw_iobufs *fresh = cw_iobufs_new(cwc_backend);
    ck_assert_ptr_nonnull(fresh);
    for (size_t c = 0; c < TORN_CHUNKS; c++) {
        uint8_t bytes[TORN_LEN / TORN_CHUNKS];
        for (size_t i = 0; i < sizeof bytes; i++)
            bytes[i] = torn_byte(c * sizeof bytes + i);
        cw_iobuf chunk;
        ck_assert_int_eq(cw_iobuf_copy(cwc_backend, bytes, sizeof bytes, &chunk), CW_OK);
        ck_assert_int_eq(cw_iobufs_append(fresh, &chunk), CW_OK);
    }
    for (uint32_t i = 0; i < t->skip; i++)
        (void)cw_random_u64(ctx);
    cw_blob *b = torn_setup(ctx, t);
    cw_storage_error err;
    expect_injected(cw_blob_write_bufs(b, TORN_AT, fresh, CW_WRITE_DEFAULT, &err), &err, CW_ERR_IO);
    cw_iobufs_release(fresh);
    t->after = cw_random_u64(ctx);
    set_faults(ctx, no_faults());
    memset(t->seen, 0xee, sizeof t->seen);
    t->len = 0;
    for (uint64_t n = TORN_AT + TORN_LEN; n > 0 && t->len == 0; n--)
        if (cwc_read_rc(b, 0, (size_t)n) == CW_OK)
            t->len = n;
    if (t->len)
        ck_assert_int_eq(cw_blob_read_into(b, 0, t->seen, (size_t)t->len, 0, &err), CW_OK);
    cw_blob_close(b);
    return NULL;
}

/* What STOR-031 says the blob holds after the torn write, from the model's
 * draws; returns how many draws the write made. */
static size_t expect_torn(const struct torn *m, uint32_t mode, uint8_t *want, uint64_t *len)
{
    memset(want, 'o', OLD_LEN);
    memset(want + OLD_LEN, 0, TORN_AT + TORN_LEN - OLD_LEN);
    *len = OLD_LEN;
    size_t draws = 0;
    for (size_t i = 0; i < TORN_LEN; i++) {
        bool kept = m->drawn[draws++] % 3 < 2;
        if (kept) {
            want[TORN_AT + i] = torn_byte(i);
            if (TORN_AT + i + 1 > *len)
                *len = TORN_AT + i + 1;
        } else if (mode == CW_KEEP_PREFIX) {
            break;
        }
    }
    return draws;
}

/* With CW_KEEP_SUBSET the write is made again on later draws until one
 * has lost its last two bytes: the length then ends at the last byte kept,
 * not at a lost one, however many lost bytes follow it. */
static void torn_case(uint32_t mode)
{
    static struct torn model, got;
    bool ends_lost = false;
    for (uint32_t skip = 0; skip == 0 || (mode == CW_KEEP_SUBSET && !ends_lost && skip < 64);
         skip++) {
        memset(&model, 0, sizeof model);
        memset(&got, 0, sizeof got);
        model.mode = got.mode = mode;
        model.skip = got.skip = skip;
        cwc_store_run(torn_model_root, &model);
        cwc_store_run(torn_read_root, &got);
        uint8_t want[TORN_AT + TORN_LEN];
        uint64_t len;
        size_t draws = expect_torn(&model, mode, want, &len);
        ck_assert_uint_eq(got.len, len);
        ck_assert(memcmp(got.seen, want, (size_t)len) == 0);
        ck_assert_uint_eq(got.after, model.drawn[draws]); /* a byte, a draw; none after */
        ends_lost = model.drawn[TORN_LEN - 1] % 3 == 2 && model.drawn[TORN_LEN - 2] % 3 == 2;
    }
}

CWC_CASE(storage_faults_torn_write_prefix, "storage", "STOR-031 RUN-008", DET | CWC_REPEATED)
{
    torn_case(CW_KEEP_PREFIX);
}

CWC_CASE(storage_faults_torn_write_subset, "storage", "STOR-031 RUN-008", DET | CWC_REPEATED)
{
    torn_case(CW_KEEP_SUBSET);
}

struct partial {
    bool model;
    uint64_t drawn[6];
    uint64_t grown, shrunk, near, after, two;
};

static uint64_t size_of(cw_ctx *ctx, const char *name)
{
    uint64_t size;
    cw_blob *b = cwc_open(ctx, "p", name, &size);
    cw_blob_close(b);
    return size;
}

static void *partial_root(cw_ctx *ctx, void *arg)
{
    struct partial *p = arg;
    cw_blob *b = cwc_open(ctx, "p", "r", NULL);
    cw_storage_error err;
    ck_assert_int_eq(cw_blob_resize(b, 10, &err), CW_OK);
    cwc_sync(b);
    cw_storage_faults f = no_faults();
    f.resize = CW_RATE_ALWAYS;
    f.resize_partial = (cw_rate){1, 2};
    set_faults(ctx, f);
    if (p->model) {
        for (int i = 0; i < 6; i++)
            p->drawn[i] = cw_random_u64(ctx);
        cw_blob_close(b);
        return NULL;
    }
    expect_injected(cw_blob_resize(b, 110, &err), &err, CW_ERR_BLOB_RESIZE_FAILED);
    cwc_sync(b); /* what the resize left, made durable to be seen by an open */
    set_faults(ctx, no_faults());
    p->grown = size_of(ctx, "r");
    set_faults(ctx, f);
    uint64_t before = p->grown;
    expect_injected(cw_blob_resize(b, before + 1, &err), &err, CW_ERR_BLOB_RESIZE_FAILED);
    set_faults(ctx, no_faults());
    cwc_sync(b);
    p->near = size_of(ctx, "r");
    /* Shrinking stops halfway too. */
    f.resize_partial = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    expect_injected(cw_blob_resize(b, 2, &err), &err, CW_ERR_BLOB_RESIZE_FAILED);
    p->after = cw_random_u64(ctx);
    set_faults(ctx, no_faults());
    cwc_sync(b);
    p->shrunk = size_of(ctx, "r");
    /* Two apart, partial for sure: the one length between. */
    set_faults(ctx, f);
    expect_injected(cw_blob_resize(b, p->shrunk + 2, &err), &err, CW_ERR_BLOB_RESIZE_FAILED);
    set_faults(ctx, no_faults());
    cwc_sync(b);
    p->two = size_of(ctx, "r");
    cw_blob_close(b);
    return NULL;
}

/* The length a failed resize from `old` to `asked` leaves, and its draws. */
static uint64_t expect_partial(const uint64_t *drawn, size_t *at, uint64_t old, uint64_t asked)
{
    uint64_t lo = old < asked ? old : asked, gap = old < asked ? asked - old : old - asked;
    if (gap < 2)
        return old;
    if (drawn[(*at)++] % 2 >= 1)
        return old;
    return lo + 1 + drawn[(*at)++] % (gap - 1);
}

CWC_CASE(storage_faults_partial_resize, "storage", "STOR-032 RUN-008", DET | CWC_REPEATED)
{
    static struct partial model, got;
    memset(&model, 0, sizeof model);
    memset(&got, 0, sizeof got);
    model.model = true;
    cwc_store_run(partial_root, &model);
    cwc_store_run(partial_root, &got);
    size_t at = 0;
    uint64_t grown = expect_partial(model.drawn, &at, 10, 110);
    ck_assert_uint_eq(got.grown, grown);
    ck_assert(grown == 10 || (grown > 10 && grown < 110));
    /* One apart: nothing lies between, and nothing is drawn. */
    ck_assert_uint_eq(got.near, grown);
    /* Partial for sure, shrinking: the length alone is drawn. */
    uint64_t lo = 2, gap = grown - 2;
    uint64_t shrunk = gap < 2 ? grown : lo + 1 + model.drawn[at++] % (gap - 1);
    ck_assert_uint_eq(got.shrunk, shrunk);
    ck_assert(shrunk == grown || (shrunk > 2 && shrunk < grown));
    ck_assert_uint_eq(got.after, model.drawn[at]);
    ck_assert_uint_eq(got.two, shrunk + 1);
}

/* ---- The audit and replay of faults [STOR-030, DET-015] ------------------------------- */

struct trail {
    int faults;
    char first[3][16];
};

static void keep_faults(void *arg, const cw_event *e)
{
    struct trail *t = arg;
    if (strcmp(e->label, "fault") != 0)
        return;
    if (t->faults < 3 && e->nfields == 3) {
        size_t n = e->fields[0].len < 15 ? e->fields[0].len : 15;
        memcpy(t->first[t->faults], e->fields[0].data, n);
        t->first[t->faults][n] = '\0';
    }
    t->faults++;
}

static void *mixed_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_storage_faults f = no_faults();
    f.write = f.read = f.sync = (cw_rate){1, 3};
    f.write_kept = (cw_rate){1, 2};
    f.write_mode = CW_KEEP_SUBSET;
    set_faults(ctx, f);
    cw_blob *b = NULL;
    uint64_t size;
    while (cw_storage_open(ctx, "p", "mixed", 5, &b, &size, NULL) != CW_OK)
        ;
    for (int i = 0; i < 40; i++) {
        uint8_t v[8];
        memset(v, i, sizeof v);
        (void)cw_blob_write_at(b, (uint64_t)i * 4, v, sizeof v, 0, NULL);
        (void)cw_blob_sync(b, NULL);
        (void)cwc_read_rc(b, 0, 4);
    }
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(storage_faults_audited_and_replayed, "storage", "STOR-030 DET-015 RUN-008",
         DET | CWC_REPEATED)
{
    static struct trail t;
    memset(&t, 0, sizeof t);
    cw_config cfg = cwc_config();
    cfg.event_log = keep_faults;
    cfg.event_log_arg = &t;
    cw_run_result one, two, other;
    ck_assert_int_eq(cwc_run(&cfg, mixed_root, NULL, &one), CW_OK);
    ck_assert_int_gt(t.faults, 0);
    for (int i = 0; i < t.faults && i < 3; i++)
        ck_assert_msg(strcmp(t.first[i], "write") == 0 || strcmp(t.first[i], "sync") == 0 ||
                          strcmp(t.first[i], "read") == 0,
                      "fault kind %s", t.first[i]);
    cfg.event_log = NULL;
    ck_assert_int_eq(cwc_run(&cfg, mixed_root, NULL, &two), CW_OK);
    ck_assert_str_eq(one.digest, two.digest);
    cfg.seed++;
    ck_assert_int_eq(cwc_run(&cfg, mixed_root, NULL, &other), CW_OK);
    ck_assert_str_ne(one.digest, other.digest);
}

/* ---- Settings [STOR-034, STOR-035, RUN-002] ------------------------------------------- */

static void *settings_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_storage_faults bad = no_faults();
    ck_assert_int_eq(cw_storage_set_faults(ctx, NULL), CW_ERR_INVALID);
    bad.scan = (cw_rate){2, 1};
    ck_assert_int_eq(cw_storage_set_faults(ctx, &bad), CW_ERR_INVALID);
    bad = no_faults();
    bad.write_kept = (cw_rate){1, 0};
    ck_assert_int_eq(cw_storage_set_faults(ctx, &bad), CW_ERR_INVALID);
    bad = no_faults();
    bad.write_mode = 2;
    bad.open = CW_RATE_ALWAYS;
    ck_assert_int_eq(cw_storage_set_faults(ctx, &bad), CW_ERR_INVALID);
    /* Nothing changed: opens still work. */
    cw_blob_close(cwc_open(ctx, "p", "fine", NULL));
    return NULL;
}

static void *nothing_root(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

CWC_CASE(storage_faults_settings_checked, "storage", "STOR-034 RUN-002 RUN-008", DET | CWC_REPEATED)
{
    cwc_store_run(settings_root, NULL);
    cw_config cfg = cwc_config();
    cw_run_result res;
    cfg.storage_faults.resize_kept = (cw_rate){3, 2};
    ck_assert_int_eq(cwc_run(&cfg, nothing_root, NULL, &res), CW_ERR_INVALID);
    cfg = cwc_config();
    cfg.storage_faults.write_mode = 7;
    ck_assert_int_eq(cwc_run(&cfg, nothing_root, NULL, &res), CW_ERR_INVALID);
}

/* Any backend refuses bad settings in the configuration (RUN-002). */
CWC_CASE(runner_storage_fault_settings_refused, "runner", "RUN-002 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cw_run_result res;
    cfg.storage_faults.sync = (cw_rate){1, 0};
    ck_assert_int_eq(cwc_run(&cfg, nothing_root, NULL, &res), CW_ERR_INVALID);
}

static void *unsupported_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_storage_faults f = no_faults();
    f.open = f.write = f.sync = CW_RATE_ALWAYS;
    ck_assert_int_eq(cw_storage_set_faults(ctx, &f), CW_ERR_UNSUPPORTED);
    char audit[65] = "x";
    ck_assert_int_eq(cw_storage_audit(ctx, audit), CW_ERR_UNSUPPORTED);
    ck_assert_str_eq(audit, "");
    cw_blob *b = cwc_open(ctx, "p", "real", NULL); /* the configuration's faults: ignored */
    cwc_write(b, 0, "ok", 2);
    cwc_sync(b);
    cwc_read_eq(b, 0, "ok", 2);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(storage_faults_unsupported, "storage", "STOR-035 RUN-008",
         CWC_UNLESS_DETERMINISTIC | CWC_REPEATED)
{
    cwc_store s;
    cwc_store_begin(&s);
    s.cfg.storage_faults.open = CW_RATE_ALWAYS;
    s.cfg.storage_faults.write = CW_RATE_ALWAYS;
    cwc_run_ok(&s.cfg, unsupported_root, NULL);
    cwc_store_end(&s);
}

/* ---- A crash keeps what the faults say [STOR-033, STOR-034] --------------------------- */

#define CRASH_LEN 32

struct crash {
    cw_storage_faults faults;
    bool sync_fails; /* the write is followed by a sync that fails */
    uint64_t drawn[CRASH_LEN + 2];
    uint8_t seen[CRASH_LEN];
    uint64_t len, after;
    uint64_t resized; /* the length of a blob resized without a sync */
    bool elsewhere;   /* also an unsynced write to the second blob of another partition */
    uint64_t other_len;
    uint8_t other[8];
    uint8_t layered[40]; /* blob "t": two unsynced writes, a synced one cutting through both */
};

static void *crash_write_root(cw_ctx *ctx, void *arg)
{
    struct crash *c = arg;
    uint8_t old[CRASH_LEN], fresh[CRASH_LEN];
    memset(old, 'o', sizeof old);
    memset(fresh, 'n', sizeof fresh);
    cw_blob *b = cwc_open(ctx, "p", "c", NULL);
    cwc_write(b, 0, old, 8);
    cwc_sync(b);
    cwc_write(b, 4, fresh, CRASH_LEN - 4); /* unsynced: the crash decides */
    cw_blob *r = cwc_open(ctx, "p", "r", NULL);
    cwc_write(r, 0, old, 8);
    cwc_sync(r);
    ck_assert_int_eq(cw_blob_resize(r, 100, NULL), CW_OK); /* unsynced too, after the write */
    cw_blob_close(r);
    if (c->elsewhere) {
        cw_blob_close(cwc_open(ctx, "q", "a", NULL));
        cw_blob *o = cwc_open(ctx, "q", "b", NULL);
        cwc_write(o, 0, "second", 6);
        cw_blob_close(o);
        /* A synced write over [10, 20) of one unsynced write that covers
         * it and one, made after, that starts there: each keeps the bytes
         * it had past 20, the second its own last ten, in their order. */
        static const char x[] = "abcdefghijklmnopqrst";
        uint8_t y[40];
        memset(y, 'Y', sizeof y);
        cw_blob *t = cwc_open(ctx, "p", "t", NULL);
        cwc_write(t, 0, y, sizeof y);
        cwc_write(t, 10, x, sizeof x - 1);
        ck_assert_int_eq(cw_blob_write_at(t, 10, "ZZZZZZZZZZ", 10, CW_WRITE_SYNC, NULL), CW_OK);
        cw_blob_close(t);
        /* A partition removed with an unsynced write of its own: only its
         * changes go; the others' are still the crash's to keep. */
        cw_blob *z = cwc_open(ctx, "z", "gone", NULL);
        cwc_write(z, 0, "unsynced", 8);
        cw_blob_close(z);
        ck_assert_int_eq(cw_storage_remove(ctx, "z", NULL, 0, NULL), CW_OK);
    }
    cw_storage_faults f = c->faults;
    if (c->sync_fails)
        f.sync = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    if (c->sync_fails) {
        cw_storage_error err;
        expect_injected(cw_blob_sync(b, &err), &err, CW_ERR_BLOB_SYNC_FAILED);
    }
    cw_blob_close(b);
    return NULL;
}

static void *crash_read_root(cw_ctx *ctx, void *arg)
{
    struct crash *c = arg;
    cw_blob_close(cwc_open(ctx, "p", "r", &c->resized));
    if (c->elsewhere) {
        cw_blob *o = cwc_open(ctx, "q", "b", &c->other_len);
        if (c->other_len == 6)
            ck_assert_int_eq(cw_blob_read_into(o, 0, c->other, 6, 0, NULL), CW_OK);
        cw_blob_close(o);
        uint64_t tlen = 0;
        cw_blob *t = cwc_open(ctx, "p", "t", &tlen);
        ck_assert_uint_eq(tlen, 40);
        ck_assert_int_eq(cw_blob_read_into(t, 0, c->layered, 40, 0, NULL), CW_OK);
        cw_blob_close(t);
    }
    cw_blob *b = cwc_open(ctx, "p", "c", &c->len);
    if (c->len)
        ck_assert_int_eq(cw_blob_read_into(b, 0, c->seen, (size_t)c->len, 0, NULL), CW_OK);
    cw_blob_close(b);
    for (size_t i = 0; i < sizeof c->drawn / sizeof c->drawn[0]; i++)
        c->drawn[i] = cw_random_u64(ctx);
    return NULL;
}

static void crash_and_read(struct crash *c)
{
    cwc_store s;
    cwc_store_begin(&s);
    cw_checkpoint *cp = NULL;
    cw_run_result res;
    ck_assert_int_eq(cw_start_checkpoint(cwc_backend, &s.cfg, crash_write_root, c, &res, &cp),
                     CW_OK);
    ck_assert_ptr_nonnull(cp);
    ck_assert_int_eq(cw_recover(cp, crash_read_root, c, &res, NULL), CW_OK);
    cwc_store_end(&s);
}

/* A prefix (CW_KEEP_PREFIX, STOR-031 through STOR-033): the write's bytes
 * from its first up to the first one not kept, and nothing after it, the
 * draws stopping there too (DET-023). `stream` is the draws the crash of
 * the write takes, `none`'s first values after its crash (which drew
 * nothing). */
static void check_prefix_kept(const uint64_t *stream)
{
    static struct crash prefix;
    memset(&prefix, 0, sizeof prefix);
    prefix.faults.write_kept = (cw_rate){1, 2};
    prefix.faults.write_mode = CW_KEEP_PREFIX;
    crash_and_read(&prefix);
    size_t kept = 0;
    while (kept < CRASH_LEN - 4 && stream[kept] % 2 < 1)
        kept++;
    size_t draws = kept < CRASH_LEN - 4 ? kept + 1 : kept; /* the first not kept drew too */
    ck_assert_uint_eq(prefix.len, 4 + kept > 8 ? 4 + kept : 8);
    for (size_t i = 0; i < prefix.len; i++) {
        uint8_t want = i >= 4 && i < 4 + kept ? 'n' : 'o';
        ck_assert_msg(prefix.seen[i] == want, "byte %zu of a prefix of %zu: %c", i, kept,
                      prefix.seen[i]);
    }
    ck_assert_uint_eq(prefix.drawn[0], stream[draws]);
}

CWC_CASE(storage_faults_crash_keeps_what_they_say, "recover",
         "STOR-031 STOR-033 STOR-034 DET-009 DET-023 RUN-008",
         RECOVER | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    static struct crash none, all, some, failed;
    /* None kept by default: the durable bytes alone. */
    memset(&none, 0, sizeof none);
    crash_and_read(&none);
    ck_assert_uint_eq(none.len, 8);
    ck_assert(memcmp(none.seen, "oooooooo", 8) == 0);
    ck_assert_uint_eq(none.resized, 8);
    /* All kept. */
    memset(&all, 0, sizeof all);
    all.faults.write_kept = CW_RATE_ALWAYS;
    all.faults.resize_kept = CW_RATE_ALWAYS;
    all.elsewhere = true; /* every blob's writes are replayed, in any partition */
    crash_and_read(&all);
    ck_assert_uint_eq(all.other_len, 6);
    ck_assert(memcmp(all.other, "second", 6) == 0);
    ck_assert_msg(memcmp(all.layered, "YYYYYYYYYYZZZZZZZZZZklmnopqrstYYYYYYYYYY", 40) == 0,
                  "the crash replayed %.40s", (const char *)all.layered);
    ck_assert_uint_eq(all.len, CRASH_LEN);
    ck_assert(memcmp(all.seen, "oooonnnn", 8) == 0);
    ck_assert_uint_eq(all.resized, 100);
    /* Some: each byte as the stream decides, the draws continuing into the
     * recovered run. `none` drew nothing at its crash, so its first values
     * are the ones `some` used. */
    memset(&some, 0, sizeof some);
    some.faults.write_kept = (cw_rate){1, 2};
    some.faults.write_mode = CW_KEEP_SUBSET;
    crash_and_read(&some);
    uint64_t len = 8;
    for (size_t i = 0; i < CRASH_LEN - 4; i++) {
        bool kept = none.drawn[i] % 2 < 1;
        uint8_t want = kept ? 'n' : (4 + i < 8 ? 'o' : 0);
        if (kept && 4 + i + 1 > len)
            len = 4 + i + 1;
        if (4 + i < some.len)
            ck_assert_msg(some.seen[4 + i] == want, "byte %zu", 4 + i);
    }
    ck_assert_uint_eq(some.len, len);
    ck_assert_uint_eq(some.drawn[0], none.drawn[CRASH_LEN - 4]);
    check_prefix_kept(none.drawn);
    /* A write whose sync failed is not durable: nothing of it is kept. */
    memset(&failed, 0, sizeof failed);
    failed.sync_fails = true;
    crash_and_read(&failed);
    ck_assert_uint_eq(failed.len, 8);
    ck_assert(memcmp(failed.seen, "oooooooo", 8) == 0);
}

/* Settings changed during a run are the recovered run's. */
static void *set_then_crash(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob_close(cwc_open(ctx, "p", "later", NULL));
    cw_storage_faults f = no_faults();
    f.read = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    return NULL;
}

static void *read_after_recovery(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = cwc_open(ctx, "p", "later", NULL);
    cw_storage_error err;
    cw_iobuf_mut m;
    expect_injected(cw_blob_read_at(b, 0, 0, 0, &m, &err), &err, CW_ERR_IO);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(storage_faults_carried_by_recovery, "recover", "STOR-034 DET-009 RUN-008",
         RECOVER | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cw_checkpoint *cp = NULL;
    cw_run_result res;
    ck_assert_int_eq(cw_start_checkpoint(cwc_backend, &cfg, set_then_crash, NULL, &res, &cp),
                     CW_OK);
    ck_assert_int_eq(cw_recover(cp, read_after_recovery, NULL, &res, NULL), CW_OK);
}

/* ---- The storage audit [STOR-036] ------------------------------------------------------ */

/* The digest STOR-036 defines, computed here from the items given. */
typedef struct audit_model {
    EVP_MD_CTX *md;
} audit_model;

static void model_put(audit_model *m, const void *data, size_t len)
{
    uint8_t be[8];
    for (int i = 7; i >= 0; i--)
        be[7 - i] = (uint8_t)((uint64_t)len >> (8 * i));
    EVP_DigestUpdate(m->md, be, 8);
    if (len)
        EVP_DigestUpdate(m->md, data, len);
}

static void model_begin(audit_model *m)
{
    m->md = EVP_MD_CTX_new();
    ck_assert_ptr_nonnull(m->md);
    ck_assert_int_eq(EVP_DigestInit_ex(m->md, EVP_sha256(), NULL), 1);
    model_put(m, "cw-storage-audit", 16);
}

static void model_partition(audit_model *m, const char *name, uint64_t nblobs)
{
    uint8_t n[8];
    for (int i = 7; i >= 0; i--)
        n[7 - i] = (uint8_t)(nblobs >> (8 * i));
    model_put(m, name, strlen(name));
    model_put(m, n, 8);
}

static void model_end(audit_model *m, char hex[65])
{
    uint8_t d[32];
    unsigned len = 0;
    EVP_DigestFinal_ex(m->md, d, &len);
    EVP_MD_CTX_free(m->md);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

struct audits {
    char empty[65], one[65], after_unsynced[65], after_sync[65], moved[65];
};

static void *audit_root(cw_ctx *ctx, void *arg)
{
    struct audits *a = arg;
    ck_assert_int_eq(cw_storage_audit(ctx, a->empty), CW_OK);
    cw_blob *b = cwc_open(ctx, "ab", "c", NULL);
    ck_assert_int_eq(cw_storage_audit(ctx, a->one), CW_OK);
    cwc_write(b, 0, "xyz", 3);
    ck_assert_int_eq(cw_storage_audit(ctx, a->after_unsynced), CW_OK);
    cwc_sync(b);
    ck_assert_int_eq(cw_storage_audit(ctx, a->after_sync), CW_OK);
    cw_blob_close(b);
    ck_assert_int_eq(cw_storage_remove(ctx, "ab", NULL, 0, NULL), CW_OK);
    cw_blob_close(cwc_open(ctx, "a", "bc", NULL));
    ck_assert_int_eq(cw_storage_audit(ctx, a->moved), CW_OK);
    return NULL;
}

CWC_CASE(storage_audit_digests_durable_content, "storage", "STOR-036 RUN-008",
         DET | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    static struct audits a, again;
    cw_config cfg = cwc_config();
    cfg.blob_layouts =
        cw_blob_range_of(CW_BLOB_LAYOUT_V0, CW_BLOB_LAYOUT_V0); /* an 8-byte header */
    cwc_run_ok(&cfg, audit_root, &a);
    /* The same program, the same disks. */
    cwc_run_ok(&cfg, audit_root, &again);
    ck_assert_str_eq(a.after_sync, again.after_sync);
    /* Exactly the digest of the rule, from what the disk holds. */
    uint8_t header[CW_BLOB_HEADER_MAX];
    size_t hlen;
    ck_assert_int_eq(cw_blob_header_create(cwc_backend, CW_BLOB_LAYOUT_V0, CW_BLOB_VERSION_DEFAULT,
                                           header, sizeof header, &hlen),
                     CW_OK);
    char want[65];
    audit_model m;
    model_begin(&m);
    model_end(&m, want);
    ck_assert_str_eq(a.empty, want);
    model_begin(&m);
    model_partition(&m, "ab", 1);
    model_put(&m, "c", 1);
    model_put(&m, header, hlen);
    model_end(&m, want);
    ck_assert_str_eq(a.one, want);
    ck_assert_str_eq(a.after_unsynced, a.one); /* not durable yet */
    uint8_t synced[CW_BLOB_HEADER_MAX + 3];
    memcpy(synced, header, hlen);
    memcpy(synced + hlen, "xyz", 3);
    model_begin(&m);
    model_partition(&m, "ab", 1);
    model_put(&m, "c", 1);
    model_put(&m, synced, hlen + 3);
    model_end(&m, want);
    ck_assert_str_eq(a.after_sync, want);
    /* Partition "a" holding "bc" is not partition "ab" holding "c". */
    ck_assert_str_ne(a.moved, a.one);
}

/* A synced write's bytes stay as it wrote them through a crash that keeps
 * every unsynced byte: an older unsynced write to the same range must not
 * land on top of them, and another blob's unsynced bytes are its own. */
struct layered {
    uint64_t alen, blen, clen;
};

static void *layered_write_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *a = cwc_open(ctx, "p", "a", NULL);
    cw_blob *b = cwc_open(ctx, "p", "b", NULL);
    cwc_write(a, 0, "AAAAAA", 6);
    cwc_write(b, 0, "PPPP", 4);
    ck_assert_int_eq(cw_blob_write_at(a, 2, "BB", 2, CW_WRITE_SYNC, NULL), CW_OK);
    /* An unsynced resize, then a synced write inside the old length. */
    cw_blob *c = cwc_open(ctx, "p", "c", NULL);
    ck_assert_int_eq(cw_blob_resize(c, 100, NULL), CW_OK);
    ck_assert_int_eq(cw_blob_write_at(c, 0, "Z", 1, CW_WRITE_SYNC, NULL), CW_OK);
    cw_blob_close(a);
    cw_blob_close(b);
    cw_blob_close(c);
    return NULL;
}

static void *layered_read_root(cw_ctx *ctx, void *arg)
{
    struct layered *l = arg;
    cw_blob *a = cwc_open(ctx, "p", "a", &l->alen);
    cw_blob *b = cwc_open(ctx, "p", "b", &l->blen);
    if (l->alen == 6)
        cwc_read_eq(a, 0, "AABBAA", 6);
    if (l->blen == 4)
        cwc_read_eq(b, 0, "PPPP", 4);
    cw_blob *c = cwc_open(ctx, "p", "c", &l->clen);
    cwc_read_eq(c, 0, "Z", 1);
    cw_blob_close(a);
    cw_blob_close(b);
    cw_blob_close(c);
    return NULL;
}

CWC_CASE(storage_faults_crash_keeps_synced_writes_on_top, "recover", "STOR-033 STOR-015 RUN-008",
         RECOVER | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    struct layered l;
    memset(&l, 0, sizeof l);
    cw_config cfg = cwc_config();
    cfg.storage_faults.write_kept = CW_RATE_ALWAYS;
    cfg.storage_faults.resize_kept = CW_RATE_ALWAYS;
    cw_checkpoint *cp = NULL;
    cw_run_result res;
    ck_assert_int_eq(cw_start_checkpoint(cwc_backend, &cfg, layered_write_root, NULL, &res, &cp),
                     CW_OK);
    ck_assert_int_eq(cw_recover(cp, layered_read_root, &l, &res, NULL), CW_OK);
    ck_assert_uint_eq(l.alen, 6);
    ck_assert_uint_eq(l.blen, 4);
    ck_assert_uint_eq(l.clen, 100); /* the resize was kept, the write on top of it */
}

/* ---- A failed sync is final for its open [STOR-037] ---------------------------------- */

/* Every sync through `b` fails, as does a synced write, which writes
 * nothing; reads and plain writes go on. */
static void syncs_keep_failing(cw_blob *b, const char *holds, size_t len)
{
    cw_storage_error err;
    ck_assert_int_eq(cw_blob_sync(b, &err), CW_ERR_BLOB_SYNC_FAILED);
    ck_assert_int_eq(err.code, CW_ERR_BLOB_SYNC_FAILED);
    cw_handle *h = cw_blob_start_sync(b);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_BLOB_SYNC_FAILED);
    cw_handle_release(h);
    ck_assert_int_eq(cw_blob_write_at(b, 0, "SYNCED", 6, CW_WRITE_SYNC, &err),
                     CW_ERR_BLOB_SYNC_FAILED);
    cwc_read_eq(b, 0, holds, len);
    cwc_write(b, len, "+", 1);
    ck_assert_int_eq(cw_blob_resize(b, len, &err), CW_OK);
}

static void *sync_failure_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_storage_error err;
    cw_blob *b = cwc_open(ctx, "p", "log", NULL);
    cwc_write(b, 0, "record", 6);
    cw_storage_faults f = no_faults();
    f.sync = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    expect_injected(cw_blob_sync(b, &err), &err, CW_ERR_BLOB_SYNC_FAILED);
    /* A later sync still draws its rate (and fails by it first); a synced
     * write does not draw: it fails as the refusal, writing nothing. */
    expect_injected(cw_blob_sync(b, &err), &err, CW_ERR_BLOB_SYNC_FAILED);
    f.write = CW_RATE_ALWAYS;
    f.write_kept = CW_RATE_ALWAYS;
    set_faults(ctx, f);
    ck_assert_int_eq(cw_blob_write_at(b, 0, "SYNCED", 6, CW_WRITE_SYNC, &err),
                     CW_ERR_BLOB_SYNC_FAILED);
    expect_message(&err, "blob sync failed: p/6c6f67 error: an earlier sync of this open failed");
    set_faults(ctx, no_faults()); /* the system would now say yes */
    ck_assert_int_eq(cw_blob_sync(b, &err), CW_ERR_BLOB_SYNC_FAILED);
    expect_message(&err, "blob sync failed: p/6c6f67 error: an earlier sync of this open failed");
    ck_assert_int_eq(err.os_error, 0); /* no system call failed for it (STOR-018) */
    syncs_keep_failing(b, "record", 6);
    cw_blob *clone = cw_blob_clone(b);
    syncs_keep_failing(clone, "record", 6);
    cw_blob_close(clone);
    cw_blob_close(b);
    /* A new open starts clean. */
    b = cwc_open(ctx, "p", "log", NULL);
    cwc_write(b, 0, "again", 5);
    cwc_sync(b);
    cw_blob_close(b);

    /* A failed start_sync does the same to its open. */
    b = cwc_open(ctx, "p", "other", NULL);
    cwc_write(b, 0, "second", 6);
    set_faults(ctx, f);
    cw_handle *h = cw_blob_start_sync(b);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_BLOB_SYNC_FAILED);
    cw_handle_release(h);
    set_faults(ctx, no_faults());
    syncs_keep_failing(b, "second", 6);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(storage_failed_sync_is_final, "storage", "STOR-037 STOR-030 RUN-008", DET | CWC_REPEATED)
{
    cwc_run_ok(NULL, sync_failure_root, NULL);
}

/* ---- DET-023: a failed write's kept runs, at a crash ---------------------------------- */

enum { TORN = 16 };

/* A synced empty blob, then one write of TORN bytes that fails keeping
 * each byte on its own (CW_KEEP_SUBSET) with probability 1/2, then the
 * crash. */
static void *torn_write_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = cwc_open(ctx, "p", "torn", NULL);
    cwc_sync(b);
    cw_storage_faults f = {0};
    f.write = CW_RATE_ALWAYS;
    f.write_kept = (cw_rate){1, 2};
    f.write_mode = CW_KEEP_SUBSET;
    set_faults(ctx, f);
    uint8_t w[TORN];
    memset(w, 'W', sizeof w);
    cw_storage_error err;
    expect_injected(cw_blob_write_at(b, 0, w, sizeof w, 0, &err), &err, CW_ERR_IO);
    cw_blob_close(b);
    return NULL;
}

static void *first_draw_root(cw_ctx *ctx, void *arg)
{
    *(uint64_t *)arg = cw_random_u64(ctx);
    return NULL;
}

/* Where the crash leaves the PRNG: after the write's TORN draws, one
 * draw for each byte of each run the write kept (DET-023); the other
 * reading draws TORN at the crash whatever was kept. */
static uint64_t torn_model(uint64_t seed)
{
    vrng r;
    vrng_seed(&r, seed);
    int kept = 0;
    for (int i = 0; i < TORN; i++)
        kept += vrng_below(&r, 2) < 1;
    for (int i = 0; i < kept; i++)
        (void)vrng_below(&r, 2);
    return vrng_next(&r);
}

CWC_CASE(det_failed_write_at_a_crash, "recover", "DET-023 STOR-033 DET-009 RUN-008",
         RECOVER | CWC_REPEATED)
{
    int told_apart = 0;
    for (uint64_t seed = 0; seed < 24; seed++) {
        cwc_store s;
        cwc_store_begin(&s);
        s.cfg.seed = seed;
        cw_checkpoint *cp = NULL;
        cw_run_result res;
        ck_assert_int_eq(cw_start_checkpoint(cwc_backend, &s.cfg, torn_write_root, NULL, &res, &cp),
                         CW_OK);
        uint64_t first = 0;
        ck_assert_int_eq(cw_recover(cp, first_draw_root, &first, &res, NULL), CW_OK);
        cwc_store_end(&s);
        ck_assert_msg(first == torn_model(seed),
                      "seed %llu: the crash drew as many times as the write had bytes, or "
                      "otherwise than once per byte of each run it kept (DET-023)",
                      (unsigned long long)seed);
        vrng r;
        vrng_seed(&r, seed);
        for (int i = 0; i < 2 * TORN; i++)
            (void)vrng_next(&r);
        told_apart += vrng_next(&r) != first;
    }
    ck_assert_int_gt(told_apart, 0);
}
