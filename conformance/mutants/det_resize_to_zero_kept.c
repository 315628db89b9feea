/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Resizing a blob to length 0 returns CW_OK and leaves it as it was
 * (STOR-009). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int lazy_resize(cw_blob *b, uint64_t len, cw_storage_error *err)
{
    if (len == 0)
        return CW_OK;
    return cwm_base_storage->blob_resize(b, len, err);
}

static void mutate(void)
{
    cwm_storage.blob_resize = lazy_resize;
}
