/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_crc32c ignores the CRC it is asked to continue: computing a CRC in
 * two pieces gives the CRC of the last piece alone (STOR-021). */
#define CWM_BASE "native"
#include "mutant.h"

static uint32_t restarting_crc32c(uint32_t crc, const void *data, size_t len)
{
    (void)crc;
    return cwm_base_storage->crc32c(0, data, len);
}

static void mutate(void)
{
    cwm_storage.crc32c = restarting_crc32c;
}
