/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The native backend when threads cannot be started (reference/native/,
 * spec/13-native.md): thread creation goes through cw_os (native/os.h),
 * which these tests make fail on demand. The conformance suite checks the
 * same for tasks with a real process limit (native_threads.c); here the
 * failure is chosen exactly: storage I/O without an I/O thread, and a
 * metrics endpoint without its thread.
 */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cwrt/cwrt.h"
#include "native/os.h"

static atomic_bool refuse;
static atomic_int refused;

static int maybe_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
                        void *arg)
{
    if (atomic_load(&refuse)) {
        atomic_fetch_add(&refused, 1);
        return EAGAIN;
    }
    return pthread_create(thread, attr, fn, arg);
}

static void setup(void)
{
    cw_os.thread_create = maybe_create;
    atomic_store(&refuse, false);
    atomic_store(&refused, 0);
}

static void *storage_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    atomic_store(&refuse, true); /* the workers run; no I/O thread ever will */
    cw_blob *b;
    uint64_t size;
    cw_storage_error err;
    int rc = cw_storage_open(ctx, "p", "blob", 4, &b, &size, &err);
    ck_assert_msg(rc == CW_OK, "open: %s", err.message);
    ck_assert_int_eq(cw_blob_write_at(b, 0, "hello", 5, CW_WRITE_DEFAULT, &err), CW_OK);
    ck_assert_int_eq(cw_blob_sync(b, &err), CW_OK);
    char got[5];
    ck_assert_int_eq(cw_blob_read_into(b, 0, got, 5, CW_READ_DEFAULT, &err), CW_OK);
    ck_assert_mem_eq(got, "hello", 5);
    cw_handle *h = cw_blob_start_sync(b);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cw_blob_close(b);
    ck_assert_int_gt(atomic_load(&refused), 0); /* a thread was asked for, and refused */
    atomic_store(&refuse, false);
    return NULL;
}

START_TEST(storage_without_io_threads)
{
    char dir[] = "/tmp/cw-threadless-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.storage_directory = dir;
    cw_run_result res;
    ck_assert_int_eq(cw_start(cw_backend_native(), &cfg, storage_root, NULL, &res), CW_OK);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static void *unreached(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    ck_abort_msg("a refused run ran its root");
    return NULL;
}

static void *returns(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

START_TEST(metrics_endpoint_without_its_thread)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.metrics_address = "127.0.0.1:0";
    cw_run_result res;
    atomic_store(&refuse, true);
    ck_assert_int_eq(cw_start(cw_backend_native(), &cfg, unreached, NULL, &res), CW_ERR_IO);
    ck_assert_ptr_nonnull(strstr(res.message, "metrics endpoint"));
    atomic_store(&refuse, false);
    ck_assert_int_eq(cw_start(cw_backend_native(), &cfg, returns, NULL, &res), CW_OK);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("threadless");
    TCase *tc = tcase_create("native");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, storage_without_io_threads);
    tcase_add_test(tc, metrics_endpoint_without_its_thread);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
