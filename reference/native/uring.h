/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * uring.h - the run's io_uring (uring.c): a task submits a positioned
 * transfer or a data sync and is parked until the kernel has completed it.
 * File storage moves blob bytes this way when the run has a ring
 * (cfg.io_backend, NAT-008).
 */
#ifndef CW_NATIVE_URING_H
#define CW_NATIVE_URING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "native/native.h"

typedef struct cw_uring cw_uring;

/* A ring for the run `rt`, its completions reaped by the worker holding
 * the reactor `r`, which must be started. The caller owns the ring and
 * closes it with cw_uring_close. NULL when the kernel (or this build: it
 * needs liburing) gives none, with the reason in `why` and errno set:
 * ENOMEM, EMFILE or ENFILE when it was for want of memory or descriptors,
 * ENOSYS (or the kernel's refusal, EPERM...) when there is no ring to have. */
cw_uring *cw_uring_open(cw_rt *rt, cw_reactor *r, char *why, size_t whylen);
/* Free the ring, once no task is left to wait on it and the reactor has
 * stopped watching its eventfd (cw_reactor_stop). NULL does nothing. */
void cw_uring_close(cw_uring *u);
/* One preadv2 (`write` false) or pwritev2 of iov[0 .. n) at `offset`, with
 * the RWF_* `flags`, made by the kernel while the calling task is parked:
 * the bytes moved, or -1 with errno set, as the system call. Interrupted
 * and refused-for-now (EAGAIN) calls are made again. The caller owns
 * `iov` and the buffers; the task is resumed only once the kernel is done
 * with them, whatever wakes it meanwhile (an abort unwinds it after). */
ssize_t cw_uring_rw(cw_uring *u, int fd, bool write, const struct iovec *iov, int n,
                    uint64_t offset, int flags);
/* fdatasync(fd) through the ring, the same way: 0, or -1 with errno set. */
int cw_uring_datasync(cw_uring *u, int fd);

/* Have `ring` signal a new eventfd, src->fd, on every completion, and the
 * reactor `r` call `ready` for it: 0, or an errno with nothing left open.
 * The source leaves with the reactor (cw_reactor_stop); the caller closes
 * src->fd after that. For the rings of uring.c and net_ring.c. */
struct io_uring;
int cw_uring_watch_eventfd(struct io_uring *ring, cw_reactor *r, cw_reactor_source *src,
                           void (*ready)(cw_reactor_source *src, uint32_t events));

#endif
