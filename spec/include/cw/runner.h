/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/runner.h - configuring and starting a runtime, and what a run returns.
 * Rules: spec/02-runner.md.
 */
#ifndef CW_RUNNER_H
#define CW_RUNNER_H

#include <stdbool.h>
#include <string.h>

#include "cw/backend.h"
#include "cw/error.h"
#include "cw/bufpool.h"
#include "cw/storage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One audit event, as a deterministic backend hands it to cfg.event_log
 * (DET-016). Every pointer is valid only during the call. */
typedef struct cw_event_field {
    const void *data;
    size_t len;
} cw_event_field;

typedef struct cw_event {
    uint64_t index;               /* 0 for the run's first event, then one more each */
    cw_time time;                 /* the runtime clock when it was recorded */
    const char *label;            /* as in the table of 11-deterministic.md */
    const cw_event_field *fields; /* exactly the fields hashed, in order */
    size_t nfields;
    uint8_t digest[32]; /* the audit digest once this event is in it */
} cw_event;

typedef void (*cw_event_fn)(void *arg, const cw_event *event);

/* How a backend with files moves blob bytes (cw_config.io_backend, NAT-008). */
typedef enum cw_io_backend {
    CW_IO_AUTO = 0,    /* the backend's choice, and never a failure */
    CW_IO_URING = 1,   /* io_uring, or cw_start fails (CW_ERR_UNSUPPORTED, NAT-008) */
    CW_IO_THREADS = 2, /* blocking calls on I/O threads, never a ring */
} cw_io_backend;

/* Settings for one run. Fill with cw_config_default, then change fields.
 * A backend ignores the fields that do not apply to it. */
struct cw_config {
    uint32_t size;       /* sizeof(cw_config) of the caller: lets the struct grow */
    uint64_t seed;       /* deterministic: PRNG seed (default 42) */
    cw_duration cycle;   /* deterministic: virtual time per iteration (default 1 ms, > 0) */
    cw_time start_time;  /* deterministic: the clock's first value (default the epoch) */
    cw_duration timeout; /* end the run with CW_ERR_RUN_TIMEOUT after this (default CW_FOREVER) */
    bool catch_panics; /* a panicking non-root task resolves CW_ERR_EXITED instead of ending the run
                        */
    size_t stack_size; /* usable bytes of each task stack (default 128 KiB) */
    bool stack_guard;  /* an inaccessible page below each stack (default true) */
    unsigned worker_threads;   /* native: threads running tasks (default: the CPU count) */
    unsigned blocking_threads; /* native: bound of the blocking pool (default 64; 0 is 1) */
    /* The run's buffer pools (cw/bufpool.h); default cw_bufpool_config_network/_storage. */
    cw_bufpool_config network_buffer_pool;
    cw_bufpool_config storage_buffer_pool;
    bool audit; /* deterministic: keep the audit digest (default true) */
    /* native: serve GET /metrics over HTTP on this numeric "address:port"
     * ("127.0.0.1:9464", "[::1]:0"); NULL (the default) serves nothing. */
    const char *metrics_address;
    /* storage: the directory holding the partitions, on a backend that keeps
     * them in files (CW_CAP_PERSISTENT_STORAGE); NULL (the default) gives
     * the run a fresh directory under $TMPDIR, removed when the run ends. */
    const char *storage_directory;
    /* storage: the blob layouts the run opens; new blobs take the last one
     * (default V0 .. V1) [STOR-025]. */
    cw_blob_range blob_layouts;
    /* network, on a TCP backend (spec/18-network.md): TCP_NODELAY on every
     * connection (default true); SO_LINGER 0 so a close resets (default true);
     * the bounds of a dial, of a whole cw_stream_recv and of a whole
     * cw_sink_send (default 10 s, 60 s, 60 s; CW_FOREVER for none); the read
     * buffer of a stream, which bounds cw_stream_peek (default 64 KiB). */
    bool tcp_nodelay;
    bool zero_linger;
    cw_duration connect_timeout;
    cw_duration read_timeout;
    cw_duration write_timeout;
    size_t read_buffer_size;
    /* network, on a deterministic backend (spec/18-network.md, NET-027): the
     * bytes of each send on a dialed connection arrive network_latency plus
     * a seeded draw in [0, network_jitter] later on the virtual clock, in
     * order (default 0 and 0: at once). The mock channel stays instant; a
     * backend without CW_CAP_DETERMINISTIC ignores both. */
    cw_duration network_latency;
    cw_duration network_jitter;
    /* deterministic, with audit on (spec/11-deterministic.md, DET-016):
     * called with every audit event as it enters the digest, on the run's
     * thread; NULL (the default) records nothing and costs nothing. The
     * function must not call into the runtime. ABI 1.3. */
    cw_event_fn event_log;
    void *event_log_arg;
    /* network faults, on a deterministic backend (spec/18-network.md,
     * NET-031, NET-032): the probability that a dial which found a listener
     * is refused, and that a send on a dialed or accepted connection resets
     * it (default never, never). ABI 1.4. */
    cw_rate network_dial_failure;
    cw_rate network_reset;
    /* storage faults, on a deterministic backend (spec/17-storage.md,
     * STOR-030..): all zero (the default) injects none. ABI 1.4. */
    cw_storage_faults storage_faults;
    /* deterministic (spec/11-deterministic.md, DET-017): the run's random
     * stream takes these bytes first, 8 to an output, little-endian, then
     * goes on with the seed's; they must stay valid until the last run of
     * the history returns. NULL / 0 (the default): the seed's alone. So a
     * fuzzer's input can decide the schedule, the jitter and the faults.
     * ABI 1.4. */
    const uint8_t *random_bytes;
    size_t random_len;
    /* native (spec/13-native.md, NAT-008): how file storage reads, writes
     * and syncs blobs: CW_IO_AUTO (the default) as the backend finds
     * best, the reference on I/O threads; CW_IO_URING only through a ring;
     * CW_IO_THREADS only on threads. The deterministic
     * backend, and a backend without files, ignore it; the gauge
     * runtime_io_uring says which way a run went. ABI 1.5. */
    cw_io_backend io_backend;
};

/* The outcome of cw_start. */
struct cw_run_result {
    int status;        /* CW_OK, or CW_ERR_PANICKED / _STALLED / _RUN_TIMEOUT / _INVALID / _NOMEM */
    void *value;       /* the root task's return value, when status is CW_OK */
    char message[512]; /* why the run failed (the panic message...), "" on success; may be cut */
    char digest[65];   /* the final audit digest in hex (CW_CAP_AUDIT), else "" */
    cw_time end_time;  /* the runtime clock when the run ended */
    uint64_t
        iterations; /* deterministic: scheduler iterations that ended without finishing the root */
};

static inline void cw_config_default(cw_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->seed = 42;
    cfg->cycle = CW_MSEC;
    cfg->start_time = 0;
    cfg->timeout = CW_FOREVER;
    cfg->catch_panics = false;
    cfg->stack_size = 128 * 1024;
    cfg->stack_guard = true;
    cfg->worker_threads = 0;
    cfg->blocking_threads = 64;
    cw_bufpool_config_network(&cfg->network_buffer_pool);
    cw_bufpool_config_storage(&cfg->storage_buffer_pool);
    cfg->audit = true;
    cfg->metrics_address = NULL;
    cfg->storage_directory = NULL;
    cfg->blob_layouts = cw_blob_range_of(CW_BLOB_LAYOUT_V0, CW_BLOB_LAYOUT_LATEST);
    cfg->tcp_nodelay = true;
    cfg->zero_linger = true;
    cfg->connect_timeout = 10 * CW_SEC;
    cfg->read_timeout = 60 * CW_SEC;
    cfg->write_timeout = 60 * CW_SEC;
    cfg->read_buffer_size = 64 * 1024;
    cfg->network_latency = 0;
    cfg->network_jitter = 0;
    cfg->event_log = NULL;
    cfg->event_log_arg = NULL;
    cfg->network_dial_failure = CW_RATE_NEVER;
    cfg->network_reset = CW_RATE_NEVER;
    memset(&cfg->storage_faults, 0, sizeof cfg->storage_faults);
    cfg->random_bytes = NULL;
    cfg->random_len = 0;
    cfg->io_backend = CW_IO_AUTO;
}

/* Run `root(ctx, arg)` as the root task of a new runtime of backend `b` and
 * return when it ends, with every other task ended and freed ([RUN-001]..).
 * `cfg` may be NULL for the defaults. Returns out->status. */
static inline int cw_start(const cw_backend *b, const cw_config *cfg, cw_task_fn root, void *arg,
                           cw_run_result *out)
{
    return b->start(cfg, root, arg, out);
}

/* ---- Crash and recovery (spec/11-deterministic.md, DET-008..DET-011) ----
 * A run started with cw_start_checkpoint ends as if its process crashed at
 * that instant, and leaves a checkpoint: its clock, its random stream, its
 * audit chain, what its storage made durable and its resolver's names.
 * cw_recover starts the next run from there, as the restarted process. */

/* Like cw_start; on return *cp is the run's checkpoint, which the caller
 * owns (cw_recover or cw_checkpoint_free), or NULL when the run could not
 * start. Without CW_CAP_RECOVER: CW_ERR_UNSUPPORTED and *cp NULL. */
static inline int cw_start_checkpoint(const cw_backend *b, const cw_config *cfg, cw_task_fn root,
                                      void *arg, cw_run_result *out, cw_checkpoint **cp)
{
    *cp = NULL;
    if (!(b->capabilities & CW_CAP_RECOVER) || !CW_BACKEND_HAS(b, start_checkpoint)) {
        memset(out, 0, sizeof *out);
        return out->status = CW_ERR_UNSUPPORTED;
    }
    return b->start_checkpoint(cfg, root, arg, out, cp);
}

/* Run `root(ctx, arg)` as the root of the run that follows `cp`'s, which
 * this consumes: `cp` is invalid afterwards, whatever the outcome. When
 * `next` is not NULL it receives this run's checkpoint, as for
 * cw_start_checkpoint. The run's settings are the checkpoint's. */
static inline int cw_recover(cw_checkpoint *cp, cw_task_fn root, void *arg, cw_run_result *out,
                             cw_checkpoint **next)
{
    return cw__backend_of(cp)->recover(cp, root, arg, out, next);
}

/* Free a checkpoint that will not be recovered. */
static inline void cw_checkpoint_free(cw_checkpoint *cp)
{
    cw__backend_of(cp)->checkpoint_free(cp);
}

/* Random bytes: seeded and audited on a deterministic backend, from the OS otherwise. */
static inline void cw_random(cw_ctx *ctx, void *buf, size_t len)
{
    cw__backend_of(ctx)->random(ctx, buf, len);
}

/* Eight random bytes read as a little-endian integer on every host, so a
 * seeded run draws the same values everywhere [DET-012]. */
static inline uint64_t cw_random_u64(cw_ctx *ctx)
{
    uint8_t b[8];
    cw_random(ctx, b, sizeof b);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* The current audit digest as 64 lowercase hex digits and a NUL.
 * CW_ERR_UNSUPPORTED without CW_CAP_AUDIT. */
static inline int cw_audit_digest(cw_ctx *ctx, char out[65])
{
    const cw_backend *b = cw__backend_of(ctx);
    if (!(b->capabilities & CW_CAP_AUDIT) || !CW_BACKEND_HAS(b, audit_digest))
        return CW_ERR_UNSUPPORTED;
    return b->audit_digest(ctx, out);
}

#ifdef __cplusplus
}
#endif
#endif
