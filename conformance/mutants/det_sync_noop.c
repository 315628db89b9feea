/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_blob_sync returns CW_OK without making anything durable: a crash
 * after it loses the writes it claimed to sync (STOR-015, DET-008). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int pretend_sync(cw_blob *b, cw_storage_error *err)
{
    (void)b, (void)err;
    return CW_OK;
}

static void mutate(void)
{
    cwm_storage.blob_sync = pretend_sync;
}
