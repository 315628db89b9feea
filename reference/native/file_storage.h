/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * file_storage.h - private to the native backend's file storage
 * (file_storage.c, file_io.c).
 */
#ifndef CW_STORAGE_FILE_H
#define CW_STORAGE_FILE_H

#include <stdatomic.h>

#include "native/io_threads.h"
#include "native/native.h"
#include "native/uring.h"

typedef struct file_storage {
    char *root;           /* the directory of the partitions */
    bool ephemeral;       /* made for this run: removed when it ends */
    pthread_mutex_t lock; /* open, remove and scan run one at a time */
    cw_offload *io;       /* where the system calls run ... */
    cw_uring *ring;       /* ... but transfers and syncs, when not NULL (the run's) */
    /* No write is made on the calling thread before this cw_native_mono_ns
     * time (file_io.c: write_here). */
    _Atomic uint64_t inline_from;
} file_storage;

/* An open blob: one descriptor that every handle on it shares. */
typedef struct file_file {
    int fd;
    /* The kernel refused RWF_DONTCACHE once: ask for it no more, advise instead. */
    atomic_bool no_dontcache;
    /* The kernel refused RWF_NOWAIT once: every read goes to an I/O thread. */
    atomic_bool no_nowait;
} file_file;

/* fsync a directory; 0 or an errno. */
int cw_file_sync_dir(const char *path);
/* rm -r; 0 or an errno. */
int cw_file_remove_tree(const char *path);
/* open, ftruncate and fdatasync through cw_os (os.h), tried again when a
 * signal interrupted them: -1 with errno set on a failure. */
int cw_file_open(const char *path, int flags, mode_t mode);
int cw_file_truncate(int fd, uint64_t len);
int cw_file_datasync(int fd);
/* Whole positioned transfers: 0, an errno, or for a read EIO past the end
 * of the file. */
int cw_file_pread_all(int fd, void *buf, size_t len, uint64_t offset);
int cw_file_pwrite_all(int fd, const void *buf, size_t len, uint64_t offset);

/* The blob calls of the file driver (file_io.c). */
int cw_file_read(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t total,
                 cw_read_options options, cw_storage_error *err);
int cw_file_write(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t total,
                  cw_write_options options, cw_storage_error *err);
int cw_file_resize(cw_bfile *f, uint64_t len, cw_storage_error *err);
int cw_file_sync(cw_bfile *f, cw_storage_error *err);
void cw_file_start_sync(cw_bfile *f, cw_handle *h);

#endif
