/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/error.h - error codes shared by every part of the interface.
 *
 * Functions that can fail return an int: CW_OK (zero) or one of the negative
 * codes below. The first group mirrors the error variants of the interface
 * this runtime implements; the second group is specific to a C binding
 * (resource exhaustion, API misuse reported as a value, run outcomes).
 * See spec/01-errors.md.
 */
#ifndef CW_ERROR_H
#define CW_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum cw_error {
    CW_OK = 0,

    /* Task and signal outcomes. */
    CW_ERR_EXITED = -1,  /* the task panicked (caught or not) */
    CW_ERR_CLOSED = -2,  /* aborted, refused, cancelled at run end, or the peer is gone */
    CW_ERR_ABORTED = -3, /* a completion handle was aborted before it resolved */
    CW_ERR_TIMEOUT = -4, /* a deadline passed first */

    /* Network and name resolution. */
    CW_ERR_BIND_FAILED = -10,
    CW_ERR_CONNECTION_FAILED = -11,
    CW_ERR_WRITE_FAILED = -12,
    CW_ERR_READ_FAILED = -13,
    CW_ERR_SEND_FAILED = -14,
    CW_ERR_RECV_FAILED = -15,
    CW_ERR_RESOLVE_FAILED = -16,

    /* Storage. */
    CW_ERR_PARTITION_NAME_INVALID = -20,
    CW_ERR_PARTITION_CREATION_FAILED = -21,
    CW_ERR_PARTITION_MISSING = -22,
    CW_ERR_PARTITION_CORRUPT = -23,
    CW_ERR_BLOB_OPEN_FAILED = -24,
    CW_ERR_BLOB_MISSING = -25,
    CW_ERR_BLOB_RESIZE_FAILED = -26,
    CW_ERR_BLOB_SYNC_FAILED = -27,
    CW_ERR_BLOB_INSUFFICIENT_LENGTH = -28,
    CW_ERR_BLOB_CORRUPT = -29,
    CW_ERR_BLOB_LAYOUT_MISMATCH = -30,
    CW_ERR_BLOB_VERSION_MISMATCH = -31,
    CW_ERR_INVALID_CHECKSUM = -32,
    CW_ERR_OFFSET_OVERFLOW = -33,
    CW_ERR_IO = -34,
    CW_ERR_POOL = -35,

    /* Specific to the C interface. */
    CW_ERR_NOMEM = -50,       /* an allocation failed; nothing was changed */
    CW_ERR_INVALID = -51,     /* an argument broke a documented precondition */
    CW_ERR_WOULD_BLOCK = -52, /* a try_ operation could not complete now */
    CW_ERR_UNSUPPORTED = -53, /* the backend lacks the capability */

    /* Outcomes of a whole run, returned by cw_start only. */
    CW_ERR_PANICKED = -60,    /* a task panicked and the run ended; see the message */
    CW_ERR_STALLED = -61,     /* nothing could make progress (deterministic backend) */
    CW_ERR_RUN_TIMEOUT = -62, /* the configured run timeout passed */
};

/* A static, human-readable description of `code` ("closed", "timeout"...). Never NULL:
 * an unknown code gives "unknown error". The texts of the first groups are the ones the
 * interface's error variants display. */
static inline const char *cw_strerror(int code)
{
    switch (code) {
    case CW_OK: return "ok";
    case CW_ERR_EXITED: return "exited";
    case CW_ERR_CLOSED: return "closed";
    case CW_ERR_ABORTED: return "aborted";
    case CW_ERR_TIMEOUT: return "timeout";
    case CW_ERR_BIND_FAILED: return "bind failed";
    case CW_ERR_CONNECTION_FAILED: return "connection failed";
    case CW_ERR_WRITE_FAILED: return "write failed";
    case CW_ERR_READ_FAILED: return "read failed";
    case CW_ERR_SEND_FAILED: return "send failed";
    case CW_ERR_RECV_FAILED: return "recv failed";
    case CW_ERR_RESOLVE_FAILED: return "dns resolution failed";
    case CW_ERR_PARTITION_NAME_INVALID: return "partition name invalid";
    case CW_ERR_PARTITION_CREATION_FAILED: return "partition creation failed";
    case CW_ERR_PARTITION_MISSING: return "partition missing";
    case CW_ERR_PARTITION_CORRUPT: return "partition corrupt";
    case CW_ERR_BLOB_OPEN_FAILED: return "blob open failed";
    case CW_ERR_BLOB_MISSING: return "blob missing";
    case CW_ERR_BLOB_RESIZE_FAILED: return "blob resize failed";
    case CW_ERR_BLOB_SYNC_FAILED: return "blob sync failed";
    case CW_ERR_BLOB_INSUFFICIENT_LENGTH: return "blob insufficient length";
    case CW_ERR_BLOB_CORRUPT: return "blob corrupt";
    case CW_ERR_BLOB_LAYOUT_MISMATCH: return "blob layout mismatch";
    case CW_ERR_BLOB_VERSION_MISMATCH: return "blob version mismatch";
    case CW_ERR_INVALID_CHECKSUM: return "invalid or missing checksum";
    case CW_ERR_OFFSET_OVERFLOW: return "offset overflow";
    case CW_ERR_IO: return "io error";
    case CW_ERR_POOL: return "buffer pool";
    case CW_ERR_NOMEM: return "out of memory";
    case CW_ERR_INVALID: return "invalid argument";
    case CW_ERR_WOULD_BLOCK: return "would block";
    case CW_ERR_UNSUPPORTED: return "unsupported by this backend";
    case CW_ERR_PANICKED: return "panicked";
    case CW_ERR_STALLED: return "runtime stalled";
    case CW_ERR_RUN_TIMEOUT: return "runtime timeout";
    default: return "unknown error";
    }
}

#ifdef __cplusplus
}
#endif
#endif
