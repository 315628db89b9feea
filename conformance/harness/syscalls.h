/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * syscalls.h - the suite's file system calls: the C library's calls that
 * read, write, resize and flush a file, for the whole process (the backend
 * under test's included), pass through until a case arms them to fail, on
 * one file, as a failing disk or a full one makes them fail, or to move
 * fewer bytes than asked, as the kernel may.
 *
 * A backend that reaches its files some other way (its own system call
 * instructions, a memory mapping, an io_uring) is not seen: the counts
 * below then stay at 0, and a case can tell that it saw nothing.
 */
#ifndef CWC_SYSCALLS_H
#define CWC_SYSCALLS_H

#include <stdint.h>

/* The kinds of call, as bits. */
enum {
    CWC_SYS_READ = 1,    /* read, pread, readv, preadv, preadv2; recv, recvfrom, recvmsg */
    CWC_SYS_WRITE = 2,   /* write, pwrite, writev, pwritev, pwritev2; send, sendto, sendmsg */
    CWC_SYS_RESIZE = 4,  /* ftruncate, fallocate */
    CWC_SYS_SYNC = 8,    /* fsync, fdatasync, sync_file_range, syncfs */
    CWC_SYS_OPEN = 16,   /* open, openat, naming the file */
    CWC_SYS_REMOVE = 32, /* unlink, unlinkat, naming the file */
};

/* From now on, every call of a kind in `kinds` on a descriptor of the
 * file `path` fails with `error` and does nothing. */
void cwc_syscalls_fail(const char *path, unsigned kinds, int error);

/* From now on, every read and write of a kind in `kinds` (CWC_SYS_READ,
 * CWC_SYS_WRITE) on a descriptor of the file `path` moves half the bytes
 * asked for (at least one) and returns how many it moved. */
void cwc_syscalls_short(const char *path, unsigned kinds);

/* From now on, every preadv2 and pwritev2 on a descriptor of the file
 * `path` that passes flags (RWF_DSYNC, RWF_DONTCACHE...) fails with
 * EOPNOTSUPP and does nothing, as on Linux before 4.7 and on emulators
 * that take no flags; without flags they pass. cwc_syscalls_met counts
 * the refusals. */
void cwc_syscalls_refuse_flags(const char *path);

/* cwc_syscalls_refuse_flags, and from now on every flush of the file
 * (fsync, fdatasync, sync_file_range, syncfs) fails with `error` and does
 * nothing: a durable write the system took without its flag is made
 * durable another way, and that way fails. cwc_syscalls_met(CWC_SYS_SYNC)
 * counts the flushes failed. */
void cwc_syscalls_refuse_flags_fail_flushes(const char *path, int error);

/* Since the last arming of either call above: the writes seen on the
 * file (with flags or without), and the ways around a refused RWF_DSYNC
 * that are no flush of the file: writes without flags through a
 * descriptor that makes each durable (opened O_DSYNC or O_SYNC), and
 * flushes that name no file (msync, sync), counted whatever they reached. */
uint64_t cwc_syscalls_writes_seen(void);
uint64_t cwc_syscalls_durable_writes(void);

/* From now on, every other call of a kind in `kinds` on the file `path`
 * (by descriptor, or naming it for CWC_SYS_OPEN and CWC_SYS_REMOVE), the
 * first included, fails with EINTR and does nothing, as a call a signal
 * handler interrupted does; the calls between pass through.
 * cwc_syscalls_met counts the interrupted ones. */
void cwc_syscalls_interrupt(const char *path, unsigned kinds);

/* cwc_syscalls_fail for the TCP sockets with `port` at either end (the
 * connections through a listener on it): their sends (send, sendto,
 * sendmsg, write, writev: CWC_SYS_WRITE) and receives (recv, recvfrom,
 * recvmsg, read, readv: CWC_SYS_READ). Sockets are never shortened: on
 * Linux a short transfer means a full buffer or an empty queue, which a
 * backend waiting for readiness may rely on. */
void cwc_syscalls_fail_tcp(int port, unsigned kinds, int error);

/* Back to passing everything through. */
void cwc_syscalls_off(void);

/* Calls of `kind` failed or shortened since the last arming. */
uint64_t cwc_syscalls_met(unsigned kind);

/* Calls of open, open64, openat and openat64 without O_CLOEXEC made in
 * the process so far, whether anything is armed or not. */
uint64_t cwc_syscalls_inheritable_opens(void);

#endif
