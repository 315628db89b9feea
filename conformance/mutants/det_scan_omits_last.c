/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_storage_scan leaves the last name out of the list when a partition
 * holds more than one blob (STOR-013). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int short_scan(cw_ctx *ctx, const char *partition, cw_blob_names **out,
                      cw_storage_error *err)
{
    int rc = cwm_base_storage->scan(ctx, partition, out, err);
    if (rc == CW_OK && *out && (*out)->count > 1)
        (*out)->count--;
    return rc;
}

static void mutate(void)
{
    cwm_storage.scan = short_scan;
}
