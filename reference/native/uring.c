/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * uring.c - the run's io_uring: one ring for the whole run, through which
 * file storage reads, writes and syncs blobs (file_io.c).
 *
 * A task fills one submission entry under the submission lock, hands it to
 * the kernel, and at once looks at the completion queue itself: a transfer
 * the page cache serves is usually complete by the time io_uring_enter
 * returns, so the task goes on without ever parking. Otherwise it parks.
 *
 * Completions wake parked tasks through the reactor rather than a thread
 * of their own: an eventfd registered with the ring (io_uring_register_
 * eventfd) is in the reactor's epoll set, so the worker that holds the
 * reactor, idle by definition, reaps the queue and queues the woken tasks
 * on itself, as it does for a socket. A completion thread would add a
 * hand-off between threads to every disk wait, for nothing.
 *
 * Reaping is serialised by the completion lock; a task announces that it
 * parks under that same lock, so a completion either finds the task still
 * looking (and it sees the result without a wake) or parked (and wakes
 * it): never a wake before the park that would be lost or left pending.
 * The task parks through the scheduler directly, not cw_park, in a loop
 * until its entry completed: an abort must not resume it while the kernel
 * still reads or writes its buffers. It unwinds after the call instead.
 *
 * Without liburing at build time there is no ring: cw_uring_open says so,
 * and `auto` means I/O threads (runner.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native/os.h"
#include "native/uring.h"

#ifdef CW_HAVE_LIBURING

#include <liburing.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* Submission entries: one per call in flight at once, beyond which a task
 * waits for the kernel to take some. The completion queue is twice that,
 * and the kernel keeps any overflow (IORING_FEAT_NODROP). */
enum { ENTRIES = 256 };

/* How long a task looks for its completion before it parks. ext4 hands
 * every buffered write to an io-wq thread, which completes it in a few
 * microseconds; parking, then being woken through the reactor, costs more
 * than that on each side. A sync, which takes milliseconds, wastes this
 * much once. */
enum { SPIN_NS = 20000 };

struct cw_uring {
    struct io_uring ring;
    cw_rt *rt;
    cw_reactor_source src;   /* the eventfd the ring signals, in the reactor */
    pthread_mutex_t sq_lock; /* filling and submitting entries */
    pthread_mutex_t cq_lock; /* reaping, and a task announcing its park */
};

enum op_state { OP_WAITING, OP_PARKED, OP_FINISHED };

/* One call in flight, on the stack of the task that made it. */
typedef struct op {
    cw_task *task;
    atomic_int state; /* enum op_state; becomes OP_FINISHED under cq_lock */
    int res;          /* the completion's result: bytes, or -errno */
} op;

/* With cq_lock held. After the exchange the task may return and its stack
 * be reused, unless it announced a park, which needs this lock. */
static void finish(cw_uring *u, op *o, int res)
{
    cw_task *t = o->task;
    o->res = res;
    if (atomic_exchange(&o->state, OP_FINISHED) == OP_PARKED)
        u->rt->sched->wake(t);
}

/* With cq_lock held: complete every entry the kernel has posted. */
static void reap(cw_uring *u)
{
    if (io_uring_cq_has_overflow(&u->ring))
        io_uring_get_events(&u->ring); /* move what overflowed into the queue */
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&u->ring, head, cqe)
    {
        finish(u, io_uring_cqe_get_data(cqe), cw_os.ring_result(cqe->res));
        seen++;
    }
    io_uring_cq_advance(&u->ring, seen);
}

/* The eventfd was written: something completed. It is watched
 * edge-triggered, every write an event of its own, so its count is never
 * read back. The lock is waited for, not tried: a task holding it may have
 * finished its look before this entry was posted. */
static void completed(cw_reactor_source *src, uint32_t events)
{
    (void)events;
    cw_uring *u = cw_container_of(src, cw_uring, src);
    pthread_mutex_lock(&u->cq_lock);
    reap(u);
    pthread_mutex_unlock(&u->cq_lock);
}

/* Hand the kernel every entry filled, with sq_lock held. It refuses for
 * now (EAGAIN, EBUSY) while its completion queue is full: reaping makes
 * room. Anything else means the ring itself is broken. */
static void submit_all(cw_uring *u)
{
    int rc;
    while ((rc = io_uring_submit(&u->ring)) < 0) {
        if (rc == -EAGAIN || rc == -EBUSY) {
            pthread_mutex_lock(&u->cq_lock);
            reap(u);
            pthread_mutex_unlock(&u->cq_lock);
            sched_yield();
        } else if (rc != -EINTR) {
            cw_fatal("io_uring_submit failed: errno %d", -rc);
        }
    }
}

/* A free submission entry, with sq_lock held; a full queue is submitted. */
static struct io_uring_sqe *entry(cw_uring *u)
{
    struct io_uring_sqe *sqe;
    while (!(sqe = io_uring_get_sqe(&u->ring)))
        submit_all(u);
    return sqe;
}

static bool finished(const op *o)
{
    return atomic_load_explicit(&o->state, memory_order_acquire) == OP_FINISHED;
}

/* Reap for a while, letting other threads run (the io-wq thread doing the
 * call may need this CPU, and the kernel posts some completions when this
 * thread enters it): true when `o` completed. */
static bool spin_for(cw_uring *u, op *o)
{
    uint64_t until = cw_native_mono_ns() + SPIN_NS;
    for (;;) {
        /* Not io_uring_cq_ready: it reads the queue's head, which only the
         * holder of cq_lock may. */
        if (pthread_mutex_trylock(&u->cq_lock) == 0) {
            reap(u);
            pthread_mutex_unlock(&u->cq_lock);
        }
        if (finished(o))
            return true;
        if (cw_native_mono_ns() > until)
            return false;
        sched_yield();
    }
}

/* Park the calling task until `o` has completed. */
static void wait_for(cw_uring *u, op *o)
{
    if (spin_for(u, o)) /* most often, it has */
        return;
    pthread_mutex_lock(&u->cq_lock);
    reap(u);
    int expected = OP_WAITING;
    atomic_compare_exchange_strong(&o->state, &expected, OP_PARKED);
    while (atomic_load(&o->state) != OP_FINISHED) {
        pthread_mutex_unlock(&u->cq_lock);
        u->rt->sched->park(o->task);
        pthread_mutex_lock(&u->cq_lock);
    }
    pthread_mutex_unlock(&u->cq_lock);
}

/* Fill an entry with `prep`, submit it, and wait: its result. */
static int call(cw_uring *u, void (*prep)(struct io_uring_sqe *sqe, void *arg), void *arg)
{
    op o = {.task = cw_task_self(u->rt, "a storage call")};
    atomic_init(&o.state, OP_WAITING);
    pthread_mutex_lock(&u->sq_lock);
    struct io_uring_sqe *sqe = entry(u);
    prep(sqe, arg);
    io_uring_sqe_set_data(sqe, &o);
    submit_all(u);
    pthread_mutex_unlock(&u->sq_lock);
    wait_for(u, &o);
    return o.res;
}

typedef struct rw_args {
    int fd;
    bool write;
    const struct iovec *iov;
    int n;
    uint64_t offset;
    int flags;
} rw_args;

static void prep_rw(struct io_uring_sqe *sqe, void *arg)
{
    rw_args *a = arg;
    if (a->write)
        io_uring_prep_writev(sqe, a->fd, a->iov, (unsigned)a->n, a->offset);
    else
        io_uring_prep_readv(sqe, a->fd, a->iov, (unsigned)a->n, a->offset);
    sqe->rw_flags = a->flags;
}

static void prep_datasync(struct io_uring_sqe *sqe, void *arg)
{
    io_uring_prep_fsync(sqe, *(int *)arg, IORING_FSYNC_DATASYNC);
}

/* The result of `call` in the system call's convention. */
static ssize_t as_syscall(int res)
{
    if (res >= 0)
        return res;
    errno = -res;
    return -1;
}

ssize_t cw_uring_rw(cw_uring *u, int fd, bool write, const struct iovec *iov, int n,
                    uint64_t offset, int flags)
{
    rw_args a = {fd, write, iov, n, offset, flags};
    int res;
    while ((res = call(u, prep_rw, &a)) == -EINTR || res == -EAGAIN)
        continue;
    return as_syscall(res);
}

int cw_uring_datasync(cw_uring *u, int fd)
{
    int res;
    while ((res = call(u, prep_datasync, &fd)) == -EINTR || res == -EAGAIN)
        continue;
    return (int)as_syscall(res);
}

int cw_uring_watch_eventfd(struct io_uring *ring, cw_reactor *r, cw_reactor_source *src,
                           void (*ready)(cw_reactor_source *src, uint32_t events))
{
    src->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (src->fd < 0)
        return errno;
    src->ready = ready;
    src->release = NULL; /* never forgotten: it leaves with the reactor */
    int e = -io_uring_register_eventfd(ring, src->fd);
    if (e == 0 && cw_reactor_watch(r, src) != CW_OK)
        e = errno;
    if (e)
        close(src->fd);
    return e;
}

cw_uring *cw_uring_open(cw_rt *rt, cw_reactor *r, char *why, size_t whylen)
{
    cw_uring *u = calloc(1, sizeof *u);
    if (!u) {
        snprintf(why, whylen, "out of memory for the io_uring");
        errno = ENOMEM;
        return NULL;
    }
    int e = -io_uring_queue_init(ENTRIES, &u->ring, 0);
    if (e) {
        snprintf(why, whylen, "io_uring_queue_init: %s", strerror(e));
        free(u);
        errno = e;
        return NULL;
    }
    if ((e = cw_uring_watch_eventfd(&u->ring, r, &u->src, completed))) {
        snprintf(why, whylen, "the io_uring's eventfd: %s", strerror(e));
        io_uring_queue_exit(&u->ring);
        free(u);
        errno = e;
        return NULL;
    }
    u->rt = rt;
    pthread_mutex_init(&u->sq_lock, NULL);
    pthread_mutex_init(&u->cq_lock, NULL);
    return u;
}

void cw_uring_close(cw_uring *u)
{
    if (!u)
        return;
    io_uring_queue_exit(&u->ring);
    close(u->src.fd);
    pthread_mutex_destroy(&u->sq_lock);
    pthread_mutex_destroy(&u->cq_lock);
    free(u);
}

#else /* no liburing: no ring */

cw_uring *cw_uring_open(cw_rt *rt, cw_reactor *r, char *why, size_t whylen)
{
    (void)rt;
    (void)r;
    snprintf(why, whylen, "built without liburing");
    errno = ENOSYS;
    return NULL;
}

void cw_uring_close(cw_uring *u)
{
    (void)u;
}

/* Unreachable: no ring is ever opened. They fail as a kernel without
 * io_uring would. */
ssize_t cw_uring_rw(cw_uring *u, int fd, bool write, const struct iovec *iov, int n,
                    uint64_t offset, int flags)
{
    (void)u, (void)fd, (void)write, (void)iov, (void)n, (void)offset, (void)flags;
    errno = ENOSYS;
    return -1;
}

int cw_uring_datasync(cw_uring *u, int fd)
{
    (void)u, (void)fd;
    errno = ENOSYS;
    return -1;
}

#endif
