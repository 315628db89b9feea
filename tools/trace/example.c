/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * example.c - a small deterministic run written as a trace (cwrt/trace.h):
 * a tree of tasks that sleep, draw, use storage and talk over the
 * simulated network. make trace-check validates the file; open it in
 * Perfetto (ui.perfetto.dev) to look at it.
 *
 *     trace-example OUT.json [SEED]
 */
#include <stdio.h>
#include <stdlib.h>

#include "cwrt/cwrt.h"

static void *worker(cw_ctx *ctx, void *arg)
{
    (void)arg;
    uint8_t b[2];
    cw_random(ctx, b, sizeof b);
    cw_sleep(ctx, (cw_duration)(b[0] % 5) * CW_MSEC);
    cw_blob *blob;
    uint64_t size;
    if (cw_storage_open(ctx, "trace", b, 1, &blob, &size, NULL) == CW_OK) {
        cw_blob_write_at(blob, 0, b, sizeof b, CW_WRITE_DEFAULT, NULL);
        cw_blob_sync(blob, NULL);
        cw_blob_close(blob);
    }
    return NULL;
}

static void *server(cw_ctx *ctx, void *arg)
{
    cw_conn c;
    if (cw_listener_accept(arg, &c) != CW_OK)
        return NULL;
    cw_iobufs *got = NULL;
    if (cw_stream_recv(c.stream, 4, &got) == CW_OK)
        cw_sink_send(c.sink, got);
    cw_iobufs_release(got);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    (void)ctx;
    return NULL;
}

static void *root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h[4];
    for (int i = 0; i < 4; i++)
        h[i] = cw_spawn(cw_child(ctx, "worker"), worker, NULL);
    cw_addr any = cw_addr_loopback4(8080), where;
    cw_listener *l;
    if (cw_bind(ctx, &any, &l) != CW_OK || cw_listener_local_addr(l, &where) != CW_OK)
        return NULL;
    cw_handle *s = cw_spawn(cw_child(ctx, "server"), server, l);
    cw_sink *sink;
    cw_stream *stream;
    if (cw_dial(ctx, &where, &sink, &stream) == CW_OK) {
        cw_iobufs *msg = cw_iobufs_new(cw__backend_of(ctx));
        cw_iobuf b;
        if (msg && cw_iobuf_copy(cw__backend_of(ctx), "ping", 4, &b) == CW_OK)
            cw_iobufs_append(msg, &b);
        cw_sink_send(sink, msg);
        cw_iobufs_release(msg);
        cw_iobufs *back = NULL;
        cw_stream_recv(stream, 4, &back);
        cw_iobufs_release(back);
        cw_sink_close(sink);
        cw_stream_close(stream);
    }
    for (int i = 0; i < 4; i++) {
        cw_join(h[i], NULL);
        cw_handle_release(h[i]);
    }
    cw_join(s, NULL);
    cw_handle_release(s);
    cw_listener_close(l);
    return ctx;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: trace-example OUT.json [SEED]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "w");
    cw_trace *t = f ? cw_trace_open(f) : NULL;
    if (!t) {
        perror(argv[1]);
        return 2;
    }
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    cfg.event_log = cw_trace_event;
    cfg.event_log_arg = t;
    cw_run_result res;
    int rc = cw_start(cw_backend_deterministic(), &cfg, root, NULL, &res);
    int wrote = cw_trace_close(t);
    if (fclose(f) != 0 || wrote != 0) {
        fprintf(stderr, "trace-example: cannot write %s\n", argv[1]);
        return 2;
    }
    if (rc != CW_OK || !res.value) {
        fprintf(stderr, "trace-example: the run failed: %s\n", res.message);
        return 1;
    }
    return 0;
}
