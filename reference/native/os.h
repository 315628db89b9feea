/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * os.h - the system calls of the native backend whose failure a test must
 * be able to provoke: the backend calls them through this table, which
 * holds the real calls unless a test in reference/tests/ swaps some for
 * failing stand-ins before a run (test_threadless.c makes thread creation
 * fail; test_io_faults.c makes the I/O calls fail, be interrupted or
 * transfer less, as disks and networks do; test_ring_canceled.c makes
 * the kernel give up io_uring storage calls).
 *
 * Each entry has the signature and the errno convention of the call it
 * stands for. Only the calls whose failures the backend has to survive
 * are here: those that set up what the backend owns (epoll_create1,
 * eventfd, timerfd_create) fail at the run's start and are reported there.
 */
#ifndef CW_NATIVE_OS_H
#define CW_NATIVE_OS_H

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef struct cw_os_calls {
    int (*thread_create)(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
                         void *arg);
    /* File storage (file_storage.c, file_io.c). */
    int (*open)(const char *path, int flags, mode_t mode);
    ssize_t (*preadv2)(int fd, const struct iovec *iov, int n, off_t offset, int flags);
    ssize_t (*pwritev2)(int fd, const struct iovec *iov, int n, off_t offset, int flags);
    int (*fdatasync)(int fd);
    int (*fsync)(int fd);
    int (*ftruncate)(int fd, off_t length);
    /* TCP (tcp.c). */
    ssize_t (*recv)(int fd, void *buf, size_t len, int flags);
    ssize_t (*recvmsg)(int fd, struct msghdr *msg, int flags);
    ssize_t (*sendmsg)(int fd, const struct msghdr *msg, int flags);
    /* The reactor (reactor.c): its wait, its timerfd's read and its
     * eventfd's write. */
    int (*epoll_wait)(int epfd, struct epoll_event *events, int max, int timeout);
    ssize_t (*read)(int fd, void *buf, size_t len);
    ssize_t (*write)(int fd, const void *buf, size_t len);
    /* The result the kernel posts for one of the run's io_uring storage
     * calls (uring.c): bytes, or -errno. The real entry returns it as it
     * is; a test's stand-in answers what the kernel may answer instead. */
    int (*ring_result)(int res);
} cw_os_calls;

/* Read by every run; written only by tests, between runs. */
extern cw_os_calls cw_os;

#endif
