/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * run_memory.c - a run that makes and releases objects again and again
 * does not hold more memory the longer it goes (RUN-009): what the
 * program released is given back while the run goes on, not kept until
 * it ends, where RUN-003 and RUN-008 would see it no more.
 *
 * Each case repeats one step (objects made, used and released) in batches
 * inside one run and reads the bytes the process holds after each batch
 * (the suite's allocator counts them, harness/allocator.h). As in
 * harness/repeat.c, a failure needs the count to rise after each of
 * CHECKED batches in a row, after WARM batches that let a backend's
 * caches fill: the first batch after which the count falls or stays ends
 * the check, so neither speed nor the order of the backend's threads can
 * fail it. Where the allocator is not live (sanitizers, valgrind) the
 * steps run and nothing is counted. Task stacks need not come from the
 * heap: the case of many tasks at once counts the address space the
 * process has mapped as well (/proc/self/statm).
 */
#include <stdio.h>
#include <unistd.h>

#include "cases/network_util.h"
#include "cases/storage.h"
#include "harness/allocator.h"

enum { WARM = 4, CHECKED = 12, BATCH = 8 };

typedef void (*step_fn)(cw_ctx *ctx, void *arg);
/* What the process holds, in bytes. */
typedef long long (*held_fn)(void);

/* The bytes of address space the process has mapped: the first field of
 * /proc/self/statm, in pages. Mapped memory given back shrinks it. */
static long long mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    ck_assert_msg(f != NULL, "run_memory.c: /proc/self/statm cannot be read");
    long long pages = -1;
    int got = fscanf(f, "%lld", &pages);
    fclose(f);
    ck_assert_msg(got == 1 && pages >= 0, "run_memory.c: /proc/self/statm holds no size");
    return pages * sysconf(_SC_PAGESIZE);
}

/* The heap the suite's allocator counts, and the address space mapped. */
static long long heap_and_mapped(void)
{
    return cwc_heap_live() + mapped_bytes();
}

/* Run `step` in batches; fail when what `held` reads rose after each
 * checked batch. */
static void steady(cw_ctx *ctx, step_fn step, void *arg, held_fn held, const char *what)
{
    bool counted = cwc_allocator_live();
    long long first = 0, last = 0;
    for (int batch = 0; batch < WARM + CHECKED; batch++) {
        for (int i = 0; i < BATCH; i++)
            step(ctx, arg);
        long long now = held();
        if (batch == WARM - 1)
            first = last = now;
        else if (batch >= WARM && (!counted || now <= last))
            return;
        else if (batch >= WARM)
            last = now;
    }
    ck_abort_msg("RUN-009: %s: the memory the process holds grew after each of %d batches of "
                 "%d in a row, by %lld bytes (%lld a step): what the program released is kept "
                 "until the run ends",
                 what, CHECKED, BATCH, last - first, (last - first) / (CHECKED * BATCH));
}

/* What a case repeats: its step, the step's argument, what it does, and
 * what it counts (NULL: the heap). */
typedef struct steady_job {
    step_fn step;
    void *arg;
    const char *what;
    held_fn held;
} steady_job;

/* The root of every case: `arg` is the case's steady_job. */
static void *steady_root(cw_ctx *ctx, void *arg)
{
    const steady_job *job = arg;
    steady(ctx, job->step, job->arg, job->held ? job->held : cwc_heap_live, job->what);
    return NULL;
}

/* ---- Channels ------------------------------------------------------------------------ */

static void channel_step(cw_ctx *ctx, void *arg)
{
    (void)arg;
    uint64_t v = 7, got = 0;
    cw_chan *c = cw_chan_new(ctx, sizeof v, 1);
    ck_assert_ptr_nonnull(c);
    CWC_EQ(cw_chan_send(c, &v), CW_OK);
    CWC_EQ(cw_chan_recv(c, &got), CW_OK);
    cw_chan_sender_drop(c);
    cw_chan_receiver_drop(c);
    cw_oneshot *o = cw_oneshot_new(ctx, sizeof v);
    ck_assert_ptr_nonnull(o);
    CWC_EQ(cw_oneshot_send(o, &v), CW_OK);
    CWC_EQ(cw_oneshot_recv(o, &got), CW_OK); /* both sides ended: it is freed */
    o = cw_oneshot_new(ctx, sizeof v);
    ck_assert_ptr_nonnull(o);
    cw_oneshot_sender_drop(o);
    cw_oneshot_receiver_drop(o);
    o = cw_oneshot_new(ctx, sizeof v); /* and the other way round */
    ck_assert_ptr_nonnull(o);
    cw_oneshot_receiver_drop(o);
    cw_oneshot_sender_drop(o);
    o = cw_oneshot_new(ctx, sizeof v); /* a send after the receiver went ends it too */
    ck_assert_ptr_nonnull(o);
    cw_oneshot_receiver_drop(o);
    CWC_EQ(cw_oneshot_send(o, &v), CW_ERR_CLOSED);
}

CWC_CASE(run_memory_channels_dropped, "channels", "RUN-009", 0)
{
    cw_config cfg = cwc_config();
    steady_job job = {channel_step, NULL, "channels and oneshots made and dropped", NULL};
    cwc_run_ok(&cfg, steady_root, &job);
}

/* ---- Tasks and timers ------------------------------------------------------------------- */

static void task_step(cw_ctx *ctx, void *arg)
{
    (void)arg;
    void *v = NULL;
    cw_handle *h = cw_spawn(cw_child(ctx, "done"), cwc_return_42, NULL);
    CWC_EQ(cw_join(h, &v), CW_OK);
    cw_handle_release(h);
    h = cw_spawn(cw_child(ctx, "aborted"), cwc_pending_task, NULL);
    cw_yield(ctx);
    cw_abort(h);
    CWC_EQ(cw_join(h, &v), CW_ERR_CLOSED);
    cw_handle_release(h);
    cw_handle_release(cw_spawn(cw_child(ctx, "detached"), cwc_return_42, NULL));
    CWC_EQ(cw_sleep(ctx, CW_USEC), CW_OK);
    /* A context given up without a spawn (cw_ctx_release), with an
     * attribute of its own and one copied to its child. */
    cw_ctx *unused = cw_with_attribute(cw_child(ctx, "unused"), "k", "v");
    ck_assert_ptr_nonnull(unused);
    cw_ctx *inner = cw_child(unused, "inner");
    ck_assert_ptr_nonnull(inner);
    cw_ctx_release(inner);
    cw_ctx_release(unused);
}

CWC_CASE(run_memory_tasks_ended, "tasks", "RUN-009", 0)
{
    cw_config cfg = cwc_config();
    steady_job job = {task_step, NULL,
                      "tasks spawned and joined, aborted or detached, contexts made and "
                      "released unused, and sleeps",
                      NULL};
    cwc_run_ok(&cfg, steady_root, &job);
}

/* Enough tasks alive at once that a backend keeping a few stacks for
 * later tasks must give the others back; each sleeps so that they overlap
 * on any backend. */
enum { AT_ONCE = 80 };

static void *sleeps_a_little(cw_ctx *ctx, void *arg)
{
    (void)arg;
    CWC_EQ(cw_sleep(ctx, CW_MSEC), CW_OK);
    return NULL;
}

static void many_tasks_step(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h[AT_ONCE];
    for (int i = 0; i < AT_ONCE; i++) {
        h[i] = cw_spawn(cw_child(ctx, "many"), sleeps_a_little, NULL);
        ck_assert_ptr_nonnull(h[i]);
    }
    for (int i = 0; i < AT_ONCE; i++) {
        CWC_EQ(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
}

CWC_CASE(run_memory_many_tasks_at_once, "tasks", "RUN-009", 0)
{
    cw_config cfg = cwc_config();
    steady_job job = {many_tasks_step, NULL,
                      "80 tasks alive at once, then joined (heap and mapped memory)",
                      heap_and_mapped};
    cwc_run_ok(&cfg, steady_root, &job);
}

/* ---- Storage ----------------------------------------------------------------------------- */

static void blob_step(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = cwc_open(ctx, "steady", "blob", NULL);
    cwc_write(b, 0, "steady", 6);
    cw_handle *h = cw_blob_start_sync(b); /* its handle joined and released */
    ck_assert_ptr_nonnull(h);
    CWC_EQ(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cwc_sync(b);
    cwc_read_eq(b, 0, "steady", 6);
    cw_blob_close(b);
    CWC_EQ(cw_storage_remove(ctx, "steady", "blob", 4, NULL), CW_OK);
    /* Written and never synced: what a crash could still tear goes with it. */
    b = cwc_open(ctx, "steady", "unsynced", NULL);
    cwc_write(b, 0, "unsynced", 8);
    cw_blob_close(b);
    CWC_EQ(cw_storage_remove(ctx, "steady", "unsynced", 8, NULL), CW_OK);
    /* The same, its partition removed whole instead. */
    b = cwc_open(ctx, "steady-gone", "unsynced", NULL);
    cwc_write(b, 0, "unsynced", 8);
    cw_blob_close(b);
    CWC_EQ(cw_storage_remove(ctx, "steady-gone", NULL, 0, NULL), CW_OK);
}

CWC_CASE(run_memory_blobs_removed, "storage", "RUN-009", CWC_NEEDS_STORAGE)
{
    cwc_store s;
    cwc_store_begin(&s);
    steady_job job = {
        blob_step, NULL,
        "a blob made, written, synced (once through a handle), closed and removed, or its "
        "partition removed",
        NULL};
    cwc_run_ok(&s.cfg, steady_root, &job);
    cwc_store_end(&s);
}

/* ---- Network ----------------------------------------------------------------------------- */

static void connection_step(cw_ctx *ctx, void *arg)
{
    struct half_pair a, b;
    connect_through(ctx, arg, &a, &b);
    ck_assert_int_eq(send_text(a.sink, "ping"), CW_OK);
    recv_text(b.stream, "ping");
    close_halves(&a);
    close_halves(&b);
    cw_addr out[4];
    size_t n = 0;
    CWC_EQ(cw_resolve(ctx, "localhost", out, 4, &n, NULL), CW_OK);
}

static void *network_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr any = cw_addr_loopback4(0);
    cw_listener *l;
    CWC_EQ(cw_bind(ctx, &any, &l), CW_OK);
    /* A deterministic backend resolves registered names only [NET-021]. */
    int reg = cw_resolver_register(ctx, "localhost", &any, 1);
    ck_assert(reg == CW_OK || reg == CW_ERR_UNSUPPORTED);
    steady(ctx, connection_step, l, cwc_heap_live,
           "connections dialed, accepted and closed, and lookups");
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(run_memory_connections_closed, "network", "RUN-009", CWC_NEEDS_NETWORK)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, network_root, NULL);
}
