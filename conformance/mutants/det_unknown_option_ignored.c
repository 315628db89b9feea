/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A write or read with an option bit outside CW_WRITE_ALL / CW_READ_ALL
 * is made as if the bit were not there, instead of CW_ERR_INVALID
 * (STOR-017). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int lenient_write(cw_blob *b, uint64_t offset, const void *src, size_t len,
                         cw_write_options options, cw_storage_error *err)
{
    return cwm_base_storage->blob_write_at(b, offset, src, len, options & CW_WRITE_ALL, err);
}

static int lenient_read(cw_blob *b, uint64_t offset, void *dst, size_t len, cw_read_options options,
                        cw_storage_error *err)
{
    return cwm_base_storage->blob_read_into(b, offset, dst, len, options & CW_READ_ALL, err);
}

static void mutate(void)
{
    cwm_storage.blob_write_at = lenient_write;
    cwm_storage.blob_read_into = lenient_read;
}
