/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* CW_WRITE_SYNC is ignored: a write that asked to be durable on return is
 * lost by a crash right after it (STOR-015, STOR-017). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int unsynced_write_at(cw_blob *b, uint64_t offset, const void *src, size_t len,
                             cw_write_options options, cw_storage_error *err)
{
    return cwm_base_storage->blob_write_at(b, offset, src, len, options & ~CW_WRITE_SYNC, err);
}

static int unsynced_write_bufs(cw_blob *b, uint64_t offset, const cw_iobufs *bufs,
                               cw_write_options options, cw_storage_error *err)
{
    return cwm_base_storage->blob_write_bufs(b, offset, bufs, options & ~CW_WRITE_SYNC, err);
}

static void mutate(void)
{
    cwm_storage.blob_write_at = unsynced_write_at;
    cwm_storage.blob_write_bufs = unsynced_write_bufs;
}
