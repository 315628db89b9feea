/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_blob_write_bufs writes a list's last chunk first, at the list's
 * offset, and the others after it (STOR-008: the chunks in order). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int rotated_write(cw_blob *b, uint64_t offset, const cw_iobufs *bufs,
                         cw_write_options options, cw_storage_error *err)
{
    size_t n = cw_iobufs_chunk_count(bufs);
    if (n < 2)
        return cwm_base_storage->blob_write_bufs(b, offset, bufs, options, err);
    const cw_iobuf *last = cw_iobufs_chunk(bufs, n - 1);
    int rc = cwm_base_storage->blob_write_at(b, offset, last->data, last->len, options, err);
    offset += last->len;
    for (size_t i = 0; rc == CW_OK && i + 1 < n; i++) {
        const cw_iobuf *c = cw_iobufs_chunk(bufs, i);
        rc = cwm_base_storage->blob_write_at(b, offset, c->data, c->len, options, err);
        offset += c->len;
    }
    return rc;
}

static void mutate(void)
{
    cwm_storage.blob_write_bufs = rotated_write;
}
