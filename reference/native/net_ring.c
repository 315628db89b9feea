/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * net_ring.c - the network's io_uring: the kernel receives for a
 * connection's stream, into the stream's own buffer, sends the rest of a
 * send the socket could not take at once, accepts for a listener and
 * connects for a dial (tcp.c).
 *
 * Over epoll, every message a task waits for costs a recv that says
 * EAGAIN, a wait, and a recv that gets the bytes. Here the task queues one
 * receive and parks; the kernel makes it when the bytes come, and posts
 * the result. What the workers queue is handed to the kernel in one
 * io_uring_enter when a worker is about to wait (cw_net_ring_flush, from
 * the scheduler), so a worker that ran a batch of connections' tasks makes
 * one system call for all their receives. An accept or a connect waits
 * the same way for the kernel to post its result.
 *
 * Completions come back the way file storage's do (uring.c): the ring's
 * eventfd is in the reactor's epoll set, and the worker holding the
 * reactor reaps them with the runtime's lock held, the lock the streams
 * and their waiters are guarded by. That lock also makes it the only
 * reader of the completion queue: every reap holds it. This is a ring of
 * its own, not storage's, because storage reaps without that lock.
 *
 * Locks: the runtime lock, then the submission lock. A reap, which wakes
 * tasks, is never made with the submission lock held.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native/net_ring.h"
#include "native/uring.h"

#ifdef CW_HAVE_LIBURING

#include <liburing.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

/* Submission entries: what the workers queue between two flushes, beyond
 * which a full queue is handed over at once. A worker flushes every 61
 * tasks at the most (CW_POLL_EVERY), so 32 costs a batch of connections one
 * extra system call, and makes the full queue a path every busy run
 * takes. The completion queue holds one receive for each of several
 * thousand connections; beyond it the kernel keeps the overflow
 * (IORING_FEAT_NODROP). */
enum { ENTRIES = 32, CQ_ENTRIES = 8192 };

struct cw_net_ring {
    struct io_uring ring;
    cw_rt *rt;
    cw_reactor_source src;   /* the eventfd the ring signals, in the reactor */
    pthread_mutex_t sq_lock; /* filling and submitting entries */
    atomic_bool queued;      /* entries were filled and not submitted */
};

/* With rt->lock held: complete every entry the kernel has posted. A
 * cancel's own completion names no operation. */
static void reap(cw_net_ring *q)
{
    if (io_uring_cq_has_overflow(&q->ring))
        io_uring_get_events(&q->ring); /* move what overflowed into the queue */
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&q->ring, head, cqe)
    {
        cw_net_op *op = io_uring_cqe_get_data(cqe);
        if (op) {
            op->in_flight = false;
            op->done(op, cqe->res);
        }
        seen++;
    }
    io_uring_cq_advance(&q->ring, seen);
}

/* The eventfd was written: on the worker holding the reactor, with
 * rt->lock held. */
static void completed(cw_reactor_source *src, uint32_t events)
{
    (void)events;
    reap(cw_container_of(src, cw_net_ring, src));
}

/* With sq_lock held, and rt->lock if `rt_held`: hand the kernel every
 * entry filled. It refuses for now (EAGAIN, EBUSY) while the completion
 * queue and its overflow are full, and reaping makes room; anything else
 * means the ring itself is broken. */
static void submit(cw_net_ring *q, bool rt_held)
{
    int rc;
    while ((rc = io_uring_submit(&q->ring)) < 0) {
        if (rc != -EAGAIN && rc != -EBUSY && rc != -EINTR)
            cw_fatal("io_uring_submit failed: errno %d", -rc);
        if (rc == -EINTR)
            continue;
        pthread_mutex_unlock(&q->sq_lock);
        if (!rt_held)
            cw_rt_lock(q->rt);
        reap(q);
        if (!rt_held)
            cw_rt_unlock(q->rt);
        sched_yield();
        pthread_mutex_lock(&q->sq_lock);
    }
    atomic_store_explicit(&q->queued, false, memory_order_relaxed);
}

/* A free entry, with sq_lock and rt->lock held; a full queue is handed
 * over first. */
static struct io_uring_sqe *entry(cw_net_ring *q)
{
    struct io_uring_sqe *sqe;
    while (!(sqe = io_uring_get_sqe(&q->ring)))
        submit(q, true);
    atomic_store_explicit(&q->queued, true, memory_order_relaxed);
    return sqe;
}

/* With rt->lock held: an entry for `op`, the submission lock held until
 * queued() is called on it. */
static struct io_uring_sqe *entry_for(cw_net_ring *q)
{
    pthread_mutex_lock(&q->sq_lock);
    return entry(q);
}

/* The entry, prepared, now belongs to `op` (set after the prep, which
 * clears the entry). */
static void queued(cw_net_ring *q, struct io_uring_sqe *sqe, cw_net_op *op)
{
    io_uring_sqe_set_data(sqe, op);
    op->in_flight = true;
    pthread_mutex_unlock(&q->sq_lock);
}

void cw_net_ring_recv(cw_net_ring *q, cw_net_op *op, int fd, void *buf, size_t len, bool all)
{
    struct io_uring_sqe *sqe = entry_for(q);
    io_uring_prep_recv(sqe, fd, buf, len, all ? MSG_WAITALL : 0);
    queued(q, sqe, op);
}

/* MSG_WAITALL: one completion for the whole rest, however many times
 * the socket's buffer fills meanwhile (an older kernel that does not
 * retry a send completes it short; the caller queues the rest again). */
void cw_net_ring_send(cw_net_ring *q, cw_net_op *op, int fd, const struct msghdr *msg)
{
    struct io_uring_sqe *sqe = entry_for(q);
    io_uring_prep_sendmsg(sqe, fd, msg, MSG_NOSIGNAL | MSG_WAITALL);
    queued(q, sqe, op);
}

void cw_net_ring_accept(cw_net_ring *q, cw_net_op *op, int fd, struct sockaddr *peer,
                        socklen_t *peer_len)
{
    struct io_uring_sqe *sqe = entry_for(q);
    io_uring_prep_accept(sqe, fd, peer, peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    queued(q, sqe, op);
}

void cw_net_ring_connect(cw_net_ring *q, cw_net_op *op, int fd, const struct sockaddr *to,
                         socklen_t len)
{
    struct io_uring_sqe *sqe = entry_for(q);
    io_uring_prep_connect(sqe, fd, to, len);
    queued(q, sqe, op);
}

/* The kernel completes a cancelled receive at once (or has already
 * completed it), posting its entry during the submit or just after: the
 * loop lets the lock go while it waits so that the reactor can reap it
 * too, and reaps itself for when no worker polls (a run's end). */
void cw_net_ring_settle(cw_net_ring *q, cw_net_op *op)
{
    if (!op->in_flight)
        return;
    pthread_mutex_lock(&q->sq_lock);
    struct io_uring_sqe *sqe = entry(q);
    io_uring_prep_cancel(sqe, op, 0);
    io_uring_sqe_set_data(sqe, NULL);
    submit(q, true);
    pthread_mutex_unlock(&q->sq_lock);
    for (;;) {
        reap(q);
        if (!op->in_flight)
            return;
        cw_rt_unlock(q->rt);
        sched_yield();
        cw_rt_lock(q->rt);
    }
}

bool cw_net_ring_queued(const cw_net_ring *q)
{
    return atomic_load_explicit(&q->queued, memory_order_relaxed);
}

void cw_net_ring_flush(cw_net_ring *q)
{
    if (!cw_net_ring_queued(q))
        return;
    pthread_mutex_lock(&q->sq_lock);
    if (cw_net_ring_queued(q)) /* no other thread submitted them meanwhile */
        submit(q, false);
    pthread_mutex_unlock(&q->sq_lock);
}

/* A receive's completion is the kernel's work on the thread that
 * submitted it (the holder of the reactor, see scheduler.c, which is then
 * most often blocked in epoll_wait or busy with other tasks). By default
 * the kernel interrupts that thread at once, with an interprocessor
 * interrupt when it is running, which on a virtual machine measured
 * dearer than the receive itself; COOP_TASKRUN lets a running thread do
 * it at its next system call, which a busy worker makes within
 * microseconds, and still wakes a sleeping one. Kernels before 5.19 lack
 * it: then the default. */
static int init_ring(struct io_uring *ring)
{
    struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN,
                                .cq_entries = CQ_ENTRIES};
    int e = -io_uring_queue_init_params(ENTRIES, ring, &p);
    if (e != EINVAL)
        return e;
    struct io_uring_params plain = {.flags = IORING_SETUP_CQSIZE, .cq_entries = CQ_ENTRIES};
    return -io_uring_queue_init_params(ENTRIES, ring, &plain);
}

cw_net_ring *cw_net_ring_open(cw_rt *rt, cw_reactor *r, char *why, size_t whylen)
{
    cw_net_ring *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(why, whylen, "out of memory for the network's io_uring");
        errno = ENOMEM;
        return NULL;
    }
    int e = init_ring(&q->ring);
    if (e) {
        snprintf(why, whylen, "io_uring_queue_init (network): %s", strerror(e));
        free(q);
        errno = e;
        return NULL;
    }
    if ((e = cw_uring_watch_eventfd(&q->ring, r, &q->src, completed))) {
        snprintf(why, whylen, "the network io_uring's eventfd: %s", strerror(e));
        io_uring_queue_exit(&q->ring);
        free(q);
        errno = e;
        return NULL;
    }
    q->rt = rt; /* `queued` is false from calloc */
    pthread_mutex_init(&q->sq_lock, NULL);
    return q;
}

void cw_net_ring_close(cw_net_ring *q)
{
    if (!q)
        return;
    io_uring_queue_exit(&q->ring);
    close(q->src.fd);
    pthread_mutex_destroy(&q->sq_lock);
    free(q);
}

#else /* no liburing: no ring */

cw_net_ring *cw_net_ring_open(cw_rt *rt, cw_reactor *r, char *why, size_t whylen)
{
    (void)rt;
    (void)r;
    snprintf(why, whylen, "built without liburing");
    errno = ENOSYS;
    return NULL;
}

void cw_net_ring_close(cw_net_ring *q)
{
    (void)q;
}

/* Unreachable: no ring is ever opened. */
void cw_net_ring_recv(cw_net_ring *q, cw_net_op *op, int fd, void *buf, size_t len, bool all)
{
    (void)q, (void)fd, (void)buf, (void)len, (void)all;
    op->done(op, -ENOSYS);
}

void cw_net_ring_send(cw_net_ring *q, cw_net_op *op, int fd, const struct msghdr *msg)
{
    (void)q, (void)fd, (void)msg;
    op->done(op, -ENOSYS);
}

void cw_net_ring_accept(cw_net_ring *q, cw_net_op *op, int fd, struct sockaddr *peer,
                        socklen_t *peer_len)
{
    (void)q, (void)fd, (void)peer, (void)peer_len;
    op->done(op, -ENOSYS);
}

void cw_net_ring_connect(cw_net_ring *q, cw_net_op *op, int fd, const struct sockaddr *to,
                         socklen_t len)
{
    (void)q, (void)fd, (void)to, (void)len;
    op->done(op, -ENOSYS);
}

void cw_net_ring_settle(cw_net_ring *q, cw_net_op *op)
{
    (void)q, (void)op;
}

void cw_net_ring_flush(cw_net_ring *q)
{
    (void)q;
}

bool cw_net_ring_queued(const cw_net_ring *q)
{
    (void)q;
    return false;
}

#endif
