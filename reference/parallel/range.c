/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * range.c - fold and map over a range of indices.
 *
 * A range is cut into chunks that depend only on its length and the
 * parallelism (spec/14-parallel.md), so a fold gives the same result inline
 * and on the pool. Up to `parallelism` runners go to the pool; each claims
 * chunks from a shared counter until none is left, so a thread that falls
 * behind simply claims fewer. A fold keeps one accumulator per chunk and
 * reduces them in chunk order once every runner is done.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/parallel.h"

typedef struct range_call range_call;

typedef struct runner {
    cw_pool_item item; /* first: the pool hands back this pointer */
    range_call *call;
} runner;

struct range_call {
    size_t begin, n, chunks;
    void (*chunk)(range_call *c, size_t j, size_t lo, size_t hi);
    atomic_size_t next; /* the next chunk to claim */
    cw_latch latch;     /* counts runners still on the pool */
    runner *runners;
    size_t nrunners;
    void *mem; /* one allocation: accumulators, runners, `made` */

    const cw_fold *fold;
    unsigned char *accs;
    size_t stride;
    unsigned char *made; /* made[j]: chunk j has an accumulator */

    cw_map_fn map;
    void *map_arg;
    unsigned char *out;
    size_t elem_size;
};

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

static void range_init(range_call *c, const cw_strategy *s, size_t begin, size_t n)
{
    memset(c, 0, sizeof *c);
    c->begin = begin;
    c->n = n;
    size_t per_thread = CW_STRATEGY_CHUNKS_PER_THREAD;
    c->chunks = min_size(n, s->parallelism * per_thread);
    c->nrunners = min_size(c->chunks, s->parallelism);
    atomic_init(&c->next, 0);
}

static void run_chunk(range_call *c, size_t j)
{
    size_t q = c->n / c->chunks, r = c->n % c->chunks;
    size_t lo = c->begin + j * q + min_size(j, r);
    size_t hi = lo + q + (j < r);
    c->chunk(c, j, lo, hi);
}

/* Claim chunks until none is left, or the waiter gave up. */
static void claim_chunks(range_call *c)
{
    while (!cw_latch_cancelled(&c->latch)) {
        size_t j = atomic_fetch_add(&c->next, 1);
        if (j >= c->chunks)
            return;
        run_chunk(c, j);
    }
}

static void runner_run(cw_pool_item *item)
{
    range_call *c = ((runner *)item)->call;
    claim_chunks(c);
    cw_latch_count_down(&c->latch); /* the last touch: `c` may be gone after it */
}

static void discard_made(range_call *c)
{
    if (!c->fold || !c->fold->discard)
        return;
    for (size_t j = 0; j < c->chunks; j++)
        if (c->made[j])
            c->fold->discard(c->accs + j * c->stride, c->fold->arg);
}

/* The waiting task was aborted: its frames stay in place while its cleanup
 * handlers run, so `c` is still valid here. */
static void range_abort(void *arg)
{
    range_call *c = arg;
    cw_latch_cancel(&c->latch);
    cw_latch_destroy(&c->latch);
    discard_made(c);
    free(c->mem);
}

/* Run every chunk: on the pool when there is one, else right here. */
static void range_run(cw_strategy *s, cw_ctx *ctx, range_call *c)
{
    runner *rs = c->runners;
    for (size_t i = 0; i < c->nrunners; i++) {
        rs[i].item.run = runner_run;
        rs[i].item.next = i + 1 < c->nrunners ? &rs[i + 1].item : NULL;
        rs[i].call = c;
    }
    cw_latch_init(&c->latch, c->nrunners);
    if (!cw_strategy_submit(s, &rs[0].item, &rs[c->nrunners - 1].item)) {
        for (size_t j = 0; j < c->chunks; j++)
            run_chunk(c, j);
    } else {
        cw_latch_wait(&c->latch, ctx, range_abort, c);
    }
    cw_latch_destroy(&c->latch);
}

/* One block for `accs` (aligned for any type), the runners, then `made`.
 * NULL when the sizes overflow or memory is short. */
static void *range_alloc(range_call *c, size_t acc_size)
{
    size_t align = alignof(max_align_t);
    c->stride = acc_size ? (acc_size + align - 1) / align * align : 0;
    if (acc_size && c->stride < acc_size)
        return NULL;
    if (c->stride && c->chunks > (SIZE_MAX / 2) / c->stride)
        return NULL;
    size_t accs = c->chunks * c->stride;
    size_t runners = c->nrunners * sizeof(runner);
    c->mem = malloc(accs + runners + c->chunks);
    if (!c->mem)
        return NULL;
    c->accs = c->mem;
    c->runners = (runner *)(c->accs + accs);
    c->made = c->accs + accs + runners;
    memset(c->made, 0, c->chunks);
    return c->mem;
}

static void fold_chunk(range_call *c, size_t j, size_t lo, size_t hi)
{
    void *acc = c->accs + j * c->stride;
    c->fold->identity(acc, c->fold->arg);
    c->made[j] = 1;
    c->fold->fold(acc, lo, hi, c->fold->arg);
}

int cw_strategy_fold(cw_strategy *s, cw_ctx *ctx, size_t begin, size_t end, const cw_fold *f,
                     void *out)
{
    if (begin > end || !f || !out || f->acc_size == 0 || !f->identity || !f->fold || !f->reduce)
        return CW_ERR_INVALID;
    if (begin == end) {
        f->identity(out, f->arg);
        return CW_OK;
    }
    range_call c;
    range_init(&c, s, begin, end - begin);
    if (!range_alloc(&c, f->acc_size))
        return CW_ERR_NOMEM;
    c.fold = f;
    c.chunk = fold_chunk;
    range_run(s, ctx, &c);
    for (size_t j = 1; j < c.chunks; j++)
        f->reduce(c.accs, c.accs + j * c.stride, f->arg);
    memcpy(out, c.accs, f->acc_size);
    free(c.mem);
    return CW_OK;
}

static void map_chunk(range_call *c, size_t j, size_t lo, size_t hi)
{
    (void)j;
    for (size_t i = lo; i < hi; i++)
        c->map(c->out + (i - c->begin) * c->elem_size, i, c->map_arg);
}

int cw_strategy_map(cw_strategy *s, cw_ctx *ctx, size_t begin, size_t end, size_t elem_size,
                    cw_map_fn fn, void *arg, void *out)
{
    if (begin > end || elem_size == 0 || !fn || (!out && begin != end))
        return CW_ERR_INVALID;
    size_t n = end - begin;
    if (n > SIZE_MAX / elem_size)
        return CW_ERR_INVALID;
    if (n == 0)
        return CW_OK;
    range_call c;
    range_init(&c, s, begin, n);
    if (!range_alloc(&c, 0))
        return CW_ERR_NOMEM;
    c.map = fn;
    c.map_arg = arg;
    c.out = out;
    c.elem_size = elem_size;
    c.chunk = map_chunk;
    range_run(s, ctx, &c);
    free(c.mem);
    return CW_OK;
}
