/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * native_descriptors.c - a parallel backend gives back every descriptor a
 * run opened (NAT-006): sockets, files, its poller and timers, the metrics
 * endpoint's, even those of objects the program never closed, each of
 * them close-on-exec meanwhile (NAT-011). A server that starts one run
 * after another must not run out of descriptors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cases/fds.h"
#include "cases/metrics.h"
#include "harness/syscalls.h"
#include "cases/network_util.h"
#include "cases/storage.h"

static void *accept_one(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_conn c;
    if (cw_listener_accept(arg, &c) == CW_OK)
        return NULL; /* the accepted connection is left open on purpose */
    return NULL;
}

/* The descriptors open before the run of native_run_closes_every_descriptor. */
static cwc_fdset before_run;

/* Every descriptor opened since `before_run` is close-on-exec [NAT-011]. */
static void all_close_on_exec(void)
{
    cwc_fdset now;
    cwc_open_fds(&now);
    for (int fd = 0; (fd = cwc_next_new_fd(&before_run, &now, fd)) >= 0; fd++) {
        int flags = fcntl(fd, F_GETFD);
        ck_assert_msg(flags < 0 || (flags & FD_CLOEXEC),
                      "descriptor %d, opened by the run, is not close-on-exec", fd);
    }
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
    cw_blob *gone = cwc_open(ctx, "fds_removed", "blob", NULL);
    cw_blob_close(gone);
    /* A scan and a partition's removal read a directory: their descriptors too. */
    ck_assert(cwc_scan_has(ctx, "fds_removed", "blob", 4));
    ck_assert_int_eq(cw_storage_remove(ctx, "fds_removed", NULL, 0, NULL), CW_OK);
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
    /* A dial that fails gives back its socket too. */
    cw_listener *closed;
    ck_assert_int_eq(cw_bind(ctx, &any, &closed), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(closed, &where), CW_OK);
    cw_listener_close(closed);
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_ERR_CONNECTION_FAILED);
    all_close_on_exec();
    /* A sync started and never joined, of megabytes: the run ends while it
     * may still be flushing them, and it still happens [STOR-016]; the
     * run's end waits for it and gives back the blob's descriptor. */
    enum { UNJOINED = 4 << 20 };
    uint8_t *bytes = malloc(UNJOINED);
    ck_assert_ptr_nonnull(bytes);
    memset(bytes, 'z', UNJOINED);
    cwc_write(b, 1, bytes, UNJOINED);
    free(bytes);
    cw_handle_release(cw_blob_start_sync(b));
    return NULL;
}

CWC_CASE(native_run_closes_every_descriptor, "native", "NAT-006 NAT-011 RUN-003",
         PAR | CWC_NEEDS_STORAGE | CWC_NEEDS_NETWORK)
{
    cwc_fdset before;
    cwc_open_fds(&before);
    for (int round = 0; round < 2; round++) {
        cwc_store s;
        cwc_store_begin(&s);
        s.cfg.metrics_address = "127.0.0.1:0";
        cw_run_result res;
        cwc_open_fds(&before_run);
        uint64_t inheritable = cwc_syscalls_inheritable_opens();
        ck_assert_int_eq(cwc_run(&s.cfg, leave_open_root, NULL, &res), CW_OK);
        /* Also those it closed again at once: a fork on another thread
         * could have caught them open. */
        ck_assert_msg(cwc_syscalls_inheritable_opens() == inheritable,
                      "the run opened a file without O_CLOEXEC [NAT-011]");
        cwc_store_end(&s);
    }
    cwc_no_new_fds(&before, "a run");
}

/* ---- No descriptor left [NAT-007, RUN-006] --------------------------------------------- */

static struct rlimit saved_nofile;

/* From now on the process can open no descriptor: the soft limit sits at
 * the lowest free one (those above it stay usable). */
static void descriptors_exhausted(void)
{
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &saved_nofile), 0);
    int lowest = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(lowest, 0);
    close(lowest);
    struct rlimit r = {(rlim_t)lowest, saved_nofile.rlim_max};
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &r), 0);
    int probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (probe >= 0)
        close(probe);
    ck_assert_msg(probe < 0 && errno == EMFILE, "RLIMIT_NOFILE does not hold: the case cannot run");
}

static void descriptors_restored(void)
{
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &saved_nofile), 0);
}

static void *must_not_run(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    *(int *)arg = 1;
    return NULL;
}

CWC_CASE(native_no_descriptor_for_a_run, "native", "RUN-006 NAT-007", PAR)
{
    int ran = 0;
    cw_config cfg = cwc_config();
    cw_run_result res;
    descriptors_exhausted();
    int rc = cwc_run(&cfg, must_not_run, &ran, &res);
    descriptors_restored();
    ck_assert_int_eq(rc, CW_ERR_NOMEM);
    ck_assert_msg(res.message[0] != '\0', "a refused run says why");
    ck_assert_int_eq(ran, 0);
    cwc_run_ok(&cfg, must_not_run, &ran); /* and the process can run again */
    ck_assert_int_eq(ran, 1);
}

/* What each call gave while no descriptor was left. */
struct starved {
    int bind, dial, accept, open, open_os;
};

static void *starved_root(cw_ctx *ctx, void *arg)
{
    struct starved *st = arg;
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l, *other = NULL;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    cw_sink *sink, *sink2 = NULL;
    cw_stream *stream, *stream2 = NULL;
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_OK);
    cw_blob *first = cwc_open(ctx, "starved", "first", NULL); /* storage is up */

    long accepted = cwc_series_value(ctx, "runtime_inbound_connections_total");
    descriptors_exhausted();
    st->bind = cw_bind(ctx, &any, &other);
    st->dial = cw_dial(ctx, &where, &sink2, &stream2);
    cw_conn c;
    st->accept = cw_listener_accept(l, &c);
    /* The failed accept counted nothing (NET-025): it changed nothing. */
    ck_assert_int_eq(cwc_series_value(ctx, "runtime_inbound_connections_total"), accepted);
    cw_blob *b = NULL;
    uint64_t size;
    cw_storage_error err;
    memset(&err, 0, sizeof err);
    st->open = cw_storage_open(ctx, "starved", "second", 6, &b, &size, &err);
    st->open_os = err.os_error;
    descriptors_restored();

    /* Everything works again, and the queued connection is still there. */
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    ck_assert_int_eq(cwc_series_value(ctx, "runtime_inbound_connections_total"),
                     accepted < 0 ? -1 : accepted + 1);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    ck_assert_int_eq(cw_bind(ctx, &any, &other), CW_OK);
    cw_listener_close(other);
    ck_assert_int_eq(cw_dial(ctx, &where, &sink2, &stream2), CW_OK);
    cw_sink_close(sink2);
    cw_stream_close(stream2);
    cw_blob_close(cwc_open(ctx, "starved", "second", NULL));
    cw_blob_close(first);
    cw_sink_close(sink);
    cw_stream_close(stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(native_no_descriptor_in_a_run, "native", "NAT-007 NET-025",
         PAR | CWC_NEEDS_STORAGE | CWC_NEEDS_NETWORK)
{
    struct starved st;
    memset(&st, 0, sizeof st);
    cwc_store s;
    cwc_store_begin(&s);
    cwc_run_ok(&s.cfg, starved_root, &st);
    cwc_store_end(&s);
    ck_assert_int_eq(st.bind, CW_ERR_BIND_FAILED);
    ck_assert_int_eq(st.dial, CW_ERR_CONNECTION_FAILED);
    ck_assert_int_eq(st.accept, CW_ERR_NOMEM);
    ck_assert_int_eq(st.open, CW_ERR_BLOB_OPEN_FAILED);
    ck_assert_int_eq(st.open_os, EMFILE);
}

/* An open that runs out of descriptors part of the way leaves nothing a
 * scan sees [NAT-007]: the process gets one more descriptor at a time
 * (none, one, two...) until the open succeeds, and after each failure
 * the partition, which did not exist, is still missing, and no
 * descriptor the open got is left open (descriptor 0 among them: the
 * first one given). Whatever number of descriptors a backend's open
 * takes, each step short of it fails somewhere else in the open. */
enum { MOST_DESCRIPTORS = 16 };

/* The process can open exactly `more` descriptors more: the soft limit
 * sits at the free descriptor after `more` free ones (the busy ones
 * between them, and those above, stay usable). */
static void descriptors_limited(int more)
{
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &saved_nofile), 0);
    int limit = 0;
    for (int spare = 0;; limit++) {
        if (fcntl(limit, F_GETFD) != -1)
            continue;
        ck_assert_int_eq(errno, EBADF);
        if (spare++ == more)
            break;
    }
    struct rlimit r = {(rlim_t)limit, saved_nofile.rlim_max};
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &r), 0);
}

static void *failed_open_root(cw_ctx *ctx, void *arg)
{
    int *opened_with = arg;
    cw_blob *first = cwc_open(ctx, "other", "first", NULL); /* storage is up */
    /* As in a daemon, the first descriptor an open gets is 0 [NAT-009]:
     * the case held it until now, so that the run took others. */
    ck_assert_int_eq(close(0), 0);
    for (int more = 0; more <= MOST_DESCRIPTORS; more++) {
        cw_blob *b = NULL;
        uint64_t size;
        cw_storage_error err;
        memset(&err, 0, sizeof err);
        cwc_fdset before;
        cwc_open_fds(&before);
        descriptors_limited(more);
        int rc = cw_storage_open(ctx, "fresh", "blob", 4, &b, &size, &err);
        descriptors_restored();
        if (rc != CW_OK)
            cwc_no_new_fds(&before, "a failed open"); /* 0 among them, if it was free */
        if (rc == CW_OK) {
            *opened_with = more;
            cw_blob_close(b);
            break;
        }
        ck_assert_ptr_null(b);
        cw_blob_names *names = NULL;
        cw_storage_error scan_err;
        memset(&scan_err, 0, sizeof scan_err);
        int scan = cw_storage_scan(ctx, "fresh", &names, &scan_err);
        if (scan == CW_OK)
            ck_abort_msg("an open that failed with %d descriptors to spare (%d: %s) left its "
                         "partition behind, with %zu name(s) in it",
                         more, rc, err.message, names->count);
        ck_assert_int_eq(scan, CW_ERR_PARTITION_MISSING);
    }
    cw_blob_close(first);
    return NULL;
}

CWC_CASE(native_failed_open_leaves_nothing, "native", "NAT-007 NAT-009 NAT-006 STOR-013",
         PAR | CWC_NEEDS_STORAGE | CW_CAP_PERSISTENT_STORAGE)
{
    int opened_with = -1;
    cwc_store s;
    cwc_store_begin(&s);
    if (fcntl(0, F_GETFD) == -1) /* standard input is closed: hold 0 */
        ck_assert_int_eq(open("/dev/null", O_RDONLY), 0);
    cwc_run_ok(&s.cfg, failed_open_root, &opened_with);
    cwc_store_end(&s);
    ck_assert_msg(opened_with >= 0, "no open succeeded with up to %d descriptors to spare",
                  MOST_DESCRIPTORS);
}

/* A run started with a few descriptors to spare, descriptor 0 the first
 * [NAT-009], k = 0, 1, 2... until one runs: each start short of what the
 * backend needs fails with CW_ERR_NOMEM before the root runs (with
 * CW_IO_URING, CW_ERR_UNSUPPORTED too where there is no ring) and leaves
 * no descriptor open [NAT-007, NAT-006], whichever of its descriptors it
 * could not have; the first that runs has what its mode promises: a ring
 * with CW_IO_URING, none with CW_IO_THREADS [NAT-008]. */
struct short_start {
    int ran;
    long gauge;
};

/* The gauge runtime_io_uring, read without a descriptor. */
static void *short_start_root(cw_ctx *ctx, void *arg)
{
    static const char key[] = "\nruntime_io_uring ";
    struct short_start *st = arg;
    st->ran = 1;
    char *text = cw_metrics_encode(ctx);
    ck_assert_ptr_nonnull(text);
    char *line = strstr(text, key);
    st->gauge = line ? strtol(line + sizeof key - 1, NULL, 10) : -1;
    free(text);
    return NULL;
}

/* The first number of spare descriptors a run of `io` starts with. */
static int short_start_sweep(cw_io_backend io)
{
    cw_config cfg = cwc_config();
    cfg.io_backend = io;
    for (int more = 0; more <= MOST_DESCRIPTORS * 2; more++) {
        struct short_start st = {0, -1};
        cw_run_result res;
        cwc_fdset before;
        ck_assert_int_eq(close(0), 0);
        cwc_open_fds(&before);
        descriptors_limited(more);
        int rc = cwc_run(&cfg, short_start_root, &st, &res);
        descriptors_restored();
        cwc_no_new_fds(&before, "a run started short of descriptors");
        ck_assert_int_eq(open("/dev/null", O_RDONLY), 0);
        if (rc == CW_OK) {
            ck_assert_int_eq(st.ran, 1);
            ck_assert_msg(st.gauge == (io == CW_IO_URING),
                          "io_backend %d with %d descriptors to spare: runtime_io_uring is %ld",
                          (int)io, more, st.gauge);
            return more;
        }
        ck_assert_msg(rc == CW_ERR_NOMEM || (io == CW_IO_URING && rc == CW_ERR_UNSUPPORTED),
                      "io_backend %d with %d descriptors to spare: status %d (%s)", (int)io, more,
                      rc, res.message);
        /* The reason is the shortage itself, not what a call made of it. */
        ck_assert_msg(rc != CW_ERR_NOMEM || strstr(res.message, strerror(EMFILE)) ||
                          strstr(res.message, strerror(ENFILE)),
                      "io_backend %d with %d descriptors to spare: \"%s\" names no shortage",
                      (int)io, more, res.message);
        ck_assert_int_eq(st.ran, 0);
        if (rc == CW_ERR_UNSUPPORTED) {
            /* No ring to have: more descriptors change nothing. A ring
             * refused only for want of descriptors is CW_ERR_NOMEM. */
            struct short_start again = {0, -1};
            ck_assert_int_eq(close(0), 0);
            int rc_all = cwc_run(&cfg, short_start_root, &again, &res);
            ck_assert_int_eq(open("/dev/null", O_RDONLY), 0);
            ck_assert_msg(rc_all == CW_ERR_UNSUPPORTED,
                          "io_backend %d refused as unsupported with %d descriptors to spare, "
                          "then status %d with every descriptor to spare",
                          (int)io, more, rc_all);
            return more;
        }
    }
    ck_abort_msg("io_backend %d: no run started with up to %d descriptors to spare", (int)io,
                 MOST_DESCRIPTORS * 2);
    return -1;
}

CWC_CASE(native_start_short_of_descriptors, "native", "NAT-007 NAT-006 NAT-008 NAT-009",
         PAR | CWC_NEEDS_METRICS | CWC_OWN_IO)
{
    if (fcntl(0, F_GETFD) == -1) /* standard input is closed: hold 0 */
        ck_assert_int_eq(open("/dev/null", O_RDONLY), 0);
    short_start_sweep(CW_IO_THREADS);
    short_start_sweep(CW_IO_URING);
}

/* ---- Descriptor 0 is a descriptor [NAT-009] --------------------------------------------- */

/* A daemon closes its standard input: the next descriptor the kernel gives
 * is 0, and a backend that takes 0 for "none" (a test of `fd > 0`) fails
 * the call that got it, or never closes it. The case holds descriptor 0
 * with a placeholder of its own and lets it go just before the call it
 * wants to get 0, each kind of descriptor in a run of its own. */

/* Who gets descriptor 0: the run itself (its poller, timers, wake-ups:
 * the first it opens), or one object of the root's. */
typedef enum zero_taker {
    ZERO_RUN,
    ZERO_BLOB,
    ZERO_BLOB_REMOVED,
    ZERO_PARTITION_REMOVED,
    ZERO_LISTENER,
    ZERO_DIALER,
    ZERO_ACCEPTED,
    ZERO_TAKERS
} zero_taker;

static bool zero_held; /* descriptor 0 is the case's placeholder */

static bool zero_open(void)
{
    return fcntl(0, F_GETFD) != -1;
}

/* Take descriptor 0 for the case if nobody has it. */
static void zero_hold(void)
{
    if (zero_open())
        return;
    ck_assert_int_eq(open("/dev/null", O_RDONLY), 0);
    zero_held = true;
}

/* Let descriptor 0 go, if the case held it: the backend's next one gets it. */
static void zero_free(zero_taker taker, zero_taker when)
{
    if (taker == when && zero_held) {
        ck_assert_int_eq(close(0), 0);
        zero_held = false;
    }
}

static void zero_exchange(struct half_pair *a, struct half_pair *b)
{
    ck_assert_int_eq(send_text(a->sink, "ping"), CW_OK);
    recv_text(b->stream, "ping");
    ck_assert_int_eq(send_text(b->sink, "pong"), CW_OK);
    recv_text(a->stream, "pong");
}

static void zero_blob(cw_ctx *ctx)
{
    cw_blob *b = cwc_open(ctx, "zero", "blob", NULL);
    zero_hold();
    cwc_write(b, 0, "zero", 4);
    cwc_sync(b);
    cw_blob_close(b);
    b = cwc_open(ctx, "zero", "blob", NULL);
    cwc_read_eq(b, 0, "zero", 4);
    cw_blob_close(b);
}

/* A removal made durable (STOR-011, STOR-012) may open a directory of its
 * own, after every other descriptor of the run: with 0 free, that is 0. */
static void zero_removals(cw_ctx *ctx, zero_taker taker)
{
    cw_blob_close(cwc_open(ctx, "zero", "gone", NULL));
    zero_free(taker, ZERO_BLOB_REMOVED);
    ck_assert_int_eq(cw_storage_remove(ctx, "zero", "gone", 4, NULL), CW_OK);
    zero_hold();
    cw_blob *b = NULL;
    uint64_t size;
    ck_assert_int_eq(cw_storage_open(ctx, "zero", "gone", 4, &b, &size, NULL), CW_OK);
    ck_assert_int_eq(size, 0); /* made again, empty: the removal took the blob */
    cw_blob_close(b);
    cw_blob_close(cwc_open(ctx, "zero-all", "blob", NULL));
    zero_free(taker, ZERO_PARTITION_REMOVED);
    ck_assert_int_eq(cw_storage_remove(ctx, "zero-all", NULL, 0, NULL), CW_OK);
    zero_hold();
    cw_blob_names *names = NULL;
    ck_assert_int_eq(cw_storage_scan(ctx, "zero-all", &names, NULL), CW_ERR_PARTITION_MISSING);
}

static void *zero_root(cw_ctx *ctx, void *arg)
{
    zero_taker taker = *(zero_taker *)arg;
    zero_free(taker, ZERO_BLOB);
    zero_blob(ctx);
    zero_removals(ctx, taker);
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l;
    zero_free(taker, ZERO_LISTENER);
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    zero_hold();
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    struct half_pair a, b;
    zero_free(taker, ZERO_DIALER);
    ck_assert_int_eq(cw_dial(ctx, &where, &a.sink, &a.stream), CW_OK);
    zero_hold();
    zero_free(taker, ZERO_ACCEPTED);
    accept_into(l, &b);
    zero_hold();
    zero_exchange(&a, &b);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(native_descriptor_zero_is_a_descriptor, "native", "NAT-009 NAT-006",
         PAR | CWC_NEEDS_STORAGE | CWC_NEEDS_NETWORK)
{
    if (zero_open())
        ck_assert_int_eq(close(0), 0); /* the case's process's standard input */
    for (zero_taker taker = ZERO_RUN; taker < ZERO_TAKERS; taker++) {
        zero_hold();
        zero_free(taker, ZERO_RUN);
        cwc_store s;
        cwc_store_begin(&s);
        cwc_run_ok(&s.cfg, zero_root, &taker);
        cwc_store_end(&s);
        /* The placeholder went before the call, which may have taken 0:
         * the run's end closed it, or the case still holds its own. */
        ck_assert_msg(zero_held || !zero_open(),
                      "descriptor 0, given to the run (%d), is still open after it", (int)taker);
    }
}

/* ---- The metrics endpoint's listener on descriptor 0 [NAT-009, MET-017] ----------------- */

/* Scrape the endpoint at `address` ("127.0.0.1:port") and require a 200;
 * with `zero_to_server`, descriptor 0 let go once the client has its
 * socket, so that the connection the endpoint accepts is 0. */
static void scrape_ok(const char *address, bool zero_to_server)
{
    const char *colon = strrchr(address, ':');
    ck_assert_ptr_nonnull(colon);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    ck_assert_int_eq(inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr), 1);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    if (zero_to_server && zero_held) {
        ck_assert_int_eq(close(0), 0);
        zero_held = false;
    }
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    static const char ask[] = "GET /metrics HTTP/1.1\r\n\r\n";
    ck_assert_int_eq(send(fd, ask, sizeof ask - 1, MSG_NOSIGNAL), (ssize_t)(sizeof ask - 1));
    char got[16];
    size_t used = 0;
    while (used < 12) {
        ssize_t n = recv(fd, got + used, 12 - used, 0);
        ck_assert_int_gt(n, 0);
        used += (size_t)n;
    }
    ck_assert_mem_eq(got, "HTTP/1.1 200", 12);
    close(fd);
}

/* With `*arg` false, a run started with descriptor 0 free, whose
 * endpoint's listener may be the first descriptor it opens; with true,
 * one started with 0 held by the case, let go once the client has its
 * socket, so that the connection the endpoint accepts is 0. */
static void *zero_endpoint_root(cw_ctx *ctx, void *arg)
{
    bool zero_accepted = *(bool *)arg;
    char address[64];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, sizeof address), CW_OK);
    if (!zero_accepted)
        zero_hold(); /* the case's own sockets must not take 0 in its place */
    scrape_ok(address, zero_accepted);
    zero_hold();
    return NULL;
}

/* The metrics endpoint serves with descriptor 0 its listener's, and with
 * 0 the connection it accepted. */
CWC_CASE(native_descriptor_zero_metrics_endpoint, "native", "NAT-009 MET-017", PAR)
{
    if (zero_open())
        ck_assert_int_eq(close(0), 0); /* the case's process's standard input */
    zero_held = false;
    for (int accepted = 0; accepted < 2; accepted++) {
        if (accepted)
            zero_hold();
        cw_config cfg = cwc_config();
        cfg.metrics_address = "127.0.0.1:0";
        bool zero_accepted = accepted;
        cwc_run_ok(&cfg, zero_endpoint_root, &zero_accepted);
        ck_assert_msg(zero_held || !zero_open(),
                      "descriptor 0, given to the run, is still open after it");
        if (zero_held) {
            ck_assert_int_eq(close(0), 0);
            zero_held = false;
        }
    }
}

/* A run refused because its metrics address is taken, started with
 * descriptor 0 free: the listener it made for the endpoint, which may
 * have held 0, is closed with the refusal as any other [NAT-009, NAT-006]. */
CWC_CASE(native_descriptor_zero_endpoint_refused, "native", "NAT-009 NAT-006 MET-017", PAR)
{
    if (!zero_open())
        ck_assert_int_eq(open("/dev/null", O_RDONLY), 0); /* so the occupier does not take 0 */
    int taken = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_gt(taken, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    ck_assert_int_eq(inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr), 1);
    ck_assert_int_eq(bind(taken, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(taken, 1), 0);
    socklen_t salen = sizeof sa;
    ck_assert_int_eq(getsockname(taken, (struct sockaddr *)&sa, &salen), 0);
    char address[32];
    snprintf(address, sizeof address, "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
    ck_assert_int_eq(close(0), 0);
    int ran = 0;
    cw_config cfg = cwc_config();
    cfg.metrics_address = address;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, must_not_run, &ran, &res), CW_ERR_BIND_FAILED);
    ck_assert_int_eq(ran, 0);
    ck_assert_msg(!zero_open(), "descriptor 0, given to a run refused its endpoint, is still open");
    close(taken);
}

/* ---- The metrics endpoint with no descriptor to accept with [NAT-010, NAT-007] ---------- */

/* A scrape waits in the endpoint's queue while the process has no
 * descriptor left, so the endpoint cannot accept it (NAT-007: it stays
 * queued); the root sleeps 200 ms, then 1200 ms. The endpoint waiting for a
 * descriptor is a wait like any other: the second more the run sleeps may
 * cost at most 100 ms more CPU (NAT-010), where an endpoint that tried the
 * accept again at once would spin a CPU. Once descriptors are free, the
 * scrape is answered. */
static void *endpoint_starved_root(cw_ctx *ctx, void *arg)
{
    uint64_t *used = arg;
    char address[64];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, sizeof address), CW_OK);
    const char *colon = strrchr(address, ':');
    ck_assert_ptr_nonnull(colon);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    ck_assert_int_eq(inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr), 1);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); /* before the shortage */
    ck_assert_int_ge(fd, 0);
    descriptors_exhausted();
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    static const char ask[] = "GET /metrics HTTP/1.1\r\n\r\n";
    ck_assert_int_eq(send(fd, ask, sizeof ask - 1, MSG_NOSIGNAL), (ssize_t)(sizeof ask - 1));
    used[0] = cwc_cpu_over_sleep(ctx, 200);
    used[1] = cwc_cpu_over_sleep(ctx, 1200);
    descriptors_restored();
    struct timeval patience = {30, 0}; /* bounds a hang only */
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience), 0);
    char got[16];
    size_t have = 0;
    while (have < 12) {
        ssize_t n = recv(fd, got + have, 12 - have, 0);
        ck_assert_msg(n > 0, "a scrape queued while descriptors ran out was not answered once "
                             "they were free [NAT-007]");
        have += (size_t)n;
    }
    ck_assert_mem_eq(got, "HTTP/1.1 200", 12);
    close(fd);
    return NULL;
}

CWC_CASE(native_endpoint_short_of_descriptors_sleeps, "native", "NAT-010 NAT-007 MET-017", PAR)
{
    uint64_t used[2] = {0, 0};
    cw_config cfg = cwc_config();
    cfg.metrics_address = "127.0.0.1:0";
    cwc_run_ok(&cfg, endpoint_starved_root, used);
    uint64_t more = used[1] > used[0] ? used[1] - used[0] : 0;
    ck_assert_msg(more <= 100 * 1000 * 1000u,
                  "with a scrape queued that no descriptor was left to accept, the run used "
                  "%llu ms of CPU over a 200 ms sleep and %llu ms over a 1200 ms one: %llu ms "
                  "for the second more it was idle [NAT-010]",
                  (unsigned long long)(used[0] / 1000000), (unsigned long long)(used[1] / 1000000),
                  (unsigned long long)(more / 1000000));
}
