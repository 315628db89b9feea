/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage.h - private to the reference's storage: the run's storage, open
 * files and handles, and the driver interface its two kinds of storage fill
 * (deterministic/memory_storage.c, native/file_storage.c).
 *
 * The layers, from the caller down:
 *
 *   entries.c   the cw_storage_ops table of both backends
 *   storage.c   open, remove, scan: names checked, audited, counted
 *   blob.c      handles and the blob calls, in logical offsets
 *   driver      deterministic/memory_storage.c, or native/file_storage.c
 *               and native/file_io.c,
 *               working in physical offsets (the header included)
 *
 * A file (cw_bfile) is one opened blob; every handle (cw_blob) cloned from
 * the handle its open returned points at it, and the last handle to close
 * closes it. Opening the same name again makes another file.
 *
 * Threads: the lists of handles and the handle counts are guarded by the
 * storage's lock. What a driver shares between calls it guards itself;
 * the memory driver runs on the deterministic backend's one thread.
 */
#ifndef CW_STORAGE_INTERNAL_H
#define CW_STORAGE_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <sys/uio.h>

#include "core/ext.h"

typedef struct cw_storage cw_storage;
typedef struct cw_bfile cw_bfile;
typedef struct cw_storage_driver cw_storage_driver;

struct cw_storage {
    cw_rt *rt;
    const cw_storage_driver *driver;
    void *impl;            /* the driver's state */
    pthread_mutex_t lock;  /* handles, and every file's handle count */
    cw_list handles;       /* every cw_blob not yet closed */
    cw_blob_range layouts; /* the run's blob_layouts */
    int broken;            /* errno when the driver could not start: every call fails */
    char why[256];
    /* The storage faults in force (faults.c): the run's settings, then
     * those of cw_storage_set_faults; used by deterministic runs only. */
    cw_storage_faults faults;
    /* The run's storage metrics (metrics/), registered with the storage. */
    cw_metric *open_blobs, *reads, *read_bytes, *writes, *write_bytes, *syncs, *resizes;
};

struct cw_bfile {
    cw_storage *st;
    size_t handles; /* open cw_blob on this file, under st->lock */
    size_t pins;    /* start_syncs not yet done, under st->lock */
    char *partition;
    uint8_t *name;
    size_t name_len;
    char hex[2 * CW_BLOB_NAME_MAX + 1]; /* the name in lowercase hex */
    uint16_t layout, version;
    uint64_t data_offset;    /* physical offset of logical byte 0 */
    atomic_bool sync_failed; /* a sync failed: so does every later one [STOR-037] */
    void *impl;              /* the driver's state of this file */
};

struct cw_blob {
    cw_object hdr;
    cw_bfile *f;
    cw_list link; /* st->handles */
};

/* What a kind of storage does. Offsets and lengths are physical. Calls
 * that fail describe the failure in `err` (error.c). */
struct cw_storage_driver {
    /* Set up the driver's part of a new storage: 0, or an errno with the
     * reason in `why` (every call then fails). */
    int (*init)(cw_storage *st, char *why, size_t whylen);
    /* Find or create f->name in f->partition: fill f's layout, version,
     * data_offset and impl, and the logical size. */
    int (*open)(cw_bfile *f, cw_blob_range versions, uint64_t *size, cw_storage_error *err);
    /* Remove one blob (name != NULL) or the partition. */
    int (*remove)(cw_storage *st, const char *partition, const uint8_t *name, size_t len,
                  cw_storage_error *err);
    /* Add every blob name of the partition to `out` (names.c), in any order. */
    int (*scan)(cw_storage *st, const char *partition, cw_blob_names *out, cw_storage_error *err);
    /* Exactly `total` bytes at `offset` into iov[0 .. n). */
    int (*read)(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t total,
                cw_read_options options, cw_storage_error *err);
    /* Every byte of iov[0 .. n) (total > 0) at `offset`. */
    int (*write)(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t total,
                 cw_write_options options, cw_storage_error *err);
    int (*resize)(cw_bfile *f, uint64_t len, cw_storage_error *err);
    int (*sync)(cw_bfile *f, cw_storage_error *err);
    /* Sync and complete `h` (with rt->lock) when done; may return first. */
    void (*start_sync)(cw_bfile *f, cw_handle *h);
    /* The last handle of `f` closed: release f->impl. */
    void (*close)(cw_bfile *f);
    /* The run's last task ended: wait for every start_sync to be done. */
    void (*drain)(cw_storage *st);
    /* Every file closed: release st->impl. */
    void (*free)(cw_storage *st);
    /* The physical length of `f` as its handles see it: for the storage
     * faults of a simulated run (faults.c); NULL where none are injected. */
    uint64_t (*length)(const cw_bfile *f);
    /* The storage audit [STOR-036]: NULL where there is none. */
    int (*audit)(cw_storage *st, char out[65]);
};

/* The table both backends carry (entries.c). */
extern const cw_storage_ops cw_storage_entries;

/* ---- storage.c ------------------------------------------------------------ */

/* The run's storage, made on the first call. */
cw_storage *cw_storage_of(cw_rt *rt);
/* The calling task, after the checks every storage call makes [STOR-019]:
 * an aborted task unwinds here; one being unwound gets CW_ERR_CLOSED. A
 * call that suspended ends with cw_task_check_abort, after releasing what
 * it would have handed back, so an abort meanwhile unwinds the task there. */
int cw_storage_enter(cw_rt *rt, const char *what, cw_task **self);
/* Describe a call refused before it started: CW_ERR_CLOSED, or
 * CW_ERR_INVALID because of `why`. Returns rc. */
int cw_storage_refuse(cw_storage_error *err, int rc, const char *partition, const char *why);
void cw_bfile_free(cw_bfile *f);

int cw_storage_open_entry(cw_ctx *ctx, const char *partition, const void *name, size_t name_len,
                          cw_blob_range versions, cw_blob **blob, uint64_t *size, uint16_t *version,
                          cw_storage_error *err);
int cw_storage_remove_entry(cw_ctx *ctx, const char *partition, const void *name, size_t name_len,
                            cw_storage_error *err);
int cw_storage_scan_entry(cw_ctx *ctx, const char *partition, cw_blob_names **out,
                          cw_storage_error *err);

/* ---- blob.c ----------------------------------------------------------------- */

/* A first handle on a freshly opened file. */
cw_blob *cw_blob_new(cw_bfile *f);
/* Close every handle still open (the run ends). */
void cw_blob_close_all(cw_storage *st);
/* A driver's start_sync is done with `rc`: complete `h`, unpin `f`. Any thread. */
void cw_blob_sync_done(cw_bfile *f, cw_handle *h, int rc);

cw_blob *cw_blob_clone_entry(cw_blob *b);
void cw_blob_close_entry(cw_blob *b);
int cw_blob_read_at_entry(cw_blob *b, uint64_t offset, size_t len, cw_read_options options,
                          cw_iobuf_mut *out, cw_storage_error *err);
int cw_blob_read_into_entry(cw_blob *b, uint64_t offset, void *dst, size_t len,
                            cw_read_options options, cw_storage_error *err);
int cw_blob_read_at_buf_entry(cw_blob *b, uint64_t offset, size_t len, cw_iobufs_mut *bufs,
                              cw_read_options options, cw_storage_error *err);
int cw_blob_write_at_entry(cw_blob *b, uint64_t offset, const void *src, size_t len,
                           cw_write_options options, cw_storage_error *err);
int cw_blob_write_bufs_entry(cw_blob *b, uint64_t offset, const cw_iobufs *bufs,
                             cw_write_options options, cw_storage_error *err);
int cw_blob_resize_entry(cw_blob *b, uint64_t len, cw_storage_error *err);
int cw_blob_sync_entry(cw_blob *b, cw_storage_error *err);
cw_handle *cw_blob_start_sync_entry(cw_blob *b);

/* ---- header.c and crc32c.c: the codec ------------------------------------------ */

uint32_t cw_crc32c_update(uint32_t crc, const void *data, size_t len);
int cw_header_create(uint16_t layout, uint16_t version, uint8_t *out, size_t cap, size_t *len);
int cw_header_parse(const uint8_t *raw, uint64_t raw_len, cw_blob_range layouts,
                    cw_blob_range versions, cw_blob_header *out);
int cw_header_resolve(const uint8_t *raw, uint64_t raw_len, cw_blob_range layouts,
                      cw_blob_range versions, cw_blob_header *out);
/* The error of a failed parse or resolve, with f's partition and name. */
int cw_header_error(const cw_bfile *f, int rc, const cw_blob_header *h, cw_storage_error *err);

/* ---- names.c ---------------------------------------------------------------------- */

/* hex[0 .. 2 * len] = the lowercase hex of name[0 .. len), NUL-terminated. */
void cw_hex_encode(const uint8_t *name, size_t len, char *hex);
/* Decode lowercase hex of even length into out (room for strlen(hex) / 2);
 * false for anything else (uppercase, odd length, other characters). */
bool cw_hex_decode(const char *hex, uint8_t *out, size_t *len);
/* A new, empty list of names of the backend of `rt`; NULL when memory is
 * exhausted. */
cw_blob_names *cw_names_new(cw_rt *rt);
/* Append a copy of name[0 .. len); false, with nothing added, when memory
 * is exhausted. */
bool cw_names_add(cw_blob_names *l, const uint8_t *name, size_t len);
/* Sort bytewise, shorter first on a common prefix. */
void cw_names_sort(cw_blob_names *l);
void cw_names_release(cw_blob_names *l);

/* ---- error.c ------------------------------------------------------------------------ */

/* Fill `err` (if not NULL) and return `code`. partition and hex may be
 * NULL; the message is the code's text followed by what fmt adds. */
int cw_storage_fail(cw_storage_error *err, int code, const char *partition, const char *hex,
                    int os_error, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The message of a failed system call: "<strerror> (os error <n>)". */
void cw_os_error_text(int os_error, char *buf, size_t len);
/* The failures with a fixed shape. */
int cw_fail_partition_name(cw_storage_error *err, const char *partition);
int cw_fail_blob_missing(cw_storage_error *err, const char *partition, const char *hex);
/* CW_ERR_NOMEM ("out of memory"); `hex` may be NULL. */
int cw_fail_nomem(cw_storage_error *err, const char *partition, const char *hex);
int cw_fail_partition_missing(cw_storage_error *err, const char *partition);
/* A failed system call (errno `os_error`) while doing `what` (may be
 * NULL), reported as `code` for blob `hex` (may be NULL) of `partition`. */
int cw_fail_os(cw_storage_error *err, int code, const char *partition, const char *hex,
               int os_error, const char *what);

/* ---- faults.c: injected faults [STOR-030..STOR-034] ------------------------------- */

typedef enum cw_fault_kind {
#define CW_FAULT_KIND(KIND, field) CW_FAULT_##KIND,
    CW_STORAGE_FAULT_CALLS(CW_FAULT_KIND)
#undef CW_FAULT_KIND
} cw_fault_kind;

/* Whether a call of `kind` on `partition` (and blob name, NULL for none)
 * fails: one draw of its rate on a deterministic run, a `fault` event when
 * it does, and then `err` filled and the kind's code returned; CW_OK
 * otherwise, and always on other runs [STOR-030]. */
int cw_fault_inject(cw_storage *st, cw_fault_kind kind, const char *partition, const uint8_t *name,
                    size_t len, cw_storage_error *err);
int cw_fault_inject_file(const cw_bfile *f, cw_fault_kind kind, cw_storage_error *err);
/* Apply to the driver what a failed write keeps of its `len` bytes, as
 * plain unsynced writes (STOR-031). */
void cw_fault_torn_write(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t len);
/* The length a failed resize from `old` toward `asked` leaves (STOR-032). */
uint64_t cw_fault_partial_length(const cw_storage *st, uint64_t old, uint64_t asked);

/* The bytes of one write that survive, decided one at a time, in order. */
typedef struct cw_keep {
    cw_rt *rt;
    cw_rate rate;
    bool subset;  /* each byte on its own, else a prefix */
    bool stopped; /* a prefix lost a byte: no later one is kept */
} cw_keep;

void cw_keep_begin(cw_keep *k, const cw_storage *st);
bool cw_keep_next(cw_keep *k);

int cw_storage_set_faults_entry(cw_ctx *ctx, const cw_storage_faults *faults);
int cw_storage_audit_entry(cw_ctx *ctx, char out[65]);

#endif
