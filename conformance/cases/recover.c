/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * recover.c - crash and recovery (spec/11-deterministic.md, DET-008 to
 * DET-011): a run that ends in a checkpoint, and the runs that start from
 * it, as a crashed process that restarts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases/golden.h"
#include "cases/storage.h"

#define RECOVER (CW_CAP_DETERMINISTIC | CW_CAP_RECOVER)

static const char PART[] = "recover";
static const char DATA[] = "Hello, world!";

/* Start a history: the first run, required to succeed, and its checkpoint. */
static cw_checkpoint *first(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *res)
{
    cw_config c = cfg ? *cfg : cwc_config();
    cw_checkpoint *cp = NULL;
    ck_assert_int_eq(cw_start_checkpoint(cwc_backend, &c, root, arg, res, &cp), CW_OK);
    ck_assert_ptr_nonnull(cp);
    return cp;
}

/* The next run of a history, required to succeed; its checkpoint when
 * `next` is not NULL. */
static void *then(cw_checkpoint *cp, cw_task_fn root, void *arg, cw_run_result *res,
                  cw_checkpoint **next)
{
    ck_assert_int_eq(cw_recover(cp, root, arg, res, next), CW_OK);
    return res->value;
}

/* ---- Storage --------------------------------------------------------------------------- */

static void *write_root(cw_ctx *ctx, void *arg)
{
    bool sync = arg != NULL;
    uint64_t size;
    cw_blob *b = cwc_open(ctx, PART, "blob", &size);
    cwc_write(b, 0, DATA, sizeof DATA - 1);
    if (sync)
        cwc_sync(b);
    /* The blob is left open: the crash closes it. */
    return NULL;
}

static void *size_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    uint64_t size;
    cw_blob *b = cwc_open(ctx, PART, "blob", &size);
    if (size == sizeof DATA - 1)
        cwc_read_eq(b, 0, DATA, size);
    cw_blob_close(b);
    return (void *)(uintptr_t)size;
}

CWC_CASE(recover_synced_storage_persists, "recover", "DET-008 DET-009 RUN-008",
         RECOVER | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    cw_run_result res;
    cw_checkpoint *cp = first(NULL, write_root, (void *)1, &res);
    ck_assert_uint_eq((uintptr_t)then(cp, size_root, NULL, &res, NULL), sizeof DATA - 1);
}

CWC_CASE(recover_unsynced_storage_does_not_persist, "recover", "DET-008 RUN-008",
         RECOVER | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    cw_run_result res;
    cw_checkpoint *cp = first(NULL, write_root, NULL, &res);
    ck_assert_uint_eq((uintptr_t)then(cp, size_root, NULL, &res, NULL), 0);
}

/* A SYNC write is durable by itself, a removal too; a later unsynced
 * overwrite of synced bytes is lost, and the synced bytes stay. */
static void *mixed_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    uint64_t size;
    cw_blob *a = cwc_open(ctx, PART, "a", &size);
    ck_assert_int_eq(cw_blob_write_at(a, 0, "sync", 4, CW_WRITE_SYNC, NULL), CW_OK);
    cwc_write(a, 0, "lost", 4);
    cw_blob *b = cwc_open(ctx, PART, "b", &size);
    cwc_sync(b);
    cw_blob_close(b);
    ck_assert_int_eq(cw_storage_remove(ctx, PART, "b", 1, NULL), CW_OK);
    cwc_open(ctx, PART, "c", &size); /* created: its header is durable */
    return NULL;
}

static void *mixed_check_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert(cwc_scan_has(ctx, PART, "a", 1));
    ck_assert(!cwc_scan_has(ctx, PART, "b", 1));
    ck_assert(cwc_scan_has(ctx, PART, "c", 1));
    uint64_t size;
    cw_blob *a = cwc_open(ctx, PART, "a", &size);
    ck_assert_uint_eq(size, 4);
    cwc_read_eq(a, 0, "sync", 4);
    cw_blob_close(a);
    return NULL;
}

CWC_CASE(recover_keeps_what_was_durable, "recover", "DET-008 DET-009 RUN-008",
         RECOVER | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    cw_run_result res;
    cw_checkpoint *cp = first(NULL, mixed_root, NULL, &res);
    then(cp, mixed_check_root, NULL, &res, NULL);
}

/* Resizes follow the same rule as writes: a synced one is kept, an
 * unsynced one lost, growing or shrinking. */
static void *resize_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *shrunk = cwc_open(ctx, PART, "shrunk", NULL);
    cwc_write(shrunk, 0, DATA, sizeof DATA - 1);
    cwc_sync(shrunk);
    ck_assert_int_eq(cw_blob_resize(shrunk, 4, NULL), CW_OK);
    cw_blob *grown = cwc_open(ctx, PART, "grown", NULL);
    cwc_write(grown, 0, "four", 4);
    cwc_sync(grown);
    ck_assert_int_eq(cw_blob_resize(grown, 100, NULL), CW_OK);
    cw_blob *kept = cwc_open(ctx, PART, "kept", NULL);
    ck_assert_int_eq(cw_blob_resize(kept, 50, NULL), CW_OK);
    cwc_sync(kept);
    return NULL; /* all three left open: the crash takes them */
}

static uint64_t size_of(cw_ctx *ctx, const char *name)
{
    uint64_t size;
    cw_blob *b = cwc_open(ctx, PART, name, &size);
    cw_blob_close(b);
    return size;
}

static void *resize_check_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_uint_eq(size_of(ctx, "shrunk"), sizeof DATA - 1);
    ck_assert_uint_eq(size_of(ctx, "grown"), 4);
    ck_assert_uint_eq(size_of(ctx, "kept"), 50);
    cw_blob *b = cwc_open(ctx, PART, "shrunk", NULL);
    cwc_read_eq(b, 0, DATA, sizeof DATA - 1);
    cw_blob_close(b);
    static const uint8_t zeros[50];
    b = cwc_open(ctx, PART, "kept", NULL);
    cwc_read_eq(b, 0, zeros, sizeof zeros);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(recover_resizes_as_writes, "recover", "DET-008 DET-009 STOR-009 RUN-008",
         RECOVER | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    cw_run_result res;
    cw_checkpoint *cp = first(NULL, resize_root, NULL, &res);
    then(cp, resize_check_root, NULL, &res, NULL);
}

/* Blobs made after a recovery are blobs of their own [STOR-033]. The first
 * run makes three blobs durable; the second, recovered, makes six new
 * ones, writes to all nine without a sync, then syncs every other new one.
 * The crash keeps every unsynced byte (write_kept always): each of the
 * nine must then hold its own bytes, none another's, none lost to the
 * sync of another blob. */
enum { OLD_BLOBS = 3, NEW_BLOBS = 6 };

static void blob_name(char *out, char kind, int i)
{
    out[0] = kind;
    out[1] = (char)('0' + i);
    out[2] = '\0';
}

static void *old_blobs_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char name[3];
    for (int i = 0; i < OLD_BLOBS; i++) {
        blob_name(name, 'e', i);
        cw_blob *b = cwc_open(ctx, PART, name, NULL);
        cwc_write(b, 0, "old!", 4);
        cwc_sync(b);
        cw_blob_close(b);
    }
    return NULL;
}

static void *new_blobs_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char name[3];
    cw_blob *olds[OLD_BLOBS], *news[NEW_BLOBS];
    for (int i = 0; i < NEW_BLOBS; i++) {
        blob_name(name, 'n', i);
        uint64_t size;
        news[i] = cwc_open(ctx, PART, name, &size);
        ck_assert_uint_eq(size, 0);
    }
    for (int i = 0; i < OLD_BLOBS; i++) {
        blob_name(name, 'e', i);
        olds[i] = cwc_open(ctx, PART, name, NULL);
        cwc_write(olds[i], 0, name, 2); /* unsynced: kept by the crash */
    }
    for (int i = 0; i < NEW_BLOBS; i++) {
        blob_name(name, 'n', i);
        cwc_write(news[i], 0, name, 2);
        if (i % 2)
            cwc_sync(news[i]);
    }
    /* An odd count of bytes past the end, unsynced: the crash keeps them
     * all, and the blob ends at the last. */
    cwc_write(cwc_open(ctx, PART, "odd", NULL), 0, "abc", 3);
    return NULL; /* all left open: the crash takes them */
}

static void *own_bytes_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char name[3], want[5];
    for (int i = 0; i < OLD_BLOBS + NEW_BLOBS; i++) {
        bool old = i < OLD_BLOBS;
        blob_name(name, old ? 'e' : 'n', old ? i : i - OLD_BLOBS);
        snprintf(want, sizeof want, "%s%s", name, old ? "d!" : "");
        uint64_t size;
        cw_blob *b = cwc_open(ctx, PART, name, &size);
        ck_assert_msg(size == strlen(want), "blob %s holds %llu bytes after the crash, not %zu",
                      name, (unsigned long long)size, strlen(want));
        char got[4];
        ck_assert_int_eq(cw_blob_read_into(b, 0, got, (size_t)size, CW_READ_DEFAULT, NULL), CW_OK);
        ck_assert_msg(memcmp(got, want, (size_t)size) == 0,
                      "blob %s holds \"%.*s\" after the crash, not \"%s\"", name, (int)size, got,
                      want);
        cw_blob_close(b);
    }
    uint64_t size;
    cw_blob *b = cwc_open(ctx, PART, "odd", &size);
    ck_assert_msg(size == 3, "a blob of 3 unsynced bytes holds %llu after the crash",
                  (unsigned long long)size);
    cwc_read_eq(b, 0, "abc", 3);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(recover_new_blobs_keep_their_own_changes, "recover", "STOR-033 DET-009 RUN-008",
         RECOVER | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.storage_faults.write_kept = CW_RATE_ALWAYS;
    cw_run_result res;
    cw_checkpoint *cp = first(&cfg, old_blobs_root, NULL, &res), *next = NULL;
    then(cp, new_blobs_root, NULL, &res, &next);
    then(next, own_bytes_root, NULL, &res, NULL);
}

/* Three runs: each adds a synced blob and finds those of the runs before. */
static void *chain_root(cw_ctx *ctx, void *arg)
{
    int run = (int)(intptr_t)arg;
    for (int i = 0; i < run; i++) {
        char name[2] = {(char)('0' + i), 0};
        ck_assert(cwc_scan_has(ctx, PART, name, 1));
    }
    char name[2] = {(char)('0' + run), 0};
    uint64_t size;
    cw_blob *b = cwc_open(ctx, PART, name, &size);
    ck_assert_uint_eq(size, 0);
    cwc_write(b, 0, name, 1);
    cwc_sync(b);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(recover_chains_runs, "recover", "DET-009 DET-011 RUN-008",
         RECOVER | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    cw_run_result res;
    cw_checkpoint *cp = first(NULL, chain_root, (void *)0, &res), *next = NULL;
    then(cp, chain_root, (void *)1, &res, &next);
    ck_assert_ptr_nonnull(next);
    then(next, chain_root, (void *)2, &res, NULL);
}

/* ---- Clock, randomness, audit, timeout ------------------------------------------------------ */

static void *sleep_root(cw_ctx *ctx, void *arg)
{
    cw_sleep(ctx, (cw_duration)(uintptr_t)arg);
    return NULL;
}

static void *now_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    return (void *)(uintptr_t)cw_current(ctx);
}

CWC_CASE(recover_clock_continues, "recover", "DET-009 RUN-008", RECOVER | CWC_REPEATED)
{
    cw_run_result res;
    cw_checkpoint *cp = first(NULL, sleep_root, (void *)(uintptr_t)(5 * CW_SEC), &res);
    cw_time crashed = res.end_time;
    ck_assert_uint_ge(crashed, 5 * CW_SEC);
    ck_assert_uint_eq((uintptr_t)then(cp, now_root, NULL, &res, NULL), crashed);
}

static void *draw_root(cw_ctx *ctx, void *arg)
{
    uint64_t *out = arg;
    out[0] = cw_random_u64(ctx);
    if (out[1] == 1)
        out[1] = cw_random_u64(ctx);
    return NULL;
}

/* The draw a recovered run makes first is the one the crashed run would
 * have made next: one run drawing twice gives the same two values. */
CWC_CASE(recover_random_stream_continues, "recover", "DET-009 RUN-008", RECOVER | CWC_REPEATED)
{
    cw_run_result res;
    uint64_t whole[2] = {0, 1}, part1[2] = {0, 0}, part2[2] = {0, 0};
    cwc_run(NULL, draw_root, whole, &res);
    ck_assert_int_eq(res.status, CW_OK);
    cw_checkpoint *cp = first(NULL, draw_root, part1, &res);
    then(cp, draw_root, part2, &res, NULL);
    ck_assert_uint_eq(part1[0], whole[0]);
    ck_assert_uint_eq(part2[0], whole[1]);
}

static void *quiet_root(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    return NULL;
}

/* The digest of a two-run history, and whether it depends on the first. */
static void history(cw_task_fn first_root, void *first_arg, char out[65])
{
    cw_run_result res;
    cw_checkpoint *cp = first(NULL, first_root, first_arg, &res);
    then(cp, quiet_root, NULL, &res, NULL);
    memcpy(out, res.digest, 65);
}

CWC_CASE(recover_audit_chain_continues, "recover", "DET-009 DET-011 RUN-008",
         RECOVER | CW_CAP_AUDIT | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    char a[65], b[65], c[65];
    history(write_root, (void *)1, a);
    history(write_root, (void *)1, b);
    history(write_root, NULL, c);
    ck_assert_str_eq(a, b); /* a history replays */
    ck_assert_str_ne(a, c); /* the same second run, after another first one */
    ck_assert_uint_eq(strlen(a), 64);
}

/* The timeout of the first run bounds the whole history. */
CWC_CASE(recover_keeps_the_first_deadline, "recover", "DET-009 RUN-008", RECOVER | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.timeout = 10 * CW_SEC;
    cw_run_result res;
    cw_checkpoint *cp = first(&cfg, sleep_root, (void *)(uintptr_t)(6 * CW_SEC), &res);
    ck_assert_int_eq(cw_recover(cp, sleep_root, (void *)(uintptr_t)(6 * CW_SEC), &res, NULL),
                     CW_ERR_RUN_TIMEOUT);
    /* Alone, the second run's 6 s sleep would fit in a timeout of 10 s. */
    ck_assert_uint_ge(res.end_time, 10 * CW_SEC);
}

/* ---- What does not survive ----------------------------------------------------------------------
 */

static void *net_root(cw_ctx *ctx, void *arg)
{
    cw_addr *where = arg;
    cw_addr one = cw_addr_ipv4(10, 0, 0, 1, 0);
    ck_assert_int_eq(cw_resolver_register(ctx, "node", &one, 1), CW_OK);
    cw_listener *l;
    ck_assert_int_eq(cw_bind(ctx, where, &l), CW_OK);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, where, &sink, &stream), CW_OK);
    ck_assert_int_eq(cw_stop(ctx, 7, 0), CW_OK);
    cw_addr all = cw_addr_ipv4(0, 0, 0, 0, 0);
    ck_assert_int_eq(cw_network_partition(ctx, &all, &all), CW_OK); /* not kept either */
    return NULL; /* the listener and the connection are left open */
}

static void *net_check_root(cw_ctx *ctx, void *arg)
{
    cw_addr *where = arg;
    cw_addr got[2];
    size_t n = 0;
    ck_assert_int_eq(cw_resolve(ctx, "node", got, 2, &n, NULL), CW_OK);
    ck_assert_uint_eq(n, 1);
    cw_addr one = cw_addr_ipv4(10, 0, 0, 1, 0);
    ck_assert(cw_addr_equal(&got[0], &one));
    /* Nothing listens any more, and the address can be bound again. */
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, where, &sink, &stream), CW_ERR_CONNECTION_FAILED);
    cw_listener *l;
    ck_assert_int_eq(cw_bind(ctx, where, &l), CW_OK);
    /* Dialers' ports start again; the failed dial above took the first. */
    ck_assert_int_eq(cw_dial(ctx, where, &sink, &stream), CW_OK);
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    ck_assert_uint_eq(c.peer.port, CW_NET_EPHEMERAL_FIRST + 1);
    /* The stop signal is clear. */
    cw_signal *s = cw_stopped(ctx);
    cw_wait w[2];
    int32_t value = 0;
    w[0] = cw_wait_signal(s, &value);
    w[1] = cw_wait_ready(ctx, CW_OK);
    ck_assert_int_eq(cw_select(w, 2), 1);
    cw_signal_release(s);
    return NULL;
}

CWC_CASE(recover_keeps_names_not_connections, "recover", "DET-009 DET-010 NET-028 RUN-008",
         RECOVER | CWC_NEEDS_NETWORK | CWC_REPEATED)
{
    cw_addr where = cw_addr_ipv4(10, 0, 0, 2, 9000);
    cw_run_result res;
    cw_checkpoint *cp = first(NULL, net_root, &where, &res);
    then(cp, net_check_root, &where, &res, NULL);
}

static void *stall_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cwc_pending_task(ctx, NULL);
    return NULL;
}

/* A stalled run still crashes into a checkpoint, and the next run's root
 * is task 0 again. */
CWC_CASE(recover_after_a_stall, "recover", "DET-008 DET-010 RUN-008", RECOVER | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cw_checkpoint *cp = NULL;
    cw_run_result res;
    ck_assert_int_eq(cw_start_checkpoint(cwc_backend, &cfg, stall_root, NULL, &res, &cp),
                     CW_ERR_STALLED);
    ck_assert_ptr_nonnull(cp);
    ck_assert_int_eq(cw_recover(cp, stall_root, NULL, &res, NULL), CW_ERR_STALLED);
    ck_assert_ptr_nonnull(strstr(res.message, "root#0"));
}

/* ---- Ownership and refusal ---------------------------------------------------------------------
 */

CWC_CASE(recover_checkpoint_freed_unused, "recover", "DET-011 RUN-008",
         RECOVER | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    cw_run_result res;
    cw_checkpoint *cp = first(NULL, write_root, (void *)1, &res);
    cw_checkpoint_free(cp); /* the sanitizer and valgrind runs check nothing is left */
    cp = first(NULL, quiet_root, NULL, &res);
    cw_checkpoint_free(cp);
}

/* A checkpoint that holds the names a run registered, freed unused or
 * recovered by a run that never asks for its network: the names go with
 * it (the repetitions count the memory the process holds, RUN-008). */
CWC_CASE(recover_names_freed_unused, "recover", "DET-011 DET-009 RUN-008",
         RECOVER | CWC_NEEDS_NETWORK | CWC_REPEATED)
{
    cw_addr where = cw_addr_ipv4(10, 0, 0, 2, 9000);
    cw_run_result res;
    cw_checkpoint_free(first(NULL, net_root, &where, &res));
    cw_checkpoint *cp = first(NULL, net_root, &where, &res);
    then(cp, quiet_root, NULL, &res, NULL);
}

CWC_CASE(recover_refused, "runner", "DET-008 RUN-008", CWC_REPEATED)
{
    cw_run_result res;
    cw_checkpoint *cp = (cw_checkpoint *)&res; /* must be overwritten */
    cw_config cfg = cwc_config();
    if (!(cwc_backend->capabilities & CW_CAP_RECOVER)) {
        ck_assert_int_eq(cw_start_checkpoint(cwc_backend, &cfg, quiet_root, NULL, &res, &cp),
                         CW_ERR_UNSUPPORTED);
        ck_assert_ptr_null(cp);
        return;
    }
    cfg.stack_size = 0; /* an invalid setting: the run cannot start */
    ck_assert_int_eq(cw_start_checkpoint(cwc_backend, &cfg, quiet_root, NULL, &res, &cp),
                     CW_ERR_INVALID);
    ck_assert_ptr_null(cp);
}

/* ---- A golden history ---------------------------------------------------------------------------
 */

/* The digest of this two-run history is part of the specification, as the
 * golden digest of a single run is (DET-003): where the chain, the random
 * stream and the clock resume is exact. */
#define GOLDEN_SEED 42
#define GOLDEN_HISTORY "6b67a1ca6db6162c7ff550866fe7ff6fc1d82f16ddc89cac7a98c783569b8227"

static void *golden_first(cw_ctx *ctx, void *arg)
{
    (void)arg;
    write_root(ctx, (void *)1);
    for (int i = 0; i < 3; i++)
        cw_handle_release(
            cw_spawn(cw_child(ctx, "sleeper"), sleep_root, (void *)(uintptr_t)CW_SEC));
    cw_sleep(ctx, 10 * CW_MSEC);
    (void)cw_random_u64(ctx);
    return NULL; /* the sleepers are cut short by the crash */
}

/* The clock and a random draw, written to storage as 8 bytes little-endian
 * each: the digest records the bytes of every write, so it sees where both
 * resumed, and the bytes are the same on every host. */
static void *golden_second(cw_ctx *ctx, void *arg)
{
    size_root(ctx, arg);
    uint64_t seen[2] = {cw_current(ctx), cw_random_u64(ctx)};
    uint8_t le[16];
    for (int i = 0; i < 16; i++)
        le[i] = (uint8_t)(seen[i / 8] >> (8 * (i % 8)));
    uint64_t size;
    cw_blob *b = cwc_open(ctx, PART, "seen", &size);
    cwc_write(b, 0, le, sizeof le);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(recover_golden_history, "recover", "DET-009 DET-011 RUN-008",
         RECOVER | CW_CAP_AUDIT | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.seed = GOLDEN_SEED;
    cw_run_result res;
    cw_checkpoint *cp = first(&cfg, golden_first, NULL, &res);
    then(cp, golden_second, NULL, &res, NULL);
    cwc_golden("recover_golden_history", res.digest, GOLDEN_HISTORY);
}
