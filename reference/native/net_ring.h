/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * net_ring.h - the network's io_uring (net_ring.c): a connection's
 * receives, the rest of its sends that the socket could not take at once,
 * a listener's accepts and a dial's connect are made by the kernel,
 * which posts the result, instead of by calls that poll the socket.
 * A run has one when it has file storage's ring (cfg.io_backend, NAT-008).
 */
#ifndef CW_NATIVE_NET_RING_H
#define CW_NATIVE_NET_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "native/native.h"

typedef struct cw_net_ring cw_net_ring;

/* One operation the kernel may still be making. Owned by whoever queued
 * it, who must keep it, and the memory it names, until `in_flight` is
 * false. */
typedef struct cw_net_op {
    /* Called with the runtime's lock held once the kernel is done: `res`
     * is what the call would return (bytes received, 0 at the end of the
     * stream; the accepted descriptor; 0 connected), or -errno. */
    void (*done)(struct cw_net_op *op, int res);
    bool in_flight;
} cw_net_op;

/* A ring for the run `rt`, its completions reaped by the worker holding
 * the reactor `r`, which must be started. The caller owns it and frees it
 * with cw_net_ring_close. NULL when the kernel (or this build: it needs
 * liburing) gives none, with the reason in `why` and errno set as
 * cw_uring_open sets it. */
cw_net_ring *cw_net_ring_open(cw_rt *rt, cw_reactor *r, char *why, size_t whylen);
/* Free the ring, once no operation is in flight and the reactor has
 * stopped watching its eventfd (cw_reactor_stop). NULL does nothing. */
void cw_net_ring_close(cw_net_ring *q);
/* With rt->lock held: queue a receive of up to `len` bytes from `fd` into
 * `buf`; with `all`, one that completes only once all `len` came, or the
 * end of the stream or an error did (with what came before it). The
 * kernel sees it at the next cw_net_ring_flush. */
void cw_net_ring_recv(cw_net_ring *q, cw_net_op *op, int fd, void *buf, size_t len, bool all);
/* With rt->lock held: queue a send of the bytes `msg` names to `fd`,
 * completing once all of them went, or with the count that did before an
 * error (or, on a kernel that cannot wait for all, with a short count).
 * `msg`, its iovecs and the bytes must stay until the op settles. */
void cw_net_ring_send(cw_net_ring *q, cw_net_op *op, int fd, const struct msghdr *msg);
/* With rt->lock held: queue an accept on the listening socket `fd`; the
 * connection's descriptor, non-blocking and close-on-exec, is the result,
 * its peer's address written to `peer` (room for `*peer_len` bytes). */
void cw_net_ring_accept(cw_net_ring *q, cw_net_op *op, int fd, struct sockaddr *peer,
                        socklen_t *peer_len);
/* With rt->lock held: queue a connect of the socket `fd` to `to`; 0 once
 * connected. */
void cw_net_ring_connect(cw_net_ring *q, cw_net_op *op, int fd, const struct sockaddr *to,
                         socklen_t len);
/* With rt->lock held, which it lets go meanwhile: cancel `op` if it is in
 * flight and return once the kernel is done with it (its `done` called). */
void cw_net_ring_settle(cw_net_ring *q, cw_net_op *op);
/* From any thread, holding no lock of the runtime: hand the kernel what
 * was queued. The native scheduler calls it before a thread waits, so a
 * worker's receives go to the kernel in one system call. */
void cw_net_ring_flush(cw_net_ring *q);
/* Whether anything is queued that no flush has handed over yet. */
bool cw_net_ring_queued(const cw_net_ring *q);

#endif
