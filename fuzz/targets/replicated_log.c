/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * replicated_log.c - a small replicated log on the deterministic backend,
 * its schedule, network delays and faults, and storage faults all decided
 * by the fuzzer's input (cw_config.random_bytes, DET-017), and one
 * invariant checked after a crash and a restart.
 *
 * BACKEND. The reference's deterministic one, or CW_FUZZ_BACKEND's (it
 * needs CW_CAP_DETERMINISTIC and CW_CAP_RECOVER).
 *
 * INPUT. Every byte is the run's random stream, 8 to a draw; when it runs
 * out, the seed's stream goes on. Nothing else: every input is a valid run.
 *
 * THE LOG. A leader and two followers, each with its own blob. For each
 * entry the leader appends the record to its own blob and syncs it, sends
 * the entry to every follower it still reaches, and waits a while for
 * their acknowledgements; a follower appends, syncs, and acknowledges only
 * what it made durable. The leader commits an entry once its own copy and
 * at least one follower's are durable, in order, and stops at the first
 * entry it cannot commit. The network delays and resets, dials fail, and
 * writes and syncs fail (torn writes keep a subset of their bytes).
 *
 * THE INVARIANT. The first run ends and crashes (a checkpoint); the
 * recovered run reads the three blobs. Every committed entry must be found,
 * intact, in at least two of them. A breach aborts with the entry and what
 * each node holds: either the runtime broke a durability rule, or the
 * simulation found a bug in the log. REPLICATED_LOG_VERBOSE=1 prints what
 * each input committed and what each node kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cwrt/cwrt.h"
#define FUZZ_TARGET_NEEDS                                                                          \
    (FUZZ_NEEDS_BUFFERS | FUZZ_NEEDS_STORAGE | FUZZ_NEEDS_NETWORK | FUZZ_NEEDS_DETERMINISTIC |     \
     FUZZ_NEEDS_RECOVER)
#include "driver/candidate.h"
#include "driver/target.h"

#define NODES 3
#define ENTRIES 12
#define RECORD 12
#define PORT 7000

typedef struct logrun {
    uint32_t committed;    /* entries the leader committed */
    uint32_t found[NODES]; /* intact records, from the first, per node */
} logrun;

static uint32_t crc(const uint8_t *p, size_t n)
{
    return cw_crc32c(fuzz_candidate(NULL), 0, p, n);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t value_of(uint32_t entry)
{
    return entry * 7 + 1;
}

static void record_of(uint32_t entry, uint8_t rec[RECORD])
{
    put32(rec, entry);
    put32(rec + 4, value_of(entry));
    put32(rec + 8, crc(rec, 8));
}

static const char *const blob_names[NODES] = {"node0", "node1", "node2"};

/* Append entry `e` to this node's blob and make it durable. */
static bool persist(cw_blob *b, uint32_t e)
{
    uint8_t rec[RECORD];
    record_of(e, rec);
    return cw_blob_write_at(b, (uint64_t)e * RECORD, rec, RECORD, CW_WRITE_DEFAULT, NULL) ==
               CW_OK &&
           cw_blob_sync(b, NULL) == CW_OK;
}

static cw_addr node_addr(int i)
{
    return cw_addr_ipv4(10, 0, 0, (uint8_t)(i + 1), PORT);
}

static int send_bytes(cw_sink *s, const uint8_t *p, size_t n)
{
    cw_iobufs *l = cw_iobufs_new(fuzz_candidate(NULL));
    cw_iobuf b;
    if (!l || cw_iobuf_copy(fuzz_candidate(NULL), p, n, &b) != CW_OK) {
        cw_iobufs_release(l);
        return CW_ERR_NOMEM;
    }
    int rc = cw_iobufs_append(l, &b);
    if (rc == CW_OK)
        rc = cw_sink_send(s, l);
    cw_iobufs_release(l);
    return rc;
}

static int recv_bytes(cw_ctx *ctx, cw_stream *s, uint8_t *p, size_t n, cw_duration timeout)
{
    cw_iobufs *got = NULL;
    cw_wait w = cw_wait_stream_recv(s, n, &got);
    int rc = cw_timeout(ctx, timeout, &w);
    if (rc == CW_OK) {
        size_t at = 0;
        const cw_iobuf *c;
        for (size_t i = 0; (c = cw_iobufs_chunk(got, i)); i++) {
            memcpy(p + at, c->data, c->len);
            at += c->len;
        }
    }
    cw_iobufs_release(got);
    return rc;
}

/* A follower: persist each entry it gets, acknowledge what is durable. */
static void *follower(cw_ctx *ctx, void *arg)
{
    int me = (int)(intptr_t)arg;
    cw_addr at = node_addr(me);
    cw_listener *l;
    if (cw_bind(ctx, &at, &l) != CW_OK)
        return NULL;
    cw_conn c;
    if (cw_listener_accept(l, &c) != CW_OK)
        return NULL;
    cw_blob *b;
    uint64_t size;
    if (cw_storage_open(ctx, "log", blob_names[me], 5, &b, &size, NULL) == CW_OK) {
        uint8_t msg[4], ack = 1;
        while (recv_bytes(ctx, c.stream, msg, 4, CW_FOREVER) == CW_OK) {
            if (!persist(b, get32(msg)) || send_bytes(c.sink, &ack, 1) != CW_OK)
                break;
        }
        cw_blob_close(b);
    }
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    cw_listener_close(l);
    return NULL;
}

typedef struct peer {
    cw_sink *sink;
    cw_stream *stream;
} peer;

static void connect_peers(cw_ctx *ctx, peer *p)
{
    for (int i = 1; i < NODES; i++) {
        cw_addr to = node_addr(i);
        p[i].sink = NULL;
        p[i].stream = NULL;
        for (int tries = 0; tries < 3 && !p[i].sink; tries++)
            if (cw_dial(ctx, &to, &p[i].sink, &p[i].stream) != CW_OK)
                cw_sleep(ctx, CW_MSEC);
    }
}

/* Send entry `e` to every follower still reached; how many acknowledged. */
static int replicate(cw_ctx *ctx, peer *p, uint32_t e)
{
    uint8_t msg[4];
    put32(msg, e);
    int acks = 0;
    for (int i = 1; i < NODES; i++)
        if (p[i].sink && send_bytes(p[i].sink, msg, 4) != CW_OK)
            p[i].sink = NULL; /* gone: closed at the end */
    for (int i = 1; i < NODES; i++) {
        uint8_t ack;
        if (p[i].sink && p[i].stream &&
            recv_bytes(ctx, p[i].stream, &ack, 1, 50 * CW_MSEC) == CW_OK)
            acks++;
    }
    return acks;
}

static void *leader_root(cw_ctx *ctx, void *arg)
{
    logrun *r = arg;
    for (int i = 1; i < NODES; i++)
        cw_handle_release(cw_spawn(cw_child(ctx, "follower"), follower, (void *)(intptr_t)i));
    cw_sleep(ctx, CW_MSEC); /* the followers listen */
    cw_blob *b;
    uint64_t size;
    if (cw_storage_open(ctx, "log", blob_names[0], 5, &b, &size, NULL) != CW_OK)
        return NULL;
    peer p[NODES];
    connect_peers(ctx, p);
    for (uint32_t e = 0; e < ENTRIES; e++) {
        if (!persist(b, e) || replicate(ctx, p, e) < 1)
            break;
        r->committed = e + 1;
    }
    cw_blob_close(b);
    return NULL; /* connections left open: the crash ends them */
}

static uint32_t intact_records(cw_ctx *ctx, int node)
{
    cw_blob *b;
    uint64_t len;
    if (cw_storage_open(ctx, "log", blob_names[node], 5, &b, &len, NULL) != CW_OK)
        return 0;
    uint32_t n = 0;
    for (; (uint64_t)(n + 1) * RECORD <= len; n++) {
        uint8_t rec[RECORD], want[RECORD];
        record_of(n, want);
        if (cw_blob_read_into(b, (uint64_t)n * RECORD, rec, RECORD, 0, NULL) != CW_OK ||
            memcmp(rec, want, RECORD) != 0)
            break;
    }
    cw_blob_close(b);
    return n;
}

static void *read_back_root(cw_ctx *ctx, void *arg)
{
    logrun *r = arg;
    for (int i = 0; i < NODES; i++)
        r->found[i] = intact_records(ctx, i);
    return NULL;
}

static void check(const logrun *r)
{
    if (getenv("REPLICATED_LOG_VERBOSE"))
        fprintf(stderr, "replicated_log: %u committed; intact records %u %u %u\n", r->committed,
                r->found[0], r->found[1], r->found[2]);
    for (uint32_t e = 0; e < r->committed; e++) {
        int holders = 0;
        for (int i = 0; i < NODES; i++)
            holders += r->found[i] > e;
        if (holders < 2) {
            fprintf(stderr,
                    "replicated_log: entry %u committed (of %u) but held by %d node(s): "
                    "intact records %u %u %u\n",
                    e, r->committed, holders, r->found[0], r->found[1], r->found[2]);
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.audit = false;
    cfg.random_bytes = data;
    cfg.random_len = size;
    cfg.network_latency = CW_MSEC;
    cfg.network_jitter = 5 * CW_MSEC;
    cfg.network_reset = (cw_rate){1, 40};
    cfg.network_dial_failure = (cw_rate){1, 10};
    cfg.storage_faults.write = (cw_rate){1, 30};
    cfg.storage_faults.sync = (cw_rate){1, 20};
    cfg.storage_faults.write_kept = (cw_rate){1, 2};
    cfg.storage_faults.write_mode = CW_KEEP_SUBSET;
    cfg.storage_faults.resize_kept = (cw_rate){1, 2};
    logrun r;
    memset(&r, 0, sizeof r);
    const cw_backend *det = fuzz_candidate(NULL);
    if ((det->capabilities & (CW_CAP_DETERMINISTIC | CW_CAP_RECOVER)) !=
        (CW_CAP_DETERMINISTIC | CW_CAP_RECOVER)) {
        fprintf(stderr,
                "replicated_log: the backend needs CW_CAP_DETERMINISTIC and CW_CAP_RECOVER\n");
        abort();
    }
    cw_checkpoint *cp = NULL;
    cw_run_result res;
    int rc = cw_start_checkpoint(det, &cfg, leader_root, &r, &res, &cp);
    if (rc != CW_OK || !cp) {
        fprintf(stderr, "replicated_log: the run ended with %d: %s\n", rc, res.message);
        abort();
    }
    rc = cw_recover(cp, read_back_root, &r, &res, NULL);
    if (rc != CW_OK) {
        fprintf(stderr, "replicated_log: the recovered run ended with %d: %s\n", rc, res.message);
        abort();
    }
    check(&r);
    return 0;
}
