/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * det.h - private to the deterministic backend: its PRNG, audit chain,
 * alarm heap and scheduler state, and its storage, network and recovery. The algorithm is specified
 * in spec/11-deterministic.md, which this folder follows step by step.
 */
#ifndef CW_DET_H
#define CW_DET_H

#include <sched.h>
#include <stdatomic.h>

#include "core/sched.h"
#include "network/net.h"
#include "storage/storage.h"

/* ---- PRNG (prng.c): xoshiro256** seeded through splitmix64 ---- */
typedef struct cw_prng {
    uint64_t s[4];
    const uint8_t *bytes; /* the caller's bytes still to give, or NULL */
    size_t len, at;
} cw_prng;

void cw_prng_seed(cw_prng *p, uint64_t seed);
/* Give `bytes` (the caller's, kept valid) before the seeded stream [DET-017]. */
void cw_prng_take_bytes(cw_prng *p, const uint8_t *bytes, size_t len);
uint64_t cw_prng_next(cw_prng *p);
/* A value in [0, bound) by the specified reduction: next() % bound. */
uint64_t cw_prng_below(cw_prng *p, uint64_t bound);
void cw_prng_fill(cw_prng *p, void *buf, size_t len);

/* ---- Audit chain (audit.c) ---- */
typedef struct cw_auditor {
    uint8_t digest[32];
    void *sha; /* one SHA-256 context (SHA256_CTX), reused by every event */
    /* The run's event log (DET-016): told of each event once it is hashed. */
    cw_event_fn log;
    void *log_arg;
    const cw_time *clock; /* the run's virtual clock, read for each logged event */
    uint64_t logged;      /* events handed to `log` so far */
} cw_auditor;

int cw_auditor_init(cw_auditor *a); /* CW_ERR_NOMEM: SHA-256 could not be set up */
/* Hand every later event to `log` (NULL: none), timed by `*clock`. */
void cw_auditor_log_to(cw_auditor *a, cw_event_fn log, void *arg, const cw_time *clock);
void cw_auditor_free(cw_auditor *a);
void cw_auditor_event(cw_auditor *a, const char *label, const cw_field *fields, size_t n);
void cw_auditor_hex(const cw_auditor *a, char out[65]);

/* ---- A spinlock for the ready queue ----
 * Only a wake from a thread outside the run ever contends for it, and the
 * sections it guards are a few stores long: cheaper than a mutex on the
 * path every yield and wake takes. */
typedef struct cw_spin {
    atomic_flag held;
} cw_spin;

static inline void cw_spin_lock(cw_spin *s)
{
    while (atomic_flag_test_and_set_explicit(&s->held, memory_order_acquire))
        sched_yield();
}

static inline void cw_spin_unlock(cw_spin *s)
{
    atomic_flag_clear_explicit(&s->held, memory_order_release);
}

/* ---- The runtime (scheduler.c) ---- */
typedef struct cw_det {
    cw_rt rt;         /* first: the core sees only this */
    cw_coro main;     /* the scheduler's own context */
    cw_task *current; /* the task running now, or NULL */
    pthread_t thread; /* the one thread the run's tasks execute on */
    cw_spin lock;     /* the ready queue and wake flags: wakers may be on other threads */
    cw_task **ready;  /* runnable in the next iteration */
    size_t nready, cap;
    cw_task **batch;  /* the iteration's tasks, in their shuffled order */
    size_t batch_cap; /* like cap, at least the run's task records */
    cw_alarms alarms;
    cw_time now;
    cw_time deadline; /* of the run timeout; CW_TIME_MAX when none */
    cw_prng prng;
    cw_auditor auditor;
    uint64_t iterations;
    /* runtime_iterations and runtime_task_polls; a task's polls series is
     * kept in its sched_data, found when it is spawned. */
    cw_metric *iterations_metric, *task_polls;
    /* What a run recovered from a checkpoint inherits (recover.c): the
     * storage and the network adopt their part when they are made; the
     * run's own checkpoint takes back what was not adopted. */
    struct cw_mem_image *inherit_storage;
    struct cw_hosts_image *inherit_hosts;
} cw_det;

/* The run `rt` is (every run of this backend is a cw_det). */
static inline cw_det *cw_det_of(cw_rt *rt)
{
    return (cw_det *)(void *)rt;
}

extern const cw_origin cw_deterministic_origin; /* backend.c */

/* Runs whose objects name `self`: the deterministic table or one derived
 * from it (backend.c gives the table's own entries). */
int cw_det_start_as(const cw_backend *self, const cw_config *cfg, cw_task_fn root, void *arg,
                    cw_run_result *out);
int cw_det_start_checkpoint_as(const cw_backend *self, const cw_config *cfg, cw_task_fn root,
                               void *arg, cw_run_result *out, cw_checkpoint **cp);
int cw_det_recover_as(const cw_backend *self, cw_checkpoint *from, cw_task_fn root, void *arg,
                      cw_run_result *out, cw_checkpoint **cp);
int cw_det_audit_digest(cw_ctx *ctx, char out[65]);

/* ---- Crash and recovery (recover.c) ---- */
/* A checkpoint with room for everything a crash keeps, made before the
 * run starts so that the crash itself needs no memory; NULL when memory is
 * exhausted. */
cw_checkpoint *cw_det_checkpoint_alloc(void);
/* When every task of `d` has ended: crash its storage and take what
 * survives into `cp`, before the run's objects are freed. */
void cw_det_checkpoint_take(cw_det *d, cw_checkpoint *cp);
/* At the very end of the run: the clock, the random stream, the digest. */
void cw_det_checkpoint_seal(cw_det *d, cw_checkpoint *cp);
const cw_config *cw_det_checkpoint_config(const cw_checkpoint *cp);
/* Start `d` where `cp`'s run crashed; frees `cp`'s shell. */
void cw_det_resume(cw_det *d, cw_checkpoint *cp);
void cw_det_checkpoint_free(cw_checkpoint *cp);

/* ---- Memory storage (memory_storage.c) ---- */
extern const cw_storage_driver cw_memory_driver;

/* Every partition in name order, each followed by its blobs in scan order
 * with their durable bytes (storage_audit.c reads the storage this way). */
typedef struct cw_memory_visitor {
    void (*partition)(void *arg, const char *name, size_t nblobs);
    void (*blob)(void *arg, const uint8_t *name, size_t len, const uint8_t *bytes, size_t n);
} cw_memory_visitor;
void cw_memory_walk(const cw_storage *st, const cw_memory_visitor *v, void *arg);
/* The storage audit of a memory storage [STOR-036]. */
int cw_memory_audit(const cw_storage *st, char out[65]);

/* What a crash of memory storage keeps of the unsynced changes, numbered in
 * issue order: each byte of a write, and each resize, that the policy
 * answers true for. */
typedef struct cw_crash_policy {
    bool (*keep_byte)(void *arg, size_t change, uint64_t byte);
    bool (*keep_resize)(void *arg, size_t change);
    void *arg;
} cw_crash_policy;

/* Crash memory storage `st`: apply what `policy` keeps of the unsynced
 * changes to the durable bytes, forget the rest, and retire every open
 * file (their syncs fail with CW_ERR_BLOB_MISSING). Opening a blob
 * afterwards reads what survived. */
void cw_memory_crash(cw_storage *st, const cw_crash_policy *policy);

/* The crash at the end of a checkpointed deterministic run: memory storage
 * keeps what was durable, and of the unsynced changes what the run's
 * storage faults say survives a crash (none without faults). */
void cw_storage_crash(cw_storage *st);

/* What memory storage made durable, between a run's crash and the next
 * run's start: cw_memory_take crashes the run's storage (cw_storage_crash)
 * and takes its durable contents into `spare` (an empty image from
 * cw_mem_image_new), or gives the inheritance itself, freeing `spare`, when
 * the run made no storage. The caller owns what it returns. */
typedef struct cw_mem_image cw_mem_image;
cw_mem_image *cw_mem_image_new(void); /* NULL when memory is exhausted */
cw_mem_image *cw_memory_take(cw_rt *rt, cw_mem_image *spare);
void cw_mem_image_free(cw_mem_image *img);

/* ---- Network (memory_network.c, resolver.c, partition.c) ---- */

/* Where a bind of port 0 starts looking. */
#define CW_NET_PORT_FIRST 1024u

/* One registered name of the resolver. */
typedef struct cw_host {
    char *name;
    cw_addr *addrs;
    size_t n;
} cw_host;

/* A partition between two address patterns [NET-028]. */
typedef struct cw_cut {
    cw_addr a, b;
} cw_cut;

/* The simulated network's part of a run's network (net->impl), made by the
 * driver's open and freed by its close; under rt->lock. */
typedef struct cw_mem_net {
    uint32_t next_ephemeral; /* the next dialer port */
    cw_host *hosts;          /* the resolver's table */
    size_t nhosts, cap_hosts;
    cw_cut *cuts; /* the partitions in force, in the order they were made */
    size_t ncuts, cap_cuts;
} cw_mem_net;

static inline cw_mem_net *cw_mem_net_of(const cw_net *net)
{
    return net->impl;
}

extern const cw_net_driver cw_memory_net_driver;
extern const cw_network_ops cw_network_memory_entries;
int cw_mem_resolve(cw_ctx *ctx, const char *host, cw_addr *out, size_t cap, size_t *n,
                   cw_resolve_error *err);
int cw_mem_resolver_register(cw_ctx *ctx, const char *host, const cw_addr *addrs, size_t n);
/* A recovered run's network takes the table its checkpoint carried. */
void cw_hosts_adopt(cw_net *net);
void cw_hosts_free(cw_mem_net *mn);
/* partition.c [NET-028..NET-030]: whether a partition cuts the connection
 * or dial between `x` and `y`; the entries. */
bool cw_net_cut(const cw_net *net, const cw_addr *x, const cw_addr *y);
int cw_mem_partition(cw_ctx *ctx, const cw_addr *a, const cw_addr *b);
int cw_mem_repair(cw_ctx *ctx, const cw_addr *a, const cw_addr *b);
/* The resolver's table between runs: taken from a run's network into
 * `spare`, or the inheritance (freeing `spare`) when it made none. */
typedef struct cw_hosts_image cw_hosts_image;
cw_hosts_image *cw_hosts_image_new(void); /* NULL when memory is exhausted */
cw_hosts_image *cw_hosts_take(cw_rt *rt, cw_hosts_image *spare);
void cw_hosts_image_free(cw_hosts_image *img);

#endif
