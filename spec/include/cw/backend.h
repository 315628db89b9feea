/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/backend.h - the table an implementation fills in.
 *
 * The public functions of the other headers are inline wrappers that find
 * the table through the object they are given and call one entry. An
 * implementation (the reference's two backends, or a third party's shared
 * object) is exactly one such table. Rules: spec/10-backend.md.
 */
#ifndef CW_BACKEND_H
#define CW_BACKEND_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cw/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes. A backend whose abi_version differs
 * in the major part (high 16 bits) must be refused by its loader; the minor
 * part counts appended entries (spec/10-backend.md lists what each added). */
#define CW_ABI_VERSION 0x00010006u
#define CW_ABI_MAJOR(v) ((v) >> 16)

/* Capability flags: what a backend can do beyond the always-required core. */
enum cw_capability {
    /* Same seed and same program give the same schedule, clock and audit digest;
     * time is virtual; a run where nothing can progress ends with CW_ERR_STALLED. */
    CW_CAP_DETERMINISTIC = 1u << 0,
    /* cw_audit_digest works. */
    CW_CAP_AUDIT = 1u << 1,
    /* Tasks run in parallel on several OS threads. */
    CW_CAP_PARALLEL = 1u << 2,
    /* Storage outlives the run: it is kept in files under the run's
     * storage_directory (spec/17-storage.md), and a later run, or another
     * process, given the same directory finds what was synced. */
    CW_CAP_PERSISTENT_STORAGE = 1u << 3,
    /* A run can end in a checkpoint and the next one start from it, as a
     * crashed process restarts (cw_start_checkpoint, cw_recover). */
    CW_CAP_RECOVER = 1u << 4,
};

typedef struct cw_config cw_config;
typedef struct cw_run_result cw_run_result;
typedef struct cw_wait cw_wait;
typedef struct cw_cleanup cw_cleanup;
typedef struct cw_buffer_ops cw_buffer_ops;
typedef struct cw_metric_ops cw_metric_ops;
typedef struct cw_storage_ops cw_storage_ops;
typedef struct cw_network_ops cw_network_ops;
typedef struct cw_checkpoint cw_checkpoint;

struct cw_backend {
    /* Identity. */
    uint32_t abi_version; /* CW_ABI_VERSION the backend was built against */
    uint32_t size;        /* sizeof(cw_backend) it was built with: entries past it are absent */
    const char *name;     /* "deterministic", "native", ... */
    uint64_t capabilities;

    /* Runner (cw/runner.h). */
    int (*start)(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out);

    /* Context and supervision (cw/context.h). */
    cw_ctx *(*child)(cw_ctx *ctx, const char *label);
    void (*with_attribute)(cw_ctx *ctx, const char *key, const char *value);
    const char *(*label)(const cw_ctx *ctx);
    void (*set_execution)(cw_ctx *ctx, int execution);
    void (*ctx_release)(cw_ctx *ctx);

    /* Tasks and handles (cw/task.h). */
    cw_handle *(*spawn)(cw_ctx *ctx, cw_task_fn fn, void *arg);
    cw_handle *(*handle_ready)(cw_ctx *ctx, int result, void *value);
    void (*abort)(cw_handle *h);
    void (*handle_release)(cw_handle *h);
    void (*yield)(cw_ctx *ctx);
    cw_waker *(*waker_current)(cw_ctx *ctx);
    void (*waker_wake)(cw_waker *w);
    void (*waker_release)(cw_waker *w);
    void (*park)(cw_ctx *ctx);

    /* Panics and cleanup (cw/panic.h). */
    void (*vpanic)(cw_ctx *ctx, const char *fmt, va_list ap);
    void (*cleanup_push)(cw_ctx *ctx, cw_cleanup *node);
    void (*cleanup_pop)(cw_ctx *ctx, cw_cleanup *node, bool execute);

    /* Clock (cw/clock.h). */
    cw_time (*current)(cw_ctx *ctx);

    /* Select over waitables (cw/select.h). */
    int (*select)(cw_wait *waits, size_t n, bool block);
    void (*wait_join)(cw_wait *w, cw_handle *h, void **out);
    void (*wait_sleep_until)(cw_wait *w, cw_ctx *ctx, cw_time deadline);
    void (*wait_ready)(cw_wait *w, cw_ctx *ctx, int result);
    void (*wait_pending)(cw_wait *w, cw_ctx *ctx);

    /* Channels (cw/channel.h). */
    cw_chan *(*chan_new)(cw_ctx *ctx, size_t elem_size, size_t capacity);
    void (*chan_sender_add)(cw_chan *c);
    void (*chan_sender_drop)(cw_chan *c);
    void (*chan_receiver_drop)(cw_chan *c);
    void (*wait_send)(cw_wait *w, cw_chan *c, const void *elem);
    void (*wait_recv)(cw_wait *w, cw_chan *c, void *elem);
    cw_oneshot *(*oneshot_new)(cw_ctx *ctx, size_t elem_size);
    int (*oneshot_send)(cw_oneshot *o, const void *elem);
    void (*oneshot_sender_drop)(cw_oneshot *o);
    void (*oneshot_receiver_drop)(cw_oneshot *o);
    void (*wait_oneshot)(cw_wait *w, cw_oneshot *o, void *elem);

    /* Stop and stopped (cw/signal.h). */
    cw_signal *(*stopped)(cw_ctx *ctx);
    void (*signal_release)(cw_signal *s);
    void (*wait_signal)(cw_wait *w, cw_signal *s, int32_t *value);
    void (*wait_stop)(cw_wait *w, cw_ctx *ctx, int32_t value);

    /* Randomness and audit (cw/runner.h). */
    void (*random)(cw_ctx *ctx, void *buf, size_t len);
    int (*audit_digest)(cw_ctx *ctx, char out[65]);

    /* Buffers and pools (cw/iobuf.h, cw/bufpool.h): a table of their own. */
    const cw_buffer_ops *buffers;

    /* Metrics (cw/metrics.h): a table of their own. */
    const cw_metric_ops *metrics;

    /* Storage and the blob header codec (cw/storage.h): a table of their own. */
    const cw_storage_ops *storage;

    /* Network and name resolution (cw/network.h): a table of their own. */
    const cw_network_ops *network;

    /* Crash and recovery (cw/runner.h), with CW_CAP_RECOVER. */
    int (*start_checkpoint)(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out,
                            cw_checkpoint **cp);
    int (*recover)(cw_checkpoint *cp, cw_task_fn root, void *arg, cw_run_result *out,
                   cw_checkpoint **next);
    void (*checkpoint_free)(cw_checkpoint *cp);

    /* Panics with the message already formatted (ABI 1.6), an entry any
     * language can fill: vpanic takes C's va_list, which Rust, Go and Zig
     * cannot receive. cw_panic formats the message and calls this entry when
     * the backend has it, vpanic otherwise (spec/06-panics.md). */
    void (*panic)(cw_ctx *ctx, const char *message);
};

/* True when `b` provides the entry at `field` (it was built with a table at
 * least that long and filled it). Wrappers use it to answer CW_ERR_UNSUPPORTED
 * rather than call past the end of an older backend's table. */
#define CW_BACKEND_HAS(b, field)                                                                   \
    ((b)->size >= offsetof(cw_backend, field) + sizeof((b)->field) && (b)->field != NULL)

/* The symbol a backend shared object exports, so that a loader can find it
 * with dlsym: `const cw_backend *cw_backend_entry(void);` */
#define CW_BACKEND_ENTRY_SYMBOL "cw_backend_entry"
typedef const cw_backend *(*cw_backend_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
