/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * native_signals.c - a parallel backend in a process that receives
 * signals (NAT-005): a program's handler, installed without SA_RESTART,
 * interrupts whatever system call the backend's threads are in; the
 * backend resumes them, and no call fails or ends early because of it.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cases/storage.h"

#define PAR CW_CAP_PARALLEL

static atomic_int handled;
static atomic_bool storm_on;

static void count_signal(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

/* Signal every thread of the process in turn, each 50 us, until told to
 * stop: every thread the backend has gets interrupted, whatever it waits in. */
static void *storm(void *arg)
{
    (void)arg;
    pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
    while (atomic_load(&storm_on)) {
        DIR *d = opendir("/proc/self/task");
        if (!d)
            break;
        for (struct dirent *e; (e = readdir(d));) {
            pid_t tid = (pid_t)atoi(e->d_name);
            if (tid > 0 && tid != self)
                syscall(SYS_tgkill, pid, tid, SIGUSR1);
        }
        closedir(d);
        usleep(50);
    }
    return NULL;
}

static void *ping(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_chan *tx = arg;
    for (int i = 0; i < 200; i++)
        ck_assert_int_eq(cw_chan_send(tx, &i), CW_OK);
    cw_chan_sender_drop(tx);
    return NULL;
}

/* GET /metrics over a plain socket, retrying what the storm interrupts:
 * the whole answer must come, starting with 200. */
static void scrape_once(const char *address)
{
    const char *colon = strrchr(address, ':');
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    int rc;
    while ((rc = connect(fd, (struct sockaddr *)&sa, sizeof sa)) != 0 && errno == EINTR)
        ;
    ck_assert_int_eq(rc, 0);
    static const char req[] = "GET /metrics HTTP/1.1\r\n\r\n";
    ssize_t n;
    while ((n = send(fd, req, sizeof req - 1, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    ck_assert_int_eq(n, (ssize_t)(sizeof req - 1));
    char buf[16384];
    size_t used = 0;
    while (used < sizeof buf - 1) {
        n = recv(fd, buf + used, sizeof buf - 1 - used, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    buf[used] = '\0';
    close(fd);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0, "response:\n%s", buf);
}

/* Work that waits in every way a backend waits: timers, wakes across
 * threads, a blocking task, storage I/O and its sync. */
static void *signalled_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        cw_time before = cw_current(ctx);
        ck_assert_int_eq(cw_sleep(ctx, CW_MSEC), CW_OK);
        ck_assert_uint_ge(cw_current(ctx) - before, CW_MSEC); /* never cut short */
    }
    cw_chan *ch = cw_chan_new(ctx, sizeof(int), 1);
    ck_assert_ptr_nonnull(ch);
    cw_ctx *blocking = cw_child(ctx, "pinger");
    cw_shared(blocking, true);
    cw_handle *h = cw_spawn(blocking, ping, ch);
    int got, want = 0;
    while (cw_chan_recv(ch, &got) == CW_OK)
        ck_assert_int_eq(got, want++);
    ck_assert_int_eq(want, 200);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cw_chan_receiver_drop(ch);
    cw_blob *b = cwc_open(ctx, "signals", "blob", NULL);
    static uint8_t data[256 * 1024];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7);
    cwc_write(b, 0, data, sizeof data);
    cwc_sync(b);
    cwc_read_eq(b, 0, data, sizeof data);
    cw_blob_close(b);
    /* The metrics endpoint's thread waits in poll too; scrape it while
     * the storm goes on. */
    char address[64];
    ck_assert_int_eq(cw_metrics_endpoint(ctx, address, sizeof address), CW_OK);
    for (int i = 0; i < 20; i++) {
        scrape_once(address);
        cw_sleep(ctx, CW_MSEC);
    }
    return NULL;
}

CWC_CASE(native_signals_interrupt_nothing, "native", "NAT-005", PAR | CWC_NEEDS_STORAGE)
{
    struct sigaction sa = {0};
    sa.sa_handler = count_signal; /* no SA_RESTART: system calls fail with EINTR */
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    atomic_store(&storm_on, true);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, storm, NULL), 0);
    cwc_store st;
    cwc_store_begin(&st);
    st.cfg.metrics_address = "127.0.0.1:0";
    cwc_run_ok(&st.cfg, signalled_root, NULL);
    cwc_store_end(&st);
    atomic_store(&storm_on, false);
    pthread_join(t, NULL);
    ck_assert_int_gt(atomic_load(&handled), 0);
}
