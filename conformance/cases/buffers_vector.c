/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * buffers_vector.c - the buffer conformance vector (spec/12-buffers.md,
 * BUF-028): generated operation sequences whose observable results are
 * hashed and compared with a golden digest. spec/19-golden-workloads.md
 * specifies it completely; this comment summarises it.
 *
 * Sequence i (0 <= i < SEQUENCES) seeds the PRNG of spec/11-deterministic.md
 * with i and makes a fresh pool (classes 64 .. 1024 bytes, 3 each,
 * alignment 64, no thread cache). It then runs OPS operations on four
 * cw_iobuf (B0..B3), two cw_iobuf_mut (M0, M1) and one cw_iobufs (L), all
 * starting empty. Each operation draws, in this order:
 *
 *     code = below(13), k = below(4), j = below(4), m = below(2)
 *
 * and then the draws its code lists (`len+2` means below(len + 2) where len
 * is the length of the operand before the operation). Random bytes are
 * taken from next() eight at a time, least significant byte first.
 *
 *   0 copy      n = below(300), n bytes: Bk = cw_iobuf_copy           -> rc
 *   1 slice     s, e (Bj len+2 each): Bk = slice(Bj, s, e)            -> rc
 *   2 split     at (Bk len+2); j = k+1 mod 4 if j == k:
 *               Bj = split_to(Bk, at)                                  -> rc
 *   3 advance   n (Bk len+2): advance(Bk, n)                           -> rc
 *   4 copy out  n (Bk len+2): copy_out(Bk, n)                          -> rc, bytes on success
 *   5 clone     j = k+1 mod 4 if j == k: Bk = clone(Bj)
 *   6 release   release(Bk)
 *   7 alloc     cap = below(1200): Mm = try_alloc(pool, cap)          -> rc, why, cap
 *   8 put       n = below(spare of Mm + 8), n bytes: put(Mm)           -> rc
 *   9 freeze    Bk = freeze(Mm)
 *  10 into mut  Mm = try_into_mut(Bk)                                  -> result, cap
 *  11 list      sub = below(4): 0 append(L, Bk) -> rc;
 *               1 at (L len+2), split_to(L, at) -> rc, the head's bytes;
 *               2 n (L len+2), advance(L, n) -> rc;
 *               3 Bk = coalesce(L, no pool) -> rc
 *  12 mut copy  n (Mm len+2): copy_out(Mm, n)                          -> rc, bytes on success
 *
 * Wherever a handle is overwritten, its old reference is released first.
 * After every operation the state is recorded: each Bk (len, bytes,
 * is_pooled), each Mm (cap, len, bytes, is_pooled), L (len, bytes). After
 * each sequence, every class's created, exhausted and idle counts and the
 * oversized count. Integers go into the hash as 8 bytes little-endian
 * (signed values as their two's complement), byte strings as their length
 * then the bytes.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases/vrng.h"
#include "cases/buffers.h"
#include "cases/golden.h"

enum { SEQUENCES = 256, OPS = 64 };

/* The digest of the reference implementation. */
static const char golden[] = "6dc0784ade44a7a6eefd229a7312dfc33518385cd3e3704f543c6f677d3ccb88";

/* ---- Recording ---------------------------------------------------------------------------- */

typedef struct vector {
    vrng rng;
    EVP_MD_CTX *md;
    cw_bufpool *pool;
    cw_iobuf b[4];
    cw_iobuf_mut m[2];
    cw_iobufs *l;
    uint8_t *scratch; /* room for `room` bytes */
    size_t room;
} vector;

static uint8_t *scratch(vector *v, size_t n)
{
    if (n > v->room) {
        free(v->scratch);
        v->scratch = malloc(n);
        CWC_REQUIRE(v->scratch, "no memory for %zu bytes", n);
        v->room = n;
    }
    return v->scratch;
}

static void put_u64(vector *v, uint64_t x)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++, x >>= 8)
        le[i] = (uint8_t)x;
    EVP_DigestUpdate(v->md, le, sizeof le);
}

static void put_int(vector *v, int x)
{
    put_u64(v, (uint64_t)(int64_t)x);
}

static void put_bytes(vector *v, const void *p, size_t n)
{
    put_u64(v, n);
    if (n > 0)
        EVP_DigestUpdate(v->md, p, n);
}

/* Hashes the list's bytes, and asserts the shape BUF-013 gives every list
 * (outside the hash: any chunking of the same bytes hashes alike). */
static void put_list(vector *v, const cw_iobufs *l)
{
    put_u64(v, cw_iobufs_len(l));
    const cw_iobuf *c;
    size_t total = 0, i = 0;
    for (; (c = cw_iobufs_chunk(l, i)); i++) {
        CWC_REQUIRE(c->len > 0, "chunk %zu of a list is empty (BUF-013)", i);
        total += c->len;
        EVP_DigestUpdate(v->md, c->data, c->len);
    }
    CWC_REQUIRE(i == cw_iobufs_chunk_count(l), "%zu chunks, counted %zu", i,
                cw_iobufs_chunk_count(l));
    CWC_REQUIRE(total == cw_iobufs_len(l), "%zu bytes in the chunks, length %zu", total,
                cw_iobufs_len(l));
}

static void record_state(vector *v)
{
    for (int k = 0; k < 4; k++) {
        put_bytes(v, v->b[k].data, v->b[k].len);
        put_u64(v, cw_iobuf_is_pooled(&v->b[k]));
    }
    for (int m = 0; m < 2; m++) {
        put_u64(v, v->m[m].cap);
        put_bytes(v, v->m[m].data, v->m[m].len);
        put_u64(v, cw_iobuf_mut_is_pooled(&v->m[m]));
    }
    put_list(v, v->l);
}

/* ---- Operations ------------------------------------------------------------------------------ */

static void op_list(vector *v, int k)
{
    cw_iobufs *head = NULL;
    size_t len = cw_iobufs_len(v->l);
    int rc;
    switch (vrng_below(&v->rng, 4)) {
    case 0:
        put_int(v, cw_iobufs_append(v->l, &v->b[k]));
        break;
    case 1:
        rc = cw_iobufs_split_to(v->l, (size_t)vrng_below(&v->rng, len + 2), &head);
        put_int(v, rc);
        if (rc == CW_OK)
            put_list(v, head);
        cw_iobufs_release(head);
        break;
    case 2:
        put_int(v, cw_iobufs_advance(v->l, (size_t)vrng_below(&v->rng, len + 2)));
        break;
    default:
        cw_iobuf_release(&v->b[k]);
        put_int(v, cw_iobufs_coalesce(v->l, NULL, &v->b[k]));
        break;
    }
}

static void op_bufs(vector *v, int code, int k, int j)
{
    cw_iobuf *b = &v->b[k], tmp;
    size_t n, s, e;
    int rc;
    if ((code == 2 || code == 5) && j == k)
        j = (k + 1) % 4;
    switch (code) {
    case 0:
        n = (size_t)vrng_below(&v->rng, 300);
        vrng_fill(&v->rng, scratch(v, n), n);
        cw_iobuf_release(b);
        put_int(v, cw_iobuf_copy(cwc_backend, v->scratch, n, b));
        break;
    case 1:
        s = (size_t)vrng_below(&v->rng, v->b[j].len + 2);
        e = (size_t)vrng_below(&v->rng, v->b[j].len + 2);
        put_int(v, cw_iobuf_slice(&v->b[j], s, e, &tmp));
        cw_iobuf_release(b);
        *b = tmp;
        break;
    case 2:
        n = (size_t)vrng_below(&v->rng, b->len + 2);
        cw_iobuf_release(&v->b[j]);
        put_int(v, cw_iobuf_split_to(b, n, &v->b[j]));
        break;
    case 3:
        put_int(v, cw_iobuf_advance(b, (size_t)vrng_below(&v->rng, b->len + 2)));
        break;
    case 4:
        n = (size_t)vrng_below(&v->rng, b->len + 2);
        rc = cw_iobuf_copy_out(b, scratch(v, n), n);
        put_int(v, rc);
        if (rc == CW_OK)
            put_bytes(v, v->scratch, n);
        break;
    case 5:
        tmp = cw_iobuf_clone(&v->b[j]);
        cw_iobuf_release(b);
        *b = tmp;
        break;
    default:
        cw_iobuf_release(b);
        break;
    }
}

static void op_muts(vector *v, int code, int k, int m)
{
    cw_iobuf_mut *mb = &v->m[m];
    size_t n;
    int rc, why = 0;
    switch (code) {
    case 7:
        n = (size_t)vrng_below(&v->rng, 1200);
        cw_iobuf_mut_release(mb);
        put_int(v, cw_bufpool_try_alloc(v->pool, n, mb, &why));
        put_int(v, why);
        put_u64(v, mb->cap);
        break;
    case 8:
        n = (size_t)vrng_below(&v->rng, cw_iobuf_mut_spare(mb) + 8);
        vrng_fill(&v->rng, scratch(v, n), n);
        put_int(v, cw_iobuf_mut_put(mb, v->scratch, n));
        break;
    case 9:
        cw_iobuf_release(&v->b[k]);
        cw_iobuf_mut_freeze(mb, &v->b[k]);
        break;
    case 10:
        cw_iobuf_mut_release(mb);
        put_u64(v, cw_iobuf_try_into_mut(&v->b[k], mb));
        put_u64(v, mb->cap);
        break;
    default:
        n = (size_t)vrng_below(&v->rng, mb->len + 2);
        rc = cw_iobuf_mut_copy_out(mb, scratch(v, n), n);
        put_int(v, rc);
        if (rc == CW_OK)
            put_bytes(v, v->scratch, n);
        break;
    }
}

static void run_sequence(vector *v, uint64_t seed)
{
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cfg.min_size = 64;
    cfg.max_size = 1024;
    cfg.max_per_class = 3;
    cfg.alignment = 64;
    cfg.thread_cache = 0;
    CWC_OK(cw_bufpool_new(cwc_backend, &cfg, &v->pool));
    vrng_seed(&v->rng, seed);
    for (int k = 0; k < 4; k++)
        CWC_OK(cw_iobuf_copy(cwc_backend, NULL, 0, &v->b[k]));
    for (int m = 0; m < 2; m++)
        CWC_OK(cw_iobuf_mut_with_capacity(cwc_backend, 0, &v->m[m]));
    v->l = cw_iobufs_new(cwc_backend);

    for (int op = 0; op < OPS; op++) {
        int code = (int)vrng_below(&v->rng, 13), k = (int)vrng_below(&v->rng, 4);
        int j = (int)vrng_below(&v->rng, 4), m = (int)vrng_below(&v->rng, 2);
        put_int(v, code);
        if (code <= 6)
            op_bufs(v, code, k, j);
        else if (code == 11)
            op_list(v, k);
        else
            op_muts(v, code, k, m);
        record_state(v);
    }

    for (int k = 0; k < 4; k++)
        cw_iobuf_release(&v->b[k]);
    for (int m = 0; m < 2; m++)
        cw_iobuf_mut_release(&v->m[m]);
    cw_iobufs_release(v->l);
    cw_bufpool_stats st;
    for (size_t i = 0; cw_bufpool_class_stats(v->pool, i, &st) == CW_OK; i++) {
        put_u64(v, st.created);
        put_u64(v, st.exhausted);
        put_u64(v, st.idle);
        put_u64(v, st.oversized);
    }
    cw_bufpool_release(v->pool);
}

CWC_CASE(buffer_vector, "buffers", "BUF-028 BUF-013 RUN-008", CWC_REPEATED)
{
    cwc_buffer_ops();
    static vector v;
    v.scratch = NULL;
    v.room = 0;
    v.md = EVP_MD_CTX_new();
    ck_assert_ptr_nonnull(v.md);
    EVP_DigestInit_ex(v.md, EVP_sha256(), NULL);
    for (uint64_t i = 0; i < SEQUENCES; i++)
        run_sequence(&v, i);
    uint8_t digest[32];
    unsigned len = 0;
    EVP_DigestFinal_ex(v.md, digest, &len);
    EVP_MD_CTX_free(v.md);
    free(v.scratch);
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    cwc_golden("buffer_vector", hex, golden);
}
