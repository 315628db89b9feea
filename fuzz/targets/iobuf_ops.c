/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * iobuf_ops.c - buffers, chunk lists, the builder and a pool under fuzzed
 * operation sequences, checked against a model made of flat byte arrays
 * (spec/12-buffers.md).
 *
 * INPUT. Byte 0 configures the pool: bits 0-1 give max_per_class - 1,
 * bits 2-3 the thread cache (0, 1, automatic, 0), bit 4 a pool_min_size of
 * 32. The rest is a program: an opcode byte, then operand bytes read as the
 * operation needs them (a byte past the end reads as 0). Every value is
 * taken modulo its range, so every input is a valid program. At most
 * MAX_OPS operations run.
 *
 *   op  name        operands          what happens
 *    0  COPY        b size            Bb = cw_iobuf_copy of size fresh bytes
 *    1  ADOPT       b size            Bb = cw_iobuf_adopt of a malloc'd region
 *    2  STATIC      b off size        Bb = a static view of a fixed table
 *    3  CLONE       b b2              Bb = clone(Bb2)
 *    4  SLICE       b b2 s e          Bb = slice(Bb2, s, e), s and e up to len + 1
 *    5  SPLIT       b b2 at           Bb2 = split_to(Bb, at)
 *    6  ADVANCE     b n               advance(Bb, n)
 *    7  COPYOUT     b n               copy_out(Bb, n)
 *    8  RELEASE     b                 release(Bb)
 *    9  INTOMUT     b m               Mm = try_into_mut(Bb)
 *   10  ALLOC       m how size        Mm = with_capacity / with_alignment /
 *                                     zeroed / pool try_alloc / pool alloc
 *   11  PUT         m size            put(Mm, size fresh bytes)
 *   12  TRUNCATE    m n               truncate(Mm, n), or set_len past cap
 *   13  MADVANCE    m n               advance(Mm, n)
 *   14  MCOPYOUT    m n               copy_out(Mm, n)
 *   15  FREEZE      m b               Bb = freeze(Mm)
 *   16  MRELEASE    m                 release(Mm)
 *   17  APPEND      l b how           append or prepend Bb to Ll
 *   18  LSPLIT      l at              L(1-l) = split_to(Ll, at)
 *   19  LREAD       l n how           advance or copy_out Ll by n
 *   20  COALESCE    l b how           Bb = coalesce(Ll), from the pool or not
 *   21  LCLONE      l                 L(1-l) = clone(Ll)
 *   22  MLIST       how m n           on the mutable list: append Mm, put n
 *                                     bytes, advance, copy out, freeze into
 *                                     L0, coalesce into Mm
 *   23  BUILDER     how n b           new (capacity n), put n bytes, push Bb,
 *                                     finish into L0
 *
 * THE MODEL knows nothing of the implementation. Every allocation is a flat
 * array of its usable bytes with a count of the handles on it (views, list
 * chunks, a mutable buffer, builder parts) and its kind: heap, pooled (with
 * its class), adopted or static. A view is (allocation, offset, length), and
 * an empty view is on no allocation at all. The pool is a count of created
 * and live buffers per class. After every operation, and at the end, the
 * implementation must agree with the model on:
 *   - every handle's length, capacity, bytes and is_pooled, and that its
 *     data pointer is where the model puts it (so nothing was copied that
 *     should have been shared);
 *   - every list's chunks, one by one;
 *   - try_into_mut succeeding exactly when the model's count is 1 on a heap
 *     or pooled allocation, and every return code;
 *   - an adopted region's release callback having run exactly when its
 *     count reached 0, and each pool class's created and idle counts (so a
 *     pooled buffer is back exactly when its last view went);
 * and at the end every handle is released, every class must have all its
 * buffers idle and every adopted region must be released. Heap memory is
 * left to the sanitizers: a use after free or a leak fails the run.
 *
 * IOBUF_TRACE=1 in the environment prints each operation.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cwrt/cwrt.h"
#define FUZZ_TARGET_NEEDS (FUZZ_NEEDS_BUFFERS)
#include "driver/candidate.h"
#include "driver/target.h"

enum { NB = 6, NM = 3, NL = 2, MAX_OPS = 200, MAX_ALLOCS = 1024, MAX_CHUNKS = 512 };
enum { MIN_CLASS = 64, MAX_CLASS = 1024, NCLASSES = 5, MAX_SIZE = 1300 };

/* ---- Failing --------------------------------------------------------------------- */

static int op_index;
static bool trace;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "iobuf_ops: operation %d: ", op_index);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail(__VA_ARGS__);                                                                     \
    } while (0)

/* ---- The model ------------------------------------------------------------------- */

enum kind { HEAP, POOLED, ADOPTED, STATIC };

typedef struct alloc {
    enum kind kind;
    int cls;             /* POOLED: its class */
    size_t cap;          /* usable bytes */
    const uint8_t *base; /* where the implementation put byte 0 */
    uint8_t *bytes;      /* the model's copy of all `cap` bytes */
    int refs;            /* handles on it */
    bool released;       /* ADOPTED: the callback ran */
} alloc;

typedef struct view {
    int a; /* allocation, or -1: an empty view on nothing */
    size_t off, len;
} view;

typedef struct mview {
    int a;
    size_t off, len, cap;
} mview;

typedef struct chunks {
    view v[MAX_CHUNKS];
    size_t n;
} chunks;

typedef struct mchunks {
    mview v[MAX_CHUNKS];
    size_t n;
} mchunks;

static const cw_backend *be;
static alloc allocs[MAX_ALLOCS];
static int nallocs;
static int created[NCLASSES], live[NCLASSES];
static uint32_t max_per_class;
static size_t pool_min_size;

/* The implementation's state and its model, side by side. */
static cw_bufpool *pool;
static cw_iobuf B[NB];
static view mB[NB];
static cw_iobuf_mut M[NM];
static mview mM[NM];
static cw_iobufs *L[NL];
static chunks mL[NL];
static cw_iobufs_mut *ML;
static mchunks mML;
static cw_iobufs_builder *bld;
static mview mInline;
static struct {
    size_t at[MAX_CHUNKS];
    view v[MAX_CHUNKS];
    size_t n;
} mPushed;

static const uint8_t table[512] = "a static table that every STATIC view looks into, never freed";
static int table_alloc; /* its allocation in the model, made on first use; -1 before */

static int new_alloc(enum kind kind, size_t cap, const uint8_t *base)
{
    alloc *a = &allocs[nallocs];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->cap = cap;
    a->base = base;
    a->bytes = calloc(1, cap ? cap : 1);
    a->refs = 1;
    return nallocs++;
}

static void ref(int a)
{
    if (a >= 0)
        allocs[a].refs++;
}

static void unref(int a)
{
    if (a < 0 || allocs[a].kind == STATIC)
        return;
    if (--allocs[a].refs == 0 && allocs[a].kind == POOLED)
        live[allocs[a].cls]--;
}

static const view EMPTY = {-1, 0, 0};
static const mview MEMPTY = {-1, 0, 0, 0};

static void drop_view(view *v)
{
    unref(v->a);
    *v = EMPTY;
}

static void drop_mview(mview *v)
{
    unref(v->a);
    *v = MEMPTY;
}

/* An empty view lets go of its allocation ([BUF-007]). */
static void settle(view *v)
{
    if (v->len == 0)
        drop_view(v);
}

static uint8_t *view_bytes(const view *v)
{
    return allocs[v->a].bytes + v->off;
}

/* ---- Input and fresh bytes ------------------------------------------------------- */

static const uint8_t *in;
static size_t in_len, in_pos;
static uint64_t fresh_state;

static unsigned byte(void)
{
    return in_pos < in_len ? in[in_pos++] : 0;
}

static size_t size_arg(void)
{
    unsigned lo = byte(), hi = byte();
    return (size_t)(lo | hi << 8) % MAX_SIZE;
}

/* Up to `len + 1`: one past the end is the first invalid value. */
static size_t upto(size_t len)
{
    return size_arg() % (len + 2);
}

static void fresh(uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fresh_state = fresh_state * 6364136223846793005u + 1442695040888963407u;
        out[i] = (uint8_t)(fresh_state >> 56);
    }
}

static uint8_t scratch[1 << 20], expect[1 << 20];

/* ---- Comparing ------------------------------------------------------------------- */

static void check_view(const char *what, int i, const cw_iobuf *b, const view *v)
{
    CHECK(b->len == v->len, "%s%d: len %zu, model %zu", what, i, b->len, v->len);
    CHECK(b->data != NULL, "%s%d: NULL data", what, i);
    if (v->len == 0) {
        CHECK(!cw_iobuf_is_pooled(b), "%s%d: empty but pooled", what, i);
        return;
    }
    const alloc *a = &allocs[v->a];
    CHECK(b->data == a->base + v->off, "%s%d: data not where it was shared from", what, i);
    CHECK(!memcmp(b->data, view_bytes(v), v->len), "%s%d: bytes differ", what, i);
    CHECK(cw_iobuf_is_pooled(b) == (a->kind == POOLED), "%s%d: is_pooled", what, i);
}

static void check_mview(const char *what, int i, const cw_iobuf_mut *m, const mview *v)
{
    CHECK(m->len == v->len && m->cap == v->cap, "%s%d: len/cap %zu/%zu, model %zu/%zu", what, i,
          m->len, m->cap, v->len, v->cap);
    if (v->a < 0) {
        CHECK(!cw_iobuf_mut_is_pooled(m), "%s%d: holds nothing but pooled", what, i);
        return;
    }
    const alloc *a = &allocs[v->a];
    CHECK(m->data == a->base + v->off, "%s%d: data moved", what, i);
    CHECK(v->len == 0 || !memcmp(m->data, a->bytes + v->off, v->len), "%s%d: bytes differ", what,
          i);
    CHECK(cw_iobuf_mut_is_pooled(m) == (a->kind == POOLED), "%s%d: is_pooled", what, i);
}

static void check_list(int l)
{
    size_t total = 0;
    CHECK(cw_iobufs_chunk_count(L[l]) == mL[l].n, "L%d: %zu chunks, model %zu", l,
          cw_iobufs_chunk_count(L[l]), mL[l].n);
    for (size_t i = 0; i < mL[l].n; i++) {
        const cw_iobuf *c = cw_iobufs_chunk(L[l], i);
        CHECK(c != NULL, "L%d: chunk %zu missing", l, i);
        check_view("L chunk ", (int)i, c, &mL[l].v[i]);
        total += c->len;
    }
    CHECK(cw_iobufs_chunk(L[l], mL[l].n) == NULL, "L%d: chunk past the end", l);
    CHECK(cw_iobufs_len(L[l]) == total, "L%d: len", l);
}

static void check_mlist(void)
{
    size_t total = 0, cap = 0;
    CHECK(cw_iobufs_mut_chunk_count(ML) == mML.n, "ML: %zu chunks, model %zu",
          cw_iobufs_mut_chunk_count(ML), mML.n);
    for (size_t i = 0; i < mML.n; i++) {
        check_mview("ML chunk ", (int)i, cw_iobufs_mut_chunk(ML, i), &mML.v[i]);
        total += mML.v[i].len;
        cap += mML.v[i].cap;
    }
    CHECK(cw_iobufs_mut_len(ML) == total && cw_iobufs_mut_capacity(ML) == cap, "ML: len/cap");
}

static void check_all(void)
{
    for (int i = 0; i < NB; i++)
        check_view("B", i, &B[i], &mB[i]);
    for (int i = 0; i < NM; i++)
        check_mview("M", i, &M[i], &mM[i]);
    for (int l = 0; l < NL; l++)
        check_list(l);
    check_mlist();
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].kind == ADOPTED)
            CHECK(allocs[i].released == (allocs[i].refs == 0), "adopted %d: released %d, refs %d",
                  i, allocs[i].released, allocs[i].refs);
    for (int c = 0; c < NCLASSES; c++) {
        cw_bufpool_stats st;
        CHECK(cw_bufpool_class_stats(pool, (size_t)c, &st) == CW_OK, "class %d stats", c);
        CHECK(st.created == (uint64_t)created[c], "class %d: created %llu, model %d", c,
              (unsigned long long)st.created, created[c]);
        CHECK(st.idle == (uint64_t)(created[c] - live[c]), "class %d: idle %llu, model %d", c,
              (unsigned long long)st.idle, created[c] - live[c]);
    }
}

/* ---- Buffers --------------------------------------------------------------------- */

static void adopted_release(void *data, void *arg)
{
    alloc *a = &allocs[(intptr_t)arg];
    CHECK(!a->released, "adopted region released twice");
    CHECK(data == a->base, "adopted release got another pointer");
    a->released = true;
    free(data);
}

static void set_b(int b, cw_iobuf *nb, view nv)
{
    cw_iobuf_release(&B[b]);
    drop_view(&mB[b]);
    B[b] = *nb;
    mB[b] = nv;
}

static void op_copy(int b)
{
    size_t n = size_arg();
    fresh(scratch, n);
    cw_iobuf nb;
    CHECK(cw_iobuf_copy(be, scratch, n, &nb) == CW_OK, "copy failed");
    view nv = EMPTY;
    if (n > 0) {
        nv.a = new_alloc(HEAP, n, nb.data);
        memcpy(allocs[nv.a].bytes, scratch, n);
        nv.len = n;
    }
    set_b(b, &nb, nv);
}

static void op_adopt(int b)
{
    size_t n = size_arg();
    uint8_t *region = malloc(n ? n : 1);
    fresh(region, n);
    int a = new_alloc(ADOPTED, n, region);
    memcpy(allocs[a].bytes, region, n);
    cw_iobuf nb;
    CHECK(cw_iobuf_adopt(be, region, n, adopted_release, (void *)(intptr_t)a, &nb) == CW_OK,
          "adopt failed");
    view nv = {a, 0, n};
    if (n == 0) {
        CHECK(allocs[a].released, "empty adoption not released at once");
        allocs[a].refs = 0;
        nv = EMPTY;
    }
    set_b(b, &nb, nv);
}

static void op_static(int b)
{
    size_t off = byte() % sizeof table, n = size_arg() % (sizeof table - off + 1);
    cw_iobuf nb;
    CHECK(cw_iobuf_static(be, table + off, n, &nb) == CW_OK, "static failed");
    if (table_alloc < 0) {
        table_alloc = new_alloc(STATIC, sizeof table, table);
        memcpy(allocs[table_alloc].bytes, table, sizeof table);
    }
    view nv = {table_alloc, off, n};
    settle(&nv);
    set_b(b, &nb, nv);
}

static void op_clone(int b, int b2)
{
    cw_iobuf nb = cw_iobuf_clone(&B[b2]);
    view nv = mB[b2];
    ref(nv.a);
    set_b(b, &nb, nv);
}

static void op_slice(int b, int b2)
{
    size_t len = B[b2].len, s = upto(len), e = upto(len);
    cw_iobuf nb;
    int rc = cw_iobuf_slice(&B[b2], s, e, &nb);
    bool ok = s <= e && e <= len;
    CHECK(rc == (ok ? CW_OK : CW_ERR_INVALID), "slice(%zu, %zu) of %zu: rc %d", s, e, len, rc);
    CHECK(nb.len == (ok ? e - s : 0), "slice length");
    view nv = EMPTY;
    if (ok && e > s) {
        nv = mB[b2];
        nv.off += s;
        nv.len = e - s;
        ref(nv.a);
    }
    set_b(b, &nb, nv);
}

static void op_split(int b, int b2)
{
    if (b2 == b)
        b2 = (b + 1) % NB;
    size_t at = upto(B[b].len);
    cw_iobuf_release(&B[b2]);
    drop_view(&mB[b2]);
    int rc = cw_iobuf_split_to(&B[b], at, &B[b2]);
    bool ok = at <= mB[b].len;
    CHECK(rc == (ok ? CW_OK : CW_ERR_INVALID), "split_to(%zu) of %zu: rc %d", at, mB[b].len, rc);
    if (!ok)
        return;
    view head = mB[b];
    head.len = at;
    ref(head.a);
    settle(&head);
    mB[b].off += at;
    mB[b].len -= at;
    settle(&mB[b]);
    mB[b2] = head;
}

static void op_advance(int b)
{
    size_t n = upto(B[b].len);
    int rc = cw_iobuf_advance(&B[b], n);
    bool ok = n <= mB[b].len;
    CHECK(rc == (ok ? CW_OK : CW_ERR_INVALID), "advance(%zu) of %zu: rc %d", n, mB[b].len, rc);
    if (ok) {
        mB[b].off += n;
        mB[b].len -= n;
        settle(&mB[b]);
    }
}

static void op_copy_out(int b)
{
    size_t n = upto(B[b].len);
    bool ok = n <= mB[b].len;
    if (ok && n > 0)
        memcpy(expect, view_bytes(&mB[b]), n);
    int rc = cw_iobuf_copy_out(&B[b], scratch, n);
    CHECK(rc == (ok ? CW_OK : CW_ERR_INVALID), "copy_out(%zu): rc %d", n, rc);
    if (!ok)
        return;
    CHECK(!memcmp(scratch, expect, n), "copy_out bytes differ");
    mB[b].off += n;
    mB[b].len -= n;
    settle(&mB[b]);
}

static void op_into_mut(int b, int m)
{
    cw_iobuf_mut_release(&M[m]);
    drop_mview(&mM[m]);
    bool got = cw_iobuf_try_into_mut(&B[b], &M[m]);
    const view *v = &mB[b];
    bool want = v->len == 0 || (allocs[v->a].refs == 1 &&
                                (allocs[v->a].kind == HEAP || allocs[v->a].kind == POOLED));
    CHECK(got == want, "try_into_mut: %d, model %d", got, want);
    if (!got || v->len == 0) {
        mB[b] = got ? EMPTY : mB[b];
        return;
    }
    mM[m] = (mview){v->a, v->off, v->len, allocs[v->a].cap - v->off};
    mB[b] = EMPTY;
}

static void op_release(int b)
{
    cw_iobuf_release(&B[b]);
    drop_view(&mB[b]);
}

/* ---- Mutable buffers ------------------------------------------------------------- */

static int class_of(size_t cap)
{
    int c = 0;
    for (size_t s = MIN_CLASS; s < cap; s <<= 1)
        c++;
    return c;
}

/* What the pool does with a request, in the model: the class it serves it
 * from, or -1 (none: zero, small or refused), and why it refused. */
static int model_pool(size_t cap, int *rc)
{
    *rc = CW_OK;
    if (cap == 0 || cap < pool_min_size)
        return -1;
    if (cap > MAX_CLASS) {
        *rc = CW_ERR_POOL;
        return -1;
    }
    int c = class_of(cap);
    if (live[c] == created[c]) {
        if ((uint32_t)created[c] == max_per_class) {
            *rc = CW_ERR_POOL;
            return -1;
        }
        created[c]++;
    }
    live[c]++;
    return c;
}

/* The model of a buffer the pool handed out (pooled, fallback or small). */
static mview pool_result(const cw_iobuf_mut *got, int cls, size_t cap)
{
    if (cls >= 0) {
        CHECK(got->cap == ((size_t)MIN_CLASS << cls), "pool capacity %zu for %zu", got->cap, cap);
        int a = new_alloc(POOLED, got->cap, got->data);
        allocs[a].cls = cls;
        return (mview){a, 0, 0, got->cap};
    }
    if (got->cap == 0)
        return MEMPTY;
    CHECK(got->cap >= cap && (uintptr_t)got->data % 64 == 0, "unpooled buffer from the pool");
    return (mview){new_alloc(HEAP, got->cap, got->data), 0, 0, got->cap};
}

static void op_alloc(int m)
{
    unsigned how = byte() % 5;
    size_t n = size_arg();
    cw_iobuf_mut_release(&M[m]);
    drop_mview(&mM[m]);
    int rc, want = CW_OK, why = -1;
    cw_iobuf_mut *out = &M[m];
    switch (how) {
    case 0:
        CHECK(cw_iobuf_mut_with_capacity(be, n, out) == CW_OK, "with_capacity");
        CHECK(out->cap == n, "with_capacity: cap %zu for %zu", out->cap, n);
        break;
    case 1:
        CHECK(cw_iobuf_mut_with_alignment(be, n, 256, out) == CW_OK, "with_alignment");
        CHECK(out->cap >= n && (n == 0 || (uintptr_t)out->data % 256 == 0), "alignment");
        break;
    case 2:
        CHECK(cw_iobuf_mut_zeroed(be, n, out) == CW_OK, "zeroed");
        CHECK(out->len == n && out->cap == n, "zeroed sizes");
        break;
    case 3: {
        int cls = model_pool(n, &want);
        rc = cw_bufpool_try_alloc(pool, n, out, &why);
        CHECK(rc == want, "try_alloc(%zu): rc %d, model %d", n, rc, want);
        CHECK(rc == CW_OK ? why == 0
                          : why == (n > MAX_CLASS ? CW_BUFPOOL_OVERSIZED : CW_BUFPOOL_EXHAUSTED),
              "try_alloc: why %d", why);
        mM[m] = pool_result(out, cls, n);
        return;
    }
    default: {
        int cls = model_pool(n, &want);
        CHECK(cw_bufpool_alloc(pool, n, out) == CW_OK, "alloc(%zu)", n);
        mM[m] = pool_result(out, cls, n);
        return;
    }
    }
    if (out->cap > 0) {
        mM[m] = (mview){new_alloc(HEAP, out->cap, out->data), 0, out->len, out->cap};
        /* zeroed bytes are known; the model's array starts zeroed */
    }
}

static void op_put(int m)
{
    size_t n = size_arg() % (mM[m].cap - mM[m].len + 8);
    fresh(scratch, n);
    int rc = cw_iobuf_mut_put(&M[m], scratch, n);
    bool ok = n <= mM[m].cap - mM[m].len;
    CHECK(rc == (ok ? CW_OK : CW_ERR_INVALID), "put(%zu): rc %d", n, rc);
    if (!ok)
        return;
    if (n > 0)
        memcpy(allocs[mM[m].a].bytes + mM[m].off + mM[m].len, scratch, n);
    mM[m].len += n;
}

static void op_truncate(int m)
{
    size_t n = upto(mM[m].len);
    if (n > mM[m].len) {
        /* set_len past the capacity is refused; within it would expose
         * bytes the model cannot know */
        CHECK(cw_iobuf_mut_set_len(&M[m], mM[m].cap + 1) == CW_ERR_INVALID, "set_len past cap");
        return;
    }
    if (n % 2)
        cw_iobuf_mut_truncate(&M[m], n);
    else
        CHECK(cw_iobuf_mut_set_len(&M[m], n) == CW_OK, "set_len(%zu)", n);
    mM[m].len = n;
}

/* Consume n bytes of a mutable view: capacity shrinks too, and a view left
 * without capacity holds nothing ([BUF-007], [BUF-009]). */
static void consume_mview(mview *v, size_t n)
{
    v->off += n;
    v->len -= n;
    v->cap -= n;
    if (v->cap == 0)
        drop_mview(v);
}

static void op_madvance(int m, bool copy)
{
    size_t n = upto(mM[m].len);
    bool ok = n <= mM[m].len;
    if (ok && n > 0)
        memcpy(expect, allocs[mM[m].a].bytes + mM[m].off, n);
    int rc = copy ? cw_iobuf_mut_copy_out(&M[m], scratch, n) : cw_iobuf_mut_advance(&M[m], n);
    CHECK(rc == (ok ? CW_OK : CW_ERR_INVALID), "mut %s(%zu): rc %d", copy ? "copy_out" : "advance",
          n, rc);
    if (!ok)
        return;
    CHECK(!copy || !memcmp(scratch, expect, n), "mut copy_out bytes");
    if (n > 0)
        consume_mview(&mM[m], n);
}

static view freeze_model(mview *mv)
{
    view v = {mv->a, mv->off, mv->len};
    *mv = MEMPTY;
    settle(&v);
    return v;
}

static void op_freeze(int m, int b)
{
    cw_iobuf nb;
    const uint8_t *data = M[m].data;
    cw_iobuf_mut_freeze(&M[m], &nb);
    CHECK(nb.len == 0 || nb.data == data, "freeze copied");
    set_b(b, &nb, freeze_model(&mM[m]));
}

static void op_mrelease(int m)
{
    cw_iobuf_mut_release(&M[m]);
    drop_mview(&mM[m]);
}

/* ---- Lists ----------------------------------------------------------------------- */

static void list_drop(chunks *c)
{
    for (size_t i = 0; i < c->n; i++)
        drop_view(&c->v[i]);
    c->n = 0;
}

static size_t list_len(const chunks *c)
{
    size_t len = 0;
    for (size_t i = 0; i < c->n; i++)
        len += c->v[i].len;
    return len;
}

/* Drop the first n bytes of a chunk list model. */
static void list_consume(chunks *c, size_t n)
{
    size_t i = 0;
    while (n > 0) {
        view *v = &c->v[i];
        if (v->len > n) {
            v->off += n;
            v->len -= n;
            break;
        }
        n -= v->len;
        drop_view(v);
        i++;
    }
    memmove(c->v, c->v + i, (c->n - i) * sizeof c->v[0]);
    c->n -= i;
}

static void list_bytes(const chunks *c, uint8_t *out)
{
    for (size_t i = 0; i < c->n; i++, out += c->v[i - 1].len)
        memcpy(out, view_bytes(&c->v[i]), c->v[i].len);
}

static void op_append(int l, int b)
{
    bool front = byte() % 2;
    if (mL[l].n == MAX_CHUNKS)
        return;
    int rc = front ? cw_iobufs_prepend(L[l], &B[b]) : cw_iobufs_append(L[l], &B[b]);
    CHECK(rc == CW_OK, "append/prepend: rc %d", rc);
    CHECK(B[b].len == 0, "append left bytes in the handle");
    if (mB[b].len == 0)
        return;
    chunks *c = &mL[l];
    if (front) {
        memmove(c->v + 1, c->v, c->n * sizeof c->v[0]);
        c->v[0] = mB[b];
    } else {
        c->v[c->n] = mB[b];
    }
    c->n++;
    mB[b] = EMPTY;
}

static void op_lsplit(int l)
{
    chunks *c = &mL[l], *h = &mL[1 - l];
    size_t len = list_len(c), at = upto(len);
    cw_iobufs *head = NULL;
    int rc = cw_iobufs_split_to(L[l], at, &head);
    CHECK(rc == (at <= len ? CW_OK : CW_ERR_INVALID), "list split_to(%zu) of %zu: %d", at, len, rc);
    if (rc != CW_OK) {
        CHECK(head == NULL, "list split_to: head on failure");
        return;
    }
    cw_iobufs_release(L[1 - l]);
    list_drop(h);
    L[1 - l] = head;
    for (size_t i = 0, got = 0; got < at; i++) {
        view v = c->v[i];
        if (v.len > at - got)
            v.len = at - got;
        ref(v.a);
        h->v[h->n++] = v;
        got += v.len;
    }
    list_consume(c, at);
}

static void op_lread(int l)
{
    chunks *c = &mL[l];
    size_t len = list_len(c), n = upto(len);
    bool copy = byte() % 2, ok = n <= len;
    if (ok)
        list_bytes(c, expect);
    int rc = copy ? cw_iobufs_copy_out(L[l], scratch, n) : cw_iobufs_advance(L[l], n);
    CHECK(rc == (ok ? CW_OK : CW_ERR_INVALID), "list read(%zu) of %zu: %d", n, len, rc);
    if (!ok)
        return;
    CHECK(!copy || !memcmp(scratch, expect, n), "list copy_out bytes");
    list_consume(c, n);
}

static void op_coalesce(int l, int b)
{
    bool pooled = byte() % 2;
    chunks *c = &mL[l];
    size_t len = list_len(c);
    list_bytes(c, expect);
    cw_iobuf nb;
    view nv = EMPTY;
    int want = CW_OK, cls = -1;
    if (c->n == 1) {
        nv = c->v[0];
        c->n = 0;
    } else if (c->n > 1 && pooled) {
        cls = model_pool(len, &want);
    }
    CHECK(cw_iobufs_coalesce(L[l], pooled ? pool : NULL, &nb) == CW_OK, "coalesce");
    CHECK(nb.len == len && (len == 0 || !memcmp(nb.data, expect, len)), "coalesce bytes");
    if (c->n > 1) {
        if (cls >= 0) {
            nv.a = new_alloc(POOLED, (size_t)MIN_CLASS << cls, nb.data);
            allocs[nv.a].cls = cls;
        } else {
            nv.a = new_alloc(HEAP, len, nb.data); /* exact: [BUF-015] */
        }
        memcpy(allocs[nv.a].bytes, expect, len);
        nv.off = 0;
        nv.len = len;
        list_drop(c);
    }
    set_b(b, &nb, nv);
}

static void op_lclone(int l)
{
    cw_iobufs *copy = cw_iobufs_clone(L[l]);
    CHECK(copy != NULL, "list clone");
    cw_iobufs_release(L[1 - l]);
    list_drop(&mL[1 - l]);
    L[1 - l] = copy;
    mL[1 - l] = mL[l];
    for (size_t i = 0; i < mL[l].n; i++)
        ref(mL[l].v[i].a);
}

/* ---- The mutable list ------------------------------------------------------------ */

static size_t mlist_write_index(void)
{
    for (size_t i = mML.n; i > 0; i--)
        if (mML.v[i - 1].len > 0)
            return i - 1;
    return 0;
}

static size_t mlist_spare(void)
{
    size_t spare = 0;
    for (size_t i = mlist_write_index(); i < mML.n; i++)
        spare += mML.v[i].cap - mML.v[i].len;
    return spare;
}

static size_t mlist_len(void)
{
    size_t len = 0;
    for (size_t i = 0; i < mML.n; i++)
        len += mML.v[i].len;
    return len;
}

static void mlist_bytes(uint8_t *out)
{
    for (size_t i = 0; i < mML.n; i++) {
        if (mML.v[i].len > 0)
            memcpy(out, allocs[mML.v[i].a].bytes + mML.v[i].off, mML.v[i].len);
        out += mML.v[i].len;
    }
}

static void mlist_put(size_t n)
{
    size_t spare = mlist_spare();
    n %= spare + 8;
    fresh(scratch, n);
    int rc = cw_iobufs_mut_put(ML, scratch, n);
    CHECK(cw_iobufs_mut_spare(ML) == (rc == CW_OK ? spare - n : spare) || rc != CW_OK,
          "mutable list spare");
    CHECK(rc == (n <= spare ? CW_OK : CW_ERR_INVALID), "mutable list put(%zu) of %zu: %d", n, spare,
          rc);
    if (rc != CW_OK)
        return;
    const uint8_t *p = scratch;
    for (size_t i = mlist_write_index(); n > 0; i++) {
        mview *v = &mML.v[i];
        size_t take = v->cap - v->len < n ? v->cap - v->len : n;
        memcpy(allocs[v->a].bytes + v->off + v->len, p, take);
        v->len += take;
        p += take;
        n -= take;
    }
}

static void mlist_read(size_t n, bool copy)
{
    size_t len = mlist_len();
    n %= len + 2;
    bool ok = n <= len;
    mlist_bytes(expect);
    int rc = copy ? cw_iobufs_mut_copy_out(ML, scratch, n) : cw_iobufs_mut_advance(ML, n);
    CHECK(rc == (ok ? CW_OK : CW_ERR_INVALID), "mutable list read(%zu) of %zu: %d", n, len, rc);
    if (!ok)
        return;
    CHECK(!copy || !memcmp(scratch, expect, n), "mutable list copy_out bytes");
    size_t kept = 0;
    for (size_t i = 0; i < mML.n; i++) {
        mview *v = &mML.v[i];
        size_t take = v->len < n ? v->len : n;
        if (take > 0)
            consume_mview(v, take);
        n -= take;
        if (v->a >= 0)
            mML.v[kept++] = *v;
    }
    mML.n = kept;
}

static void mlist_freeze(void)
{
    cw_iobufs *f = cw_iobufs_mut_freeze(ML);
    CHECK(f != NULL, "mutable list freeze");
    cw_iobufs_release(L[0]);
    list_drop(&mL[0]);
    L[0] = f;
    for (size_t i = 0; i < mML.n; i++) {
        view v = freeze_model(&mML.v[i]);
        if (v.len > 0)
            mL[0].v[mL[0].n++] = v;
    }
    mML.n = 0;
}

static void mlist_coalesce(int m)
{
    bool pooled = byte() % 2;
    size_t len = mlist_len();
    mlist_bytes(expect);
    cw_iobuf_mut_release(&M[m]);
    drop_mview(&mM[m]);
    int want = CW_OK, cls = -1;
    if (mML.n != 1 && pooled)
        cls = model_pool(len, &want);
    CHECK(cw_iobufs_mut_coalesce(ML, pooled ? pool : NULL, &M[m]) == CW_OK, "mut coalesce");
    CHECK(M[m].len == len && (len == 0 || !memcmp(M[m].data, expect, len)), "mut coalesce bytes");
    if (mML.n == 1) {
        mM[m] = mML.v[0];
    } else {
        for (size_t i = 0; i < mML.n; i++)
            drop_mview(&mML.v[i]);
        if (pooled) {
            mM[m] = pool_result(&M[m], cls, len);
        } else if (len > 0) {
            CHECK(M[m].cap == len, "mut coalesce capacity");
            mM[m] = (mview){new_alloc(HEAP, len, M[m].data), 0, 0, len};
        }
        if (mM[m].a >= 0)
            memcpy(allocs[mM[m].a].bytes, expect, len);
        mM[m].len = len;
    }
    mML.n = 0;
}

static void op_mlist(void)
{
    unsigned how = byte() % 6;
    int m = (int)(byte() % NM);
    size_t n = size_arg();
    switch (how) {
    case 0:
        if (mML.n == MAX_CHUNKS)
            return;
        CHECK(cw_iobufs_mut_append(ML, &M[m]) == CW_OK, "mutable list append");
        if (mM[m].cap > 0)
            mML.v[mML.n++] = mM[m];
        else
            drop_mview(&mM[m]);
        mM[m] = MEMPTY;
        break;
    case 1:
        mlist_put(n);
        break;
    case 2:
    case 3:
        mlist_read(n, how == 3);
        break;
    case 4:
        if (mL[0].n + mML.n <= MAX_CHUNKS)
            mlist_freeze();
        break;
    default:
        mlist_coalesce(m);
        break;
    }
}

/* ---- The builder ----------------------------------------------------------------- */

static void builder_drop(void)
{
    cw_iobufs_builder_release(bld);
    bld = NULL;
    drop_mview(&mInline);
    for (size_t i = 0; i < mPushed.n; i++)
        drop_view(&mPushed.v[i]);
    mPushed.n = 0;
}

/* The inline buffer's address is not visible until finish: the model
 * learns it from the first inline chunk of the result, and checks every
 * other inline chunk against it. */
static void builder_finish(void)
{
    cw_iobufs *l = cw_iobufs_builder_finish(bld);
    CHECK(l != NULL, "builder finish");
    bld = NULL;
    cw_iobufs_release(L[0]);
    list_drop(&mL[0]);
    L[0] = l;
    view frozen = freeze_model(&mInline);
    chunks *c = &mL[0];
    size_t at = 0;
    int first_inline = -1;
    for (size_t i = 0; i <= mPushed.n; i++) {
        size_t to = i < mPushed.n ? mPushed.at[i] : frozen.len;
        if (to > at) {
            view part = {frozen.a, frozen.off + at, to - at};
            ref(part.a);
            if (first_inline < 0)
                first_inline = (int)c->n;
            c->v[c->n++] = part;
        }
        at = to;
        if (i < mPushed.n)
            c->v[c->n++] = mPushed.v[i];
    }
    mPushed.n = 0;
    if (first_inline >= 0) {
        const cw_iobuf *chunk = cw_iobufs_chunk(l, (size_t)first_inline);
        CHECK(chunk != NULL, "builder: inline chunk missing");
        allocs[frozen.a].base = chunk->data - c->v[first_inline].off;
    }
    drop_view(&frozen);
}

static void builder_new(size_t n)
{
    if (bld)
        builder_drop();
    int rc, cls = model_pool(n, &rc);
    bld = cw_iobufs_builder_new(pool, n);
    CHECK(bld != NULL, "builder new");
    mInline = MEMPTY;
    if (cls >= 0) {
        mInline.a = new_alloc(POOLED, (size_t)MIN_CLASS << cls, NULL);
        allocs[mInline.a].cls = cls;
    } else if (n > 0) {
        mInline.a = new_alloc(HEAP, n, NULL); /* small or a fallback: at least n */
    }
    if (mInline.a >= 0)
        mInline.cap = allocs[mInline.a].cap;
}

static void builder_put(size_t n)
{
    n %= mInline.cap - mInline.len + 8;
    fresh(scratch, n);
    int rc = cw_iobufs_builder_put(bld, scratch, n);
    bool fits = n <= mInline.cap - mInline.len;
    bool roomier = mInline.a >= 0 && allocs[mInline.a].kind == HEAP; /* may hold more */
    CHECK(rc == (fits ? CW_OK : CW_ERR_INVALID) || (roomier && rc == CW_OK), "builder put(%zu): %d",
          n, rc);
    if (rc != CW_OK || n == 0)
        return;
    alloc *a = &allocs[mInline.a];
    if (mInline.len + n > a->cap) {
        a->bytes = realloc(a->bytes, mInline.len + n);
        a->cap = mInline.cap = mInline.len + n;
    }
    memcpy(a->bytes + mInline.len, scratch, n);
    mInline.len += n;
}

static void op_builder(int b)
{
    unsigned how = byte() % 4;
    size_t n = size_arg();
    if (!bld || how == 0) {
        builder_new(n);
    } else if (how == 1) {
        builder_put(n);
    } else if (how == 2) {
        if (mPushed.n == MAX_CHUNKS / 2 - 1)
            return;
        CHECK(cw_iobufs_builder_push(bld, &B[b]) == CW_OK, "builder push");
        CHECK(B[b].len == 0, "builder push left bytes in the handle");
        if (mB[b].len > 0) {
            mPushed.at[mPushed.n] = mInline.len;
            mPushed.v[mPushed.n++] = mB[b];
            mB[b] = EMPTY;
        }
    } else {
        builder_finish();
    }
}

/* ---- Running an input ------------------------------------------------------------ */

static void setup(unsigned cfgbyte)
{
    be = fuzz_candidate(NULL);
    max_per_class = (cfgbyte & 3) + 1;
    unsigned cache = (cfgbyte >> 2) & 3;
    pool_min_size = cfgbyte & 16 ? 32 : 0;
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cfg.min_size = MIN_CLASS;
    cfg.max_size = MAX_CLASS;
    cfg.alignment = 64;
    cfg.max_per_class = max_per_class;
    cfg.pool_min_size = pool_min_size;
    cfg.thread_cache = cache == 1 ? 1 : cache == 2 ? CW_BUFPOOL_CACHE_AUTO : 0;
    CHECK(cw_bufpool_new(be, &cfg, &pool) == CW_OK, "pool");
    nallocs = 0;
    table_alloc = -1;
    memset(created, 0, sizeof created);
    memset(live, 0, sizeof live);
    for (int i = 0; i < NB; i++) {
        CHECK(cw_iobuf_copy(be, NULL, 0, &B[i]) == CW_OK, "empty buffer");
        mB[i] = EMPTY;
    }
    for (int i = 0; i < NM; i++) {
        CHECK(cw_iobuf_mut_with_capacity(be, 0, &M[i]) == CW_OK, "empty mutable buffer");
        mM[i] = MEMPTY;
    }
    for (int l = 0; l < NL; l++) {
        L[l] = cw_iobufs_new(be);
        mL[l].n = 0;
    }
    ML = cw_iobufs_mut_new(be);
    mML.n = 0;
    bld = NULL;
    mInline = MEMPTY;
    mPushed.n = 0;
    fresh_state = 0x9e3779b97f4a7c15u ^ cfgbyte;
}

static void teardown(void)
{
    if (bld)
        builder_drop();
    for (int i = 0; i < NB; i++)
        op_release(i);
    for (int i = 0; i < NM; i++)
        op_mrelease(i);
    for (int l = 0; l < NL; l++) {
        cw_iobufs_release(L[l]);
        list_drop(&mL[l]);
    }
    cw_iobufs_mut_release(ML);
    for (size_t i = 0; i < mML.n; i++)
        drop_mview(&mML.v[i]);
    mML.n = 0;
    for (int c = 0; c < NCLASSES; c++) {
        cw_bufpool_stats st;
        cw_bufpool_class_stats(pool, (size_t)c, &st);
        CHECK(live[c] == 0 && st.idle == st.created, "class %d: buffers still out at the end", c);
    }
    for (int i = 0; i < nallocs; i++) {
        CHECK(allocs[i].kind == STATIC || allocs[i].refs == 0, "allocation %d still held", i);
        CHECK(allocs[i].kind != ADOPTED || allocs[i].released, "adopted %d never released", i);
        free(allocs[i].bytes);
    }
    cw_bufpool_release(pool);
}

static const char *names[] = {"COPY",     "ADOPT",    "STATIC",   "CLONE",   "SLICE",    "SPLIT",
                              "ADVANCE",  "COPYOUT",  "RELEASE",  "INTOMUT", "ALLOC",    "PUT",
                              "TRUNCATE", "MADVANCE", "MCOPYOUT", "FREEZE",  "MRELEASE", "APPEND",
                              "LSPLIT",   "LREAD",    "COALESCE", "LCLONE",  "MLIST",    "BUILDER"};

static void step(unsigned op)
{
    int b = (int)(byte() % NB), x = (int)(byte() % NB), m = (int)(byte() % NM);
    int l = b % NL;
    if (trace)
        fprintf(stderr, "%3d %s b=%d x=%d m=%d\n", op_index, names[op], b, x, m);
    switch (op) {
    case 0:
        op_copy(b);
        break;
    case 1:
        op_adopt(b);
        break;
    case 2:
        op_static(b);
        break;
    case 3:
        op_clone(b, x);
        break;
    case 4:
        op_slice(b, x);
        break;
    case 5:
        op_split(b, x);
        break;
    case 6:
        op_advance(b);
        break;
    case 7:
        op_copy_out(b);
        break;
    case 8:
        op_release(b);
        break;
    case 9:
        op_into_mut(b, m);
        break;
    case 10:
        op_alloc(m);
        break;
    case 11:
        op_put(m);
        break;
    case 12:
        op_truncate(m);
        break;
    case 13:
        op_madvance(m, false);
        break;
    case 14:
        op_madvance(m, true);
        break;
    case 15:
        op_freeze(m, b);
        break;
    case 16:
        op_mrelease(m);
        break;
    case 17:
        op_append(l, x);
        break;
    case 18:
        op_lsplit(l);
        break;
    case 19:
        op_lread(l);
        break;
    case 20:
        op_coalesce(l, x);
        break;
    case 21:
        op_lclone(l);
        break;
    case 22:
        op_mlist();
        break;
    default:
        op_builder(x);
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    trace = getenv("IOBUF_TRACE") != NULL;
    in = data;
    in_len = size;
    in_pos = 1;
    setup(data[0]);
    for (op_index = 0; op_index < MAX_OPS && in_pos < in_len && nallocs < MAX_ALLOCS - 8;
         op_index++) {
        step(byte() % 24);
        check_all();
    }
    teardown();
    return 0;
}
