/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * native_threads.c - a parallel backend when the process can start no
 * more threads (TASK-011, RUN-006, spec/13-native.md): the calls that
 * needed one fail with CW_ERR_NOMEM and everything else goes on; and a
 * blocking pool that can start its threads runs as many tasks at once as
 * its bound (NAT-002).
 *
 * The limit is the process-count limit, RLIMIT_NPROC, lowered to 1 in the
 * case's own process. The kernel does not apply it to the superuser, so a
 * case run as root takes the real and effective user "nobody" while the
 * limit holds, keeping root as its saved user to return to.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cases/fds.h"
#include "cases/storage.h"
#include "cases/util.h"

#define PAR CW_CAP_PARALLEL
#define NOBODY 65534

static struct rlimit saved_limit;
static uid_t saved_uid;

static void *returns_arg(void *arg)
{
    return arg;
}

/* From now on no thread can be started in this process. */
static void threads_exhausted(void)
{
    saved_uid = getuid();
    ck_assert_int_eq(getrlimit(RLIMIT_NPROC, &saved_limit), 0);
    if (saved_uid == 0)
        ck_assert_msg(setresuid(NOBODY, NOBODY, 0) == 0, "setresuid: %s", strerror(errno));
    struct rlimit one = {1, saved_limit.rlim_max};
    ck_assert_int_eq(setrlimit(RLIMIT_NPROC, &one), 0);
    pthread_t probe;
    int rc = pthread_create(&probe, NULL, returns_arg, NULL);
    if (rc == 0)
        pthread_join(probe, NULL);
    ck_assert_msg(rc != 0, "RLIMIT_NPROC does not stop thread creation here: the case cannot run");
}

static void threads_restored(void)
{
    ck_assert_int_eq(setrlimit(RLIMIT_NPROC, &saved_limit), 0);
    if (saved_uid == 0)
        ck_assert_int_eq(setresuid(0, 0, 0), 0);
}

static void *mark_ran(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    atomic_store((atomic_int *)arg, 1);
    return arg;
}

/* Spawn mark_ran with `kind` of execution; its join's status. */
static int spawn_kind(cw_ctx *ctx, int kind, atomic_int *ran)
{
    cw_ctx *c = cw_child(ctx, "needs_a_thread");
    if (kind == CW_EXEC_DEDICATED)
        cw_dedicated(c);
    else if (kind == CW_EXEC_SHARED_BLOCKING)
        cw_shared(c, true);
    cw_handle *h = cw_spawn(c, mark_ran, ran);
    int rc = cw_join(h, NULL);
    cw_handle_release(h);
    return rc;
}

static void *no_thread_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    atomic_int ran;
    atomic_init(&ran, 0);
    threads_exhausted();
    int dedicated = spawn_kind(ctx, CW_EXEC_DEDICATED, &ran);
    int blocking = spawn_kind(ctx, CW_EXEC_SHARED_BLOCKING, &ran);
    int shared = spawn_kind(ctx, CW_EXEC_SHARED, &ran); /* the workers are still there */
    threads_restored();
    ck_assert_int_eq(dedicated, CW_ERR_NOMEM);
    ck_assert_int_eq(blocking, CW_ERR_NOMEM);
    ck_assert_int_eq(shared, CW_OK);
    atomic_store(&ran, 0);
    ck_assert_int_eq(spawn_kind(ctx, CW_EXEC_DEDICATED, &ran), CW_OK); /* threads again */
    ck_assert_int_eq(atomic_load(&ran), 1);
    return ctx;
}

CWC_CASE(native_no_thread_for_a_task, "native", "TASK-011 NAT-002", PAR)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 2;
    cwc_run_ok(&cfg, no_thread_root, NULL);
}

/* ---- A blocking pool that has a thread [NAT-002] ------------------------------------------ */

/* A blocking task that holds its thread, as a blocking system call would,
 * until the root lets it go. */
static void *holds_its_thread(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cwc_hold_thread(arg);
    return arg;
}

static cw_handle *spawn_blocking(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    cw_ctx *c = cw_child(ctx, "blocking");
    cw_shared(c, true);
    return cw_spawn(c, fn, arg);
}

/* The blocking pool (bound 2) has one thread, held; no other can start. A
 * blocking task spawned then waits for that thread, as it would for a
 * full pool, and runs once it is free: a pool with a thread has one to
 * give, so the task is not one that no thread could run (TASK-011). */
static void *pool_with_a_thread_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cwc_hold held;
    cwc_hold_init(&held);
    cw_handle *first = spawn_blocking(ctx, holds_its_thread, &held);
    while (!atomic_load(&held.started))
        ck_assert_int_eq(cw_sleep(ctx, CW_MSEC), CW_OK);
    atomic_int ran;
    atomic_init(&ran, 0);
    threads_exhausted();
    cw_handle *second = spawn_blocking(ctx, mark_ran, &ran);
    int slept = cw_sleep(ctx, 20 * CW_MSEC); /* the second waits for the thread */
    atomic_store(&held.release, 1);
    int rc_first = cw_join(first, NULL), rc_second = cw_join(second, NULL);
    threads_restored();
    cw_handle_release(first);
    cw_handle_release(second);
    ck_assert_int_eq(slept, CW_OK);
    ck_assert_int_eq(rc_first, CW_OK);
    ck_assert_msg(rc_second == CW_OK, "a blocking task waiting for its pool's thread: status %d",
                  rc_second);
    ck_assert_int_eq(atomic_load(&ran), 1);
    return ctx;
}

CWC_CASE(native_blocking_waits_for_its_pools_thread, "native", "NAT-002 TASK-011", PAR)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 2;
    cfg.blocking_threads = 2;
    cwc_run_ok(&cfg, pool_with_a_thread_root, NULL);
}

/* ---- A blocking pool runs its bound at once [NAT-002] ------------------------------------- */

#define MEETERS 3 /* the pool's bound in the case */

/* Blocking tasks that each hold their thread until all of them started: a
 * pool that runs fewer at once leaves the first waiting for one that cannot
 * start. A thread gives up after 10 s (scaled), so a wrong backend fails
 * instead of hanging, and the others then stop waiting too. */
struct meeting {
    atomic_int started, gave_up;
};

static void *meets_the_others(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct meeting *m = arg;
    atomic_fetch_add(&m->started, 1);
    uint64_t give_up = cwc_mono_ns() + cwc_scaled(10ull * 1000000000u);
    while (atomic_load(&m->started) < MEETERS) {
        if (atomic_load(&m->gave_up) || cwc_mono_ns() > give_up) {
            atomic_store(&m->gave_up, 1);
            return NULL;
        }
        nanosleep(&(struct timespec){0, 1000000}, NULL); /* the thread waits, not the task */
    }
    return arg;
}

static void *blocking_meet_root(cw_ctx *ctx, void *arg)
{
    struct meeting *m = arg;
    cw_handle *h[MEETERS];
    for (int i = 0; i < MEETERS; i++)
        h[i] = spawn_blocking(ctx, meets_the_others, m);
    int met = 0;
    for (int i = 0; i < MEETERS; i++) {
        void *v = NULL;
        ck_assert_int_eq(cw_join(h[i], &v), CW_OK);
        met += v != NULL;
        cw_handle_release(h[i]);
    }
    ck_assert_msg(met == MEETERS,
                  "%d blocking tasks, blocking_threads %d: only %d saw all of them start", MEETERS,
                  MEETERS, met);
    return ctx;
}

CWC_CASE(native_blocking_pool_runs_its_bound_at_once, "native", "NAT-002", PAR)
{
    struct meeting m;
    atomic_init(&m.started, 0);
    atomic_init(&m.gave_up, 0);
    cw_config cfg = cwc_config();
    cfg.worker_threads = 2;
    cfg.blocking_threads = MEETERS;
    cwc_run_ok(&cfg, blocking_meet_root, &m);
}

static void *never_runs(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    atomic_store((atomic_int *)arg, 1);
    return NULL;
}

CWC_CASE(native_no_thread_for_a_run, "native", "RUN-006 MET-017 NAT-008", PAR)
{
    atomic_int ran;
    atomic_init(&ran, 0);
    cw_config cfg = cwc_config();
    cw_run_result res;
    cwc_fdset before;
    cwc_open_fds(&before);
    threads_exhausted();
    int rc = cwc_run(&cfg, never_runs, &ran, &res);
    cw_run_result served;
    cw_config with_endpoint = cfg;
    with_endpoint.metrics_address = "127.0.0.1:0"; /* a thread of its own, too */
    int served_rc = cwc_run(&with_endpoint, never_runs, &ran, &served);
    cw_run_result ringed;
    cw_config with_rings = cfg;
    with_rings.io_backend = CW_IO_URING; /* rings to give back too, where there are any */
    int ringed_rc = cwc_run(&with_rings, never_runs, &ran, &ringed);
    threads_restored();
    cwc_no_new_fds(&before, "a refused run"); /* the process as it was [RUN-006] */
    ck_assert_int_eq(rc, CW_ERR_NOMEM);
    ck_assert_int_eq(res.status, CW_ERR_NOMEM);
    ck_assert_msg(res.message[0] != '\0', "a refused run says why");
    ck_assert_msg(served_rc == CW_ERR_NOMEM || served_rc == CW_ERR_IO, "status %d", served_rc);
    ck_assert_msg(served.message[0] != '\0', "a refused run says why");
    /* No thread, or no ring at all where the build or kernel has none. */
    ck_assert_msg(ringed_rc == CW_ERR_NOMEM || ringed_rc == CW_ERR_UNSUPPORTED, "status %d",
                  ringed_rc);
    ck_assert_msg(ringed.message[0] != '\0', "a refused run says why");
    ck_assert_int_eq(atomic_load(&ran), 0);
    cwc_run_ok(&cfg, never_runs, &ran); /* and the process can run again */
    ck_assert_int_eq(atomic_load(&ran), 1);
}

/* The same refusal with descriptor 0 free, as a daemon that closed its
 * standard input runs: the endpoint's listener, the first descriptor the
 * run opens, may be 0, and the refused run closes it as any other
 * [NAT-009, NAT-006]. */
CWC_CASE(native_no_thread_for_the_endpoint_descriptor_zero, "native", "RUN-006 NAT-009 NAT-006",
         PAR)
{
    if (fcntl(0, F_GETFD) != -1)
        ck_assert_int_eq(close(0), 0); /* the case's process's standard input */
    atomic_int ran;
    atomic_init(&ran, 0);
    cw_config cfg = cwc_config();
    cfg.metrics_address = "127.0.0.1:0";
    cw_run_result res;
    threads_exhausted();
    int rc = cwc_run(&cfg, never_runs, &ran, &res);
    threads_restored();
    ck_assert_msg(rc == CW_ERR_NOMEM || rc == CW_ERR_IO, "status %d", rc);
    ck_assert_int_eq(atomic_load(&ran), 0);
    ck_assert_msg(fcntl(0, F_GETFD) == -1 && errno == EBADF,
                  "descriptor 0, given to a run refused for want of a thread, is still open");
}

/* Storage with no thread to give its I/O [spec/13-native.md, "When the
 * process cannot start another thread"]: every call is made on the calling
 * task's thread instead, a sync started with cw_blob_start_sync included,
 * whose handle still joins with the sync's status [STOR-016]. The first
 * storage call of the run comes after the limit, so no thread of the
 * backend's storage can have started before it. */
static void *storage_without_threads_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    threads_exhausted();
    cw_blob *b = NULL;
    uint64_t size;
    int opened = cw_storage_open(ctx, "p", "blob", 4, &b, &size, NULL);
    int wrote = opened == CW_OK ? cw_blob_write_at(b, 0, "unthreaded", 10, 0, NULL) : -1;
    cw_handle *h = opened == CW_OK ? cw_blob_start_sync(b) : NULL;
    int synced = h ? cw_join(h, NULL) : -1;
    threads_restored();
    ck_assert_int_eq(opened, CW_OK);
    ck_assert_int_eq(wrote, CW_OK);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(synced, CW_OK);
    cw_handle_release(h);
    cwc_read_eq(b, 0, "unthreaded", 10);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(native_no_thread_for_storage, "native", "STOR-016 NAT-008",
         PAR | CWC_NEEDS_STORAGE | CW_CAP_PERSISTENT_STORAGE)
{
    cwc_store s;
    cwc_store_begin(&s);
    ck_assert_int_eq(chmod(s.dir, 0777), 0); /* the user the limit runs under makes files */
    cwc_run_ok(&s.cfg, storage_without_threads_root, NULL);
    cwc_store_end(&s);
}
