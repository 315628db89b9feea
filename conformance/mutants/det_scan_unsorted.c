/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_storage_scan lists a partition's blobs in the reverse of bytewise
 * order (STOR-013). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int reversed_scan(cw_ctx *ctx, const char *partition, cw_blob_names **out,
                         cw_storage_error *err)
{
    int rc = cwm_base_storage->scan(ctx, partition, out, err);
    if (rc != CW_OK || !*out)
        return rc;
    cw_blob_name *names = (cw_blob_name *)(*out)->names;
    for (size_t i = 0, j = (*out)->count; i + 1 < j; i++, j--) {
        cw_blob_name t = names[i];
        names[i] = names[j - 1];
        names[j - 1] = t;
    }
    return rc;
}

static void mutate(void)
{
    cwm_storage.scan = reversed_scan;
}
