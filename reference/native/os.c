/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * os.c - the real system calls behind cw_os (os.h).
 */
#include <fcntl.h>
#include <unistd.h>

#include "native/os.h"

/* open is variadic; the table's entry is not. */
static int open_file(const char *path, int flags, mode_t mode)
{
    return open(path, flags, mode);
}

static int ring_result(int res)
{
    return res;
}

cw_os_calls cw_os = {
    .thread_create = pthread_create,
    .open = open_file,
    .preadv2 = preadv2,
    .pwritev2 = pwritev2,
    .fdatasync = fdatasync,
    .fsync = fsync,
    .ftruncate = ftruncate,
    .recv = recv,
    .recvmsg = recvmsg,
    .sendmsg = sendmsg,
    .epoll_wait = epoll_wait,
    .read = read,
    .write = write,
    .ring_result = ring_result,
};
