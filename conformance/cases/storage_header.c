/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_header.c - the blob header codec and CRC-32C of a backend's
 * storage table, on bytes made here (spec/17-storage.md, STOR-020..025).
 * The tables of torn and foreign headers follow the original interface's
 * header tests.
 */
#include <stdlib.h>

#include "cases/storage.h"

#define V0 CW_BLOB_LAYOUT_V0
#define V1 CW_BLOB_LAYOUT_V1

static const cw_blob_range all_layouts = {V0, V1};

static uint32_t be32_of(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A blob: header of `layout` and `version`, then `payload` bytes 0xAB. */
static uint8_t *blob_bytes(uint16_t layout, uint16_t version, size_t payload, size_t *len)
{
    uint8_t *raw = calloc(1, CW_BLOB_HEADER_MAX + payload + 1);
    size_t header;
    ck_assert_int_eq(
        cw_blob_header_create(cwc_backend, layout, version, raw, CW_BLOB_HEADER_MAX, &header),
        CW_OK);
    memset(raw + header, 0xAB, payload);
    *len = header + payload;
    return raw;
}

static int parse(const uint8_t *raw, uint64_t len, uint16_t first, uint16_t last, cw_blob_header *h)
{
    return cw_blob_header_parse(cwc_backend, raw, len, all_layouts, cw_blob_range_of(first, last),
                                h);
}

static int resolve(const uint8_t *raw, uint64_t len, cw_blob_header *h)
{
    return cw_blob_header_resolve(cwc_backend, raw, len, all_layouts, cw_blob_range_of(0, 7), h);
}

CWC_CASE(header_v1_fixture_bytes, "storage", "STOR-020 RUN-008", CWC_REPEATED)
{
    static const struct {
        uint16_t version;
        uint8_t bytes[12];
    } fixtures[] = {
        {3, {'C', 'W', 'I', 'K', 0x00, 0x01, 0x00, 0x03, 0x3B, 0x43, 0x2B, 0x28}},
        {0, {'C', 'W', 'I', 'K', 0x00, 0x01, 0x00, 0x00, 0x28, 0x13, 0xD8, 0xDC}},
        {5, {'C', 'W', 'I', 'K', 0x00, 0x01, 0x00, 0x05, 0x1D, 0xE2, 0xCC, 0xC0}},
    };
    for (size_t i = 0; i < 3; i++) {
        size_t len;
        uint8_t *raw = blob_bytes(V1, fixtures[i].version, 0, &len);
        ck_assert_uint_eq(len, 4096);
        ck_assert_mem_eq(raw, fixtures[i].bytes, 12);
        ck_assert_uint_eq(be32_of(raw + 8),
                          cw_crc32c(cwc_backend, 0, raw, 8)); /* the CRC of the prelude */
        for (size_t k = 12; k < 4096; k++)
            CWC_REQUIRE(raw[k] == 0, "fixture %zu: byte %zu is %u, not 0", i, k, raw[k]);
        cw_blob_header h;
        ck_assert_int_eq(parse(raw, len, 0, 7, &h), CW_OK); /* round trip */
        ck_assert_uint_eq(h.layout, V1);
        ck_assert_uint_eq(h.version, fixtures[i].version);
        ck_assert_uint_eq(h.data_offset, 4096);
        ck_assert_uint_eq(h.size, 0);
        free(raw);
    }
    size_t len;
    uint8_t *raw = blob_bytes(V0, 0x0102, 5, &len);
    ck_assert_uint_eq(len, 13);
    ck_assert_mem_eq(raw, "CWIC\x00\x00\x01\x02", 8);
    cw_blob_header h;
    ck_assert_int_eq(parse(raw, len, 0x0102, 0x0102, &h), CW_OK);
    ck_assert_uint_eq(h.layout, V0);
    ck_assert_uint_eq(h.data_offset, 8); /* V0 data follows the prelude */
    ck_assert_uint_eq(h.size, 5);
    free(raw);

    uint8_t small[100];
    ck_assert_int_eq(cw_blob_header_create(cwc_backend, V1, 0, small, sizeof small, &len),
                     CW_ERR_INVALID);
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(cw_blob_header_create(cwc_backend, 2, 0, small, sizeof small, &len),
                     CW_ERR_INVALID);
    ck_assert_int_eq(cw_blob_header_create(cwc_backend, V0, 9, small, 8, &len), CW_OK);
    ck_assert_uint_eq(len, 8);
}

CWC_CASE(crc32c_check_values, "storage", "STOR-021 RUN-008", CWC_REPEATED)
{
    ck_assert_uint_eq(cw_crc32c(cwc_backend, 0, "123456789", 9), 0xE3069283u);
    uint8_t zeros[32] = {0}, ones[32], up[32], down[32];
    for (int i = 0; i < 32; i++) {
        ones[i] = 0xFF;
        up[i] = (uint8_t)i;
        down[i] = (uint8_t)(31 - i);
    }
    ck_assert_uint_eq(cw_crc32c(cwc_backend, 0, zeros, 32), 0x8A9136AAu);
    ck_assert_uint_eq(cw_crc32c(cwc_backend, 0, ones, 32), 0x62A8AB43u);
    ck_assert_uint_eq(cw_crc32c(cwc_backend, 0, up, 32), 0x46DD794Eu);
    ck_assert_uint_eq(cw_crc32c(cwc_backend, 0, down, 32), 0x113FDB5Cu);
    /* RFC 3720 B.4: an iSCSI SCSI Read (10) command PDU. */
    static const uint8_t pdu[48] = {0x01, 0xC0, 0, 0,    0,    0, 0, 0,    0,    0, 0,    0,
                                    0,    0,    0, 0,    0x14, 0, 0, 0,    0,    0, 0x04, 0,
                                    0,    0,    0, 0x14, 0,    0, 0, 0x18, 0x28, 0, 0,    0,
                                    0,    0,    0, 0,    0x02, 0, 0, 0,    0,    0, 0,    0};
    ck_assert_uint_eq(cw_crc32c(cwc_backend, 0, pdu, sizeof pdu), 0xD9963A56u);
    /* Continuing: any split of the input gives the same CRC. */
    uint8_t big[1000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 31 + 7);
    uint32_t whole = cw_crc32c(cwc_backend, 0, big, sizeof big);
    for (size_t cut = 0; cut <= sizeof big; cut += 37) {
        uint32_t part = cw_crc32c(cwc_backend, 0, big, cut);
        ck_assert_uint_eq(cw_crc32c(cwc_backend, part, big + cut, sizeof big - cut), whole);
    }
    ck_assert_uint_eq(cw_crc32c(cwc_backend, 0x12345678u, big, 0), 0x12345678u);
}

CWC_CASE(header_parse_faults, "storage", "STOR-022 STOR-023 RUN-008", CWC_REPEATED)
{
    cw_blob_header h;
    size_t len;
    uint8_t *raw = blob_bytes(V1, 0, 0, &len);

    /* Magic: every byte zeroed, and a foreign one. */
    for (int i = 0; i < 4; i++) {
        uint8_t *copy = blob_bytes(V1, 0, 0, &len);
        copy[i] = 0;
        ck_assert_int_eq(parse(copy, len, 0, 0, &h), CW_ERR_BLOB_CORRUPT);
        ck_assert_int_eq(h.fault, CW_HEADER_INVALID_MAGIC);
        free(copy);
        copy = blob_bytes(V0, 0, 4, &len);
        copy[i] = 0;
        ck_assert_int_eq(parse(copy, len, 0, 0, &h), CW_ERR_BLOB_CORRUPT);
        ck_assert_int_eq(h.fault, CW_HEADER_INVALID_MAGIC);
        free(copy);
    }
    ck_assert_int_eq(parse((const uint8_t *)"XXXX\x00\x00\x00\x05", 8, 0, 9, &h),
                     CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_INVALID_MAGIC);
    ck_assert_mem_eq(h.magic, "XXXX", 4);

    /* Runtime version: V0 with 99; V1's magic with V0's version 0. */
    ck_assert_int_eq(parse((const uint8_t *)"CWIC\x00\x63\x00\x05", 8, 0, 9, &h),
                     CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_UNSUPPORTED_RUNTIME_VERSION);
    ck_assert_uint_eq(h.runtime_expected, 0);
    ck_assert_uint_eq(h.runtime_found, 99);
    uint8_t torn[4096];
    memcpy(torn, raw, 4096);
    torn[5] = 0;
    ck_assert_int_eq(parse(torn, 4096, 0, 9, &h), CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_UNSUPPORTED_RUNTIME_VERSION);
    ck_assert_uint_eq(h.runtime_expected, 1);

    /* V1 region: short of 12, CRC, short of 4096, padding. */
    ck_assert_int_eq(parse(raw, 11, 0, 0, &h), CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_TRUNCATED);
    ck_assert_uint_eq(h.required_len, 12);
    ck_assert_uint_eq(h.raw_len, 11);
    memcpy(torn, raw, 4096);
    torn[11] ^= 0x01;
    ck_assert_int_eq(parse(torn, 4096, 0, 0, &h), CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_INVALID_CHECKSUM);
    ck_assert_int_eq(parse(raw, 4095, 0, 0, &h), CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_TRUNCATED);
    ck_assert_uint_eq(h.required_len, 4096);
    ck_assert_uint_eq(h.raw_len, 4095);
    memcpy(torn, raw, 4096);
    torn[12] = 1;
    ck_assert_int_eq(parse(torn, 4096, 0, 0, &h), CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_INVALID_PADDING);
    free(raw);

    /* Versions last: checked only on a sound header. */
    raw = blob_bytes(V1, 10, 0, &len);
    ck_assert_int_eq(parse(raw, len, 3, 7, &h), CW_ERR_BLOB_VERSION_MISMATCH);
    ck_assert_int_eq(h.fault, CW_HEADER_VERSION_MISMATCH);
    ck_assert_uint_eq(h.expected.first, 3);
    ck_assert_uint_eq(h.expected.last, 7);
    ck_assert_uint_eq(h.found, 10);
    raw[7] = 0; /* a torn version byte breaks the CRC first */
    ck_assert_int_eq(parse(raw, len, 3, 7, &h), CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_INVALID_CHECKSUM);
    free(raw);
    raw = blob_bytes(V0, 10, 0, &len);
    ck_assert_int_eq(parse(raw, len, 3, 7, &h), CW_ERR_BLOB_VERSION_MISMATCH);
    ck_assert_int_eq(parse(raw, len, 5, 10, &h), CW_OK);
    ck_assert_int_eq(parse(raw, 7, 5, 10, &h), CW_ERR_INVALID); /* no prelude */
    ck_assert_int_eq(parse(raw, len, 10, 5, &h), CW_ERR_INVALID);
    /* Either range alone inverted is refused, by parse and by resolve. */
    cw_blob_range inverted = cw_blob_range_of(2, 1), any = cw_blob_range_of(0, 65535);
    ck_assert_int_eq(cw_blob_header_parse(cwc_backend, raw, len, inverted, any, &h),
                     CW_ERR_INVALID);
    ck_assert_int_eq(cw_blob_header_resolve(cwc_backend, raw, len, inverted, any, &h),
                     CW_ERR_INVALID);
    ck_assert_int_eq(cw_blob_header_resolve(cwc_backend, raw, len, all_layouts, inverted, &h),
                     CW_ERR_INVALID);
    ck_assert_int_eq(cw_blob_header_resolve(cwc_backend, raw, 4, inverted, any, &h),
                     CW_ERR_INVALID); /* before "too short: fresh" [STOR-023] */
    free(raw);
}

/* The details STOR-038 keeps for one fault are 0 with every other. */
static void details_of_its_fault_only(const cw_blob_header *h)
{
    bool runtime = h->fault == CW_HEADER_UNSUPPORTED_RUNTIME_VERSION;
    bool truncated = h->fault == CW_HEADER_TRUNCATED;
    bool mismatch = h->fault == CW_HEADER_LAYOUT_MISMATCH || h->fault == CW_HEADER_VERSION_MISMATCH;
    if (!runtime) {
        ck_assert_uint_eq(h->runtime_expected, 0);
        ck_assert_uint_eq(h->runtime_found, 0);
    }
    if (!truncated)
        ck_assert_uint_eq(h->required_len, 0);
    if (!mismatch) {
        ck_assert_uint_eq(h->expected.first, 0);
        ck_assert_uint_eq(h->expected.last, 0);
        ck_assert_uint_eq(h->found, 0);
    }
}

/* Headers that fail at each step, with bytes 4-7 far from 0 where the
 * step allows: parse and resolve set no detail of another fault. */
CWC_CASE(header_fault_details_only_with_their_fault, "storage", "STOR-038 STOR-022 RUN-008",
         CWC_REPEATED)
{
    size_t len;
    uint8_t *v1 = blob_bytes(V1, 0x0707, 0, &len);
    uint8_t *v0 = blob_bytes(V0, 0x0707, 4, &len);
    uint8_t foreign[4096] = {'X', 'Y', 'Z', 'W', 0xFE, 0xFD, 0xFC, 0xFB};
    uint8_t runtime[8] = {'C', 'W', 'I', 'C', 0xFE, 0xFD, 0x07, 0x07};
    uint8_t crc[4096];
    memcpy(crc, v1, sizeof crc);
    crc[11] ^= 0x01;
    struct {
        const uint8_t *raw;
        uint64_t len;
        int fault;
    } seen[] = {
        {foreign, 8, CW_HEADER_INVALID_MAGIC},
        {foreign, sizeof foreign, CW_HEADER_INVALID_MAGIC},
        {runtime, sizeof runtime, CW_HEADER_UNSUPPORTED_RUNTIME_VERSION},
        {v1, 11, CW_HEADER_TRUNCATED},
        {crc, sizeof crc, CW_HEADER_INVALID_CHECKSUM},
        {v1, 4096, CW_HEADER_VERSION_MISMATCH},
        {v0, 12, CW_HEADER_VERSION_MISMATCH},
    };
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++) {
        cw_blob_header h = {0};
        ck_assert_int_ne(parse(seen[i].raw, seen[i].len, 0, 7, &h), CW_OK);
        ck_assert_int_eq(h.fault, seen[i].fault);
        details_of_its_fault_only(&h);
        int rc = resolve(seen[i].raw, seen[i].len, &h); /* V1's 11 bytes heal [STOR-023] */
        ck_assert_int_eq(rc == CW_OK, h.fresh);
        ck_assert_int_eq(h.fault, seen[i].fault);
        details_of_its_fault_only(&h);
    }
    free(v1);
    free(v0);
}

/* Fill `raw` with the first `prefix` bytes of a V1 creation of version 5,
 * zeros after. */
static void torn_creation(uint8_t raw[4096], size_t prefix)
{
    size_t len;
    uint8_t *region = blob_bytes(V1, 5, 0, &len);
    memset(raw, 0, 4096);
    memcpy(raw, region, prefix);
    free(region);
}

CWC_CASE(header_torn_creation_heals, "storage", "STOR-023 RUN-008", CWC_REPEATED)
{
    uint8_t raw[4096];
    cw_blob_header h;
    /* Every prefix of the creation, as a short file or padded with zeros. */
    for (size_t prefix = 0; prefix < 12; prefix++) {
        torn_creation(raw, prefix);
        for (uint64_t len = prefix; len <= 4096; len += len < 16 ? 1 : 1021) {
            ck_assert_int_eq(resolve(raw, len, &h), CW_OK);
            ck_assert_msg(h.fresh, "prefix %zu, length %llu", prefix, (unsigned long long)len);
            ck_assert(h.healed == (len >= 8));
        }
    }
    /* The writer's blob version is free, CRC bytes follow it. */
    static const uint8_t mid_crc[10] = {'C', 'W', 'I', 'K', 0, 1, 0, 5, 0x1D, 0xE2};
    memset(raw, 0, sizeof raw);
    memcpy(raw, mid_crc, 10);
    ck_assert_int_eq(resolve(raw, 4096, &h), CW_OK);
    ck_assert(h.healed);
    ck_assert_int_eq(h.fault, CW_HEADER_INVALID_CHECKSUM);
    ck_assert_int_eq(resolve(raw, 10, &h), CW_OK);
    ck_assert(h.healed);
    ck_assert_int_eq(h.fault, CW_HEADER_TRUNCATED);
    raw[7] = 0x42;
    ck_assert_int_eq(resolve(raw, 8, &h), CW_OK); /* w <= 8: the version is the writer's */
    ck_assert(h.healed);
    /* Anything under 8 bytes is new, whatever it holds. */
    ck_assert_int_eq(resolve((const uint8_t *)"garbage", 7, &h), CW_OK);
    ck_assert(h.fresh && !h.healed);
    ck_assert_int_eq(resolve(NULL, 0, &h), CW_OK);
    ck_assert(h.fresh);
}

CWC_CASE(header_foreign_bytes_stay_corrupt, "storage", "STOR-023 RUN-008", CWC_REPEATED)
{
    uint8_t raw[4097];
    cw_blob_header h;
    /* The tag byte lost while later bytes were written. */
    torn_creation(raw, 10);
    raw[3] = 0;
    ck_assert_int_eq(resolve(raw, 4096, &h), CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_INVALID_MAGIC);
    ck_assert(!h.fresh);
    /* Eight bytes whose version differs from the runtime's in its second
     * byte: no prefix of a creation, whatever comes after. */
    torn_creation(raw, 8);
    raw[5] ^= 0x01;
    ck_assert_msg(resolve(raw, 8, &h) != CW_OK || !h.healed,
                  "eight bytes that are no prefix of a creation were healed");
    /* A CRC that is not its prelude's. */
    torn_creation(raw, 10);
    raw[9] ^= 0x10;
    ck_assert_int_eq(resolve(raw, 4096, &h), CW_ERR_BLOB_CORRUPT);
    /* A zero inside the fixed bytes, then more. */
    torn_creation(raw, 8);
    raw[5] = 0;
    ck_assert_int_eq(resolve(raw, 4096, &h), CW_ERR_BLOB_CORRUPT);
    /* A non-zero byte past the parse length. */
    torn_creation(raw, 10);
    raw[100] = 0xFF;
    ck_assert_int_eq(resolve(raw, 4096, &h), CW_ERR_BLOB_CORRUPT);
    /* Longer than the region: it holds data, never heals (CRC zeroed). */
    torn_creation(raw, 4096);
    memset(raw + 8, 0, 4);
    raw[4096] = 0;
    ck_assert_int_eq(resolve(raw, 4097, &h), CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_INVALID_CHECKSUM);
    /* Padding and versions say the header was written whole. */
    torn_creation(raw, 4096);
    raw[100] = 0xFF;
    ck_assert_int_eq(resolve(raw, 4096, &h), CW_ERR_BLOB_CORRUPT);
    ck_assert_int_eq(h.fault, CW_HEADER_INVALID_PADDING);
    torn_creation(raw, 4096);
    ck_assert_int_eq(
        cw_blob_header_resolve(cwc_backend, raw, 4096, all_layouts, cw_blob_range_of(0, 4), &h),
        CW_ERR_BLOB_VERSION_MISMATCH);
    /* V0 never heals: every cut of a V0 header that is 8 bytes or more. */
    static const uint8_t v0[8] = {'C', 'W', 'I', 'C', 0, 0, 0, 9};
    for (int zero = 0; zero < 8; zero++) {
        memset(raw, 0, sizeof raw);
        memcpy(raw, v0, 8);
        raw[zero] = 0;
        raw[8] = 1; /* with data after it */
        int rc = resolve(raw, 9, &h);
        ck_assert(rc != CW_OK || !h.fresh);
    }
    /* A whole, sound V1 header is never fresh. */
    torn_creation(raw, 4096);
    ck_assert_int_eq(resolve(raw, 4096, &h), CW_OK);
    ck_assert(!h.fresh && !h.healed);
    ck_assert_uint_eq(h.version, 5);
}

CWC_CASE(header_error_reasons, "storage", "STOR-024 RUN-008", CWC_REPEATED)
{
    static const struct {
        const char *bytes;
        uint64_t len;
        const char *reason;
    } cases[] = {
        {"XXXXXXXX", 8, "invalid magic"},
        {"CWIC\x00\x63\x00\x00", 8, "unsupported runtime version"},
        {"CWIK\x00\x01\x00\x00\x00\x00\x00\x01", 12, "invalid header checksum"},
        {"CWIK\x00\x01\x00\x00\x28\x13\xD8\xDC", 100, "truncated header"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t raw[4096] = {0};
        memcpy(raw, cases[i].bytes, cases[i].len < 12 ? cases[i].len : 12);
        cw_blob_header h;
        ck_assert_int_eq(parse(raw, cases[i].len, 0, 0, &h), CW_ERR_BLOB_CORRUPT);
        char reason[160];
        cw_blob_header_reason(&h, reason, sizeof reason);
        ck_assert_msg(strncmp(reason, cases[i].reason, strlen(cases[i].reason)) == 0, "%s", reason);
    }
    size_t len;
    uint8_t *raw = blob_bytes(V1, 0, 0, &len);
    raw[4000] = 7;
    cw_blob_header h;
    ck_assert_int_eq(parse(raw, len, 0, 0, &h), CW_ERR_BLOB_CORRUPT);
    char reason[160];
    cw_blob_header_reason(&h, reason, sizeof reason);
    ck_assert_str_eq(reason, "invalid header padding");
    free(raw);
    h.fault = CW_HEADER_TRUNCATED;
    h.required_len = 4096;
    h.raw_len = 100;
    cw_blob_header_reason(&h, reason, sizeof reason);
    ck_assert_str_eq(reason, "truncated header: required length 4096, raw length 100");
}

CWC_CASE(header_layout_range, "storage", "STOR-025 RUN-008", CWC_REPEATED)
{
    size_t len;
    cw_blob_header h;
    uint8_t *v0 = blob_bytes(V0, 1, 3, &len);
    ck_assert_int_eq(cw_blob_header_parse(cwc_backend, v0, len, cw_blob_range_of(V1, V1),
                                          cw_blob_range_of(0, 0), &h),
                     CW_ERR_BLOB_LAYOUT_MISMATCH); /* before the version is looked at */
    ck_assert_int_eq(h.fault, CW_HEADER_LAYOUT_MISMATCH);
    ck_assert_uint_eq(h.expected.first, V1);
    ck_assert_uint_eq(h.found, V0);
    ck_assert_int_eq(cw_blob_header_resolve(cwc_backend, v0, len, cw_blob_range_of(V1, V1),
                                            cw_blob_range_of(1, 1), &h),
                     CW_ERR_BLOB_LAYOUT_MISMATCH);
    free(v0);
    uint8_t *v1 = blob_bytes(V1, 1, 0, &len);
    ck_assert_int_eq(cw_blob_header_parse(cwc_backend, v1, len, cw_blob_range_of(V0, V0),
                                          cw_blob_range_of(1, 1), &h),
                     CW_ERR_BLOB_LAYOUT_MISMATCH);
    ck_assert_int_eq(cw_blob_header_parse(cwc_backend, v1, len, cw_blob_range_of(V1, V0),
                                          cw_blob_range_of(1, 1), &h),
                     CW_ERR_INVALID);
    free(v1);
}

static void *layout_v0_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = cwc_open(ctx, "p", "old", NULL);
    cwc_write(b, 0, "legacy layout", 13);
    cwc_sync(b);
    cw_blob_close(b);
    uint64_t size;
    b = cwc_open(ctx, "p", "old", &size);
    ck_assert_uint_eq(size, 13);
    cwc_read_eq(b, 0, "legacy layout", 13);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(storage_layout_setting, "storage", "STOR-025 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cw_run_result res;
    cfg.blob_layouts = cw_blob_range_of(V1, V0);
    ck_assert_int_eq(cwc_run(&cfg, layout_v0_root, NULL, &res), CW_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(res.message, "blob_layouts"));
    cfg.blob_layouts = cw_blob_range_of(V0, 2);
    ck_assert_int_eq(cwc_run(&cfg, layout_v0_root, NULL, &res), CW_ERR_INVALID);
    /* A run restricted to V0 creates and uses V0 blobs. */
    cwc_store s;
    cwc_store_begin(&s);
    s.cfg.blob_layouts = cw_blob_range_of(V0, V0);
    cwc_run_ok(&s.cfg, layout_v0_root, NULL);
    cwc_store_end(&s);
}

/* Fewer than 8 bytes: fresh, no fault, and no field left from a parse
 * (whatever the caller had in `h`), for every length and content. */
CWC_CASE(header_short_is_fresh_and_clean, "storage", "STOR-023 RUN-008", CWC_REPEATED)
{
    static const uint8_t v1[7] = {'C', 'W', 'I', 'K', 0, 1, 0};
    static const uint8_t junk[7] = {0xFF, 0x01, 0x80, 0x7F, 0xAA, 0x55, 0x33};
    const uint8_t *contents[2] = {v1, junk};
    for (int c = 0; c < 2; c++) {
        for (uint64_t len = 0; len < 8; len++) {
            cw_blob_header h;
            memset(&h, 0xA5, sizeof h);
            ck_assert_int_eq(cw_blob_header_resolve(cwc_backend, contents[c], len,
                                                    cw_blob_range_of(0, 1), cw_blob_range_of(0, 9),
                                                    &h),
                             CW_OK);
            ck_assert(h.fresh && !h.healed);
            ck_assert_int_eq(h.fault, CW_HEADER_OK);
            ck_assert_uint_eq(h.raw_len, len);
            ck_assert_uint_eq(h.layout, 0);
            ck_assert_uint_eq(h.version, 0);
            ck_assert_uint_eq(h.data_offset, 0);
            ck_assert_uint_eq(h.size, 0);
            for (int i = 0; i < 4; i++)
                ck_assert_uint_eq(h.magic[i], 0);
            ck_assert_uint_eq(h.runtime_expected, 0);
            ck_assert_uint_eq(h.runtime_found, 0);
            ck_assert_uint_eq(h.required_len, 0);
            ck_assert_uint_eq(h.expected.first, 0);
            ck_assert_uint_eq(h.expected.last, 0);
            ck_assert_uint_eq(h.found, 0);
        }
    }
}
