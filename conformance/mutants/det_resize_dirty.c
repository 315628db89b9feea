/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Growing a blob with cw_blob_resize leaves its last new byte non-zero
 * instead of zero-extending (STOR-009). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int dirty_resize(cw_blob *b, uint64_t len, cw_storage_error *err)
{
    uint8_t probe;
    bool grows =
        len > 0 && cwm_base_storage->blob_read_into(b, len - 1, &probe, 1, CW_READ_DEFAULT, NULL) ==
                       CW_ERR_BLOB_INSUFFICIENT_LENGTH;
    int rc = cwm_base_storage->blob_resize(b, len, err);
    if (rc == CW_OK && grows) {
        static const uint8_t junk = 0xee;
        cwm_base_storage->blob_write_at(b, len - 1, &junk, 1, CW_WRITE_DEFAULT, NULL);
    }
    return rc;
}

static void mutate(void)
{
    cwm_storage.blob_resize = dirty_resize;
}
