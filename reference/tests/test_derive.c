/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Unit tests for derived tables (reference/core/derive.c, cwrt/derive.h):
 * a run started through a copy of a reference table names the copy in
 * every object it hands out, so an entry replaced in the copy, or in one of
 * its nested tables, is the one each call on an object reaches.
 */
#include <check.h>
#include <string.h>

#include "cwrt/cwrt.h"

/* ---- A copy that counts the calls of a few replaced entries --------------- */

static const cw_backend *base_of; /* the table the counting entries forward to */
static const cw_buffer_ops *base_buffers;
static const cw_metric_ops *base_metrics;
static const cw_storage_ops *base_storage;
static const cw_network_ops *base_network;
static cw_buffer_ops my_buffers;
static cw_metric_ops my_metrics;
static cw_storage_ops my_storage;
static cw_network_ops my_network;
static int spawns, slices, counter_adds, blob_writes, sink_sends;

static cw_handle *count_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    spawns++;
    return base_of->spawn(ctx, fn, arg);
}

static int count_slice(const cw_iobuf *buf, size_t start, size_t end, cw_iobuf *out)
{
    slices++;
    return base_buffers->iobuf_slice(buf, start, end, out);
}

static void count_counter_add(cw_metric *m, uint64_t n)
{
    counter_adds++;
    base_metrics->counter_add(m, n);
}

static int count_write_at(cw_blob *b, uint64_t offset, const void *src, size_t len,
                          cw_write_options options, cw_storage_error *err)
{
    blob_writes++;
    return base_storage->blob_write_at(b, offset, src, len, options, err);
}

static int count_sink_send(cw_sink *s, const cw_iobufs *bufs)
{
    sink_sends++;
    return base_network->sink_send(s, bufs);
}

/* Derive `copy` from `base` and replace one entry of each table in it. */
static void derive_counting(const cw_backend *base, cw_backend *copy)
{
    ck_assert_int_eq(cw_backend_derive(base, copy), CW_OK);
    base_of = base;
    base_buffers = base->buffers, base_metrics = base->metrics;
    base_storage = base->storage, base_network = base->network;
    my_buffers = *base->buffers, my_metrics = *base->metrics;
    my_storage = *base->storage, my_network = *base->network;
    my_buffers.iobuf_slice = count_slice;
    my_metrics.counter_add = count_counter_add;
    my_storage.blob_write_at = count_write_at;
    my_network.sink_send = count_sink_send;
    copy->spawn = count_spawn;
    copy->buffers = &my_buffers, copy->metrics = &my_metrics;
    copy->storage = &my_storage, copy->network = &my_network;
    copy->name = "counting";
    spawns = slices = counter_adds = blob_writes = sink_sends = 0;
}

/* ---- What a run does with each kind of object -------------------------------- */

static void *nothing(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

static void use_tasks(cw_ctx *ctx, const cw_backend *self)
{
    cw_ctx *child = cw_child(ctx, "child");
    ck_assert_ptr_eq(cw__backend_of(child), self);
    cw_handle *h = cw_spawn(child, nothing, NULL);
    ck_assert_ptr_eq(cw__backend_of(h), self);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cw_chan *c = cw_chan_new(ctx, sizeof(int), 1);
    ck_assert_ptr_eq(cw__backend_of(c), self);
    cw_chan_receiver_drop(c);
    cw_chan_sender_drop(c);
    cw_signal *s = cw_stopped(ctx);
    ck_assert_ptr_eq(cw__backend_of(s), self);
    cw_signal_release(s);
}

static void use_metrics(cw_ctx *ctx, const cw_backend *self)
{
    cw_metric *m = cw_counter(ctx, "things", "things done");
    ck_assert_ptr_eq(cw__backend_of(m), self);
    cw_counter_inc(m);
    ck_assert_uint_eq(cw_counter_get(m), 1);
    cw_metric_release(m);
}

static void use_storage(cw_ctx *ctx, const cw_backend *self)
{
    cw_blob *blob;
    uint64_t size;
    ck_assert_int_eq(cw_storage_open(ctx, "p", "b", 1, &blob, &size, NULL), CW_OK);
    ck_assert_ptr_eq(cw__backend_of(blob), self);
    ck_assert_int_eq(cw_blob_write_at(blob, 0, "abcd", 4, CW_WRITE_DEFAULT, NULL), CW_OK);
    cw_iobuf_mut m;
    ck_assert_int_eq(cw_blob_read_at(blob, 0, 4, CW_READ_DEFAULT, &m, NULL), CW_OK);
    ck_assert_ptr_eq(m.hdr.backend, self);
    cw_iobuf frozen, part;
    cw_iobuf_mut_freeze(&m, &frozen);
    ck_assert_int_eq(cw_iobuf_slice(&frozen, 1, 3, &part), CW_OK);
    ck_assert(cw_iobuf_equal_bytes(&part, "bc", 2));
    cw_iobuf_release(&part);
    cw_iobuf_release(&frozen);
    cw_blob_close(blob);
}

static void use_network(cw_ctx *ctx, const cw_backend *self)
{
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    ck_assert_ptr_eq(cw__backend_of(sink), self);
    ck_assert_ptr_eq(cw__backend_of(stream), self);
    cw_iobufs *l = cw_iobufs_new(self);
    cw_iobuf b;
    ck_assert_int_eq(cw_iobuf_copy(self, "hi", 2, &b), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
    ck_assert_int_eq(cw_sink_send(sink, l), CW_OK);
    cw_iobufs_release(l);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(stream, 2, &got), CW_OK);
    ck_assert_ptr_eq(cw__backend_of(got), self);
    cw_iobufs_release(got);
    cw_sink_close(sink);
    cw_stream_close(stream);
}

static void *use_everything(cw_ctx *ctx, void *arg)
{
    const cw_backend *self = arg;
    ck_assert_ptr_eq(cw__backend_of(ctx), self);
    use_tasks(ctx, self);
    use_metrics(ctx, self);
    use_storage(ctx, self);
    if (self->capabilities & CW_CAP_DETERMINISTIC)
        use_network(ctx, self);
    return NULL;
}

static void expect_counted(bool network)
{
    ck_assert_int_eq(spawns, 1);
    ck_assert_int_eq(slices, 1);
    ck_assert_int_ge(counter_adds, 1);
    ck_assert_int_eq(blob_writes, 1);
    ck_assert_int_eq(sink_sends, network ? 1 : 0);
}

START_TEST(deterministic_run_names_the_copy)
{
    static cw_backend copy;
    derive_counting(cw_backend_deterministic(), &copy);
    cw_run_result out;
    ck_assert_int_eq(cw_start(&copy, NULL, use_everything, &copy, &out), CW_OK);
    expect_counted(true);
    cw_backend_underive(&copy);
}
END_TEST

START_TEST(native_run_names_the_copy)
{
    static cw_backend copy;
    derive_counting(cw_backend_native(), &copy);
    ck_assert_ptr_null(copy.start_checkpoint);
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.worker_threads = 2;
    cw_run_result out;
    ck_assert_int_eq(cw_start(&copy, &cfg, use_everything, &copy, &out), CW_OK);
    expect_counted(false);
    cw_backend_underive(&copy);
}
END_TEST

START_TEST(buffers_made_outside_a_run_name_the_copy)
{
    static cw_backend copy;
    derive_counting(cw_backend_native(), &copy);
    cw_iobuf b, part;
    ck_assert_int_eq(cw_iobuf_copy(&copy, "abc", 3, &b), CW_OK);
    ck_assert_int_eq(cw_iobuf_slice(&b, 0, 1, &part), CW_OK);
    ck_assert_int_eq(slices, 1);
    cw_iobuf_release(&part);
    cw_iobuf_release(&b);
    cw_backend_underive(&copy);
}
END_TEST

/* ---- Checkpoints ------------------------------------------------------------- */

static void *write_blob(cw_ctx *ctx, void *arg)
{
    use_storage(ctx, arg);
    return NULL;
}

static void *after_recovery(cw_ctx *ctx, void *arg)
{
    ck_assert_ptr_eq(cw__backend_of(ctx), arg);
    cw_handle *h = cw_spawn(ctx, nothing, NULL);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    return NULL;
}

START_TEST(recovered_runs_name_the_copy)
{
    static cw_backend copy;
    derive_counting(cw_backend_deterministic(), &copy);
    cw_run_result out;
    cw_checkpoint *cp, *next;
    ck_assert_int_eq(cw_start_checkpoint(&copy, NULL, write_blob, &copy, &out, &cp), CW_OK);
    ck_assert_ptr_eq(cw__backend_of(cp), &copy);
    ck_assert_int_eq(cw_recover(cp, after_recovery, &copy, &out, &next), CW_OK);
    ck_assert_ptr_eq(cw__backend_of(next), &copy);
    cw_checkpoint_free(next);
    ck_assert_int_eq(spawns, 1);
    ck_assert_int_eq(blob_writes, 1);
    cw_backend_underive(&copy);
}
END_TEST

/* ---- Deriving from a derived table, and the limits --------------------------- */

static void *spawn_one(cw_ctx *ctx, void *arg)
{
    ck_assert_ptr_eq(cw__backend_of(ctx), arg);
    cw_handle *h = cw_spawn(ctx, nothing, NULL);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    return NULL;
}

START_TEST(a_derived_table_derives_again)
{
    static cw_backend first, second;
    derive_counting(cw_backend_deterministic(), &first);
    ck_assert_int_eq(cw_backend_derive(&first, &second), CW_OK);
    ck_assert_ptr_ne((void *)second.start, (void *)first.start);
    ck_assert_ptr_eq((void *)second.spawn, (void *)count_spawn);
    cw_run_result out;
    ck_assert_int_eq(cw_start(&second, NULL, spawn_one, &second, &out), CW_OK);
    ck_assert_int_eq(cw_start(&first, NULL, spawn_one, &first, &out), CW_OK);
    ck_assert_int_eq(spawns, 2);
    cw_backend_underive(&second);
    cw_backend_underive(&first);
}
END_TEST

START_TEST(a_plain_copy_is_refused)
{
    cw_backend plain = *cw_backend_native(), copy, before;
    memset(&copy, 0xa5, sizeof copy);
    before = copy;
    ck_assert_int_eq(cw_backend_derive(&plain, &copy), CW_ERR_INVALID);
    ck_assert_int_eq(cw_backend_derive(NULL, &copy), CW_ERR_INVALID);
    ck_assert_int_eq(cw_backend_derive(&plain, NULL), CW_ERR_INVALID);
    ck_assert_mem_eq(&copy, &before, sizeof copy);
}
END_TEST

START_TEST(slots_run_out_and_come_back)
{
    static cw_backend copies[CW_DERIVE_MAX + 1];
    for (size_t i = 0; i < CW_DERIVE_MAX; i++)
        ck_assert_int_eq(cw_backend_derive(cw_backend_deterministic(), &copies[i]), CW_OK);
    /* Deriving a copy again keeps its slot. */
    ck_assert_int_eq(cw_backend_derive(cw_backend_native(), &copies[3]), CW_OK);
    ck_assert_int_eq(cw_backend_derive(cw_backend_native(), &copies[CW_DERIVE_MAX]), CW_ERR_NOMEM);
    cw_backend_underive(&copies[3]);
    ck_assert_int_eq(cw_backend_derive(cw_backend_native(), &copies[CW_DERIVE_MAX]), CW_OK);
    cw_run_result out;
    for (size_t i = 0; i <= CW_DERIVE_MAX; i += 8)
        ck_assert_int_eq(cw_start(&copies[i], NULL, spawn_one, &copies[i], &out), CW_OK);
    for (size_t i = 0; i <= CW_DERIVE_MAX; i++)
        cw_backend_underive(&copies[i]);
}
END_TEST

static Suite *derive_suite(void)
{
    Suite *s = suite_create("derive");
    TCase *tc = tcase_create("derive");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, deterministic_run_names_the_copy);
    tcase_add_test(tc, native_run_names_the_copy);
    tcase_add_test(tc, buffers_made_outside_a_run_name_the_copy);
    tcase_add_test(tc, recovered_runs_name_the_copy);
    tcase_add_test(tc, a_derived_table_derives_again);
    tcase_add_test(tc, a_plain_copy_is_refused);
    tcase_add_test(tc, slots_run_out_and_come_back);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(derive_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
