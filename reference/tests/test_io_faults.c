/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * test_io_faults.c - the native backend under failing I/O. The calls of
 * cw_os (native/os.h) fail at random, from a seed, with the errno values
 * disks and networks give (EIO, ENOSPC, EINTR, a reset), or move fewer
 * bytes than asked (file transfers and sends; see f_recv for why a TCP
 * receive never does). Each test runs twice: with only the faults a program
 * never sees (interruptions, short transfers, a cached read refused), when
 * every call must succeed, then with every kind. Then:
 * - every storage call succeeds or returns an error of its table
 *   (17-storage.md): interruptions and short transfers are the backend's
 *   to absorb, never the caller's;
 * - a read never returns wrong bytes, and a failed write or resize leaves
 *   every byte outside its range as it was;
 * - after a failed sync every later sync of that open fails (STOR-037);
 * - a message over TCP arrives intact, or a call says why it did not;
 * - nothing crashes or hangs (Check's timeout bounds each test).
 * The runs do their file I/O on threads (CW_IO_THREADS), through cw_os.
 */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "cwrt/cwrt.h"
#include "native/os.h"

/* ---- The faults ------------------------------------------------------------------------ */

static atomic_bool faulting;
static atomic_bool benign; /* only the faults the backend must absorb */
static atomic_long injected;
static unsigned per_mille = 150;
static uint64_t prng_state;
static pthread_mutex_t prng_lock = PTHREAD_MUTEX_INITIALIZER;
static cw_os_calls real;

/* Several threads draw: the sequence is the seed's, its interleaving not. */
static unsigned draw(unsigned n)
{
    pthread_mutex_lock(&prng_lock);
    uint64_t x = prng_state;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    prng_state = x;
    pthread_mutex_unlock(&prng_lock);
    return (unsigned)(x % n);
}

/* Whether this call is faulted; if so, which of `n` ways, of which the
 * first `absorbed` are those the backend must hide from its caller. */
static bool hit(unsigned n, unsigned absorbed, unsigned *way)
{
    if (!atomic_load(&faulting) || draw(1000) >= per_mille)
        return false;
    atomic_fetch_add(&injected, 1);
    *way = draw(atomic_load(&benign) ? absorbed : n);
    return true;
}

static int fail_with(int e)
{
    errno = e;
    return -1;
}

/* The first chunk only, and half of it: a short transfer. */
static struct iovec shortened(const struct iovec *iov, int n)
{
    struct iovec one = n > 0 ? iov[0] : (struct iovec){NULL, 0};
    one.iov_len = (one.iov_len + 1) / 2;
    return one;
}

static int f_open(const char *path, int flags, mode_t mode)
{
    static const int errs[] = {EINTR, EIO, ENOSPC, EMFILE};
    unsigned w;
    return hit(4, 1, &w) ? fail_with(errs[w]) : real.open(path, flags, mode);
}

static ssize_t f_preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
    unsigned w;
    if (!hit(4, 3, &w))
        return real.preadv2(fd, iov, n, off, flags);
    if (w == 1) {
        struct iovec one = shortened(iov, n);
        return real.preadv2(fd, &one, 1, off, flags);
    }
    return fail_with(w == 0 ? EINTR : w == 3 ? EIO : (flags & RWF_NOWAIT) ? EAGAIN : EINTR);
}

static ssize_t f_pwritev2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
    unsigned w;
    if (!hit(4, 2, &w))
        return real.pwritev2(fd, iov, n, off, flags);
    if (w == 1) {
        struct iovec one = shortened(iov, n);
        return real.pwritev2(fd, &one, 1, off, flags);
    }
    return fail_with(w == 0 ? EINTR : w == 2 ? EIO : ENOSPC);
}

static int f_fdatasync(int fd)
{
    unsigned w;
    return hit(2, 1, &w) ? fail_with(w ? EIO : EINTR) : real.fdatasync(fd);
}

static int f_fsync(int fd)
{
    unsigned w;
    return hit(2, 1, &w) ? fail_with(w ? EIO : EINTR) : real.fsync(fd);
}

static int f_ftruncate(int fd, off_t len)
{
    unsigned w;
    return hit(2, 1, &w) ? fail_with(w ? EIO : EINTR) : real.ftruncate(fd, len);
}

/* Sockets: interruptions and short transfers, and now and then a reset.
 * Never a spurious EAGAIN: the reactor is edge-triggered, and a kernel
 * does not say "nothing" of a socket that has something. */
/* A TCP receive is interrupted or reset, never shortened: Linux returns
 * fewer bytes than asked only when the socket held no more, and bytes
 * that come later raise an event of their own; the backend counts on that
 * (native/tcp.c, drained). A shortened receive with bytes left behind and
 * no event to come would be a fault no kernel makes. */
static ssize_t f_recv(int fd, void *buf, size_t len, int flags)
{
    unsigned w;
    if (!hit(8, 7, &w))
        return real.recv(fd, buf, len, flags);
    return fail_with(w == 7 ? ECONNRESET : EINTR);
}

static ssize_t f_recvmsg(int fd, struct msghdr *m, int flags)
{
    unsigned w;
    if (!hit(8, 7, &w))
        return real.recvmsg(fd, m, flags);
    return fail_with(w == 7 ? ECONNRESET : EINTR);
}

static ssize_t f_sendmsg(int fd, const struct msghdr *m, int flags)
{
    unsigned w;
    if (!hit(4, 4, &w))
        return real.sendmsg(fd, m, flags);
    if (w < 2)
        return fail_with(EINTR);
    struct iovec one = shortened(m->msg_iov, (int)m->msg_iovlen);
    struct msghdr s = {.msg_iov = &one, .msg_iovlen = 1};
    return real.sendmsg(fd, &s, flags);
}

static int f_epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
    unsigned w;
    return hit(1, 1, &w) ? fail_with(EINTR) : real.epoll_wait(epfd, ev, max, timeout);
}

static ssize_t f_read(int fd, void *buf, size_t len)
{
    unsigned w;
    return hit(2, 2, &w) ? fail_with(w ? EAGAIN : EINTR) : real.read(fd, buf, len);
}

static ssize_t f_write(int fd, const void *buf, size_t len)
{
    unsigned w;
    return hit(1, 1, &w) ? fail_with(EINTR) : real.write(fd, buf, len);
}

static void faults_install(uint64_t seed)
{
    real = cw_os;
    prng_state = seed * 0x9E3779B97F4A7C15u + 1;
    cw_os_calls f = {real.thread_create,
                     f_open,
                     f_preadv2,
                     f_pwritev2,
                     f_fdatasync,
                     f_fsync,
                     f_ftruncate,
                     f_recv,
                     f_recvmsg,
                     f_sendmsg,
                     f_epoll_wait,
                     f_read,
                     f_write,
                     real.ring_result};
    cw_os = f;
}

static void faults_remove(void)
{
    atomic_store(&faulting, false);
    cw_os = real;
}

/* ---- Storage against a model ----------------------------------------------------------- */

enum { BLOB_MAX = 8192, CHUNK_MAX = 512, OPS = 400, SEEDS = 12 };

typedef struct model {
    uint8_t bytes[BLOB_MAX];
    size_t len;
    bool sync_failed; /* a sync of this open failed: all later ones must */
} model;

static void faults_on(bool on)
{
    atomic_store(&faulting, on);
}

/* With the faults off: the blob holds exactly what the model says. */
static void expect_contents(cw_blob *b, const model *m)
{
    static uint8_t got[BLOB_MAX];
    cw_storage_error err;
    faults_on(false);
    if (m->len > 0) {
        int rc = cw_blob_read_into(b, 0, got, m->len, CW_READ_DEFAULT, &err);
        ck_assert_msg(rc == CW_OK, "read back: %s", err.message);
        ck_assert_msg(memcmp(got, m->bytes, m->len) == 0, "the blob's bytes differ");
    }
    ck_assert_int_eq(cw_blob_read_into(b, m->len, got, 1, CW_READ_DEFAULT, &err),
                     CW_ERR_BLOB_INSUFFICIENT_LENGTH);
    faults_on(true);
}

/* The bytes of [0, len) outside [lo, hi) are the model's: what a failed
 * write or resize must not have touched. */
static void expect_untouched(cw_blob *b, const model *m, size_t len, size_t lo, size_t hi)
{
    static uint8_t got[BLOB_MAX];
    cw_storage_error err;
    faults_on(false);
    if (len > 0)
        ck_assert_int_eq(cw_blob_read_into(b, 0, got, len, CW_READ_DEFAULT, &err), CW_OK);
    for (size_t i = 0; i < len; i++)
        ck_assert_msg(i >= lo && i < hi ? true : got[i] == m->bytes[i],
                      "byte %zu outside a failed call's range changed", i);
    faults_on(true);
}

static void model_write(model *m, size_t off, const uint8_t *data, size_t len)
{
    if (off > m->len)
        memset(m->bytes + m->len, 0, off - m->len);
    memcpy(m->bytes + off, data, len);
    if (off + len > m->len)
        m->len = off + len;
}

static void model_resize(model *m, size_t len)
{
    if (len > m->len)
        memset(m->bytes + m->len, 0, len - m->len);
    m->len = len;
}

static void do_write(cw_blob *b, model *m)
{
    uint8_t data[CHUNK_MAX];
    size_t len = 1 + draw(CHUNK_MAX), off = draw(BLOB_MAX - CHUNK_MAX);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)draw(256);
    cw_write_options opt = draw(4) == 0 ? CW_WRITE_SYNC : CW_WRITE_DEFAULT;
    cw_storage_error err;
    int rc = cw_blob_write_at(b, off, data, len, opt, &err);
    if (rc == CW_OK) {
        ck_assert_msg(!(opt & CW_WRITE_SYNC) || !m->sync_failed,
                      "a synced write succeeded after a failed sync [STOR-037]");
        model_write(m, off, data, len);
        return;
    }
    ck_assert_msg(!atomic_load(&benign), "an interrupted or short write failed: %s", err.message);
    ck_assert_msg(rc == CW_ERR_IO || rc == CW_ERR_WRITE_FAILED || rc == CW_ERR_BLOB_SYNC_FAILED,
                  "a write failed with %d: %s", rc, err.message);
    m->sync_failed |= rc == CW_ERR_BLOB_SYNC_FAILED;
    expect_untouched(b, m, m->len < off ? m->len : off, off, off + len);
    /* What a program does next: write it again, unsynced, with no fault. */
    faults_on(false);
    ck_assert_int_eq(cw_blob_write_at(b, off, data, len, CW_WRITE_DEFAULT, &err), CW_OK);
    faults_on(true);
    model_write(m, off, data, len);
}

static void do_read(cw_blob *b, const model *m)
{
    uint8_t got[CHUNK_MAX];
    size_t len = 1 + draw(CHUNK_MAX), off = draw(BLOB_MAX);
    cw_storage_error err;
    int rc = cw_blob_read_into(b, off, got, len, CW_READ_DEFAULT, &err);
    if (off + len > m->len) {
        ck_assert_msg(rc == CW_ERR_BLOB_INSUFFICIENT_LENGTH ||
                          (rc == CW_ERR_IO && !atomic_load(&benign)),
                      "a read past the end gave %d", rc);
        return;
    }
    ck_assert_msg(rc == CW_OK || (rc == CW_ERR_IO && !atomic_load(&benign)),
                  "a read failed with %d: %s", rc, err.message);
    if (rc == CW_OK)
        ck_assert_msg(memcmp(got, m->bytes + off, len) == 0, "a read returned wrong bytes");
}

static void do_resize(cw_blob *b, model *m)
{
    size_t len = draw(BLOB_MAX);
    cw_storage_error err;
    int rc = cw_blob_resize(b, len, &err);
    if (rc != CW_OK) {
        ck_assert_msg(rc == CW_ERR_BLOB_RESIZE_FAILED && !atomic_load(&benign),
                      "a resize failed with %d", rc);
        size_t kept = len < m->len ? len : m->len;
        expect_untouched(b, m, kept, kept, kept);
        faults_on(false);
        ck_assert_int_eq(cw_blob_resize(b, len, &err), CW_OK);
        faults_on(true);
    }
    model_resize(m, len);
}

static void sync_ended(model *m, int rc)
{
    ck_assert_msg(rc == CW_OK || (rc == CW_ERR_BLOB_SYNC_FAILED && !atomic_load(&benign)),
                  "a sync failed with %d", rc);
    ck_assert_msg(rc != CW_OK || !m->sync_failed, "a sync succeeded after a failed one [STOR-037]");
    m->sync_failed |= rc != CW_OK;
}

static void do_sync(cw_blob *b, model *m)
{
    if (draw(2)) {
        cw_storage_error err;
        sync_ended(m, cw_blob_sync(b, &err));
        return;
    }
    cw_handle *h = cw_blob_start_sync(b);
    int rc = cw_join(h, NULL);
    cw_handle_release(h);
    sync_ended(m, rc);
}

static cw_blob *open_clean(cw_ctx *ctx, const char *name)
{
    cw_blob *b = NULL;
    uint64_t size = 1;
    cw_storage_error err;
    faults_on(false);
    int rc = cw_storage_open(ctx, "faults", name, strlen(name), &b, &size, &err);
    ck_assert_msg(rc == CW_OK, "open: %s", err.message);
    faults_on(true);
    return b;
}

/* Opens under faults: each works or says why, and creates no blob that a
 * clean open then cannot use. */
static void opens_under_faults(cw_ctx *ctx)
{
    for (int i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof name, "open%d", i);
        cw_blob *b = NULL;
        uint64_t size;
        cw_storage_error err;
        int rc = cw_storage_open(ctx, "faults", name, strlen(name), &b, &size, &err);
        ck_assert_msg(rc == CW_OK || (!atomic_load(&benign) &&
                                      (rc == CW_ERR_BLOB_OPEN_FAILED ||
                                       rc == CW_ERR_PARTITION_CREATION_FAILED || rc == CW_ERR_IO)),
                      "an open failed with %d: %s", rc, err.message);
        if (b)
            cw_blob_close(b);
    }
}

static void *storage_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static model m;
    memset(&m, 0, sizeof m);
    faults_on(true);
    opens_under_faults(ctx);
    cw_blob *b = open_clean(ctx, "blob");
    for (int op = 0; op < OPS; op++) {
        unsigned k = draw(20);
        if (k < 8)
            do_write(b, &m);
        else if (k < 15)
            do_read(b, &m);
        else if (k < 17)
            do_resize(b, &m);
        else
            do_sync(b, &m);
    }
    expect_contents(b, &m);
    cw_blob_close(b);
    /* A new open starts with no failure [STOR-037]. */
    b = open_clean(ctx, "blob");
    faults_on(false);
    cw_storage_error err;
    ck_assert_int_eq(cw_blob_sync(b, &err), CW_OK);
    cw_blob_close(b);
    return NULL;
}

/* Run `root` once per seed, the first half with only the faults the
 * backend must absorb; the faults injected in all. */
static long run_seeds(cw_task_fn root, uint64_t seeds)
{
    long total = 0;
    for (uint64_t seed = 1; seed <= 2 * seeds; seed++) {
        atomic_store(&benign, seed <= seeds);
        faults_install(seed);
        atomic_store(&injected, 0);
        cw_config cfg;
        cw_config_default(&cfg);
        /* The faults are injected into cw_os's preadv2, pwritev2 and
         * fdatasync, which only the I/O threads call: an io_uring's
         * completions come from the kernel, not through the table. */
        cfg.io_backend = CW_IO_THREADS;
        cw_run_result res;
        int rc = cw_start(cw_backend_native(), &cfg, root, NULL, &res);
        faults_remove();
        ck_assert_msg(rc == CW_OK, "seed %llu: %s", (unsigned long long)seed, res.message);
        total += atomic_load(&injected);
    }
    return total;
}

START_TEST(storage_under_io_faults)
{
    long total = run_seeds(storage_root, SEEDS);
    printf("storage: %d seeds of %d calls each with absorbed and with any faults, %ld faults "
           "injected, no wrong result\n",
           SEEDS, OPS, total);
    ck_assert_int_gt(total, 0);
}
END_TEST

/* ---- TCP ---------------------------------------------------------------------------------- */

enum { MESSAGES = 60, MESSAGE_MAX = 70000 };

static cw_iobufs *bytes_of(const uint8_t *data, size_t len)
{
    cw_iobufs *l = cw_iobufs_new(cw_backend_native());
    cw_iobuf buf;
    ck_assert_int_eq(cw_iobuf_copy(cw_backend_native(), data, len, &buf), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &buf), CW_OK);
    return l;
}

/* A failed send or recv gives one of its errors; the exchange then ends. */
static bool net_ok(int rc)
{
    ck_assert_msg(rc == CW_OK ||
                      (!atomic_load(&benign) && (rc == CW_ERR_SEND_FAILED ||
                                                 rc == CW_ERR_RECV_FAILED || rc == CW_ERR_CLOSED)),
                  "a network call failed with %d", rc);
    return rc == CW_OK;
}

/* Echo what comes, message by message, until the peer goes. */
static void *echo(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_conn *c = arg;
    for (;;) {
        cw_iobufs *len_bytes = NULL, *body = NULL;
        uint8_t be[4] = {0};
        int rc = cw_stream_recv(c->stream, 4, &len_bytes);
        if (rc == CW_ERR_RECV_FAILED || !net_ok(rc))
            break; /* the client is done (or, with any fault, the connection) */
        ck_assert_int_eq(cw_iobufs_copy_out(len_bytes, be, 4), CW_OK);
        cw_iobufs_release(len_bytes);
        size_t len = (size_t)be[0] << 24 | (size_t)be[1] << 16 | (size_t)be[2] << 8 | be[3];
        if (!net_ok(cw_stream_recv(c->stream, len, &body)))
            break;
        bool sent = net_ok(cw_sink_send(c->sink, body));
        cw_iobufs_release(body);
        if (!sent)
            break;
    }
    cw_sink_close(c->sink);
    cw_stream_close(c->stream);
    return NULL;
}

/* One message out and back: false when the connection failed. */
static bool round_trip(cw_sink *sink, cw_stream *stream, size_t len)
{
    static uint8_t msg[4 + MESSAGE_MAX];
    msg[0] = (uint8_t)(len >> 24), msg[1] = (uint8_t)(len >> 16);
    msg[2] = (uint8_t)(len >> 8), msg[3] = (uint8_t)len;
    for (size_t i = 0; i < len; i++)
        msg[4 + i] = (uint8_t)draw(256);
    cw_iobufs *out = bytes_of(msg, 4 + len), *back = NULL;
    bool ok = net_ok(cw_sink_send(sink, out)) && net_ok(cw_stream_recv(stream, len, &back));
    cw_iobufs_release(out);
    if (ok)
        ck_assert_msg(cw_iobufs_equal_bytes(back, msg + 4, len), "an echo came back changed");
    cw_iobufs_release(back);
    return ok;
}

static int *delivered(void)
{
    static int n;
    return &n;
}

static void *tcp_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_listener *l;
    cw_addr any = cw_addr_loopback4(0), at;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &at), CW_OK);
    faults_on(true);
    for (int conn = 0; conn < 4; conn++) {
        cw_sink *sink;
        cw_stream *stream;
        cw_conn c;
        ck_assert_int_eq(cw_dial(ctx, &at, &sink, &stream), CW_OK);
        ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
        cw_handle *h = cw_spawn(cw_child(ctx, "echo"), echo, &c);
        for (int i = 0; i < MESSAGES / 4 && round_trip(sink, stream, 1 + draw(MESSAGE_MAX)); i++)
            (*delivered())++;
        cw_sink_close(sink);
        cw_stream_close(stream);
        ck_assert_int_eq(cw_join(h, NULL), CW_OK);
        cw_handle_release(h);
    }
    faults_on(false);
    cw_listener_close(l);
    return NULL;
}

START_TEST(tcp_under_io_faults)
{
    *delivered() = 0;
    long total = run_seeds(tcp_root, 4);
    printf("tcp: %d messages echoed intact over 4 seeds with absorbed faults and 4 with any, %ld "
           "faults injected\n",
           *delivered(), total);
    ck_assert_int_gt(total, 0);
    ck_assert_int_gt(*delivered(), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("io_faults");
    TCase *tc = tcase_create("native");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, storage_under_io_faults);
    tcase_add_test(tc, tcp_under_io_faults);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
