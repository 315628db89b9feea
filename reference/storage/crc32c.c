/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * crc32c.c - CRC-32C (Castagnoli), as iSCSI (RFC 3720) and the blob header
 * use it: reflected polynomial 0x82F63B78, initial value and final XOR
 * 0xFFFFFFFF. crc32c("123456789") = 0xE3069283.
 *
 * A byte-at-a-time table serves everywhere. Where the CPU has the SSE4.2
 * crc32 instruction, which computes exactly this polynomial, it does eight
 * bytes per instruction instead: headers need neither, but callers that
 * checksum their data pages do. The last len % 8 bytes go through the
 * table on either path: as fast as the byte instruction for so few, and
 * it keeps the table in use on every machine, so a wrong table cannot
 * hide behind a CPU that seldom needs it.
 */
#include <pthread.h>
#include <string.h>

#include "storage/storage.h"

#define POLY 0x82F63B78u

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CW_CRC_SSE42 1
#endif

static uint32_t table[256];
#ifdef CW_CRC_SSE42
static bool has_sse42;
#endif
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[i] = c;
    }
#ifdef CW_CRC_SSE42
    has_sse42 = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_table(uint32_t c, const uint8_t *p, size_t len)
{
    while (len--)
        c = table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c;
}

#ifdef CW_CRC_SSE42
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t c, const uint8_t *p,
                                                            size_t len)
{
    uint64_t c64 = c;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t word;
        memcpy(&word, p, 8); /* unaligned load; x86-64 is little-endian as the CRC wants */
        c64 = _mm_crc32_u64(c64, word);
    }
    return crc_table((uint32_t)c64, p, len);
}

static uint32_t crc_raw(uint32_t c, const uint8_t *p, size_t len)
{
    return has_sse42 ? crc_sse42(c, p, len) : crc_table(c, p, len);
}
#else
static uint32_t crc_raw(uint32_t c, const uint8_t *p, size_t len)
{
    return crc_table(c, p, len);
}
#endif

uint32_t cw_crc32c_update(uint32_t crc, const void *data, size_t len)
{
    if (len == 0)
        return crc;
    pthread_once(&init_once, init);
    return ~crc_raw(~crc, data, len);
}
