/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * native_io.c - how a parallel backend with files moves blob bytes
 * (NAT-008): cfg.io_backend chooses io_uring or I/O threads, a run that
 * insists on a ring it cannot have does not start, and the gauge
 * runtime_io_uring says which way a run went (and a ring is refused as
 * unsupported only by a backend built without one, where this process
 * can set one up); either way, a run with one
 * worker comes back to every task that waits on the kernel, and reads
 * what the page cache let go of. Skipped on
 * backends without
 * CW_CAP_PARALLEL.
 */
#include <fcntl.h>
#include <ftw.h>
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cases/metrics.h"
#include "cases/storage.h"
#include "cases/util.h"

#define PAR CW_CAP_PARALLEL

/* The value of the gauge runtime_io_uring in this run's metrics. */
static long io_uring_gauge(cw_ctx *ctx)
{
    static const char key[] = "\nruntime_io_uring ";
    char *text = cwc_encode(ctx);
    char *line = strstr(text, key);
    ck_assert_msg(line != NULL, "no gauge runtime_io_uring in:\n%s", text);
    long v = strtol(line + sizeof key - 1, NULL, 10);
    free(text);
    return v;
}

/* Whether this process can set up an io_uring: the system call asked
 * directly, as a program would, the ring closed at once. */
static bool process_has_io_uring(void)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    long fd = syscall(SYS_io_uring_setup, 4, &p);
    if (fd < 0)
        return false;
    ck_assert_int_eq(close((int)fd), 0);
    return true;
}

/* A ring refused as unsupported where the process can have one: only a
 * backend built without io_uring may, and it says so. */
static void unsupported_only_when_built_without(int rc, const char *message)
{
    if (rc != CW_ERR_UNSUPPORTED || !process_has_io_uring())
        return;
    ck_assert_msg(strstr(message, "built without") != NULL,
                  "CW_IO_URING refused as unsupported (%s) although this process can set up "
                  "an io_uring, and the backend does not say it was built without one",
                  message);
}

/* Write, sync and read back a blob, whichever way it goes; `arg` receives
 * the gauge. */
static void *io_root(cw_ctx *ctx, void *arg)
{
    static uint8_t data[64 * 1024];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 13 + 5);
    cw_blob *b = cwc_open(ctx, "io", "blob", NULL);
    cwc_write(b, 4096, data, sizeof data);
    cwc_sync(b);
    cwc_read_eq(b, 4096, data, sizeof data);
    cw_blob_close(b);
    *(long *)arg = io_uring_gauge(ctx);
    return NULL;
}

CWC_CASE(native_io_backend_chosen_and_reported, "native", "NAT-008",
         PAR | PERSIST | CWC_NEEDS_STORAGE | CWC_NEEDS_METRICS | CWC_OWN_IO)
{
    cwc_store st;
    cwc_store_begin(&st);
    long gauge = -1;
    st.cfg.io_backend = CW_IO_THREADS;
    cwc_run_ok(&st.cfg, io_root, &gauge);
    ck_assert_int_eq(gauge, 0);

    gauge = -1;
    st.cfg.io_backend = CW_IO_URING;
    cw_run_result res;
    int rc = cwc_run(&st.cfg, io_root, &gauge, &res);
    ck_assert_msg(rc == CW_OK || (cwc_no_ring(rc) && res.message[0]),
                  "CW_IO_URING: status %d (%s), not CW_OK, or CW_ERR_UNSUPPORTED or "
                  "CW_ERR_NOMEM with a reason",
                  rc, res.message);
    if (rc == CW_OK)
        ck_assert_int_eq(gauge, 1);
    unsupported_only_when_built_without(rc, res.message);

    gauge = -1;
    st.cfg.io_backend = CW_IO_AUTO;
    cwc_run_ok(&st.cfg, io_root, &gauge);
    ck_assert(gauge == 0 || gauge == 1);

    st.cfg.io_backend = (cw_io_backend)3;
    ck_assert_int_eq(cwc_run(&st.cfg, io_root, &gauge, &res), CW_ERR_INVALID);
    cwc_store_end(&st);
}

/* ---- Either way, with one worker ------------------------------------------------------- */

enum { IO_TASKS = 6, IO_ROUNDS = 4, IO_CHUNK = 16 * 1024 };

/* Round `r` of task `k`'s bytes, each its own value. */
static void io_chunk_fill(uint8_t *data, unsigned r, unsigned k)
{
    for (size_t i = 0; i < IO_CHUNK; i++)
        data[i] = (uint8_t)(i * 31 + r * 7 + k);
}

/* A task's own blob: written a chunk at a time, each synced and read back,
 * so that it waits on the kernel (a sync takes far longer than a switch)
 * while the other tasks run. */
static void *io_task(cw_ctx *ctx, void *arg)
{
    unsigned k = (unsigned)(uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "task%u", k);
    uint8_t *data = malloc(IO_CHUNK);
    ck_assert_ptr_nonnull(data);
    cw_blob *b = cwc_open(ctx, "each", name, NULL);
    for (unsigned r = 0; r < IO_ROUNDS; r++) {
        io_chunk_fill(data, r, k);
        cwc_write(b, (uint64_t)r * IO_CHUNK, data, IO_CHUNK);
        cwc_sync(b);
        cwc_read_eq(b, (uint64_t)r * IO_CHUNK, data, IO_CHUNK);
    }
    cw_blob_close(b);
    free(data);
    return NULL;
}

/* The page cache let go of every file under `path`, so that the next
 * read of them goes to the disk: the way a read the cache cannot answer
 * at once takes (NAT-008), whatever the backend's files are. */
static int drop_cached(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb, (void)ftw;
    if (type != FTW_F)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
    return 0;
}

static const char *io_directory; /* the store of native_io_each_way_on_one_worker */

/* Every task's blob read back whole once the cache has dropped it. */
static void read_back_uncached(cw_ctx *ctx)
{
    ck_assert_int_eq(nftw(io_directory, drop_cached, 16, FTW_PHYS), 0);
    uint8_t *data = malloc(IO_CHUNK);
    ck_assert_ptr_nonnull(data);
    for (unsigned k = 0; k < IO_TASKS; k++) {
        char name[16];
        snprintf(name, sizeof name, "task%u", k);
        cw_blob *b = cwc_open(ctx, "each", name, NULL);
        for (unsigned r = 0; r < IO_ROUNDS; r++) {
            io_chunk_fill(data, r, k);
            cwc_read_eq(b, (uint64_t)r * IO_CHUNK, data, IO_CHUNK);
        }
        cw_blob_close(b);
    }
    free(data);
}

static void *io_tasks_root(cw_ctx *ctx, void *arg)
{
    cw_handle *h[IO_TASKS];
    for (unsigned k = 0; k < IO_TASKS; k++)
        h[k] = cw_spawn(cw_child(ctx, "writer"), io_task, (void *)(uintptr_t)k);
    for (unsigned k = 0; k < IO_TASKS; k++) {
        ck_assert_int_eq(cw_join(h[k], NULL), CW_OK);
        cw_handle_release(h[k]);
    }
    read_back_uncached(ctx);
    *(long *)arg = io_uring_gauge(ctx);
    return NULL;
}

/* With one worker there is no other thread to reap a completion for a
 * parked task: the run must still come back to each one, whichever way its
 * bytes go. A run that insists on a ring the backend cannot have is the
 * refusal the case above checks. */
CWC_CASE(native_io_each_way_on_one_worker, "native", "NAT-008",
         PAR | PERSIST | CWC_NEEDS_STORAGE | CWC_NEEDS_METRICS | CWC_OWN_IO)
{
    static const cw_io_backend ways[] = {CW_IO_URING, CW_IO_THREADS, CW_IO_AUTO};
    cwc_store st;
    cwc_store_begin(&st);
    io_directory = st.dir;
    st.cfg.worker_threads = 1;
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        long gauge = -1;
        st.cfg.io_backend = ways[i];
        cw_run_result res;
        int rc = cwc_run(&st.cfg, io_tasks_root, &gauge, &res);
        if (ways[i] == CW_IO_URING && cwc_no_ring(rc))
            continue; /* no ring here */
        ck_assert_msg(rc == CW_OK, "io_backend %d: status %d (%s)", (int)ways[i], rc, res.message);
        if (ways[i] == CW_IO_AUTO)
            ck_assert(gauge == 0 || gauge == 1);
        else
            ck_assert_int_eq(gauge, ways[i] == CW_IO_URING);
    }
    cwc_store_end(&st);
}

/* ---- The end of a run, a task waiting on the kernel -------------------------------------- */

enum { LONG_WRITE = 32 * 1024 * 1024 };

struct long_write {
    atomic_int started, unwound;
};

static void count_unwound(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* A synced write long enough to be under way when the root ends the run.
 * Its handler runs once either way: popped when the write finished first,
 * or run as the task unwinds after it. */
static void *long_writer(cw_ctx *ctx, void *arg)
{
    static uint8_t data[LONG_WRITE];
    struct long_write *w = arg;
    cw_blob *b = cwc_open(ctx, "end", "long", NULL);
    CW_CLEANUP_PUSH(ctx, count_unwound, &w->unwound);
    atomic_store(&w->started, 1);
    cw_storage_error err;
    (void)cw_blob_write_at(b, 0, data, sizeof data, CW_WRITE_SYNC, &err);
    CW_CLEANUP_POP(ctx, true);
    cw_blob_close(b);
    return NULL;
}

/* The root ends the run as soon as the writer has begun its write. */
static void *ends_during_a_write(cw_ctx *ctx, void *arg)
{
    struct long_write *w = arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "writer"), long_writer, w));
    while (!atomic_load(&w->started))
        cw_yield(ctx);
    return NULL;
}

/* A task parked on the kernel (an I/O thread's call, a ring's) is woken
 * by another thread when its call is done, which may be after the abort
 * that ends the run: cw_start must still wait for it to come back and
 * unwind, with a thread left to run it, not return with its handler
 * never run. */
CWC_CASE(native_run_end_waits_for_a_task_in_a_storage_call, "native", "NAT-004 RUN-003",
         PAR | CWC_NEEDS_STORAGE)
{
    cwc_store st;
    cwc_store_begin(&st);
    struct long_write w;
    atomic_init(&w.started, 0);
    atomic_init(&w.unwound, 0);
    cwc_run_ok(&st.cfg, ends_during_a_write, &w);
    int unwound = atomic_load(&w.unwound);
    ck_assert_msg(unwound == 1,
                  "cw_start returned with the writer's handler run %d times, not once: a task "
                  "waiting on the kernel when the run ended did not unwind",
                  unwound);
    cwc_store_end(&st);
}

/* ---- More storage calls at once than blocking_threads ------------------------------------ */

enum { CROWD_TASKS = 8, CROWD_BYTES = 4 * 1024 * 1024 };

/* Task `k`'s blob, written whole with a sync and read back. */
static void *crowd_writer(cw_ctx *ctx, void *arg)
{
    unsigned k = (unsigned)(uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "crowd%u", k);
    uint8_t *data = malloc(CROWD_BYTES);
    ck_assert_ptr_nonnull(data);
    memset(data, (int)(k + 1), CROWD_BYTES);
    cw_blob *b = cwc_open(ctx, "crowd", name, NULL);
    cw_storage_error err;
    int rc = cw_blob_write_at(b, 0, data, CROWD_BYTES, CW_WRITE_SYNC, &err);
    ck_assert_msg(rc == CW_OK, "write %s: %s", name, err.message);
    cwc_read_eq(b, 0, data, CROWD_BYTES);
    cw_blob_close(b);
    free(data);
    return NULL;
}

static void *crowd_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h[CROWD_TASKS];
    for (unsigned k = 0; k < CROWD_TASKS; k++)
        h[k] = cw_spawn(cw_child(ctx, "crowd"), crowd_writer, (void *)(uintptr_t)k);
    for (unsigned k = 0; k < CROWD_TASKS; k++) {
        ck_assert_int_eq(cw_join(h[k], NULL), CW_OK);
        cw_handle_release(h[k]);
    }
    return NULL;
}

/* A backend may make its storage calls on threads of its own, bounded
 * by blocking_threads as the reference's are (17-storage.md): more calls
 * under way at once than it has threads must each still complete, their
 * bytes read back, the others waiting for a thread. With CW_IO_URING too,
 * where the opens may still go to such threads. */
CWC_CASE(native_storage_calls_beyond_blocking_threads_complete, "native", "NAT-008 STOR-006",
         PAR | CWC_NEEDS_STORAGE)
{
    cwc_store st;
    cwc_store_begin(&st);
    st.cfg.blocking_threads = 3;
    cwc_run_ok(&st.cfg, crowd_root, NULL);
    cwc_store_end(&st);
}
