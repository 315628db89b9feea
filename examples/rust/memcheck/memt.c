/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * memt.c - the heap bytes a run holds after each batch of 8 steps
 * (RUN-009), and after each whole run (RUN-008), read with mallinfo2().
 * Written for refusals R35-R37 (REFUSALS.md); not part of the library.
 *
 *   cc -O1 -g -I../../../spec/include memt.c -o memt -ldl
 *   ./memt ../target/release/libcwrt_rust.so MODE [RUNS]
 *
 * MODE: 0 tasks (spawn+join, spawn+abort+join, detached spawn, a 1 us
 * sleep), 1 blobs (made, written, synced, read, closed, removed; made,
 * written, closed, removed), 2 connections (dial, accept, send, recv,
 * close all four halves, a resolve), 3 channels and oneshots. A delta
 * that stays above 0 batch after batch is memory kept for what the
 * program released.
 */
#include <cw/cw.h>
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cw_backend *B;
static int which;
static long held(void)
{
    struct mallinfo2 m = mallinfo2();
    return (long)m.uordblks;
}

static void *child(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx_release(ctx);
    return NULL;
}
static void *sleeper(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_sleep(ctx, 1000000000);
    cw_ctx_release(ctx);
    return NULL;
}

static void step_tasks(cw_ctx *ctx)
{
    void *out;
    cw_handle *h = cw_spawn(cw_child(ctx, "a"), child, NULL);
    cw_join(h, &out);
    cw_handle_release(h);
    h = cw_spawn(cw_child(ctx, "b"), sleeper, NULL);
    cw_abort(h);
    cw_join(h, &out);
    cw_handle_release(h);
    h = cw_spawn(cw_child(ctx, "c"), child, NULL);
    cw_handle_release(h);
    cw_sleep(ctx, 1000);
}

static void step_blob(cw_ctx *ctx, int i)
{
    cw_blob *b;
    uint64_t size;
    cw_storage_error err;
    char name[16];
    int n = snprintf(name, sizeof name, "b%d", i);
    if (cw_storage_open(ctx, "p", name, n, &b, &size, &err) != CW_OK)
        abort();
    char data[100];
    memset(data, 'x', sizeof data);
    if (cw_blob_write_at(b, 0, data, sizeof data, 0, &err))
        abort();
    if (cw_blob_sync(b, &err))
        abort();
    cw_iobuf_mut m;
    if (cw_blob_read_at(b, 0, sizeof data, 0, &m, &err))
        abort();
    cw_iobuf_mut_release(&m);
    cw_blob_close(b);
    if (cw_storage_remove(ctx, "p", name, n, &err))
        abort();
    if (cw_storage_open(ctx, "p", name, n, &b, &size, &err) != CW_OK)
        abort();
    if (cw_blob_write_at(b, 0, data, sizeof data, 0, &err))
        abort();
    cw_blob_close(b);
    if (cw_storage_remove(ctx, "p", name, n, &err))
        abort();
}

static cw_listener *L;
static cw_addr LA;
static void step_conn(cw_ctx *ctx)
{
    cw_sink *s;
    cw_stream *st;
    cw_conn c;
    if (cw_dial(ctx, &LA, &s, &st))
        abort();
    if (cw_listener_accept(L, &c))
        abort();
    cw_iobufs *l = cw_iobufs_new(B);
    cw_iobuf b;
    cw_iobuf_copy(B, "hello", 5, &b);
    cw_iobufs_append(l, &b);
    if (cw_sink_send(s, l))
        abort();
    cw_iobufs_release(l);
    cw_iobufs *got;
    if (cw_stream_recv(c.stream, 5, &got))
        abort();
    cw_iobufs_release(got);
    cw_sink_close(s);
    cw_stream_close(st);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    cw_addr out[4];
    size_t n;
    if (cw_resolve(ctx, "host", out, 4, &n, NULL))
        abort();
}

static void step_chan(cw_ctx *ctx)
{
    cw_chan *c = cw_chan_new(ctx, 8, 4);
    long v = 1;
    cw_chan_send(c, &v);
    cw_chan_recv(c, &v);
    cw_chan_sender_drop(c);
    cw_chan_receiver_drop(c);
    cw_oneshot *o = cw_oneshot_new(ctx, 8);
    cw_oneshot_send(o, &v);
    cw_oneshot_recv(o, &v);
    o = cw_oneshot_new(ctx, 8);
    cw_oneshot_sender_drop(o);
    cw_oneshot_receiver_drop(o);
}

static void *root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    if (which == 2) {
        cw_addr a = cw_addr_ipv4(10, 0, 0, 1, 80);
        if (cw_bind(ctx, &a, &L))
            abort();
        cw_listener_local_addr(L, &LA);
        cw_addr h = cw_addr_ipv4(10, 0, 0, 2, 0);
        cw_resolver_register(ctx, "host", &h, 1);
    }
    long prev = 0;
    int step = 0;
    for (int batch = 0; batch < 20; batch++) {
        for (int k = 0; k < 8; k++, step++) {
            if (which == 0)
                step_tasks(ctx);
            else if (which == 1)
                step_blob(ctx, step);
            else if (which == 2)
                step_conn(ctx);
            else
                step_chan(ctx);
        }
        long h = held();
        if (batch >= 4)
            printf("batch %d held %ld delta %ld\n", batch, h, h - prev);
        prev = h;
    }
    if (which == 2)
        cw_listener_close(L);
    return NULL;
}

int main(int argc, char **argv)
{
    void *so = dlopen(argv[1], RTLD_NOW);
    if (!so) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    const cw_backend *(*entry)(void) = (const cw_backend *(*)(void))dlsym(so, "cw_backend_entry");
    B = entry();
    which = atoi(argv[2]);
    int runs = argc > 3 ? atoi(argv[3]) : 1;
    for (int r = 0; r < runs; r++) {
        cw_run_result res;
        int rc = cw_start(B, NULL, root, NULL, &res);
        printf("run %d rc %d %s held after %ld\n", r, rc, res.message, held());
    }
    return 0;
}
