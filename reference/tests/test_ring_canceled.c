/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The native backend's storage when its io_uring gives up calls
 * (native/file_io.c, ring_gave_up): the kernel answers ECANCELED for work
 * it could not find an io-wq thread for, as when thread creation keeps
 * meeting a pending signal. Nothing was done, so nothing may be reported:
 * every read, write and sync succeeds, and the bytes are the ones written.
 * The ring's results pass through cw_os (native/os.h), whose stand-in here
 * turns every one of them into -ECANCELED: the worst a kernel can do.
 */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cwrt/cwrt.h"
#include "native/os.h"

static cw_os_calls real;
static atomic_int given_up; /* completions turned into -ECANCELED */

static int give_up(int res)
{
    (void)res;
    atomic_fetch_add(&given_up, 1);
    return -ECANCELED;
}

static void setup(void)
{
    real = cw_os;
    cw_os.ring_result = give_up;
    atomic_store(&given_up, 0);
}

static void teardown(void)
{
    cw_os = real;
}

/* Large enough that no write is made on the task's thread (file_io.c,
 * write_here): each goes through the ring. */
enum { LEN = 256 * 1024 };

static void write_ok(cw_blob *b, uint64_t at, const uint8_t *bytes, size_t len,
                     cw_write_options options)
{
    cw_storage_error err;
    int rc = cw_blob_write_at(b, at, bytes, len, options, &err);
    ck_assert_msg(rc == CW_OK, "write: %s", err.message);
}

static void read_eq(cw_blob *b, uint64_t at, const uint8_t *want, size_t len,
                    cw_read_options options)
{
    static uint8_t got[2 * LEN];
    cw_storage_error err;
    int rc = cw_blob_read_into(b, at, got, len, options, &err);
    ck_assert_msg(rc == CW_OK, "read: %s", err.message);
    ck_assert(memcmp(got, want, len) == 0);
}

static void *canceled_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static uint8_t bytes[2 * LEN];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)(i * 13 + 5);
    cw_blob *b;
    uint64_t size;
    cw_storage_error err;
    int rc = cw_storage_open(ctx, "p", "blob", 4, &b, &size, &err);
    ck_assert_msg(rc == CW_OK, "open: %s", err.message);
    write_ok(b, 0, bytes, LEN, CW_WRITE_DEFAULT);
    write_ok(b, LEN, bytes + LEN, LEN, CW_WRITE_SYNC);
    ck_assert_int_eq(cw_blob_sync(b, &err), CW_OK);
    read_eq(b, 0, bytes, sizeof bytes, CW_READ_DONT_CACHE);
    cw_blob_close(b);
    return NULL;
}

START_TEST(storage_calls_the_ring_gave_up_are_made_anyway)
{
    char dir[] = "/tmp/cw-ring-canceled-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.storage_directory = dir;
    cfg.io_backend = CW_IO_URING;
    cw_run_result res;
    int rc = cw_start(cw_backend_native(), &cfg, canceled_root, NULL, &res);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    if (rc != CW_OK && strstr(res.message, "has no io_uring")) {
        printf("ring_canceled: skipped, %s\n", res.message);
        return;
    }
    ck_assert_msg(rc == CW_OK, "run: %s", res.message);
    /* The write, the synced write, the sync and the read each went
     * through the ring, and were turned down there. */
    ck_assert_int_ge(atomic_load(&given_up), 4);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ring_canceled");
    TCase *tc = tcase_create("native");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, storage_calls_the_ring_gave_up_are_made_anyway);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
