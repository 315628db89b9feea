/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_vector.c - the header conformance vector (spec/17-storage.md,
 * STOR-026): generated raw headers whose resolve outcomes are hashed and
 * compared with a golden digest, so a second codec can prove it agrees
 * with the reference byte for byte.
 *
 * One PRNG stream (spec/11-deterministic.md) seeded with 0x53544F52
 * ("STOR") serves all CASES cases. Case i draws, in this order:
 *
 *     kind = below(8), version = below(8), first = below(8),
 *     last = first + below(3), lay = below(3)
 *
 * (layouts: lay 0 is V0..=V0, 1 is V0..=V1, 2 is V1..=V1; versions
 * first..=last), then builds `raw` (zeros where nothing is said) and its
 * length `len` by kind. "Random bytes" are taken from next() eight at a
 * time, least significant byte first; "a V1 header" is the 4096 bytes
 * STOR-020 specifies, "a V0 header" its 8.
 *
 *   0  a V1 header of `version`, then d = below(64) random bytes; len = 4096 + d
 *   1  a V0 header of `version`, then d = below(64) random bytes; len = 8 + d
 *   2  the first k = below(4097) bytes of a V1 header of `version`;
 *      len = k when below(2) is 1, else 4096
 *   3  as 0, then p = below(len), b = below(8): raw[p] ^= 1 << b
 *   4  n = below(16) random bytes; len = n when below(2) is 1, else 4096
 *   5  as 1, then p = below(8), b = below(8): raw[p] ^= 1 << b
 *   6  the first k = below(13) bytes of a V1 header of `version`, then
 *      p = 12 + below(4084): raw[p] = 1 + below(255); len = 4096
 *   7  n = below(4200) random bytes; len = n
 *
 * and resolves it (header_resolve(raw, len, layouts, versions)). Into
 * SHA-256 go, each as 8 bytes little-endian: the return code (two's
 * complement), fresh, healed and fault; then, when the code is CW_OK and
 * the blob is not fresh, layout, version, data_offset and size; for a
 * mismatch fault, expected.first, expected.last and found; for a truncated
 * header, required_len; for an unsupported runtime version,
 * runtime_expected and runtime_found; for an invalid magic, its four
 * bytes, one integer each.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

#include "cases/vrng.h"
#include "cases/storage.h"
#include "cases/golden.h"

enum { CASES = 4096, ROOM = 4200 };

/* The digest of the reference implementation. */
static const char golden[] = "dd7caa7320f41fb55c7d32fc9bcd2fc6a57a80d82cbada583206510cfddf9da8";

/* ---- Building and recording --------------------------------------------------------------- */

static size_t header(uint16_t layout, uint16_t version, uint8_t *raw)
{
    size_t len;
    ck_assert_int_eq(cw_blob_header_create(cwc_backend, layout, version, raw, ROOM, &len), CW_OK);
    return len;
}

/* One case into raw[0 .. ROOM), returning its length. */
static uint64_t build(vrng *r, int kind, uint16_t version, uint8_t *raw)
{
    uint64_t len, d, k, n, p;
    memset(raw, 0, ROOM);
    switch (kind) {
    case 0:
    case 3:
        len = header(CW_BLOB_LAYOUT_V1, version, raw);
        d = vrng_below(r, 64);
        vrng_fill(r, raw + len, d);
        len += d;
        if (kind == 3) {
            p = vrng_below(r, len);
            raw[p] ^= (uint8_t)(1u << vrng_below(r, 8));
        }
        return len;
    case 1:
    case 5:
        len = header(CW_BLOB_LAYOUT_V0, version, raw);
        d = vrng_below(r, 64);
        vrng_fill(r, raw + len, d);
        len += d;
        if (kind == 5) {
            p = vrng_below(r, 8);
            raw[p] ^= (uint8_t)(1u << vrng_below(r, 8));
        }
        return len;
    case 2:
        header(CW_BLOB_LAYOUT_V1, version, raw);
        k = vrng_below(r, 4097);
        memset(raw + k, 0, ROOM - k);
        return vrng_below(r, 2) == 1 ? k : 4096;
    case 4:
        n = vrng_below(r, 16);
        vrng_fill(r, raw, n);
        return vrng_below(r, 2) == 1 ? n : 4096;
    case 6:
        header(CW_BLOB_LAYOUT_V1, version, raw);
        k = vrng_below(r, 13);
        memset(raw + k, 0, ROOM - k);
        p = 12 + vrng_below(r, 4084);
        raw[p] = (uint8_t)(1 + vrng_below(r, 255));
        return 4096;
    default:
        n = vrng_below(r, 4200);
        vrng_fill(r, raw, n);
        return n;
    }
}

static void put(EVP_MD_CTX *md, int64_t v)
{
    uint8_t le[8];
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++, u >>= 8)
        le[i] = (uint8_t)u;
    EVP_DigestUpdate(md, le, sizeof le);
}

static void record(EVP_MD_CTX *md, int rc, const cw_blob_header *h)
{
    put(md, rc);
    put(md, h->fresh);
    put(md, h->healed);
    put(md, h->fault);
    if (rc == CW_OK && !h->fresh) {
        put(md, h->layout);
        put(md, h->version);
        put(md, (int64_t)h->data_offset);
        put(md, (int64_t)h->size);
    }
    switch (h->fault) {
    case CW_HEADER_LAYOUT_MISMATCH:
    case CW_HEADER_VERSION_MISMATCH:
        put(md, h->expected.first);
        put(md, h->expected.last);
        put(md, h->found);
        break;
    case CW_HEADER_TRUNCATED:
        put(md, (int64_t)h->required_len);
        break;
    case CW_HEADER_UNSUPPORTED_RUNTIME_VERSION:
        put(md, h->runtime_expected);
        put(md, h->runtime_found);
        break;
    case CW_HEADER_INVALID_MAGIC:
        for (int i = 0; i < 4; i++)
            put(md, h->magic[i]);
        break;
    default:
        break;
    }
}

CWC_CASE(header_vector, "storage", "STOR-026", 0)
{
    static const cw_blob_range layouts[3] = {{CW_BLOB_LAYOUT_V0, CW_BLOB_LAYOUT_V0},
                                             {CW_BLOB_LAYOUT_V0, CW_BLOB_LAYOUT_V1},
                                             {CW_BLOB_LAYOUT_V1, CW_BLOB_LAYOUT_V1}};
    vrng r;
    vrng_seed(&r, 0x53544F52u);
    uint8_t *raw = malloc(ROOM);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    int outcomes[2] = {0, 0}; /* healed, corrupt: the vector must reach both */
    for (int i = 0; i < CASES; i++) {
        int kind = (int)vrng_below(&r, 8);
        uint16_t version = (uint16_t)vrng_below(&r, 8);
        uint16_t first = (uint16_t)vrng_below(&r, 8);
        uint16_t last = (uint16_t)(first + vrng_below(&r, 3));
        cw_blob_range lay = layouts[vrng_below(&r, 3)];
        uint64_t len = build(&r, kind, version, raw);
        cw_blob_header h;
        memset(&h, 0, sizeof h); /* a backend may leave it alone on an error */
        int rc =
            cw_blob_header_resolve(cwc_backend, raw, len, lay, cw_blob_range_of(first, last), &h);
        outcomes[0] += h.healed;
        outcomes[1] += rc == CW_ERR_BLOB_CORRUPT;
        record(md, rc, &h);
    }
    unsigned char digest[32];
    unsigned int dlen;
    EVP_DigestFinal_ex(md, digest, &dlen);
    EVP_MD_CTX_free(md);
    free(raw);
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    ck_assert_int_gt(outcomes[0], 100);
    ck_assert_int_gt(outcomes[1], 100);
    cwc_golden("header_vector", hex, golden);
}
