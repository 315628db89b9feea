/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/storage.h - blobs of bytes, named inside partitions, that survive a
 * crash once synced; and the blob header codec every backend shares.
 *
 * A run has one storage. cw_storage_open finds or creates a blob and hands
 * out a handle (cw_blob); cw_blob_clone makes more handles on the same
 * blob, and each is closed once. Offsets and lengths are logical: a header
 * the runtime keeps in front of the data is never seen through the
 * interface. The header's bytes are specified (17-storage.md) so that blobs
 * written by one implementation open in another.
 *
 * Storage and blob calls are suspension points: call them from a task of
 * the run. A backend with threads suspends the task, never its thread,
 * while the operating system works. The codec functions at the end are
 * pure and work anywhere. Rules: spec/17-storage.md.
 */
#ifndef CW_STORAGE_H
#define CW_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cw/backend.h"
#include "cw/error.h"
#include "cw/iobuf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cw_blob cw_blob; /* a handle on an open blob */

/* ---- Layouts and versions ---------------------------------------------------- */

/* The runtime's container format of a blob: where its data begins. */
enum cw_blob_layout {
    CW_BLOB_LAYOUT_V0 = 0, /* deprecated: an 8-byte header, data at offset 8; opened, never
                              created unless the run allows nothing newer */
    CW_BLOB_LAYOUT_V1 = 1, /* a 4096-byte header with a checksum, data page-aligned */
};
#define CW_BLOB_LAYOUT_LATEST CW_BLOB_LAYOUT_V1

/* The version of a blob's contents: the application's, opaque to the runtime. */
#define CW_BLOB_VERSION_DEFAULT ((uint16_t)0)

/* An inclusive range of layouts or versions: first <= v <= last. */
typedef struct cw_blob_range {
    uint16_t first, last;
} cw_blob_range;

static inline cw_blob_range cw_blob_range_of(uint16_t first, uint16_t last)
{
    cw_blob_range r = {first, last};
    return r;
}

static inline bool cw_blob_range_contains(cw_blob_range r, uint16_t v)
{
    return r.first <= v && v <= r.last;
}

/* Header geometry [STOR-020]. */
#define CW_BLOB_PRELUDE_SIZE 8      /* magic, runtime version, blob version */
#define CW_BLOB_PARSE_LEN 12        /* the prelude and V1's CRC-32C */
#define CW_BLOB_V0_DATA_OFFSET 8
#define CW_BLOB_V1_DATA_OFFSET 4096
#define CW_BLOB_HEADER_MAX 4096     /* the longest header region of any layout */

/* ---- Options ------------------------------------------------------------------ */

/* Options of one read: a bit set. 0 is the default (no option). */
typedef uint8_t cw_read_options;
#define CW_READ_DEFAULT ((cw_read_options)0)
#define CW_READ_DONT_CACHE ((cw_read_options)(1u << 0)) /* a hint: need not stay cached */
#define CW_READ_ALL CW_READ_DONT_CACHE

/* Options of one write. */
typedef uint8_t cw_write_options;
#define CW_WRITE_DEFAULT ((cw_write_options)0)
#define CW_WRITE_SYNC ((cw_write_options)(1u << 0))       /* these bytes are durable on return */
#define CW_WRITE_DONT_CACHE ((cw_write_options)(1u << 1)) /* a hint: need not stay cached */
#define CW_WRITE_ALL ((cw_write_options)(CW_WRITE_SYNC | CW_WRITE_DONT_CACHE))

/* ---- Faults (deterministic backends, 17-storage.md) --------------------------- */

/* Which bytes of a torn write are kept [STOR-031]. */
enum cw_keep_mode {
    CW_KEEP_PREFIX = 0, /* from the first byte up to the first one not kept */
    CW_KEEP_SUBSET = 1, /* each byte on its own */
};

/* Storage faults: every rate 0 (all zero, the default) injects nothing. */
typedef struct cw_storage_faults {
    /* A call of each kind fails with this probability [STOR-030]. */
    cw_rate open, read, write, sync, resize, remove, scan;
    /* Each byte of a failed write, and of an unsynced write at a crash, is
     * kept with this probability, as write_mode says [STOR-031, STOR-033]. */
    cw_rate write_kept;
    uint32_t write_mode; /* enum cw_keep_mode */
    cw_rate resize_partial; /* a failed resize stops halfway [STOR-032] */
    cw_rate resize_kept;    /* an unsynced resize survives a crash [STOR-033] */
} cw_storage_faults;

/* The calls a fault can fail, X(KIND, field) with `field` the call's rate
 * in cw_storage_faults, in the order the struct has them: the one list an
 * implementation walks for its validation, its fault names and its draws.
 * A new call that can fail adds a field above and a line here. */
#define CW_STORAGE_FAULT_CALLS(X)                                                                  \
    X(OPEN, open)                                                                                  \
    X(READ, read)                                                                                  \
    X(WRITE, write)                                                                                \
    X(SYNC, sync)                                                                                  \
    X(RESIZE, resize)                                                                              \
    X(REMOVE, remove)                                                                              \
    X(SCAN, scan)

/* Whether every rate of `f` is valid and its write mode known [RUN-002]. */
static inline bool cw_storage_faults_valid(const cw_storage_faults *f)
{
    bool ok = f->write_mode == CW_KEEP_PREFIX || f->write_mode == CW_KEEP_SUBSET;
#define CW__FAULT_RATE_VALID(KIND, field) ok = ok && cw_rate_valid(f->field);
    CW_STORAGE_FAULT_CALLS(CW__FAULT_RATE_VALID)
#undef CW__FAULT_RATE_VALID
    return ok && cw_rate_valid(f->write_kept) && cw_rate_valid(f->resize_partial) &&
           cw_rate_valid(f->resize_kept);
}

/* True when every option of `which` is set in `o`. */
static inline bool cw_read_options_contains(cw_read_options o, cw_read_options which)
{
    return (o & which) == which;
}

/* `o` with the options of `which` cleared. */
static inline cw_read_options cw_read_options_without(cw_read_options o, cw_read_options which)
{
    return (cw_read_options)(o & ~which);
}

static inline bool cw_write_options_contains(cw_write_options o, cw_write_options which)
{
    return (o & which) == which;
}

static inline cw_write_options cw_write_options_without(cw_write_options o, cw_write_options which)
{
    return (cw_write_options)(o & ~which);
}

/* ---- Names -------------------------------------------------------------------- */

#define CW_PARTITION_NAME_MAX 255 /* bytes of a partition name */
#define CW_BLOB_NAME_MAX 127      /* bytes of a blob name (twice that in hex) */

/* True when `partition` is a valid partition name [STOR-001]: 1 to 255
 * bytes, each an ASCII letter, digit, '-' or '_'. */
static inline bool cw_partition_name_valid(const char *partition)
{
    if (!partition || !partition[0])
        return false;
    size_t n = 0;
    for (const char *p = partition; *p; p++, n++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
        if (!ok || n >= CW_PARTITION_NAME_MAX)
            return false;
    }
    return true;
}

/* The blob names of a partition, as cw_storage_scan lists them: sorted
 * bytewise. The list belongs to the caller alone (cw_blob_names_release)
 * and, like a buffer, may outlive the run. */
typedef struct cw_blob_name {
    const uint8_t *data;
    size_t len;
} cw_blob_name;

typedef struct cw_blob_names {
    cw_object hdr;
    size_t count;
    const cw_blob_name *names;
} cw_blob_names;

static inline bool cw_blob_names_contains(const cw_blob_names *l, const void *name, size_t len)
{
    for (size_t i = 0; i < l->count; i++)
        if (l->names[i].len == len && (len == 0 || memcmp(l->names[i].data, name, len) == 0))
            return true;
    return false;
}

/* ---- Errors -------------------------------------------------------------------- */

/* What went wrong, for a caller that passes one to a storage call: filled
 * when the call fails, untouched when it succeeds [STOR-018]. */
typedef struct cw_storage_error {
    int code;               /* what the call returned */
    int os_error;           /* errno of the failed system call; 0 when none */
    int fault;              /* the header check that failed (enum cw_header_fault), or 0 */
    cw_blob_range expected; /* a mismatch: the layouts or versions accepted */
    uint16_t found;         /* a mismatch: the layout or version found */
    char partition[CW_PARTITION_NAME_MAX + 1]; /* "" when the call named none */
    char name[2 * CW_BLOB_NAME_MAX + 1];       /* the blob name in lowercase hex, or "" */
    char message[768];      /* the error displayed, as 17-storage.md spells it */
} cw_storage_error;

/* ---- The blob header codec ------------------------------------------------------ */

/* Which check of the header failed [STOR-022]. */
enum cw_header_fault {
    CW_HEADER_OK = 0,
    CW_HEADER_INVALID_MAGIC = 1,               /* bytes 0-3 name no layout */
    CW_HEADER_UNSUPPORTED_RUNTIME_VERSION = 2, /* bytes 4-5 disagree with the magic */
    CW_HEADER_INVALID_CHECKSUM = 3,            /* V1: bytes 8-11 are not the CRC of 0-7 */
    CW_HEADER_INVALID_PADDING = 4,             /* V1: a non-zero byte in 12..4095 */
    CW_HEADER_TRUNCATED = 5,                   /* V1: shorter than 12, or than 4096, bytes */
    CW_HEADER_LAYOUT_MISMATCH = 6,             /* a sound header of a layout the run refuses */
    CW_HEADER_VERSION_MISMATCH = 7,            /* a sound header of a version the caller refuses */
};

/* What parsing or resolving a header found. Every field is set, zero when
 * it does not apply. */
typedef struct cw_blob_header {
    int fault;            /* enum cw_header_fault */
    bool fresh;           /* resolve: no header to keep; the blob is (re)created */
    bool healed;          /* resolve: fresh because an interrupted creation was recognised */
    uint16_t layout;      /* the layout the magic names */
    uint16_t version;     /* the blob version stored in bytes 6-7 */
    uint64_t data_offset; /* the physical offset of logical byte 0 */
    uint64_t size;        /* the logical size: raw_len - data_offset */
    uint8_t magic[4];     /* bytes 0-3 as found */
    uint16_t runtime_expected, runtime_found; /* UNSUPPORTED_RUNTIME_VERSION */
    uint64_t required_len;                    /* TRUNCATED: the length a header needs */
    uint64_t raw_len;                         /* the length given */
    cw_blob_range expected; /* *_MISMATCH: the range given */
    uint16_t found;         /* *_MISMATCH: the layout or version found */
} cw_blob_header;

/* ---- The table ------------------------------------------------------------------ */

/* The storage entries of a backend, reached through cw_backend.storage. It
 * only grows at the end; `size` says how far this backend's copy goes. */
struct cw_storage_ops {
    uint32_t size; /* sizeof(cw_storage_ops) the backend was built with */

    /* Pure: any thread, no run needed. */
    uint32_t (*crc32c)(uint32_t crc, const void *data, size_t len);
    int (*header_create)(uint16_t layout, uint16_t version, uint8_t *out, size_t cap,
                         size_t *len);
    int (*header_parse)(const uint8_t *raw, uint64_t raw_len, cw_blob_range layouts,
                        cw_blob_range versions, cw_blob_header *out);
    int (*header_resolve)(const uint8_t *raw, uint64_t raw_len, cw_blob_range layouts,
                          cw_blob_range versions, cw_blob_header *out);

    /* Storage: from a task of the run. */
    int (*open)(cw_ctx *ctx, const char *partition, const void *name, size_t name_len,
                cw_blob_range versions, cw_blob **blob, uint64_t *size, uint16_t *version,
                cw_storage_error *err);
    int (*remove)(cw_ctx *ctx, const char *partition, const void *name, size_t name_len,
                  cw_storage_error *err);
    int (*scan)(cw_ctx *ctx, const char *partition, cw_blob_names **out, cw_storage_error *err);
    void (*names_release)(cw_blob_names *names);

    /* Blobs: from a task of the run. */
    cw_blob *(*blob_clone)(cw_blob *b);
    void (*blob_close)(cw_blob *b);
    int (*blob_read_at)(cw_blob *b, uint64_t offset, size_t len, cw_read_options options,
                        cw_iobuf_mut *out, cw_storage_error *err);
    int (*blob_read_into)(cw_blob *b, uint64_t offset, void *dst, size_t len,
                          cw_read_options options, cw_storage_error *err);
    int (*blob_read_at_buf)(cw_blob *b, uint64_t offset, size_t len, cw_iobufs_mut *bufs,
                            cw_read_options options, cw_storage_error *err);
    int (*blob_write_at)(cw_blob *b, uint64_t offset, const void *src, size_t len,
                         cw_write_options options, cw_storage_error *err);
    int (*blob_write_bufs)(cw_blob *b, uint64_t offset, const cw_iobufs *bufs,
                           cw_write_options options, cw_storage_error *err);
    int (*blob_resize)(cw_blob *b, uint64_t len, cw_storage_error *err);
    int (*blob_sync)(cw_blob *b, cw_storage_error *err);
    cw_handle *(*blob_start_sync)(cw_blob *b);

    /* ABI 1.4: storage faults and the storage audit (deterministic
     * backends; STOR-034, STOR-036). */
    int (*set_faults)(cw_ctx *ctx, const cw_storage_faults *faults);
    int (*audit)(cw_ctx *ctx, char out[65]);
};

#define CW_STORAGE_OPS_HAS(ops, field)                                                             \
    ((ops)->size >= offsetof(cw_storage_ops, field) + sizeof((ops)->field) && (ops)->field != NULL)

/* The storage entries of `b`, or NULL when it has none. */
static inline const cw_storage_ops *cw__storage_ops(const cw_backend *b)
{
    return b && CW_BACKEND_HAS(b, storage) ? b->storage : NULL;
}

static inline void cw__storage_unsupported(cw_storage_error *err)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->code = CW_ERR_UNSUPPORTED;
        snprintf(err->message, sizeof err->message, "%s", cw_strerror(CW_ERR_UNSUPPORTED));
    }
}

/* ---- Storage -------------------------------------------------------------------- */

/* Open blob `name` (name_len bytes, 1 to CW_BLOB_NAME_MAX, any values) of
 * `partition`, creating it (and the partition) when missing [STOR-002]. On
 * success `*blob` is a handle the caller owns (cw_blob_close), `*size` its
 * logical size and `*version` (may be NULL) its stored version. A blob
 * created here is durable on return, stamped versions.last [STOR-003].
 * Errors: CW_ERR_PARTITION_NAME_INVALID, CW_ERR_INVALID, CW_ERR_BLOB_CORRUPT,
 * CW_ERR_BLOB_VERSION_MISMATCH, CW_ERR_BLOB_LAYOUT_MISMATCH,
 * CW_ERR_PARTITION_CREATION_FAILED, CW_ERR_BLOB_OPEN_FAILED (see the table
 * of 17-storage.md); `*blob` is then NULL. */
static inline int cw_storage_open_versioned(cw_ctx *ctx, const char *partition, const void *name,
                                            size_t name_len, cw_blob_range versions,
                                            cw_blob **blob, uint64_t *size, uint16_t *version,
                                            cw_storage_error *err)
{
    const cw_storage_ops *ops = cw__storage_ops(cw__backend_of(ctx));
    *blob = NULL;
    if (!ops) {
        cw__storage_unsupported(err);
        return CW_ERR_UNSUPPORTED;
    }
    return ops->open(ctx, partition, name, name_len, versions, blob, size, version, err);
}

/* cw_storage_open_versioned accepting only CW_BLOB_VERSION_DEFAULT. */
static inline int cw_storage_open(cw_ctx *ctx, const char *partition, const void *name,
                                  size_t name_len, cw_blob **blob, uint64_t *size,
                                  cw_storage_error *err)
{
    cw_blob_range only = {CW_BLOB_VERSION_DEFAULT, CW_BLOB_VERSION_DEFAULT};
    return cw_storage_open_versioned(ctx, partition, name, name_len, only, blob, size, NULL, err);
}

/* Remove blob `name` of `partition`, or with name == NULL the whole
 * partition; durable on return [STOR-011, STOR-012]. Handles already open
 * keep reading what they read [STOR-014]. CW_ERR_PARTITION_MISSING,
 * CW_ERR_BLOB_MISSING, CW_ERR_PARTITION_NAME_INVALID... */
static inline int cw_storage_remove(cw_ctx *ctx, const char *partition, const void *name,
                                    size_t name_len, cw_storage_error *err)
{
    const cw_storage_ops *ops = cw__storage_ops(cw__backend_of(ctx));
    if (!ops) {
        cw__storage_unsupported(err);
        return CW_ERR_UNSUPPORTED;
    }
    return ops->remove(ctx, partition, name, name_len, err);
}

/* The names of the blobs of `partition`, sorted bytewise [STOR-013]. The
 * caller owns `*out` (cw_blob_names_release); NULL on an error.
 * CW_ERR_PARTITION_MISSING, CW_ERR_PARTITION_CORRUPT... */
static inline int cw_storage_scan(cw_ctx *ctx, const char *partition, cw_blob_names **out,
                                  cw_storage_error *err)
{
    const cw_storage_ops *ops = cw__storage_ops(cw__backend_of(ctx));
    *out = NULL;
    if (!ops) {
        cw__storage_unsupported(err);
        return CW_ERR_UNSUPPORTED;
    }
    return ops->scan(ctx, partition, out, err);
}

/* Free a list from cw_storage_scan (NULL does nothing). Any thread. */
static inline void cw_blob_names_release(cw_blob_names *names)
{
    if (names)
        cw__backend_of(names)->storage->names_release(names);
}

/* ---- Blobs ---------------------------------------------------------------------- */

/* Another handle on the same blob: writes through one are read through the
 * other. The caller owns it (cw_blob_close) [STOR-005]. */
static inline cw_blob *cw_blob_clone(cw_blob *b)
{
    return cw__backend_of(b)->storage->blob_clone(b);
}

/* Close a handle; the blob's resources go with its last handle. Unsynced
 * changes are not synced by closing. Does not suspend. */
static inline void cw_blob_close(cw_blob *b)
{
    if (b)
        cw__backend_of(b)->storage->blob_close(b);
}

/* Read exactly `len` bytes at `offset` into a buffer the caller owns
 * (`*out`, from the run's storage pool) [STOR-006]. CW_ERR_BLOB_INSUFFICIENT_LENGTH
 * past the end, CW_ERR_OFFSET_OVERFLOW; `*out` is then unset (all zero). */
static inline int cw_blob_read_at(cw_blob *b, uint64_t offset, size_t len, cw_read_options options,
                                  cw_iobuf_mut *out, cw_storage_error *err)
{
    return cw__backend_of(b)->storage->blob_read_at(b, offset, len, options, out, err);
}

/* Read exactly `len` bytes at `offset` into dst[0 .. len) [STOR-007]. */
static inline int cw_blob_read_into(cw_blob *b, uint64_t offset, void *dst, size_t len,
                                    cw_read_options options, cw_storage_error *err)
{
    return cw__backend_of(b)->storage->blob_read_into(b, offset, dst, len, options, err);
}

/* Read exactly `len` bytes at `offset` into the caller's chunks, chunk
 * after chunk, keeping each chunk's memory; their readable lengths become
 * what cw_iobufs_mut_set_len(bufs, len) gives [STOR-007]. CW_ERR_INVALID
 * when their capacity is below `len`, and nothing is read. */
static inline int cw_blob_read_at_buf(cw_blob *b, uint64_t offset, size_t len,
                                      cw_iobufs_mut *bufs, cw_read_options options,
                                      cw_storage_error *err)
{
    return cw__backend_of(b)->storage->blob_read_at_buf(b, offset, len, bufs, options, err);
}

/* Write src[0 .. len) at `offset`, extending the blob as needed; a gap
 * reads as zeros [STOR-008]. With CW_WRITE_SYNC these bytes (only these)
 * are durable on return [STOR-015]. */
static inline int cw_blob_write_at(cw_blob *b, uint64_t offset, const void *src, size_t len,
                                   cw_write_options options, cw_storage_error *err)
{
    return cw__backend_of(b)->storage->blob_write_at(b, offset, src, len, options, err);
}

/* Write every byte of `bufs`, its chunks in order, at `offset`. The list is
 * only read: the caller keeps it. */
static inline int cw_blob_write_bufs(cw_blob *b, uint64_t offset, const cw_iobufs *bufs,
                                     cw_write_options options, cw_storage_error *err)
{
    return cw__backend_of(b)->storage->blob_write_bufs(b, offset, bufs, options, err);
}

/* Set the logical length to `len`: zeros are added, or bytes dropped,
 * at the end [STOR-009]. CW_ERR_BLOB_RESIZE_FAILED, CW_ERR_OFFSET_OVERFLOW. */
static inline int cw_blob_resize(cw_blob *b, uint64_t len, cw_storage_error *err)
{
    return cw__backend_of(b)->storage->blob_resize(b, len, err);
}

/* Make the blob's bytes and length durable [STOR-015]. CW_ERR_BLOB_SYNC_FAILED. */
static inline int cw_blob_sync(cw_blob *b, cw_storage_error *err)
{
    return cw__backend_of(b)->storage->blob_sync(b, err);
}

/* Start a sync and return at once with a handle the caller owns: joining
 * it gives what cw_blob_sync would have returned. Releasing or aborting the
 * handle does not stop the sync [STOR-016]. */
static inline cw_handle *cw_blob_start_sync(cw_blob *b)
{
    return cw__backend_of(b)->storage->blob_start_sync(b);
}

/* ---- The codec: pure functions of a backend -------------------------------------- */

/* CRC-32C (Castagnoli) of data[0 .. len), continuing `crc` (0 to start)
 * [STOR-021]. 0 when the backend has no storage. */
static inline uint32_t cw_crc32c(const cw_backend *b, uint32_t crc, const void *data, size_t len)
{
    const cw_storage_ops *ops = cw__storage_ops(b);
    return ops ? ops->crc32c(crc, data, len) : 0;
}

/* The header region of a new blob of `layout` stamped `version`, written to
 * out[0 .. *len): 8 bytes for V0, 4096 for V1 [STOR-020]. CW_ERR_INVALID for
 * an unknown layout or `cap` below the region. */
static inline int cw_blob_header_create(const cw_backend *b, uint16_t layout, uint16_t version,
                                        uint8_t *out, size_t cap, size_t *len)
{
    const cw_storage_ops *ops = cw__storage_ops(b);
    *len = 0;
    return ops ? ops->header_create(layout, version, out, cap, len) : CW_ERR_UNSUPPORTED;
}

/* Parse the header of a blob whose raw length is `raw_len`, given its first
 * min(raw_len, 4096) bytes in `raw` [STOR-022]. CW_OK; CW_ERR_BLOB_CORRUPT,
 * CW_ERR_BLOB_LAYOUT_MISMATCH or CW_ERR_BLOB_VERSION_MISMATCH with the
 * fault in `out`; CW_ERR_INVALID for raw_len < 8 or a range with
 * first > last. */
static inline int cw_blob_header_parse(const cw_backend *b, const uint8_t *raw, uint64_t raw_len,
                                       cw_blob_range layouts, cw_blob_range versions,
                                       cw_blob_header *out)
{
    const cw_storage_ops *ops = cw__storage_ops(b);
    return ops ? ops->header_parse(raw, raw_len, layouts, versions, out) : CW_ERR_UNSUPPORTED;
}

/* What an open does with those bytes [STOR-023]: CW_OK with out->fresh
 * when the blob is to be (re)created (too short for a header, or an
 * interrupted creation), CW_OK with the header otherwise, or the error
 * cw_blob_header_parse gives. */
static inline int cw_blob_header_resolve(const cw_backend *b, const uint8_t *raw, uint64_t raw_len,
                                         cw_blob_range layouts, cw_blob_range versions,
                                         cw_blob_header *out)
{
    const cw_storage_ops *ops = cw__storage_ops(b);
    return ops ? ops->header_resolve(raw, raw_len, layouts, versions, out) : CW_ERR_UNSUPPORTED;
}

/* The reason a corrupt header gives in its error message [STOR-024], into
 * buf[0 .. len) with a NUL; "" for a fault that is not corruption. */
static inline void cw_blob_header_reason(const cw_blob_header *h, char *buf, size_t len)
{
    switch (h->fault) {
    case CW_HEADER_INVALID_MAGIC:
        snprintf(buf, len, "invalid magic: found [%u, %u, %u, %u]", h->magic[0], h->magic[1],
                 h->magic[2], h->magic[3]);
        break;
    case CW_HEADER_UNSUPPORTED_RUNTIME_VERSION:
        snprintf(buf, len, "unsupported runtime version: expected %u, found %u",
                 h->runtime_expected, h->runtime_found);
        break;
    case CW_HEADER_INVALID_CHECKSUM:
        snprintf(buf, len, "invalid header checksum");
        break;
    case CW_HEADER_INVALID_PADDING:
        snprintf(buf, len, "invalid header padding");
        break;
    case CW_HEADER_TRUNCATED:
        snprintf(buf, len, "truncated header: required length %llu, raw length %llu",
                 (unsigned long long)h->required_len, (unsigned long long)h->raw_len);
        break;
    default:
        if (len > 0)
            buf[0] = '\0';
    }
}

/* ---- Faults and the audit ------------------------------------------------------------- */

/* Deterministic backends: a digest of everything a crash would keep, as 64
 * hex digits and a NUL, so two runs' disks can be compared [STOR-036].
 * CW_ERR_UNSUPPORTED elsewhere. */
static inline int cw_storage_audit(cw_ctx *ctx, char out[65])
{
    const cw_storage_ops *ops = cw__storage_ops(cw__backend_of(ctx));
    out[0] = '\0';
    return ops && CW_STORAGE_OPS_HAS(ops, audit) ? ops->audit(ctx, out) : CW_ERR_UNSUPPORTED;
}


/* Deterministic backends: the storage faults of every call made from now on
 * [STOR-034]. CW_ERR_INVALID for a rate above 1 or an unknown write_mode
 * (nothing changes); CW_ERR_UNSUPPORTED elsewhere [STOR-035]. */
static inline int cw_storage_set_faults(cw_ctx *ctx, const cw_storage_faults *faults)
{
    const cw_storage_ops *ops = cw__storage_ops(cw__backend_of(ctx));
    return ops && CW_STORAGE_OPS_HAS(ops, set_faults) ? ops->set_faults(ctx, faults)
                                                       : CW_ERR_UNSUPPORTED;
}

#ifdef __cplusplus
}
#endif
#endif
