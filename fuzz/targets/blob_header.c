/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * blob_header.c - a backend's blob header codec (spec/17-storage.md,
 * STOR-020..023) against a model written from the specification alone.
 *
 * INPUT. Six bytes of parameters, then the first bytes of a blob:
 *
 *   0     bits 0-1: the layouts accepted: V0..=V0, V0..=V1, V1..=V1, or the
 *         invalid V1..=V0; bit 2: stamp the right CRC-32C into bytes 8-11
 *         (when the blob has 12 bytes), so sound V1 headers are easy to
 *         reach; bit 3: zero bytes 12 .. 4095 after the input's bytes are
 *         in place (clean padding)
 *   1-2   versions.first, big-endian
 *   3-4   versions.last
 *   5     the blob's length: below 128, the length of the rest of the
 *         input; from 128, 4096 + (byte - 192), the rest zero-padded or cut
 *   6...  the blob's bytes
 *
 * CHECKS. The backend's resolve and parse must agree with the model on the
 * return code, fresh, healed and the fault, and on every detail the
 * specification fixes for the outcome (layout, version, offsets, ranges,
 * lengths, runtime versions, magic). Whatever the model says, resolve
 * must never heal a blob longer than the 4096-byte region or one with a
 * non-zero byte past byte 11, and never accept a V1 header whose CRC is
 * wrong. A header made by header_create for the range's last version must
 * parse back.
 *
 * The candidate is the reference's deterministic backend, or the backend a
 * shared object exports (cw_backend_entry) when CW_FUZZ_BACKEND (or its
 * former name BLOB_HEADER_BACKEND) names
 * one: the same target then certifies another implementation's codec.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cwrt/cwrt.h"
#define FUZZ_TARGET_NEEDS (FUZZ_NEEDS_STORAGE)
#include "driver/candidate.h"
#include "driver/target.h"

enum { REGION = 4096, MAX_LEN = 4096 + 64 };

static void fail(const char *what)
{
    fprintf(stderr, "blob_header: %s\n", what);
    abort();
}

/* ---- The model ------------------------------------------------------------------------- */

static uint32_t model_crc(const uint8_t *p, size_t len)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
    }
    return ~c;
}

typedef struct verdict {
    int rc;
    bool fresh, healed;
    int fault;
    uint16_t layout, version;
    uint64_t data_offset, size, required;
    uint16_t rt_expected, rt_found, found;
    cw_blob_range expected;
} verdict;

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool in(cw_blob_range r, uint16_t v)
{
    return r.first <= v && v <= r.last;
}

static int corrupt(verdict *v, int fault)
{
    v->fault = fault;
    return v->rc = CW_ERR_BLOB_CORRUPT;
}

/* STOR-022, step by step. */
static int model_parse(const uint8_t *raw, uint64_t len, cw_blob_range lay, cw_blob_range ver,
                       verdict *v)
{
    memset(v, 0, sizeof *v);
    if (len < 8 || lay.first > lay.last || ver.first > ver.last)
        return v->rc = CW_ERR_INVALID;
    uint16_t layout;
    if (!memcmp(raw, "CWIC", 4))
        layout = 0;
    else if (!memcmp(raw, "CWIK", 4))
        layout = 1;
    else
        return corrupt(v, CW_HEADER_INVALID_MAGIC);
    v->layout = layout;
    uint16_t runtime = (uint16_t)(raw[4] << 8 | raw[5]);
    v->version = (uint16_t)(raw[6] << 8 | raw[7]);
    if (runtime != layout) {
        v->rt_expected = layout;
        v->rt_found = runtime;
        return corrupt(v, CW_HEADER_UNSUPPORTED_RUNTIME_VERSION);
    }
    if (layout == 1) {
        if (len < 12) {
            v->required = 12;
            return corrupt(v, CW_HEADER_TRUNCATED);
        }
        if (get32(raw + 8) != model_crc(raw, 8))
            return corrupt(v, CW_HEADER_INVALID_CHECKSUM);
        if (len < REGION) {
            v->required = REGION;
            return corrupt(v, CW_HEADER_TRUNCATED);
        }
        for (int i = 12; i < REGION; i++)
            if (raw[i])
                return corrupt(v, CW_HEADER_INVALID_PADDING);
    }
    v->data_offset = layout ? REGION : 8;
    v->size = len - v->data_offset;
    if (!in(lay, layout)) {
        v->fault = CW_HEADER_LAYOUT_MISMATCH;
        v->expected = lay;
        v->found = layout;
        return v->rc = CW_ERR_BLOB_LAYOUT_MISMATCH;
    }
    if (!in(ver, v->version)) {
        v->fault = CW_HEADER_VERSION_MISMATCH;
        v->expected = ver;
        v->found = v->version;
        return v->rc = CW_ERR_BLOB_VERSION_MISMATCH;
    }
    return v->rc = CW_OK;
}

/* STOR-023: the interrupted V1 creation. */
static bool model_interrupted(const uint8_t *raw, uint64_t len)
{
    size_t head = len < 12 ? (size_t)len : 12;
    for (uint64_t i = head; i < len; i++)
        if (raw[i])
            return false;
    size_t w = 0;
    for (size_t i = 0; i < head; i++)
        if (raw[i])
            w = i + 1;
    static const uint8_t fixed[6] = {'C', 'W', 'I', 'K', 0, 1};
    if (w <= 8)
        return memcmp(raw, fixed, w < 6 ? w : 6) == 0;
    if (memcmp(raw, fixed, 6) != 0)
        return false;
    uint32_t crc = model_crc(raw, 8);
    uint8_t want[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8),
                       (uint8_t)crc};
    return memcmp(raw + 8, want, w - 8) == 0;
}

static int model_resolve(const uint8_t *raw, uint64_t len, cw_blob_range lay, cw_blob_range ver,
                         verdict *v)
{
    memset(v, 0, sizeof *v);
    if (lay.first > lay.last || ver.first > ver.last)
        return v->rc = CW_ERR_INVALID;
    if (len < 8) {
        v->fresh = true;
        return v->rc = CW_OK;
    }
    if (model_parse(raw, len, lay, ver, v) == CW_OK)
        return CW_OK;
    bool torn = v->fault == CW_HEADER_INVALID_MAGIC ||
                v->fault == CW_HEADER_UNSUPPORTED_RUNTIME_VERSION ||
                v->fault == CW_HEADER_INVALID_CHECKSUM || v->fault == CW_HEADER_TRUNCATED;
    if (len <= REGION && torn && model_interrupted(raw, len)) {
        v->fresh = v->healed = true;
        return v->rc = CW_OK;
    }
    return v->rc;
}

/* ---- Comparing --------------------------------------------------------------------------- */

static void expect(bool ok, const char *what)
{
    if (!ok)
        fail(what);
}

static void compare(const char *call, int rc, const cw_blob_header *h, const verdict *v,
                    const uint8_t *raw)
{
    char what[160];
    snprintf(what, sizeof what, "%s: return code %d, the model says %d", call, rc, v->rc);
    expect(rc == v->rc, what);
    if (rc == CW_ERR_INVALID)
        return;
    snprintf(what, sizeof what, "%s: fault %d, the model says %d", call, h->fault, v->fault);
    expect(h->fault == v->fault, what);
    expect(h->fresh == v->fresh && h->healed == v->healed, "fresh or healed differs");
    if (rc == CW_OK && !h->fresh) {
        expect(h->layout == v->layout && h->version == v->version, "layout or version differs");
        expect(h->data_offset == v->data_offset && h->size == v->size, "offset or size differs");
    }
    switch (v->fault) {
    case CW_HEADER_LAYOUT_MISMATCH:
    case CW_HEADER_VERSION_MISMATCH:
        expect(h->expected.first == v->expected.first && h->expected.last == v->expected.last &&
                   h->found == v->found,
               "mismatch details differ");
        break;
    case CW_HEADER_TRUNCATED:
        expect(h->required_len == v->required, "required length differs");
        break;
    case CW_HEADER_UNSUPPORTED_RUNTIME_VERSION:
        expect(h->runtime_expected == v->rt_expected && h->runtime_found == v->rt_found,
               "runtime versions differ");
        break;
    case CW_HEADER_INVALID_MAGIC:
        expect(memcmp(h->magic, raw, 4) == 0, "magic differs");
        break;
    default:
        break;
    }
}

/* What must hold whatever the model says. */
static void invariants(int rc, const cw_blob_header *h, const uint8_t *raw, uint64_t len)
{
    if (rc != CW_OK)
        return;
    if (h->fresh && len >= 8) {
        expect(len <= REGION, "healed a blob that holds data");
        for (uint64_t i = 12; i < len; i++)
            expect(raw[i] == 0, "healed a blob with a non-zero byte past its header");
    }
    if (!h->fresh && h->layout == CW_BLOB_LAYOUT_V1)
        expect(len >= 12 && get32(raw + 8) == model_crc(raw, 8), "accepted a wrong CRC");
}

/* ---- The candidate --------------------------------------------------------------------- */

static const cw_backend *candidate(void)
{
    return fuzz_candidate("BLOB_HEADER_BACKEND");
}

/* The candidate loaded and its CRC-32C set up (tables, CPU features) once,
 * before any input: AFL++ forks its children after this. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    uint8_t byte = 0;
    (void)cw_crc32c(candidate(), 0, &byte, 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 6)
        return 0;
    static const cw_blob_range layouts[4] = {{0, 0}, {0, 1}, {1, 1}, {1, 0}};
    cw_blob_range lay = layouts[data[0] & 3];
    cw_blob_range ver = {(uint16_t)(data[1] << 8 | data[2]), (uint16_t)(data[3] << 8 | data[4])};
    const uint8_t *rest = data + 6;
    size_t nrest = size - 6;
    uint64_t len = data[5] < 128 ? nrest : (uint64_t)(REGION + data[5] - 192);
    if (len > MAX_LEN)
        len = MAX_LEN;

    static uint8_t raw[MAX_LEN];
    memset(raw, 0, sizeof raw);
    memcpy(raw, rest, nrest < len ? nrest : (size_t)len);
    if ((data[0] & 4) && len >= 12) {
        uint32_t crc = model_crc(raw, 8);
        raw[8] = (uint8_t)(crc >> 24), raw[9] = (uint8_t)(crc >> 16);
        raw[10] = (uint8_t)(crc >> 8), raw[11] = (uint8_t)crc;
    }
    if (data[0] & 8)
        memset(raw + 12, 0, REGION - 12);

    const cw_backend *b = candidate();
    /* Zeroed for each call: a field a path leaves unset must read the same
     * on every run of an input, or the comparison (and AFL++'s stability)
     * would depend on what the stack held. */
    cw_blob_header h;
    verdict v;
    memset(&h, 0, sizeof h);
    memset(&v, 0, sizeof v);
    int rc = cw_blob_header_resolve(b, raw, len, lay, ver, &h);
    model_resolve(raw, len, lay, ver, &v);
    compare("resolve", rc, &h, &v, raw);
    invariants(rc, &h, raw, len);

    memset(&h, 0, sizeof h);
    memset(&v, 0, sizeof v);
    rc = cw_blob_header_parse(b, raw, len, lay, ver, &h);
    model_parse(raw, len, lay, ver, &v);
    compare("parse", rc, &h, &v, raw);

    /* A header made for this range parses back, in a layout it accepts. */
    if (lay.first <= lay.last && ver.first <= ver.last) {
        uint8_t made[REGION];
        size_t n;
        expect(cw_blob_header_create(b, lay.last, ver.last, made, sizeof made, &n) == CW_OK,
               "create failed");
        expect(n == (lay.last ? REGION : 8u), "created a header of the wrong length");
        rc = cw_blob_header_parse(b, made, n, lay, ver, &h);
        expect(rc == CW_OK && h.version == ver.last && h.size == 0, "a created header is unsound");
    }
    return 0;
}
