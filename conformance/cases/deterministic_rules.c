/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * deterministic_rules.c - the choices of spec/11-deterministic.md a second
 * implementation could make differently without changing a golden digest
 * (DET-012 to DET-015), each checked against a model written here from the
 * text alone: the PRNG of vrng.h, the shuffle of step 3, and the audit
 * chain of golden.h.
 */
#include <string.h>

#include "cases/golden.h"
#include "cases/storage.h"
#include "cases/vrng.h"

#define DET CW_CAP_DETERMINISTIC
#define AUDITED (CW_CAP_DETERMINISTIC | CW_CAP_AUDIT)

static void digest_is(cw_ctx *ctx, const cwc_chain *expect)
{
    char got[65], want[65];
    ck_assert_int_eq(cw_audit_digest(ctx, got), CW_OK);
    cwc_chain_hex(expect, want);
    ck_assert_str_eq(got, want);
}

static void rand_event(cwc_chain *c, size_t len)
{
    cwc_chain_begin(c, "rand");
    cwc_chain_be(c, (int64_t)len, 8);
    cwc_chain_end(c);
}

/* ---- DET-012: cw_random and cw_random_u64 ---------------------------------------------- */

#define RANDOM_SEED 2024

/* One call of three outputs and a part: each lands in its own place of
 * the buffer, in order, and nothing before or after the buffer changes. */
#define MANY 19

static void many_outputs(cw_ctx *ctx, vrng *r)
{
    uint8_t got[MANY + 16], want[MANY + 16];
    memset(got, 0x5A, sizeof got);
    memset(want, 0x5A, sizeof want);
    cw_random(ctx, got + 8, MANY);
    vrng_fill(r, want + 8, MANY);
    ck_assert_mem_eq(got, want, sizeof got);
}

static void *random_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    vrng r;
    vrng_seed(&r, RANDOM_SEED);
    uint8_t three[3], none[1] = {0x5A}, eight[8], want[8];

    cw_random(ctx, three, 3);
    vrng_fill(&r, want, 3);
    ck_assert_mem_eq(three, want, 3);
    cw_random(ctx, none, 0); /* an event, no draw */
    ck_assert_uint_eq(none[0], 0x5A);
    cw_random(ctx, eight, 8); /* a fresh output: the 5 bytes left over are gone */
    vrng_fill(&r, want, 8);
    ck_assert_mem_eq(eight, want, 8);
    ck_assert_uint_eq(cw_random_u64(ctx), vrng_next(&r)); /* little-endian, on any host */
    many_outputs(ctx, &r);

    cwc_chain c;
    cwc_chain_init(&c);
    cwc_chain_task(&c, 0, "");
    rand_event(&c, 3);
    rand_event(&c, 0);
    rand_event(&c, 8);
    rand_event(&c, 8);
    rand_event(&c, MANY);
    digest_is(ctx, &c);
    return NULL;
}

CWC_CASE(det_random_bytes, "deterministic", "DET-012 RUN-008", AUDITED | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.seed = RANDOM_SEED;
    cwc_run_ok(&cfg, random_root, NULL);
}

/* ---- DET-013: a yielding task enters the queue at the yield ---------------------------- */

/* The root spawns A then B and waits on a channel. A yields once; B sends
 * to the root. Whether A enters the queue before or after the root depends
 * on which of them ran first, and the next shuffle shows it. */
typedef struct yield_run {
    cw_chan *ch;
    char log[8];
    int n;
} yield_run;

static void *yield_a(cw_ctx *ctx, void *arg)
{
    yield_run *y = arg;
    y->log[y->n++] = 'a';
    cw_yield(ctx);
    y->log[y->n++] = 'A';
    return NULL;
}

static void *yield_b(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    yield_run *y = arg;
    char unit = 1;
    y->log[y->n++] = 'b';
    ck_assert_int_eq(cw_chan_send(y->ch, &unit), CW_OK);
    return NULL;
}

static void *yield_root(cw_ctx *ctx, void *arg)
{
    yield_run *y = arg;
    y->ch = cw_chan_new(ctx, 1, 1);
    cw_handle *a = cw_spawn(cw_child(ctx, "a"), yield_a, y);
    cw_handle_release(cw_spawn(cw_child(ctx, "b"), yield_b, y));
    char unit;
    ck_assert_int_eq(cw_chan_recv(y->ch, &unit), CW_OK);
    y->log[y->n++] = 'R';
    ck_assert_int_eq(cw_join(a, NULL), CW_OK);
    cw_handle_release(a);
    return NULL;
}

/* Step 3's shuffle of two entries. */
static void shuffle2(vrng *r, char q[2])
{
    uint64_t j = vrng_below(r, 2);
    char t = q[1];
    q[1] = q[j];
    q[j] = t;
}

/* The log the spec predicts for `seed`: iteration 1 runs the root alone
 * (no draw), iteration 2 the shuffled [A, B], iteration 3 the shuffled
 * queue they left, in the order they entered it. */
static void yield_model(uint64_t seed, char out[8])
{
    vrng r;
    vrng_seed(&r, seed);
    char second[2] = {'a', 'b'}, third[2];
    shuffle2(&r, second);
    for (int i = 0; i < 2; i++)
        third[i] = second[i] == 'a' ? 'A' : 'R'; /* A at its yield, the root at B's send */
    shuffle2(&r, third);
    memset(out, 0, 8);
    memcpy(out, second, 2);
    memcpy(out + 2, third, 2);
}

CWC_CASE(det_yield_enters_queue_at_yield, "deterministic", "DET-013 RUN-008", DET | CWC_REPEATED)
{
    int orders[2] = {0, 0}; /* both iteration 2 orders must be seen */
    for (uint64_t seed = 0; seed < 32; seed++) {
        yield_run y;
        memset(&y, 0, sizeof y);
        cw_config cfg = cwc_config();
        cfg.seed = seed;
        cwc_run_ok(&cfg, yield_root, &y);
        char want[8];
        yield_model(seed, want);
        ck_assert_msg(!strcmp(y.log, want), "seed %llu: ran %s, the spec says %s",
                      (unsigned long long)seed, y.log, want);
        orders[want[0] == 'a']++;
    }
    ck_assert(orders[0] > 0 && orders[1] > 0);
}

/* ---- DET-014, DET-015: storage calls, their events, start_sync -------------------------- */

static const char PART[] = "det-rules";
static const uint8_t NAME[3] = {0x00, 0xFF, 'n'}; /* raw bytes, not hex */

static void blob_event(cwc_chain *c, const char *label)
{
    cwc_chain_begin(c, label);
    cwc_chain_str(c, PART);
    cwc_chain_field(c, NAME, sizeof NAME);
}

static void expect_storage_events(cwc_chain *c)
{
    cwc_chain_begin(c, "open");
    cwc_chain_str(c, PART);
    cwc_chain_field(c, NAME, sizeof NAME);
    cwc_chain_be(c, 0x0102, 2); /* versions.first, a field of its own */
    cwc_chain_be(c, 0x0304, 2); /* versions.last */
    cwc_chain_end(c);
    blob_event(c, "write_at");
    cwc_chain_be(c, 2, 8);
    cwc_chain_str(c, "xyz");
    cwc_chain_be(c, CW_WRITE_SYNC, 1);
    cwc_chain_end(c);
    blob_event(c, "read_at");
    cwc_chain_be(c, 1, 8); /* the offset */
    cwc_chain_be(c, 3, 8); /* the length, another field */
    cwc_chain_be(c, CW_READ_DONT_CACHE, 1);
    cwc_chain_end(c);
    blob_event(c, "start_sync");
    cwc_chain_end(c);
    blob_event(c, "resize");
    cwc_chain_be(c, 1, 8);
    cwc_chain_end(c);
    blob_event(c, "sync");
    cwc_chain_end(c);
    cwc_chain_begin(c, "scan");
    cwc_chain_str(c, PART);
    cwc_chain_end(c);
    uint8_t tagged[1 + sizeof NAME] = {1};
    memcpy(tagged + 1, NAME, sizeof NAME);
    cwc_chain_begin(c, "remove"); /* one blob: 01 and the name, one field */
    cwc_chain_str(c, PART);
    cwc_chain_field(c, tagged, sizeof tagged);
    cwc_chain_end(c);
    cwc_chain_begin(c, "remove"); /* the whole partition: the byte 00 */
    cwc_chain_str(c, PART);
    cwc_chain_field(c, "", 1);
    cwc_chain_end(c);
}

static void *spinner(cw_ctx *ctx, void *arg)
{
    int *turns = arg;
    for (;;) {
        (*turns)++;
        cw_yield(ctx);
    }
    return NULL;
}

static void storage_calls(cw_ctx *ctx)
{
    cw_blob *b;
    uint64_t size;
    uint16_t version;
    ck_assert_int_eq(cw_storage_open_versioned(ctx, PART, NAME, sizeof NAME,
                                               cw_blob_range_of(0x0102, 0x0304), &b, &size,
                                               &version, NULL),
                     CW_OK);
    ck_assert_int_eq(cw_blob_write_at(b, 2, "xyz", 3, CW_WRITE_SYNC, NULL), CW_OK);
    cw_iobuf_mut m;
    ck_assert_int_eq(cw_blob_read_at(b, 1, 3, CW_READ_DONT_CACHE, &m, NULL), CW_OK);
    cw_iobuf_mut_release(&m);
    cw_handle *h = cw_blob_start_sync(b);
    cw_wait w = cw_wait_join(h, NULL);
    ck_assert_int_eq(cw_poll(&w, 1), 0); /* complete before it returned */
    ck_assert_int_eq(w.result, CW_OK);
    cw_handle_release(h);
    ck_assert_int_eq(cw_blob_resize(b, 1, NULL), CW_OK);
    ck_assert_int_eq(cw_blob_sync(b, NULL), CW_OK);
    cw_blob_close(b);
    cw_blob_names *names;
    ck_assert_int_eq(cw_storage_scan(ctx, PART, &names, NULL), CW_OK);
    cw_blob_names_release(names);
    ck_assert_int_eq(cw_storage_remove(ctx, PART, NAME, sizeof NAME, NULL), CW_OK);
    int rc = cw_storage_remove(ctx, PART, NULL, 0, NULL); /* the partition may be gone */
    ck_assert(rc == CW_OK || rc == CW_ERR_PARTITION_MISSING);
}

static void *storage_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    int turns = 0;
    cw_handle *spin = cw_spawn(cw_child(ctx, "spin"), spinner, &turns);
    cw_time before = cw_current(ctx);
    storage_calls(ctx);
    ck_assert_int_eq(turns, 0); /* nothing else ran */
    ck_assert_uint_eq(cw_current(ctx), before);
    cw_abort(spin);
    cw_handle_release(spin);

    cwc_chain c;
    cwc_chain_init(&c);
    cwc_chain_task(&c, 0, "");
    expect_storage_events(&c);
    digest_is(ctx, &c);
    /* start_sync took no task id: the next task spawned is task 2. */
    cw_handle_release(cw_spawn(cw_child(ctx, "stuck"), cwc_pending_task, NULL));
    return cwc_pending_task(ctx, NULL);
}

CWC_CASE(det_storage_calls_do_not_suspend, "deterministic", "DET-014 DET-015 RUN-008",
         AUDITED | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    cw_run_result res;
    ck_assert_int_eq(cwc_run(NULL, storage_root, NULL, &res), CW_ERR_STALLED);
    ck_assert_ptr_nonnull(strstr(res.message, "stuck#2"));
}
