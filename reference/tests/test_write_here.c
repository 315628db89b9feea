/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Where the native backend makes a blob write (native/file_io.c): a write
 * of 64 KiB or less with no option on the calling task's own thread, the
 * others on an I/O thread; and after a write on the task's thread was
 * slow, as one held back by the kernel's dirty-page throttling is, every
 * write on an I/O thread for a while, so a throttled disk does not keep
 * stalling the workers. The thread of each write is seen through cw_os
 * (native/os.h), whose pwritev2 this test wraps: it notes the thread of
 * each call, and sleeps in it when asked to.
 *
 * The backend decides by how long a write took, so on a loaded machine an
 * ordinary write can be slow too and move the next ones to a thread. A
 * run that saw such a write proves nothing either way: the pattern is
 * tried in up to ATTEMPTS runs and must be seen whole in one. A backend
 * that decides wrongly fails every run.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cwrt/cwrt.h"
#include "native/os.h"

static cw_os_calls real;
static pthread_t last_writer; /* the thread of the last pwritev2 */
static atomic_int calls;      /* pwritev2 calls so far */
static atomic_bool stall;     /* the next call sleeps this long first: */
enum { STALL_MS = 3 };        /* above the backend's 1 ms threshold */
enum { ATTEMPTS = 5 };
static pthread_mutex_t seen = PTHREAD_MUTEX_INITIALIZER;

static ssize_t noting_pwritev2(int fd, const struct iovec *iov, int n, off_t offset, int flags)
{
    if (atomic_exchange(&stall, false)) {
        struct timespec ts = {0, STALL_MS * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&seen);
    last_writer = pthread_self();
    pthread_mutex_unlock(&seen);
    atomic_fetch_add(&calls, 1);
    return real.pwritev2(fd, iov, n, offset, flags);
}

static void setup(void)
{
    real = cw_os;
    cw_os.pwritev2 = noting_pwritev2;
    atomic_store(&calls, 0);
    atomic_store(&stall, false);
}

static void teardown(void)
{
    cw_os = real;
}

/* Write `len` bytes with `options`: true when the task's own thread made
 * the system call. */
static bool written_here(cw_blob *b, size_t len, cw_write_options options)
{
    static char bytes[128 * 1024];
    int before = atomic_load(&calls);
    cw_storage_error err;
    int rc = cw_blob_write_at(b, 0, bytes, len, options, &err);
    ck_assert_msg(rc == CW_OK, "write: %s", err.message);
    ck_assert_int_gt(atomic_load(&calls), before);
    pthread_mutex_lock(&seen);
    bool here = pthread_equal(last_writer, pthread_self());
    pthread_mutex_unlock(&seen);
    return here;
}

/* The writes the rule expects, in order: *arg is set to whether each was
 * made where it should be. The writes with options and the large one go
 * to a thread whatever the timing, so those are asserted at once. */
static void *where_root(cw_ctx *ctx, void *arg)
{
    bool *seen_whole = arg;
    cw_blob *b;
    uint64_t size;
    cw_storage_error err;
    int rc = cw_storage_open(ctx, "p", "blob", 4, &b, &size, &err);
    ck_assert_msg(rc == CW_OK, "open: %s", err.message);
    bool ok = written_here(b, 4096, CW_WRITE_DEFAULT);
    ok = written_here(b, 64 * 1024, CW_WRITE_DEFAULT) && ok;
    ck_assert(!written_here(b, 64 * 1024 + 1, CW_WRITE_DEFAULT));
    ck_assert(!written_here(b, 4096, CW_WRITE_SYNC));
    ck_assert(!written_here(b, 4096, CW_WRITE_DONT_CACHE));

    ok = written_here(b, 4096, CW_WRITE_DEFAULT) && ok;
    /* A slow write, made here; then the writes go to a thread ... */
    atomic_store(&stall, true);
    ok = written_here(b, 4096, CW_WRITE_DEFAULT) && ok;
    ck_assert(!written_here(b, 4096, CW_WRITE_DEFAULT));
    ck_assert(!written_here(b, 4096, CW_WRITE_DEFAULT));
    /* ... until a second has passed. */
    ck_assert_int_eq(cw_sleep(ctx, 1100 * CW_MSEC), CW_OK);
    ok = written_here(b, 4096, CW_WRITE_DEFAULT) && ok;
    cw_blob_close(b);
    *seen_whole = ok;
    return NULL;
}

/* One run of where_root in a directory of its own. */
static bool pattern_seen(void)
{
    char dir[] = "/tmp/cw-write-here-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.storage_directory = dir;
    cfg.io_backend = CW_IO_THREADS; /* a ring makes no pwritev2: the same choice, unseen */
    cw_run_result res;
    bool seen_whole = false;
    int rc = cw_start(cw_backend_native(), &cfg, where_root, &seen_whole, &res);
    ck_assert_msg(rc == CW_OK, "run: %s", res.message);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    return seen_whole;
}

START_TEST(small_plain_writes_on_the_task_thread_until_one_is_slow)
{
    int attempt = 1;
    while (!pattern_seen()) {
        ck_assert_msg(attempt < ATTEMPTS,
                      "in %d runs, never were small plain writes made on the task's thread "
                      "until a slow one, then on a thread for a second",
                      ATTEMPTS);
        attempt++;
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("write_here");
    TCase *tc = tcase_create("native");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, small_plain_writes_on_the_task_thread_until_one_is_slow);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
