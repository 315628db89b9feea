/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * error.c - filling a caller's cw_storage_error.
 *
 * The messages follow the table of spec/17-storage.md, so a program (or a
 * person reading its log) sees the same words whichever backend failed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "storage/storage.h"

int cw_storage_fail(cw_storage_error *err, int code, const char *partition, const char *hex,
                    int os_error, const char *fmt, ...)
{
    if (!err)
        return code;
    memset(err, 0, sizeof *err);
    err->code = code;
    err->os_error = os_error;
    snprintf(err->partition, sizeof err->partition, "%s", partition ? partition : "");
    snprintf(err->name, sizeof err->name, "%s", hex ? hex : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

void cw_os_error_text(int os_error, char *buf, size_t len)
{
    char text[128];
    /* The GNU strerror_r returns the text, which may not be in `text`. */
    const char *s = strerror_r(os_error, text, sizeof text);
    snprintf(buf, len, "%s (os error %d)", s, os_error);
}

int cw_fail_partition_name(cw_storage_error *err, const char *partition)
{
    return cw_storage_fail(err, CW_ERR_PARTITION_NAME_INVALID, partition, NULL, 0,
                           "partition name invalid, must only contain alphanumeric, dash ('-'), "
                           "or underscore ('_') characters: %s",
                           partition ? partition : "(null)");
}

int cw_fail_blob_missing(cw_storage_error *err, const char *partition, const char *hex)
{
    return cw_storage_fail(err, CW_ERR_BLOB_MISSING, partition, hex, 0, "blob missing: %s/%s",
                           partition, hex);
}

int cw_fail_nomem(cw_storage_error *err, const char *partition, const char *hex)
{
    return cw_storage_fail(err, CW_ERR_NOMEM, partition, hex, 0, "out of memory");
}

int cw_fail_partition_missing(cw_storage_error *err, const char *partition)
{
    return cw_storage_fail(err, CW_ERR_PARTITION_MISSING, partition, NULL, 0,
                           "partition missing: %s", partition);
}

int cw_fail_os(cw_storage_error *err, int code, const char *p, const char *h, int os_error,
               const char *what)
{
    /* A call refused memory, the kernel's or the C library's (opendir,
     * a path's copy), has exhausted memory whatever the call was. */
    if (os_error == ENOMEM)
        return cw_storage_fail(err, CW_ERR_NOMEM, p, h, os_error, "out of memory");
    char os[160], detail[320];
    cw_os_error_text(os_error, os, sizeof os);
    snprintf(detail, sizeof detail, "%s%s%s", what ? what : "", what ? ": " : "", os);
    h = h ? h : "";
    switch (code) {
    case CW_ERR_BLOB_OPEN_FAILED:
        return cw_storage_fail(err, code, p, h, os_error, "blob open failed: %s/%s error: %s", p, h,
                               detail);
    case CW_ERR_BLOB_RESIZE_FAILED:
        return cw_storage_fail(err, code, p, h, os_error, "blob resize failed: %s/%s error: %s", p,
                               h, detail);
    case CW_ERR_BLOB_SYNC_FAILED:
        return cw_storage_fail(err, code, p, h, os_error, "blob sync failed: %s/%s error: %s", p, h,
                               detail);
    case CW_ERR_PARTITION_CREATION_FAILED:
        return cw_storage_fail(err, code, p, NULL, os_error,
                               "partition creation failed: %s error: %s", p, detail);
    default:
        return cw_storage_fail(err, code, p, h, os_error, "%s: %s/%s: %s", cw_strerror(code), p, h,
                               detail);
    }
}
