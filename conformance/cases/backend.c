/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * backend.c - the backend table itself, and how a backend shares the C
 * library with the program (spec/10-backend.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases/util.h"
#include "harness/allocator.h"
#include "harness/misuse.h"

static void *objects_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_ptr_eq(cw__backend_of(ctx), cwc_backend);
    cw_ctx *child = cw_child(ctx, "c");
    ck_assert_ptr_eq(cw__backend_of(child), cwc_backend);
    cw_handle *h = cw_handle_ready(ctx, CW_OK, NULL);
    ck_assert_ptr_eq(cw__backend_of(h), cwc_backend);
    cw_chan *c = cw_chan_new(ctx, 1, 1);
    ck_assert_ptr_eq(cw__backend_of(c), cwc_backend);
    cw_oneshot *o = cw_oneshot_new(ctx, 1);
    ck_assert_ptr_eq(cw__backend_of(o), cwc_backend);
    cw_signal *s = cw_stopped(ctx);
    ck_assert_ptr_eq(cw__backend_of(s), cwc_backend);
    cw_waker *w = cw_waker_current(ctx);
    ck_assert_ptr_eq(cw__backend_of(w), cwc_backend);
    cw_wait wait = cw_wait_pending(ctx);
    ck_assert_ptr_eq(wait.backend, cwc_backend);
    cw_waker_release(w);
    cw_signal_release(s);
    cw_oneshot_sender_drop(o);
    cw_chan_sender_drop(c);
    cw_chan_receiver_drop(c);
    cw_handle_release(h);
    cw_ctx_release(child);
    return NULL;
}

CWC_CASE(backend_table_and_objects, "backend", "ABI-001 ABI-002 ABI-003 RUN-008", CWC_REPEATED)
{
    ck_assert_uint_eq(CW_ABI_MAJOR(cwc_backend->abi_version), CW_ABI_MAJOR(CW_ABI_VERSION));
    ck_assert_uint_ge(cwc_backend->size, offsetof(cw_backend, audit_digest));
    ck_assert_ptr_nonnull(cwc_backend->name);
    ck_assert_uint_eq(cwc_backend->capabilities &
                          ~(uint64_t)(CW_CAP_DETERMINISTIC | CW_CAP_AUDIT | CW_CAP_PARALLEL |
                                      CW_CAP_PERSISTENT_STORAGE | CW_CAP_RECOVER),
                      0);
    cwc_run_ok(NULL, objects_root, NULL);
}

/* A declaration is whole: what a profile needs is declared with it, and a
 * capability comes with its entries (and they only with it). */
CWC_CASE(backend_declares_whole_profiles, "backend", "ABI-004 RUN-008", CWC_REPEATED)
{
    const cw_backend *b = cwc_backend;
    int recover = (b->capabilities & CW_CAP_RECOVER) != 0;
    ck_assert_int_eq(CW_BACKEND_HAS(b, start_checkpoint), recover);
    ck_assert_int_eq(CW_BACKEND_HAS(b, recover), recover);
    ck_assert_int_eq(CW_BACKEND_HAS(b, checkpoint_free), recover);
    if (recover)
        ck_assert_msg(b->capabilities & CW_CAP_DETERMINISTIC, "recover needs deterministic");
    if (b->capabilities & CW_CAP_DETERMINISTIC)
        ck_assert_msg(b->capabilities & CW_CAP_AUDIT, "deterministic needs audit");
    if (CW_BACKEND_HAS(b, storage) || CW_BACKEND_HAS(b, network))
        ck_assert_msg(CW_BACKEND_HAS(b, buffers), "storage and network need buffers");
    if (b->capabilities & CW_CAP_PERSISTENT_STORAGE)
        ck_assert_msg(CW_BACKEND_HAS(b, storage), "persistent-storage needs storage");
}

static void *audit_root(cw_ctx *ctx, void *arg)
{
    char digest[65];
    int rc = cw_audit_digest(ctx, digest);
    if (*(int *)arg) {
        ck_assert_int_eq(rc, CW_OK);
        ck_assert_uint_eq(strlen(digest), 64);
    } else {
        ck_assert_int_eq(rc, CW_ERR_UNSUPPORTED);
    }
    return NULL;
}

CWC_CASE(audit_matches_capability, "backend", "ABI-003 RUN-008", CWC_REPEATED)
{
    int has = (cwc_backend->capabilities & CW_CAP_AUDIT) != 0;
    cwc_run_ok(NULL, audit_root, &has);
    /* With the run's audit switched off there is no digest at all. */
    cw_config cfg = cwc_config();
    cfg.audit = false;
    int none = 0;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, audit_root, &none, &res), CW_OK);
    ck_assert_str_eq(res.digest, "");
}

CWC_CASE(error_strings, "errors", "ERR-001 RUN-008", CWC_REPEATED)
{
    ck_assert_str_eq(cw_strerror(CW_OK), "ok");
    ck_assert_str_eq(cw_strerror(CW_ERR_EXITED), "exited");
    ck_assert_str_eq(cw_strerror(CW_ERR_CLOSED), "closed");
    ck_assert_str_eq(cw_strerror(CW_ERR_ABORTED), "aborted");
    ck_assert_str_eq(cw_strerror(CW_ERR_TIMEOUT), "timeout");
    ck_assert_str_eq(cw_strerror(CW_ERR_BIND_FAILED), "bind failed");
    ck_assert_str_eq(cw_strerror(CW_ERR_RECV_FAILED), "recv failed");
    ck_assert_str_eq(cw_strerror(12345), "unknown error");
    /* Every code has its own text and is negative. */
    for (int a = -70; a < 0; a++)
        for (int b = a + 1; b < 0; b++)
            if (strcmp(cw_strerror(a), "unknown error") != 0)
                ck_assert_str_ne(cw_strerror(a), cw_strerror(b));
}

/* ---- The C library's mutexes [ABI-005] ------------------------------------------------- */

/* The check is the harness's (harness/locks.c), made in every case; this
 * case first shows that it is live in this process, then gives it a run
 * that takes the backend through its locks on every thread it has: tasks
 * of each execution, channels and oneshots between them, sleeps, a stop. */
enum { LOCK_ROUNDS = 200, LOCK_TASKS = 8 };

static void *lock_worker(cw_ctx *ctx, void *arg)
{
    cw_chan *c = arg;
    for (int i = 0; i < LOCK_ROUNDS; i++) {
        int v = i;
        CWC_REQUIRE(cw_chan_send(c, &v) == CW_OK, "a send failed");
        if (i % 50 == 0)
            CWC_REQUIRE(cw_sleep(ctx, CW_MSEC) == CW_OK, "a sleep failed");
        else if (i % 7 == 0)
            cw_yield(ctx);
    }
    return NULL;
}

static void *oneshot_send_7(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    int v = 7;
    return (void *)(intptr_t)cw_oneshot_send(arg, &v);
}

static cw_ctx *lock_context(cw_ctx *ctx, int i)
{
    cw_ctx *child = cw_child(ctx, "worker");
    return i % 4 == 1 ? cw_dedicated(child) : cw_shared(child, i % 4 == 2);
}

static void *locks_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_chan *c = cw_chan_new(ctx, sizeof(int), 4);
    cw_handle *h[LOCK_TASKS];
    for (int i = 0; i < LOCK_TASKS; i++)
        h[i] = cw_spawn(lock_context(ctx, i), lock_worker, c);
    int v;
    for (int got = 0; got < LOCK_TASKS * LOCK_ROUNDS; got++)
        CWC_REQUIRE(cw_chan_recv(c, &v) == CW_OK, "receive %d failed", got);
    for (int i = 0; i < LOCK_TASKS; i++) {
        CWC_REQUIRE(cw_join(h[i], NULL) == CW_OK, "a worker's join failed");
        cw_handle_release(h[i]);
    }
    cw_oneshot *o = cw_oneshot_new(ctx, sizeof(int));
    cw_handle *sender = cw_spawn(cw_dedicated(cw_child(ctx, "once")), oneshot_send_7, o);
    CWC_REQUIRE(cw_oneshot_recv(o, &v) == CW_OK && v == 7, "the oneshot gave no 7");
    CWC_REQUIRE(cw_join(sender, NULL) == CW_OK, "the oneshot's sender failed");
    cw_handle_release(sender);
    cw_chan_sender_drop(c);
    cw_chan_receiver_drop(c);
    return NULL;
}

/* The wait status of a child process that runs `misuse` with its
 * standard error silenced: what the harness's check made of it. */
static int misuse_status(void (*misuse)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDERR_FILENO);
        misuse();
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    return status;
}

/* Fail unless the harness's check `what` ended a child that did `misuse`
 * (`done`) with SIGABRT; then clear the text that check left. */
static void require_live(void (*misuse)(void), const char *what, const char *done)
{
    int status = misuse_status(misuse);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
                  "the harness's %s is not live in this process (%s ended with status %#x)", what,
                  done, (unsigned)status);
    cwc_misuse_arm(); /* that text was the check's own */
}

/* Unlock a mutex nobody holds. */
static void unheld_unlock(void)
{
    static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_unlock(&free_lock);
}

CWC_CASE(mutexes_held_where_posix_says, "backend", "ABI-005 RUN-008", 0)
{
    if (cwc_locks_watch())
        require_live(unheld_unlock, "check of mutexes", "an unlock of a mutex nobody held");
    cwc_run_ok(NULL, locks_root, NULL);
}

/* ---- The C library's heap [ABI-005] ---------------------------------------------------- */

/* The guard is the harness's (harness/allocator.c), read at every free in
 * every case; this case shows that it is live, then makes the backend
 * allocate blocks of many sizes, where a length one short shows: channels
 * of elements of 1 to 40 bytes, labels and attribute values of 1 to 40
 * characters. */
enum { ODD_SIZES = 40 };

static void *sized_blocks_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char text[ODD_SIZES + 1], elem[ODD_SIZES], got[ODD_SIZES];
    for (int n = 1; n <= ODD_SIZES; n++) {
        memset(text, 'a' + n % 26, (size_t)n);
        text[n] = '\0';
        cw_ctx *child = cw_with_attribute(cw_child(ctx, text), "k", text);
        CWC_REQUIRE(strlen(cw_label(child)) == (size_t)n, "label %d has another length", n);
        cw_ctx_release(child);
        cw_chan *c = cw_chan_new(ctx, (size_t)n, 2);
        memset(elem, n, (size_t)n);
        CWC_REQUIRE(cw_chan_send(c, elem) == CW_OK, "a send of %d bytes failed", n);
        CWC_REQUIRE(cw_chan_recv(c, got) == CW_OK && memcmp(got, elem, (size_t)n) == 0,
                    "%d bytes came back changed", n);
        cw_chan_sender_drop(c);
        cw_chan_receiver_drop(c);
    }
    return NULL;
}

/* Write one byte past a block and free it. Through pointers the compiler
 * cannot see through, or it drops the store to a block that is only freed. */
static void overrun(void)
{
    void *(*volatile alloc)(size_t) = malloc;
    void (*volatile give_back)(void *) = free;
    volatile size_t n = 10;
    char *p = alloc(n);
    if (p)
        p[n] = 1;
    give_back(p);
}

CWC_CASE(heap_blocks_written_within_their_end, "backend", "ABI-005 RUN-008", 0)
{
    if (cwc_allocator_live())
        require_live(overrun, "guard of heap blocks", "a byte written past a block");
    cwc_run_ok(NULL, sized_blocks_root, NULL);
}
