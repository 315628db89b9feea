/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_blob_read_into of more than one byte fills all but the last byte of
 * the destination and still returns CW_OK (STOR-007). */
#define CWM_BASE "native"
#include "mutant.h"

static int short_read_into(cw_blob *b, uint64_t offset, void *dst, size_t len,
                           cw_read_options options, cw_storage_error *err)
{
    if (len < 2)
        return cwm_base_storage->blob_read_into(b, offset, dst, len, options, err);
    int rc = cwm_base_storage->blob_read_into(b, offset, dst, len - 1, options, err);
    if (rc == CW_OK) {
        /* The full read must still be possible, or it fails as it should. */
        uint8_t last;
        rc = cwm_base_storage->blob_read_into(b, offset + len - 1, &last, 1, options, err);
    }
    return rc;
}

static void mutate(void)
{
    cwm_storage.blob_read_into = short_read_into;
}
