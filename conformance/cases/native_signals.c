/*
 * native_signals.c - a parallel backend in a process that receives
 * signals (NAT-005): a program's handler, installed without SA_RESTART,
 * interrupts whatever system call the backend's threads are in; the
 * backend resumes them, and no call fails or ends early because of it.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
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
    cwc_store_run(signalled_root, NULL);
    atomic_store(&storm_on, false);
    pthread_join(t, NULL);
    ck_assert_int_gt(atomic_load(&handled), 0);
}
