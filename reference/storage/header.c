/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * header.c - the blob header codec (spec/17-storage.md, STOR-020..024).
 *
 * Every blob starts with an 8-byte prelude: a magic naming the layout, the
 * runtime version that layout requires, and the application's blob
 * version, all big-endian. V1 follows it with a CRC-32C of the prelude and
 * zeros up to 4096, so data starts on a page. The data offset is never
 * stored: the magic implies it.
 *
 * Both magics are "CWI" and a non-zero tag, so zeroing bytes of one never
 * gives the other, and a torn write can never read as a complete header of
 * another layout. That is what lets resolve() recognise a V1 creation that
 * a crash interrupted and recreate it, while anything else stays a loud
 * corruption error.
 */
#include <string.h>

#include "storage/storage.h"

static const uint8_t magic_v0[4] = {'C', 'W', 'I', 'C'};
static const uint8_t magic_v1[4] = {'C', 'W', 'I', 'K'};

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t data_offset(uint16_t layout)
{
    return layout == CW_BLOB_LAYOUT_V0 ? CW_BLOB_V0_DATA_OFFSET : CW_BLOB_V1_DATA_OFFSET;
}

/* The runtime version a layout's header carries: its own number. */
static uint16_t runtime_version(uint16_t layout)
{
    return layout;
}

static const uint8_t *magic_of(uint16_t layout)
{
    return layout == CW_BLOB_LAYOUT_V0 ? magic_v0 : magic_v1;
}

static bool layout_of_magic(const uint8_t *m, uint16_t *layout)
{
    if (memcmp(m, magic_v0, 4) == 0)
        *layout = CW_BLOB_LAYOUT_V0;
    else if (memcmp(m, magic_v1, 4) == 0)
        *layout = CW_BLOB_LAYOUT_V1;
    else
        return false;
    return true;
}

static bool range_valid(cw_blob_range r)
{
    return r.first <= r.last;
}

int cw_header_create(uint16_t layout, uint16_t version, uint8_t *out, size_t cap, size_t *len)
{
    *len = 0;
    if (layout > CW_BLOB_LAYOUT_LATEST || !out || cap < data_offset(layout))
        return CW_ERR_INVALID;
    size_t region = (size_t)data_offset(layout);
    memcpy(out, magic_of(layout), 4);
    put_be16(out + 4, runtime_version(layout));
    put_be16(out + 6, version);
    if (layout == CW_BLOB_LAYOUT_V1) {
        put_be32(out + CW_BLOB_PRELUDE_SIZE, cw_crc32c_update(0, out, CW_BLOB_PRELUDE_SIZE));
        memset(out + CW_BLOB_PARSE_LEN, 0, region - CW_BLOB_PARSE_LEN);
    }
    *len = region;
    return CW_OK;
}

static int corrupt(cw_blob_header *h, int fault)
{
    h->fault = fault;
    return CW_ERR_BLOB_CORRUPT;
}

static int truncated(cw_blob_header *h, uint64_t required)
{
    h->required_len = required;
    return corrupt(h, CW_HEADER_TRUNCATED);
}

/* The V1 region after the prelude: CRC, then length, then padding. The
 * CRC comes before the length so that a header torn inside its first 12
 * bytes reads as a checksum failure whatever the file's length. */
static int check_v1_region(const uint8_t *raw, uint64_t raw_len, cw_blob_header *h)
{
    if (raw_len < CW_BLOB_PARSE_LEN)
        return truncated(h, CW_BLOB_PARSE_LEN);
    if (cw_crc32c_update(0, raw, CW_BLOB_PRELUDE_SIZE) != be32(raw + CW_BLOB_PRELUDE_SIZE))
        return corrupt(h, CW_HEADER_INVALID_CHECKSUM);
    if (raw_len < CW_BLOB_V1_DATA_OFFSET)
        return truncated(h, CW_BLOB_V1_DATA_OFFSET);
    for (size_t i = CW_BLOB_PARSE_LEN; i < CW_BLOB_V1_DATA_OFFSET; i++)
        if (raw[i] != 0)
            return corrupt(h, CW_HEADER_INVALID_PADDING);
    return CW_OK;
}

static int mismatch(cw_blob_header *h, int fault, cw_blob_range expected, uint16_t found)
{
    h->fault = fault;
    h->expected = expected;
    h->found = found;
    return fault == CW_HEADER_LAYOUT_MISMATCH ? CW_ERR_BLOB_LAYOUT_MISMATCH
                                              : CW_ERR_BLOB_VERSION_MISMATCH;
}

int cw_header_parse(const uint8_t *raw, uint64_t raw_len, cw_blob_range layouts,
                    cw_blob_range versions, cw_blob_header *out)
{
    memset(out, 0, sizeof *out);
    out->raw_len = raw_len;
    if (!raw || raw_len < CW_BLOB_PRELUDE_SIZE || !range_valid(layouts) || !range_valid(versions))
        return CW_ERR_INVALID;
    memcpy(out->magic, raw, 4);
    out->version = be16(raw + 6);
    uint16_t layout;
    if (!layout_of_magic(raw, &layout))
        return corrupt(out, CW_HEADER_INVALID_MAGIC);
    out->layout = layout;
    uint16_t found = be16(raw + 4);
    if (found != runtime_version(layout)) {
        out->runtime_expected = runtime_version(layout);
        out->runtime_found = found;
        return corrupt(out, CW_HEADER_UNSUPPORTED_RUNTIME_VERSION);
    }
    if (layout == CW_BLOB_LAYOUT_V1) {
        int rc = check_v1_region(raw, raw_len, out);
        if (rc != CW_OK)
            return rc;
    }
    out->data_offset = data_offset(layout);
    out->size = raw_len - out->data_offset;
    /* Ranges last: every failure above may be an unfinished write, these
     * two describe a header that was written whole. */
    if (!cw_blob_range_contains(layouts, layout))
        return mismatch(out, CW_HEADER_LAYOUT_MISMATCH, layouts, layout);
    if (!cw_blob_range_contains(versions, out->version))
        return mismatch(out, CW_HEADER_VERSION_MISMATCH, versions, out->version);
    return CW_OK;
}

/* Faults a write torn by a crash can leave; padding and ranges need a
 * header that was written whole. */
static bool torn_fault(int fault)
{
    return fault == CW_HEADER_INVALID_MAGIC || fault == CW_HEADER_UNSUPPORTED_RUNTIME_VERSION ||
           fault == CW_HEADER_INVALID_CHECKSUM || fault == CW_HEADER_TRUNCATED;
}

/* True when raw[0 .. len) (len <= 4096) is what an interrupted V1 creation
 * leaves: a prefix of the region creation writes, then zeros (a length
 * that became durable before the bytes did reads as zeros). The blob
 * version bytes may hold any value; CRC bytes must be a prefix of the CRC
 * of the prelude in front of them. */
static bool interrupted_creation(const uint8_t *raw, uint64_t len)
{
    size_t head = len < CW_BLOB_PARSE_LEN ? (size_t)len : CW_BLOB_PARSE_LEN;
    for (uint64_t i = head; i < len; i++)
        if (raw[i] != 0)
            return false;
    size_t written = head;
    while (written > 0 && raw[written - 1] == 0)
        written--;
    uint8_t canonical[CW_BLOB_PARSE_LEN];
    memcpy(canonical, magic_v1, 4);
    put_be16(canonical + 4, runtime_version(CW_BLOB_LAYOUT_V1));
    if (written <= CW_BLOB_PRELUDE_SIZE) {
        size_t fixed = written < 6 ? written : 6;
        return memcmp(raw, canonical, fixed) == 0;
    }
    /* CRC bytes were written, so the whole prelude was. */
    if (memcmp(raw, canonical, 6) != 0)
        return false;
    memcpy(canonical + 6, raw + 6, 2);
    put_be32(canonical + 8, cw_crc32c_update(0, canonical, CW_BLOB_PRELUDE_SIZE));
    return memcmp(raw + 8, canonical + 8, written - 8) == 0;
}

int cw_header_resolve(const uint8_t *raw, uint64_t raw_len, cw_blob_range layouts,
                      cw_blob_range versions, cw_blob_header *out)
{
    memset(out, 0, sizeof *out);
    out->raw_len = raw_len;
    if (!range_valid(layouts) || !range_valid(versions) || (!raw && raw_len > 0))
        return CW_ERR_INVALID;
    if (raw_len < CW_BLOB_PRELUDE_SIZE) {
        out->fresh = true; /* no header could be there: whatever it holds is new */
        return CW_OK;
    }
    int rc = cw_header_parse(raw, raw_len, layouts, versions, out);
    if (rc == CW_OK)
        return CW_OK;
    /* A longer file holds data and never heals. */
    if (raw_len <= CW_BLOB_V1_DATA_OFFSET && torn_fault(out->fault) &&
        interrupted_creation(raw, raw_len)) {
        out->fresh = out->healed = true;
        return CW_OK;
    }
    return rc;
}

int cw_header_error(const cw_bfile *f, int rc, const cw_blob_header *h, cw_storage_error *err)
{
    if (rc == CW_ERR_BLOB_CORRUPT) {
        char reason[160];
        cw_blob_header_reason(h, reason, sizeof reason);
        cw_storage_fail(err, rc, f->partition, f->hex, 0, "blob corrupt: %s/%s reason: %s",
                        f->partition, f->hex, reason);
    } else if (rc == CW_ERR_BLOB_LAYOUT_MISMATCH) {
        cw_storage_fail(err, rc, f->partition, f->hex, 0,
                        "blob layout mismatch: expected one of V%u..=V%u, found V%u",
                        h->expected.first, h->expected.last, h->found);
    } else if (rc == CW_ERR_BLOB_VERSION_MISMATCH) {
        cw_storage_fail(err, rc, f->partition, f->hex, 0,
                        "blob version mismatch: expected one of %u..=%u, found %u",
                        h->expected.first, h->expected.last, h->found);
    } else {
        cw_storage_fail(err, rc, f->partition, f->hex, 0, "%s", cw_strerror(rc));
    }
    if (err) {
        err->fault = h->fault;
        err->expected = h->expected;
        err->found = h->found;
    }
    return rc;
}
