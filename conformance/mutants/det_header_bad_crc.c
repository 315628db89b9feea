/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_blob_header_create writes a V1 header whose CRC (bytes 8-11) is off
 * by one, so a header it made fails its own check (STOR-020). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int wrong_crc_header(uint16_t layout, uint16_t version, uint8_t *out, size_t cap,
                            size_t *len)
{
    int rc = cwm_base_storage->header_create(layout, version, out, cap, len);
    if (rc == CW_OK && layout == CW_BLOB_LAYOUT_V1 && *len >= 12)
        out[11] ^= 1;
    return rc;
}

static void mutate(void)
{
    cwm_storage.header_create = wrong_crc_header;
}
