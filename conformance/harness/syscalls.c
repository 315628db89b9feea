/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * syscalls.c - the suite's file system calls (syscalls.h).
 *
 * As allocator.c does for malloc, the functions below take the names of
 * the C library's, and cw-conformance is linked with -rdynamic, so the
 * dynamic linker binds every call of the process to them: the backend's,
 * whether linked in or loaded, in C or in a language whose standard
 * library calls libc (Rust's does). They pass through to the next
 * definition (RTLD_NEXT: libc's, or a sanitizer's interceptor, which keeps
 * its own bookkeeping of descriptors and then calls libc's).
 *
 * Armed, a call of an armed kind first asks the kernel which file its
 * descriptor is (/proc/self/fd), and fails only for the armed file: the
 * run's eventfds, sockets and pipes, the directories it syncs, the other
 * blobs and the suite's own output pass through. Disarmed, a call costs one atomic load more.
 *
 * A failing disk answers EIO and a full one ENOSPC, to the call that
 * reached it and to nothing else: a failed call here reads and writes
 * nothing, which is what lets a case say which bytes a blob must hold
 * after it.
 */
#undef _FORTIFY_SOURCE /* its inline read() would clash with the one here */

#include "harness/syscalls.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

enum { KINDS = 4 };

static _Atomic unsigned armed; /* the kinds that fail, 0 when off */
static char armed_path[PATH_MAX];
static int armed_error;
static atomic_ullong failed[KINDS]; /* calls failed, by kind */

static int kind_index(unsigned kind)
{
    return kind == CWC_SYS_READ ? 0 : kind == CWC_SYS_WRITE ? 1 : kind == CWC_SYS_RESIZE ? 2 : 3;
}

/* Whether descriptor `fd` is the armed file. */
static bool is_armed_file(int fd)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return false;
    path[n] = '\0';
    return strcmp(path, armed_path) == 0;
}

/* Whether a call of `kind` on `fd` fails; errno is then set. */
static bool refused(int fd, unsigned kind)
{
    if (!(atomic_load_explicit(&armed, memory_order_acquire) & kind))
        return false;
    int saved = errno;
    if (!is_armed_file(fd)) {
        errno = saved;
        return false;
    }
    atomic_fetch_add(&failed[kind_index(kind)], 1);
    errno = armed_error;
    return true;
}

void cwc_syscalls_fail(const char *path, unsigned kinds, int error)
{
    atomic_store(&armed, 0u);
    /* As /proc/self/fd names files: no symbolic link on the way. */
    if (!realpath(path, armed_path))
        snprintf(armed_path, sizeof armed_path, "%s", path);
    armed_error = error;
    for (int i = 0; i < KINDS; i++)
        atomic_store(&failed[i], 0);
    atomic_store_explicit(&armed, kinds, memory_order_release);
}

void cwc_syscalls_off(void)
{
    atomic_store(&armed, 0u);
}

uint64_t cwc_syscalls_failed(unsigned kind)
{
    return atomic_load(&failed[kind_index(kind)]);
}

/* ---- The calls ------------------------------------------------------------------------ */

/* The next definition of `name` after this one, found once. */
static void *next_definition(void *_Atomic *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(slot, f, memory_order_release);
    }
    return f;
}

/* `ret name(params)`, failing when refused, else calling the next
 * definition with `args`. A C library without the call gives ENOSYS,
 * as the kernel would. */
#define CWC_FILE_CALL(kind, ret, name, params, args)                                               \
    ret name params                                                                                \
    {                                                                                              \
        static void *_Atomic next;                                                                 \
        if (refused(fd, kind))                                                                     \
            return -1;                                                                             \
        ret(*call) params;                                                                         \
        *(void **)&call = next_definition(&next, #name);                                           \
        if (!call) {                                                                               \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        return call args;                                                                          \
    }

#define R CWC_SYS_READ
#define W CWC_SYS_WRITE

CWC_FILE_CALL(R, ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n))
CWC_FILE_CALL(R, ssize_t, pread, (int fd, void *buf, size_t n, off_t at), (fd, buf, n, at))
CWC_FILE_CALL(R, ssize_t, pread64, (int fd, void *buf, size_t n, off64_t at), (fd, buf, n, at))
CWC_FILE_CALL(R, ssize_t, readv, (int fd, const struct iovec *v, int n), (fd, v, n))
CWC_FILE_CALL(R, ssize_t, preadv, (int fd, const struct iovec *v, int n, off_t at), (fd, v, n, at))
CWC_FILE_CALL(R, ssize_t, preadv64, (int fd, const struct iovec *v, int n, off64_t at),
              (fd, v, n, at))
CWC_FILE_CALL(R, ssize_t, preadv2, (int fd, const struct iovec *v, int n, off_t at, int flags),
              (fd, v, n, at, flags))
CWC_FILE_CALL(R, ssize_t, preadv64v2, (int fd, const struct iovec *v, int n, off64_t at, int flags),
              (fd, v, n, at, flags))

CWC_FILE_CALL(W, ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n))
CWC_FILE_CALL(W, ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t at), (fd, buf, n, at))
CWC_FILE_CALL(W, ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t at),
              (fd, buf, n, at))
CWC_FILE_CALL(W, ssize_t, writev, (int fd, const struct iovec *v, int n), (fd, v, n))
CWC_FILE_CALL(W, ssize_t, pwritev, (int fd, const struct iovec *v, int n, off_t at), (fd, v, n, at))
CWC_FILE_CALL(W, ssize_t, pwritev64, (int fd, const struct iovec *v, int n, off64_t at),
              (fd, v, n, at))
CWC_FILE_CALL(W, ssize_t, pwritev2, (int fd, const struct iovec *v, int n, off_t at, int flags),
              (fd, v, n, at, flags))
CWC_FILE_CALL(W, ssize_t, pwritev64v2,
              (int fd, const struct iovec *v, int n, off64_t at, int flags), (fd, v, n, at, flags))

CWC_FILE_CALL(CWC_SYS_RESIZE, int, ftruncate, (int fd, off_t len), (fd, len))
CWC_FILE_CALL(CWC_SYS_RESIZE, int, ftruncate64, (int fd, off64_t len), (fd, len))
CWC_FILE_CALL(CWC_SYS_RESIZE, int, fallocate, (int fd, int mode, off_t at, off_t len),
              (fd, mode, at, len))
CWC_FILE_CALL(CWC_SYS_RESIZE, int, fallocate64, (int fd, int mode, off64_t at, off64_t len),
              (fd, mode, at, len))

CWC_FILE_CALL(CWC_SYS_SYNC, int, fsync, (int fd), (fd))
CWC_FILE_CALL(CWC_SYS_SYNC, int, fdatasync, (int fd), (fd))
CWC_FILE_CALL(CWC_SYS_SYNC, int, syncfs, (int fd), (fd))
CWC_FILE_CALL(CWC_SYS_SYNC, int, sync_file_range,
              (int fd, off64_t at, off64_t len, unsigned int flags), (fd, at, len, flags))
