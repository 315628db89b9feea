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
 * after it. Armed to shorten, a read or write moves half the bytes asked
 * for (at least one), as the kernel may when a signal arrives or the disk
 * fills: a backend must go on from where the call stopped. Armed to
 * interrupt, every other call of a kind on the file (the first included)
 * fails with EINTR and does nothing, as when a signal handler installed
 * without SA_RESTART runs: a backend must make the call again.
 */
#undef _FORTIFY_SOURCE /* its inline read() would clash with the one here */

#include "harness/syscalls.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

enum { KINDS = 6, SHORT_IOV = 64 };

/* What an armed call on the armed file does. */
typedef enum action { PASS, FAIL, SHORTEN, REFUSE_FLAGS, INTERRUPT } action;

static _Atomic unsigned armed; /* the kinds acted on, 0 when off */
static action armed_action;
static char armed_path[PATH_MAX]; /* "" for TCP sockets of armed_port */
static int armed_port;
static int armed_error;
static atomic_ullong met[KINDS];        /* calls acted on, by kind */
static atomic_ullong turns[KINDS];      /* INTERRUPT: armed calls so far, by kind */
static atomic_ullong inheritable_opens; /* opens without O_CLOEXEC, armed or not */
static atomic_ullong seen_writes;       /* REFUSE_FLAGS: writes on the armed file */
static atomic_ullong durable_writes;    /* of those, through an O_DSYNC descriptor; msync, sync */

static int kind_index(unsigned kind)
{
    return __builtin_ctz(kind);
}

/* The port of an IPv4 or IPv6 address, or -1. */
static int port_of(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)ss)->sin_port);
    if (ss->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    return -1;
}

/* Whether socket `fd` is TCP, with the armed port at either end: a
 * connection through the case's listener, not a socket the backend keeps
 * for itself (a wake-up pair, another connection). */
static bool on_armed_port(int fd)
{
    int type = 0;
    socklen_t len = sizeof type;
    struct sockaddr_storage ss = {0};
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
        return false;
    len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 && port_of(&ss) == armed_port)
        return true;
    len = sizeof ss;
    return getpeername(fd, (struct sockaddr *)&ss, &len) == 0 && port_of(&ss) == armed_port;
}

/* Whether descriptor `fd` is the armed file (or socket). */
static bool is_armed_file(int fd)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return false;
    path[n] = '\0';
    if (armed_path[0])
        return strcmp(path, armed_path) == 0;
    return strncmp(path, "socket:", 7) == 0 && on_armed_port(fd);
}

/* INTERRUPT: whether this call of `kind` on the armed file is one of those
 * interrupted (every other one, the first included); errno is then EINTR. */
static bool interrupted_turn(unsigned kind)
{
    if (armed_action != INTERRUPT || atomic_fetch_add(&turns[kind_index(kind)], 1) % 2 != 0)
        return false;
    atomic_fetch_add(&met[kind_index(kind)], 1);
    errno = EINTR;
    return true;
}

/* What a call of `kind` on `fd` does; errno is set for FAIL, kept else. */
static action act_on(int fd, unsigned kind)
{
    if (!(atomic_load_explicit(&armed, memory_order_acquire) & kind))
        return PASS;
    int saved = errno;
    if (!is_armed_file(fd)) {
        errno = saved;
        return PASS;
    }
    if (interrupted_turn(kind))
        return FAIL;
    if (armed_action == INTERRUPT) {
        errno = saved;
        return PASS;
    }
    if (armed_action == REFUSE_FLAGS && kind == CWC_SYS_SYNC) { /* flags refused, flushes fail */
        atomic_fetch_add(&met[kind_index(kind)], 1);
        errno = armed_error;
        return FAIL;
    }
    if (armed_action != REFUSE_FLAGS) /* counted when a call has flags to refuse */
        atomic_fetch_add(&met[kind_index(kind)], 1);
    errno = armed_action == FAIL ? armed_error : saved;
    return armed_action;
}

/* `path` as /proc/self/fd names files: no symbolic link on the way, in
 * its directory at least when the file itself is still to be made. */
static void resolve(const char *path, char out[PATH_MAX])
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (realpath(path, out))
        return;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash && slash > path && realpath(dir, real))
        snprintf(out, PATH_MAX, "%.*s%s", (int)(PATH_MAX - 256), real, slash);
    else
        snprintf(out, PATH_MAX, "%s", path);
}

/* Whether `path`, relative to directory `dirfd` unless absolute, names
 * the armed file. */
static bool is_armed_path(int dirfd, const char *path)
{
    char full[PATH_MAX], real[PATH_MAX];
    if (!armed_path[0] || !path)
        return false;
    if (path[0] == '/' || dirfd == AT_FDCWD) {
        snprintf(full, sizeof full, "%s", path);
    } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, full, sizeof full - 1);
        if (n <= 0 || (size_t)n + strlen(path) + 2 > sizeof full)
            return false;
        snprintf(full + n, sizeof full - (size_t)n, "/%s", path);
    }
    if (strcmp(full, armed_path) == 0)
        return true;
    resolve(full, real);
    return strcmp(real, armed_path) == 0;
}

/* Whether a call of `kind` (CWC_SYS_OPEN, CWC_SYS_REMOVE) naming `path`
 * fails; errno is then set. */
static bool refuses_path(int dirfd, const char *path, unsigned kind)
{
    if (!(atomic_load_explicit(&armed, memory_order_acquire) & kind))
        return false;
    int saved = errno;
    if (!is_armed_path(dirfd, path)) {
        errno = saved;
        return false;
    }
    if (armed_action == INTERRUPT) {
        bool now = interrupted_turn(kind);
        if (!now)
            errno = saved;
        return now;
    }
    atomic_fetch_add(&met[kind_index(kind)], 1);
    errno = armed_error;
    return true;
}

static void arm(const char *path, unsigned kinds, action what, int error)
{
    atomic_store(&armed, 0u);
    if (path)
        resolve(path, armed_path);
    else
        armed_path[0] = '\0';
    armed_action = what;
    armed_error = error;
    atomic_store(&seen_writes, 0);
    atomic_store(&durable_writes, 0);
    for (int i = 0; i < KINDS; i++) {
        atomic_store(&met[i], 0);
        atomic_store(&turns[i], 0);
    }
    atomic_store_explicit(&armed, kinds, memory_order_release);
}

void cwc_syscalls_fail(const char *path, unsigned kinds, int error)
{
    arm(path, kinds, FAIL, error);
}

void cwc_syscalls_short(const char *path, unsigned kinds)
{
    arm(path, kinds & (CWC_SYS_READ | CWC_SYS_WRITE), SHORTEN, 0);
}

void cwc_syscalls_refuse_flags(const char *path)
{
    arm(path, CWC_SYS_READ | CWC_SYS_WRITE, REFUSE_FLAGS, EOPNOTSUPP);
}

void cwc_syscalls_refuse_flags_fail_flushes(const char *path, int error)
{
    arm(path, CWC_SYS_READ | CWC_SYS_WRITE | CWC_SYS_SYNC, REFUSE_FLAGS, error);
}

void cwc_syscalls_interrupt(const char *path, unsigned kinds)
{
    arm(path, kinds, INTERRUPT, EINTR);
}

void cwc_syscalls_fail_tcp(int port, unsigned kinds, int error)
{
    armed_port = port;
    arm(NULL, kinds & (CWC_SYS_READ | CWC_SYS_WRITE), FAIL, error);
}

void cwc_syscalls_off(void)
{
    atomic_store(&armed, 0u);
}

uint64_t cwc_syscalls_met(unsigned kind)
{
    return atomic_load(&met[kind_index(kind)]);
}

uint64_t cwc_syscalls_writes_seen(void)
{
    return atomic_load(&seen_writes);
}

uint64_t cwc_syscalls_durable_writes(void)
{
    return atomic_load(&durable_writes);
}

/* A write on the armed file while its flags are refused: counted, and
 * counted durable when, without flags, its descriptor makes every write
 * durable (O_DSYNC, O_SYNC), a way a backend may take instead of RWF_DSYNC. */
static void note_write(int fd, unsigned kind, bool with_flags)
{
    if (kind != CWC_SYS_WRITE)
        return;
    atomic_fetch_add(&seen_writes, 1);
    int saved = errno, fl = with_flags ? -1 : fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & (O_DSYNC | O_SYNC)))
        atomic_fetch_add(&durable_writes, 1);
    errno = saved;
}

uint64_t cwc_syscalls_inheritable_opens(void)
{
    return atomic_load(&inheritable_opens);
}

/* ---- Short transfers --------------------------------------------------------------- */

/* Half of `n` bytes, at least one. */
static size_t half(size_t n)
{
    return n > 1 ? n / 2 : n;
}

/* The first half of the bytes of `v[0..n)` (at most SHORT_IOV pieces) as
 * pieces in `cut`; their count. */
static int shorten(const struct iovec *v, int n, struct iovec *cut)
{
    size_t total = 0;
    n = n < SHORT_IOV ? n : SHORT_IOV;
    for (int i = 0; i < n; i++)
        total += v[i].iov_len;
    size_t want = half(total);
    int k = 0;
    for (; k < n && want > 0; k++) {
        cut[k] = v[k];
        cut[k].iov_len = v[k].iov_len < want ? v[k].iov_len : want;
        want -= cut[k].iov_len;
    }
    return k > 0 ? k : n;
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

/* `ret name(params)`: fails when armed to, or when armed to refuse the
 * call's `flags` (0 for a call without) and it has some; makes a transfer
 * shorter when armed to (`shorten_args`, a statement, with `locals`
 * declared); else calls the next definition with `args`. A C library
 * without the call gives ENOSYS, as the kernel would. */
#define CWC_FILE_CALL(kind, ret, name, params, args, flags, locals, shorten_args)                  \
    ret name params                                                                                \
    {                                                                                              \
        static void *_Atomic next;                                                                 \
        locals;                                                                                    \
        action what = act_on(fd, kind);                                                            \
        if (what == FAIL)                                                                          \
            return -1;                                                                             \
        if (what == REFUSE_FLAGS)                                                                  \
            note_write(fd, kind, (flags) != 0);                                                    \
        if (what == REFUSE_FLAGS && (flags) != 0) {                                                \
            atomic_fetch_add(&met[kind_index(kind)], 1);                                           \
            errno = EOPNOTSUPP;                                                                    \
            return -1;                                                                             \
        }                                                                                          \
        if (what == SHORTEN) {                                                                     \
            shorten_args;                                                                          \
        }                                                                                          \
        ret(*call) params; /* NOLINT(bugprone-macro-parentheses): a type */                        \
        *(void **)&call = next_definition(&next, #name);                                           \
        if (!call) {                                                                               \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        return call args;                                                                          \
    }

/* A call that moves `n` bytes from or to one buffer. */
#define CWC_BYTES_CALL(kind, name, params, args)                                                   \
    CWC_FILE_CALL(kind, ssize_t, name, params, args, 0, (void)0, n = half(n))

/* A call that moves the bytes of `n` pieces `v`, with `flags`. */
#define CWC_PIECES_CALL_FLAGS(kind, name, params, args, flags)                                     \
    CWC_FILE_CALL(kind, ssize_t, name, params, args, flags, struct iovec cut[SHORT_IOV],           \
                  n = shorten(v, n, cut);                                                          \
                  v = cut)

/* A call that moves the bytes of `n` pieces `v`. */
#define CWC_PIECES_CALL(kind, name, params, args) CWC_PIECES_CALL_FLAGS(kind, name, params, args, 0)

/* A call that moves no bytes: only failed. */
#define CWC_OTHER_CALL(kind, name, params, args)                                                   \
    CWC_FILE_CALL(kind, int, name, params, args, 0, (void)0, (void)0)

#define R CWC_SYS_READ
#define W CWC_SYS_WRITE

CWC_BYTES_CALL(R, read, (int fd, void *buf, size_t n), (fd, buf, n))
CWC_BYTES_CALL(R, pread, (int fd, void *buf, size_t n, off_t at), (fd, buf, n, at))
CWC_BYTES_CALL(R, pread64, (int fd, void *buf, size_t n, off64_t at), (fd, buf, n, at))
CWC_PIECES_CALL(R, readv, (int fd, const struct iovec *v, int n), (fd, v, n))
CWC_PIECES_CALL(R, preadv, (int fd, const struct iovec *v, int n, off_t at), (fd, v, n, at))
CWC_PIECES_CALL(R, preadv64, (int fd, const struct iovec *v, int n, off64_t at), (fd, v, n, at))
CWC_PIECES_CALL_FLAGS(R, preadv2, (int fd, const struct iovec *v, int n, off_t at, int flags),
                      (fd, v, n, at, flags), flags)
CWC_PIECES_CALL_FLAGS(R, preadv64v2, (int fd, const struct iovec *v, int n, off64_t at, int flags),
                      (fd, v, n, at, flags), flags)

CWC_BYTES_CALL(W, write, (int fd, const void *buf, size_t n), (fd, buf, n))
CWC_BYTES_CALL(W, pwrite, (int fd, const void *buf, size_t n, off_t at), (fd, buf, n, at))
CWC_BYTES_CALL(W, pwrite64, (int fd, const void *buf, size_t n, off64_t at), (fd, buf, n, at))
CWC_PIECES_CALL(W, writev, (int fd, const struct iovec *v, int n), (fd, v, n))
CWC_PIECES_CALL(W, pwritev, (int fd, const struct iovec *v, int n, off_t at), (fd, v, n, at))
CWC_PIECES_CALL(W, pwritev64, (int fd, const struct iovec *v, int n, off64_t at), (fd, v, n, at))
CWC_PIECES_CALL_FLAGS(W, pwritev2, (int fd, const struct iovec *v, int n, off_t at, int flags),
                      (fd, v, n, at, flags), flags)
CWC_PIECES_CALL_FLAGS(W, pwritev64v2, (int fd, const struct iovec *v, int n, off64_t at, int flags),
                      (fd, v, n, at, flags), flags)

/* Socket calls are only failed, never shortened (cwc_syscalls_fail_tcp). */
#define CWC_SOCKET_CALL(kind, name, params, args)                                                  \
    CWC_FILE_CALL(kind, ssize_t, name, params, args, 0, (void)0, (void)0)

CWC_SOCKET_CALL(R, recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))
CWC_SOCKET_CALL(R, recvfrom,
                (int fd, void *buf, size_t n, int flags, __SOCKADDR_ARG from, socklen_t *len),
                (fd, buf, n, flags, from, len))
CWC_SOCKET_CALL(R, recvmsg, (int fd, struct msghdr *m, int flags), (fd, m, flags))
CWC_SOCKET_CALL(W, send, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags))
CWC_SOCKET_CALL(W, sendto,
                (int fd, const void *buf, size_t n, int flags, __CONST_SOCKADDR_ARG to,
                 socklen_t len),
                (fd, buf, n, flags, to, len))
CWC_SOCKET_CALL(W, sendmsg, (int fd, const struct msghdr *m, int flags), (fd, m, flags))

CWC_OTHER_CALL(CWC_SYS_RESIZE, ftruncate, (int fd, off_t len), (fd, len))
CWC_OTHER_CALL(CWC_SYS_RESIZE, ftruncate64, (int fd, off64_t len), (fd, len))
CWC_OTHER_CALL(CWC_SYS_RESIZE, fallocate, (int fd, int mode, off_t at, off_t len),
               (fd, mode, at, len))
CWC_OTHER_CALL(CWC_SYS_RESIZE, fallocate64, (int fd, int mode, off64_t at, off64_t len),
               (fd, mode, at, len))

CWC_OTHER_CALL(CWC_SYS_SYNC, fsync, (int fd), (fd))
CWC_OTHER_CALL(CWC_SYS_SYNC, fdatasync, (int fd), (fd))
CWC_OTHER_CALL(CWC_SYS_SYNC, syncfs, (int fd), (fd))
CWC_OTHER_CALL(CWC_SYS_SYNC, sync_file_range, (int fd, off64_t at, off64_t len, unsigned int flags),
               (fd, at, len, flags))

/* Flushes that name no descriptor. While flags are refused, each counts
 * as a way the armed file's writes may have been made durable: leniently,
 * as the suite cannot tell which file they reached. */
static void note_unnamed_flush(void)
{
    if (atomic_load_explicit(&armed, memory_order_acquire) && armed_action == REFUSE_FLAGS)
        atomic_fetch_add(&durable_writes, 1);
}

int msync(void *addr, size_t len, int flags)
{
    static void *_Atomic next;
    int (*call)(void *, size_t, int);
    note_unnamed_flush();
    *(void **)&call = next_definition(&next, "msync");
    if (!call) {
        errno = ENOSYS;
        return -1;
    }
    return call(addr, len, flags);
}

void sync(void)
{
    static void *_Atomic next;
    void (*call)(void);
    note_unnamed_flush();
    *(void **)&call = next_definition(&next, "sync");
    if (call)
        call();
}

/* ---- Calls that name the file ----------------------------------------------------------- */

/* The next definition of `name`, as a pointer of `type`, into `call`. */
#define CWC_NEXT(call, name)                                                                       \
    static void *_Atomic next_##name;                                                              \
    *(void **)&(call) = next_definition(&next_##name, #name);                                      \
    if (!(call)) {                                                                                 \
        errno = ENOSYS;                                                                            \
        return -1;                                                                                 \
    }

/* The mode argument of an open that may create; an open that a child
 * process would inherit counted. */
#define CWC_OPEN_MODE(flags, mode)                                                                 \
    if (!((flags)&O_CLOEXEC))                                                                      \
        atomic_fetch_add(&inheritable_opens, 1);                                                   \
    mode_t mode = 0; /* NOLINT(bugprone-macro-parentheses): `mode` names what is declared */       \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                                                         \
        va_list ap;                                                                                \
        va_start(ap, flags);                                                                       \
        mode = va_arg(ap, mode_t); /* NOLINT(bugprone-macro-parentheses) */                        \
        va_end(ap);                                                                                \
    }

int open(const char *path, int flags, ...)
{
    CWC_OPEN_MODE(flags, mode)
    if (refuses_path(AT_FDCWD, path, CWC_SYS_OPEN))
        return -1;
    int (*call)(const char *, int, ...);
    CWC_NEXT(call, open)
    return call(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
    CWC_OPEN_MODE(flags, mode)
    if (refuses_path(AT_FDCWD, path, CWC_SYS_OPEN))
        return -1;
    int (*call)(const char *, int, ...);
    CWC_NEXT(call, open64)
    return call(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
    CWC_OPEN_MODE(flags, mode)
    if (refuses_path(dirfd, path, CWC_SYS_OPEN))
        return -1;
    int (*call)(int, const char *, int, ...);
    CWC_NEXT(call, openat)
    return call(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
    CWC_OPEN_MODE(flags, mode)
    if (refuses_path(dirfd, path, CWC_SYS_OPEN))
        return -1;
    int (*call)(int, const char *, int, ...);
    CWC_NEXT(call, openat64)
    return call(dirfd, path, flags, mode);
}

int unlink(const char *path)
{
    if (refuses_path(AT_FDCWD, path, CWC_SYS_REMOVE))
        return -1;
    int (*call)(const char *);
    CWC_NEXT(call, unlink)
    return call(path);
}

int unlinkat(int dirfd, const char *path, int flags)
{
    if (refuses_path(dirfd, path, CWC_SYS_REMOVE))
        return -1;
    int (*call)(int, const char *, int);
    CWC_NEXT(call, unlinkat)
    return call(dirfd, path, flags);
}
