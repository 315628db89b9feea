/*
 * native_descriptors.c - a parallel backend gives back every descriptor a
 * run opened (NAT-006): sockets, files, its poller and timers, the metrics
 * endpoint's, even those of objects the program never closed. A server
 * that starts one run after another must not run out of descriptors.
 */
#include <dirent.h>
#include <stdlib.h>

#include "cases/storage.h"

#define PAR CW_CAP_PARALLEL

/* The descriptors open now, as a bit set over 0 .. 1023. */
typedef struct fdset {
    unsigned char open[1024];
} fdset;

static void open_fds(fdset *s)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    int own = dirfd(d);
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd != own && fd >= 0 && fd < 1024)
            s->open[fd] = 1;
    }
    closedir(d);
}

static void *accept_one(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_conn c;
    if (cw_listener_accept(arg, &c) == CW_OK)
        return NULL; /* the accepted connection is left open on purpose */
    return NULL;
}

/* Opens one of everything and closes nothing. */
static void *leave_open_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = cwc_open(ctx, "fds", "left_open", NULL);
    cwc_write(b, 0, "x", 1);
    cw_blob *synced = cwc_open(ctx, "fds", "start_synced", NULL);
    cwc_write(synced, 0, "y", 1);
    cw_handle *sync = cw_blob_start_sync(synced);
    ck_assert_int_eq(cw_join(sync, NULL), CW_OK);
    cw_handle_release(sync);
    cw_blob_close(synced); /* closed after its start_sync: nothing may keep it open */
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l = NULL;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    cw_handle *h = cw_spawn(cw_child(ctx, "acceptor"), accept_one, l);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_OK);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    return NULL;
}

CWC_CASE(native_run_closes_every_descriptor, "native", "NAT-006 RUN-003",
         PAR | CWC_NEEDS_STORAGE | CWC_NEEDS_NETWORK)
{
    fdset before, after;
    open_fds(&before);
    for (int round = 0; round < 2; round++) {
        cwc_store s;
        cwc_store_begin(&s);
        s.cfg.metrics_address = "127.0.0.1:0";
        cw_run_result res;
        ck_assert_int_eq(cwc_run(&s.cfg, leave_open_root, NULL, &res), CW_OK);
        cwc_store_end(&s);
    }
    open_fds(&after);
    for (int fd = 0; fd < 1024; fd++)
        ck_assert_msg(!after.open[fd] || before.open[fd],
                      "descriptor %d was opened by a run and is still open after it", fd);
}
