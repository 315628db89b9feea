/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Removing a blob or a partition that does not exist returns CW_OK
 * instead of CW_ERR_BLOB_MISSING or CW_ERR_PARTITION_MISSING (STOR-011,
 * STOR-012). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int quiet_remove(cw_ctx *ctx, const char *partition, const void *name, size_t name_len,
                        cw_storage_error *err)
{
    int rc = cwm_base_storage->remove(ctx, partition, name, name_len, err);
    return rc == CW_ERR_BLOB_MISSING || rc == CW_ERR_PARTITION_MISSING ? CW_OK : rc;
}

static void mutate(void)
{
    cwm_storage.remove = quiet_remove;
}
