/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Unit tests for the crash model of memory storage (reference/
 * deterministic/memory_storage.c): what cw_memory_crash keeps of synced
 * and unsynced changes, under policies that drop everything, keep
 * everything, or tear writes.
 * Each test is the root task of a deterministic run.
 */
#include <check.h>
#include <string.h>

#include "cwrt/cwrt.h"
#include "deterministic/det.h"

static bool keep_none_byte(void *arg, size_t change, uint64_t byte)
{
    (void)arg, (void)change, (void)byte;
    return false;
}

static bool keep_none_resize(void *arg, size_t change)
{
    (void)arg, (void)change;
    return false;
}

static bool keep_all_byte(void *arg, size_t change, uint64_t byte)
{
    (void)arg, (void)change, (void)byte;
    return true;
}

static bool keep_all_resize(void *arg, size_t change)
{
    (void)arg, (void)change;
    return true;
}

/* Keeps the even bytes of each write, and no resize. */
static bool keep_even_byte(void *arg, size_t change, uint64_t byte)
{
    (void)arg, (void)change;
    return byte % 2 == 0;
}

/* Keeps the first *arg bytes of each write. */
static bool keep_prefix_byte(void *arg, size_t change, uint64_t byte)
{
    (void)change;
    return byte < *(uint64_t *)arg;
}

static const cw_crash_policy drop_all = {keep_none_byte, keep_none_resize, NULL};
static const cw_crash_policy keep_all = {keep_all_byte, keep_all_resize, NULL};
static const cw_crash_policy tear_even = {keep_even_byte, keep_none_resize, NULL};

static void crash(cw_ctx *ctx, const cw_crash_policy *policy)
{
    cw_memory_crash(cw_storage_of(cw_ctx_rt(ctx)), policy);
}

static cw_blob *open_blob(cw_ctx *ctx, const char *name, uint64_t *size)
{
    cw_blob *b;
    uint64_t got;
    ck_assert_int_eq(cw_storage_open(ctx, "p", name, strlen(name), &b, &got, NULL), CW_OK);
    if (size)
        *size = got;
    return b;
}

static void write_at(cw_blob *b, uint64_t offset, const char *s, cw_write_options options)
{
    ck_assert_int_eq(cw_blob_write_at(b, offset, s, strlen(s), options, NULL), CW_OK);
}

/* The blob `name` after the crash: its size and bytes. */
static void expect(cw_ctx *ctx, const char *name, const char *bytes, size_t len)
{
    uint64_t size;
    cw_blob *b = open_blob(ctx, name, &size);
    ck_assert_uint_eq(size, len);
    cw_iobuf_mut out;
    ck_assert_int_eq(cw_blob_read_at(b, 0, len, CW_READ_DEFAULT, &out, NULL), CW_OK);
    ck_assert(cw_iobuf_mut_equal_bytes(&out, bytes, len));
    cw_iobuf_mut_release(&out);
    cw_blob_close(b);
}

static void run(cw_task_fn root)
{
    cw_run_result res;
    ck_assert_int_eq(cw_start(cw_backend_deterministic(), NULL, root, NULL, &res), CW_OK);
}

static void *drop_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *unsynced = open_blob(ctx, "unsynced", NULL);
    write_at(unsynced, 0, "lost", CW_WRITE_DEFAULT);
    cw_blob *synced = open_blob(ctx, "synced", NULL);
    write_at(synced, 0, "kept", CW_WRITE_DEFAULT);
    ck_assert_int_eq(cw_blob_sync(synced, NULL), CW_OK);
    write_at(synced, 4, " and lost", CW_WRITE_DEFAULT);
    ck_assert_int_eq(cw_blob_resize(synced, 2, NULL), CW_OK);
    cw_blob *range = open_blob(ctx, "range", NULL);
    write_at(range, 0, "lost", CW_WRITE_DEFAULT);
    write_at(range, 4, "KEPT", CW_WRITE_SYNC);

    crash(ctx, &drop_all);
    expect(ctx, "unsynced", "", 0); /* created durably, nothing more */
    expect(ctx, "synced", "kept", 4);
    expect(ctx, "range", "\0\0\0\0KEPT", 8); /* a SYNC write is not a barrier */
    /* Handles from before the crash refer to blobs that are gone. */
    ck_assert_int_eq(cw_blob_sync(synced, NULL), CW_ERR_BLOB_MISSING);
    cw_blob_close(unsynced);
    cw_blob_close(synced);
    cw_blob_close(range);
    return NULL;
}

START_TEST(crash_drops_what_was_not_synced)
{
    run(drop_root);
}
END_TEST

static void *keep_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = open_blob(ctx, "ordered", NULL);
    write_at(b, 0, "0123456789", CW_WRITE_DEFAULT);
    ck_assert_int_eq(cw_blob_resize(b, 4, NULL), CW_OK);
    write_at(b, 6, "xy", CW_WRITE_DEFAULT);
    cw_blob *r = open_blob(ctx, "retired", NULL);
    write_at(r, 0, "11111111", CW_WRITE_DEFAULT);
    write_at(r, 2, "22", CW_WRITE_SYNC); /* the older bytes under it can no longer land */
    crash(ctx, &keep_all);
    expect(ctx, "ordered", "0123\0\0xy", 8); /* replayed in issue order */
    expect(ctx, "retired", "11221111", 8);
    cw_blob_close(b);
    cw_blob_close(r);
    return NULL;
}

START_TEST(crash_replays_in_issue_order)
{
    run(keep_root);
}
END_TEST

static void *tear_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = open_blob(ctx, "torn", NULL);
    write_at(b, 0, "xxxxxxxxzz", CW_WRITE_DEFAULT);
    ck_assert_int_eq(cw_blob_sync(b, NULL), CW_OK);
    write_at(b, 0, "ABCDEF", CW_WRITE_DEFAULT);
    crash(ctx, &tear_even);
    expect(ctx, "torn", "AxCxExxxzz", 10); /* bytes outside the write untouched */
    cw_blob_close(b);

    b = open_blob(ctx, "appended", NULL);
    write_at(b, 0, "base", CW_WRITE_SYNC);
    write_at(b, 4, "+tail", CW_WRITE_DEFAULT);
    uint64_t prefix = 2;
    cw_crash_policy keep_prefix = {keep_prefix_byte, keep_none_resize, &prefix};
    crash(ctx, &keep_prefix);
    expect(ctx, "appended", "base+t", 6); /* a torn append grows by what landed */
    cw_blob_close(b);
    return NULL;
}

START_TEST(crash_tears_writes)
{
    run(tear_root);
}
END_TEST

static void *removed_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = open_blob(ctx, "gone", NULL);
    write_at(b, 0, "unsynced", CW_WRITE_DEFAULT);
    ck_assert_int_eq(cw_storage_remove(ctx, "p", "gone", 4, NULL), CW_OK);
    cw_blob *fresh = open_blob(ctx, "gone", NULL);
    crash(ctx, &keep_all); /* the removed blob's changes do not reach the new one */
    expect(ctx, "gone", "", 0);
    cw_blob_close(b);
    cw_blob_close(fresh);
    return NULL;
}

START_TEST(crash_ignores_removed_blobs)
{
    run(removed_root);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("memory_crash");
    TCase *tc = tcase_create("crash");
    tcase_add_test(tc, crash_drops_what_was_not_synced);
    tcase_add_test(tc, crash_replays_in_issue_order);
    tcase_add_test(tc, crash_tears_writes);
    tcase_add_test(tc, crash_ignores_removed_blobs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
