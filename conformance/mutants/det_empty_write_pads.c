/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* An empty write at an offset up to 1 MiB is made as a write of one zero
 * byte just before that offset: it changes that byte, and past the end it
 * grows the blob (STOR-008: an empty write changes nothing). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int padding_write(cw_blob *b, uint64_t offset, const void *src, size_t len,
                         cw_write_options options, cw_storage_error *err)
{
    static const uint8_t zero = 0;
    if (len == 0 && offset > 0 && offset <= (1u << 20))
        return cwm_base_storage->blob_write_at(b, offset - 1, &zero, 1, options, err);
    return cwm_base_storage->blob_write_at(b, offset, src, len, options, err);
}

static void mutate(void)
{
    cwm_storage.blob_write_at = padding_write;
}
