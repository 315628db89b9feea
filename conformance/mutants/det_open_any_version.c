/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Opening a blob accepts whatever version its header holds: the range of
 * versions the caller asked for is not checked (STOR-002, STOR-003). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int any_version_open(cw_ctx *ctx, const char *partition, const void *name, size_t name_len,
                            cw_blob_range versions, cw_blob **blob, uint64_t *size,
                            uint16_t *version, cw_storage_error *err)
{
    cw_blob_range all = {0, UINT16_MAX};
    if (versions.first > versions.last)
        all = versions; /* a bad range is still refused */
    return cwm_base_storage->open(ctx, partition, name, name_len, all, blob, size, version, err);
}

static void mutate(void)
{
    cwm_storage.open = any_version_open;
}
