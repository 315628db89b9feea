/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * file_io.c - reading, writing, resizing and syncing an open blob file.
 *
 * Transfers are positioned (preadv2/pwritev2), so the clones of a handle
 * share one descriptor without a lock, in batches of at most IOV_MAX
 * chunks, resumed after a short transfer and retried after EINTR.
 *
 * CW_WRITE_SYNC asks for RWF_DSYNC on the write itself when it fits one
 * system call, and adds an fdatasync otherwise (or when RWF_DSYNC is refused): either way only
 * these bytes are made durable, as the option promises, not a barrier for the writes before them.
 * fdatasync is enough for sync too: it writes the length along with the data, which is all a blob
 * has.
 *
 * A read tries the page cache first, on the calling thread, with RWF_NOWAIT
 * (see read_cached): a cached read costs what pread costs. A small write
 * with no option is made on the calling thread too (see write_here): it
 * only copies into the page cache, in about the time a hand-off takes. The
 * rest of a read, and every other write and sync, goes through the run's
 * io_uring when it has one (uring.c: the task parks until the kernel
 * completes it), else to an I/O thread. Either way the calls are the same,
 * and so are their flags, retries and errors: only `move` and `datasync`
 * below differ. Resizes stay on the I/O threads (they are rare), and so
 * does start_sync, which nobody waits for.
 *
 * The DONT_CACHE options ask for RWF_DONTCACHE (uncached buffered I/O,
 * Linux 6.14). A kernel or file system without it says EOPNOTSUPP: the
 * call is retried without the flag and, from then on for this file,
 * posix_fadvise(DONTNEED) on the range after each transfer does what it
 * can. The bytes read or written are the same either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "native/file_storage.h"
#include "native/os.h"
#include "native/uring.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif

enum { BATCH = IOV_MAX };

/* Skip `done` bytes of iov[*i ..]. */
static void advance(struct iovec *iov, int n, int *i, size_t done)
{
    while (*i < n && done >= iov[*i].iov_len) {
        done -= iov[*i].iov_len;
        (*i)++;
    }
    if (*i < n) {
        iov[*i].iov_base = (uint8_t *)iov[*i].iov_base + done;
        iov[*i].iov_len -= done;
    }
}

/* Whether the ring gave up a call it never made. Nothing here cancels a
 * storage call, but the kernel answers ECANCELED when it cannot start the
 * io-wq thread that would make it: thread creation fails while a signal
 * is pending, and after a few tries the kernel cancels the work queued
 * for that thread. A program that signals its threads often meets this.
 * The call did nothing, so it is made again, as a system call on this
 * thread: a retry through the ring could meet the same refusal. */
static bool ring_gave_up(ssize_t r)
{
    return r < 0 && errno == ECANCELED;
}

/* One positioned call: through the ring when there is one (NULL: the
 * system call itself, on this thread). */
static ssize_t move(cw_uring *ring, int fd, bool write, const struct iovec *iov, int n,
                    uint64_t offset, int flags)
{
    if (ring) {
        ssize_t r = cw_uring_rw(ring, fd, write, iov, n, offset, flags);
        if (!ring_gave_up(r))
            return r;
    }
    return write ? cw_os.pwritev2(fd, iov, n, (off_t)offset, flags)
                 : cw_os.preadv2(fd, iov, n, (off_t)offset, flags);
}

static int datasync(cw_uring *ring, int fd)
{
    if (ring) {
        int rc = cw_uring_datasync(ring, fd);
        if (!ring_gave_up(rc))
            return rc;
    }
    return cw_file_datasync(fd);
}

/* Move every byte of iov[0 .. n) at `offset`. 0, an errno, or -1 when
 * the file ended (a read) or took nothing (a write). `*flags` loses
 * RWF_DONTCACHE, then RWF_DSYNC, when the kernel refuses them: Linux before
 * 4.7, and qemu-user, take no flags at all. */
static int transfer(cw_uring *ring, int fd, bool write, struct iovec *iov, int n, uint64_t offset,
                    int *flags)
{
    int i = 0;
    advance(iov, n, &i, 0);
    while (i < n) {
        int count = n - i < BATCH ? n - i : BATCH;
        ssize_t r = move(ring, fd, write, iov + i, count, offset, *flags);
        if (r < 0 && errno == EOPNOTSUPP && (*flags & (RWF_DONTCACHE | RWF_DSYNC))) {
            *flags &= *flags & RWF_DONTCACHE ? ~RWF_DONTCACHE : ~RWF_DSYNC;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno;
        if (r == 0)
            return -1;
        offset += (uint64_t)r;
        advance(iov, n, &i, (size_t)r);
    }
    return 0;
}

int cw_file_open(const char *path, int flags, mode_t mode)
{
    int fd;
    while ((fd = cw_os.open(path, flags, mode)) < 0 && errno == EINTR)
        continue;
    return fd;
}

int cw_file_truncate(int fd, uint64_t len)
{
    int rc;
    while ((rc = cw_os.ftruncate(fd, (off_t)len)) != 0 && errno == EINTR)
        continue;
    return rc;
}

/* An interrupted fdatasync reported nothing about the data (unlike EIO,
 * which is final: STOR-037), so it is asked again. */
int cw_file_datasync(int fd)
{
    int rc;
    while ((rc = cw_os.fdatasync(fd)) != 0 && errno == EINTR)
        continue;
    return rc;
}

int cw_file_pread_all(int fd, void *buf, size_t len, uint64_t offset)
{
    struct iovec iov = {buf, len};
    int flags = 0;
    int rc = transfer(NULL, fd, false, &iov, 1, offset, &flags);
    return rc < 0 ? EIO : rc;
}

int cw_file_pwrite_all(int fd, const void *buf, size_t len, uint64_t offset)
{
    struct iovec iov = {(void *)buf, len};
    int flags = 0;
    int rc = transfer(NULL, fd, true, &iov, 1, offset, &flags);
    return rc < 0 ? EIO : rc;
}

/* ---- Jobs ------------------------------------------------------------------------------ */

typedef struct io_job {
    cw_job job;
    cw_bfile *f;
    uint64_t offset;
    struct iovec *iov; /* a copy the transfer may advance */
    int n;
    size_t total;
    int options;  /* the call's cw_read_options or cw_write_options */
    uint64_t len; /* resize */
    int rc;
    cw_storage_error *err;
    cw_uring *ring; /* the run's, for a transfer or a sync; NULL: on an I/O thread */
} io_job;

static file_file *ffile(const cw_bfile *f)
{
    return f->impl;
}

/* On an I/O thread, while the calling task is parked. */
static void run(cw_bfile *f, io_job *j, void (*fn)(cw_job *))
{
    j->job.fn = fn;
    j->f = f;
    cw_offload_run(((file_storage *)f->st->impl)->io, &j->job);
}

/* A transfer or a sync: on this task, its calls through the run's ring,
 * when it has one; else on an I/O thread. */
static void run_io(cw_bfile *f, io_job *j, void (*fn)(cw_job *))
{
    j->ring = ((file_storage *)f->st->impl)->ring;
    if (!j->ring) {
        run(f, j, fn);
        return;
    }
    j->f = f;
    fn(&j->job);
}

/* The flags of a transfer asked not to be cached, and the advice after it. */
static int dontcache_flags(const file_file *ff, bool asked)
{
    return asked && !atomic_load(&ff->no_dontcache) ? RWF_DONTCACHE : 0;
}

static void dontcache_after(file_file *ff, bool asked, int flags, uint64_t offset, size_t len)
{
    if (!asked)
        return;
    if (!(flags & RWF_DONTCACHE)) {
        atomic_store(&ff->no_dontcache, true);
        posix_fadvise(ff->fd, (off_t)offset, (off_t)len, POSIX_FADV_DONTNEED);
    }
}

static void read_fn(cw_job *job)
{
    io_job *j = (io_job *)job;
    cw_bfile *f = j->f;
    file_file *ff = ffile(f);
    bool dontcache = j->options & CW_READ_DONT_CACHE;
    int flags = dontcache_flags(ff, dontcache);
    int e = transfer(j->ring, ff->fd, false, j->iov, j->n, j->offset, &flags);
    dontcache_after(ff, dontcache, flags, j->offset, j->total);
    if (e < 0)
        j->rc = cw_storage_fail(j->err, CW_ERR_BLOB_INSUFFICIENT_LENGTH, f->partition, f->hex, 0,
                                "blob insufficient length");
    else if (e)
        j->rc = cw_fail_os(j->err, CW_ERR_IO, f->partition, f->hex, e, "reading");
    else
        j->rc = CW_OK;
}

static void write_fn(cw_job *job)
{
    io_job *j = (io_job *)job;
    cw_bfile *f = j->f;
    file_file *ff = ffile(f);
    bool dontcache = j->options & CW_WRITE_DONT_CACHE;
    bool sync = j->options & CW_WRITE_SYNC;
    bool dsync = sync && j->n <= BATCH; /* one system call: the flag covers it all */
    int flags = dontcache_flags(ff, dontcache) | (dsync ? RWF_DSYNC : 0);
    int e = transfer(j->ring, ff->fd, true, j->iov, j->n, j->offset, &flags);
    dontcache_after(ff, dontcache, flags, j->offset, j->total);
    if (e < 0)
        j->rc =
            cw_storage_fail(j->err, CW_ERR_WRITE_FAILED, f->partition, f->hex, 0, "write failed");
    else if (e)
        j->rc = cw_fail_os(j->err, CW_ERR_IO, f->partition, f->hex, e, "writing");
    else if (sync && !(flags & RWF_DSYNC) && datasync(j->ring, ff->fd) != 0)
        j->rc = cw_fail_os(j->err, CW_ERR_BLOB_SYNC_FAILED, f->partition, f->hex, errno, NULL);
    else
        j->rc = CW_OK;
}

/* The part of a read the page cache can serve at once, done on the calling
 * thread: with RWF_NOWAIT the kernel answers EAGAIN rather than wait for
 * the disk, so the worker never blocks. Returns the bytes read. */
static size_t read_cached(file_file *ff, const struct iovec *iov, int n, uint64_t offset)
{
    if (atomic_load(&ff->no_nowait))
        return 0;
    ssize_t r = cw_os.preadv2(ff->fd, iov, n < BATCH ? n : BATCH, (off_t)offset, RWF_NOWAIT);
    if (r < 0 && errno == EOPNOTSUPP)
        atomic_store(&ff->no_nowait, true);
    return r > 0 ? (size_t)r : 0;
}

/* Writes made on the calling thread: at most this long, with no option.
 * A sync or DSYNC write waits for the disk, and an uncached one starts
 * writeback, so those go where waiting costs no worker. ext4 refuses
 * RWF_NOWAIT on buffered writes, so unlike a read the kernel cannot say
 * in advance that a write would wait: the copy into the page cache
 * normally takes microseconds, but a kernel holding back writers of dirty
 * pages (balance_dirty_pages) puts the writer to sleep for up to hundreds
 * of milliseconds. So a write seen to take longer than WRITE_SLOW_NS sends
 * the storage's writes back to the threads or the ring for WRITE_PAUSE_NS,
 * until the throttling has likely passed. */
enum { WRITE_HERE_MAX = 64 * 1024 };
#define WRITE_SLOW_NS (1000 * 1000)
#define WRITE_PAUSE_NS (1000 * 1000 * 1000)

/* Whether this write is made on the calling thread; if so, `*began` is
 * when. The clock is read only for a write that qualifies otherwise. */
static bool write_here(const file_storage *fs, const io_job *j, uint64_t *began)
{
    if (j->total > WRITE_HERE_MAX || j->options != CW_WRITE_DEFAULT)
        return false;
    *began = cw_native_mono_ns();
    return *began >= atomic_load_explicit(&fs->inline_from, memory_order_relaxed);
}

/* The write on this thread, and the pause when it was slow. */
static void write_on_caller(file_storage *fs, io_job *j, uint64_t began)
{
    write_fn(&j->job);
    uint64_t now = cw_native_mono_ns();
    if (now - began >= WRITE_SLOW_NS)
        atomic_store_explicit(&fs->inline_from, now + WRITE_PAUSE_NS, memory_order_relaxed);
}

/* A write or the rest of a read: on this thread when write_here says so,
 * else through the ring or an I/O thread. */
static void dispatch(cw_bfile *f, io_job *j, bool write)
{
    file_storage *fs = f->st->impl;
    uint64_t began;
    if (write && write_here(fs, j, &began)) {
        j->f = f;
        write_on_caller(fs, j, began);
        return;
    }
    run_io(f, j, write ? write_fn : read_fn);
}

/* Run a transfer on a copy of the caller's iovecs: a read first takes what
 * the page cache has, and only the rest (usually nothing) goes to an I/O
 * thread. Uncached reads go straight there: they mean to skip the cache. */
static int transfer_job(cw_bfile *f, bool write, uint64_t offset, const struct iovec *iov, int n,
                        size_t total, int options, cw_storage_error *err)
{
    struct iovec one = {NULL, 0};
    struct iovec *copy = n == 1 ? &one : calloc((size_t)n, sizeof *copy);
    if (!copy)
        return cw_fail_nomem(err, f->partition, f->hex);
    memcpy(copy, iov, (size_t)n * sizeof *copy);
    size_t done = 0;
    int i = 0;
    if (!write && !(options & CW_READ_DONT_CACHE)) {
        done = read_cached(ffile(f), copy, n, offset);
        advance(copy, n, &i, done);
    }
    int rc = CW_OK;
    if (done < total) {
        io_job j = {.offset = offset + done,
                    .iov = copy + i,
                    .n = n - i,
                    .total = total - done,
                    .options = options,
                    .err = err};
        dispatch(f, &j, write);
        rc = j.rc;
    }
    if (copy != &one)
        free(copy);
    return rc;
}

int cw_file_read(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t total,
                 cw_read_options options, cw_storage_error *err)
{
    return transfer_job(f, false, offset, iov, n, total, options, err);
}

int cw_file_write(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t total,
                  cw_write_options options, cw_storage_error *err)
{
    return transfer_job(f, true, offset, iov, n, total, options, err);
}

static void resize_fn(cw_job *job)
{
    io_job *j = (io_job *)job;
    j->rc = cw_file_truncate(ffile(j->f)->fd, j->len) == 0
                ? CW_OK
                : cw_fail_os(j->err, CW_ERR_BLOB_RESIZE_FAILED, j->f->partition, j->f->hex, errno,
                             NULL);
}

int cw_file_resize(cw_bfile *f, uint64_t len, cw_storage_error *err)
{
    io_job j = {.len = len, .err = err};
    run(f, &j, resize_fn);
    return j.rc;
}

static void sync_fn(cw_job *job)
{
    io_job *j = (io_job *)job;
    j->rc =
        datasync(j->ring, ffile(j->f)->fd) == 0
            ? CW_OK
            : cw_fail_os(j->err, CW_ERR_BLOB_SYNC_FAILED, j->f->partition, j->f->hex, errno, NULL);
}

int cw_file_sync(cw_bfile *f, cw_storage_error *err)
{
    io_job j = {.err = err};
    run_io(f, &j, sync_fn);
    return j.rc;
}

/* ---- start_sync: a job nobody waits for ------------------------------------------------ */

typedef struct sync_job {
    io_job io;
    cw_handle *h;
} sync_job;

static void sync_done(cw_job *job)
{
    sync_job *s = (sync_job *)job;
    cw_blob_sync_done(s->io.f, s->h, s->io.rc);
    free(s);
}

void cw_file_start_sync(cw_bfile *f, cw_handle *h)
{
    sync_job *s = calloc(1, sizeof *s);
    if (!s) {
        cw_blob_sync_done(f, h, CW_ERR_NOMEM);
        return;
    }
    s->io.job.fn = sync_fn;
    s->io.job.done = sync_done;
    s->io.f = f;
    s->h = h;
    cw_offload_submit(((file_storage *)f->st->impl)->io, &s->io.job);
}
