/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A read that reaches past the end of a blob succeeds with zeros for the
 * missing bytes instead of CW_ERR_BLOB_INSUFFICIENT_LENGTH (STOR-006,
 * STOR-007). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int zero_filling_read_into(cw_blob *b, uint64_t offset, void *dst, size_t len,
                                  cw_read_options options, cw_storage_error *err)
{
    cw_storage_error keep;
    if (err)
        keep = *err;
    int rc = cwm_base_storage->blob_read_into(b, offset, dst, len, options, err);
    if (rc != CW_ERR_BLOB_INSUFFICIENT_LENGTH)
        return rc;
    if (err)
        *err = keep;
    memset(dst, 0, len);
    return CW_OK;
}

static int zero_filling_read_at(cw_blob *b, uint64_t offset, size_t len, cw_read_options options,
                                cw_iobuf_mut *out, cw_storage_error *err)
{
    cw_storage_error keep;
    if (err)
        keep = *err;
    int rc = cwm_base_storage->blob_read_at(b, offset, len, options, out, err);
    if (rc != CW_ERR_BLOB_INSUFFICIENT_LENGTH)
        return rc;
    if (err)
        *err = keep;
    return cw_iobuf_mut_zeroed(&cwm, len, out);
}

static void mutate(void)
{
    cwm_storage.blob_read_into = zero_filling_read_into;
    cwm_storage.blob_read_at = zero_filling_read_at;
}
