/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A sync that failed is reported once: the next sync of the same open
 * returns CW_OK, though the writes the failed one covered may be lost
 * (STOR-037). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cwm_set failed;

static int forgetful_sync(cw_blob *b, cw_storage_error *err)
{
    int rc = cwm_base_storage->blob_sync(b, err);
    if (rc != CW_ERR_BLOB_SYNC_FAILED)
        return rc;
    if (cwm_set_has(&failed, b))
        return CW_OK;
    cwm_set_add(&failed, b);
    return rc;
}

static void mutate(void)
{
    cwm_storage.blob_sync = forgetful_sync;
}
