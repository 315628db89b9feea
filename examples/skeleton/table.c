/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * table.c - the backend table and the symbol a loader looks for
 * (spec/10-backend.md).
 *
 * The skeleton implements the core only: the nested tables (buffers,
 * metrics, storage, network) and the crash-and-recovery entries are NULL,
 * and it declares no capability: it is neither deterministic nor parallel,
 * keeps no audit digest and has no storage [ABI-003].
 */
#include "skeleton.h"

const cw_backend sk_backend = {
    .abi_version = CW_ABI_VERSION,
    .size = sizeof(cw_backend),
    .name = "skeleton",
    .capabilities = 0,

    .start = sk_start,

    .child = sk_child,
    .with_attribute = sk_with_attribute,
    .label = sk_label,
    .set_execution = sk_set_execution,
    .ctx_release = sk_ctx_release,

    .spawn = sk_spawn,
    .handle_ready = sk_handle_ready,
    .abort = sk_abort,
    .handle_release = sk_handle_release,
    .yield = sk_yield,
    .waker_current = sk_waker_current,
    .waker_wake = sk_waker_wake,
    .waker_release = sk_waker_release,
    .park = sk_park,

    .vpanic = sk_vpanic,
    .cleanup_push = sk_cleanup_push,
    .cleanup_pop = sk_cleanup_pop,

    .current = sk_current_time,

    .select = sk_select,
    .wait_join = sk_wait_join,
    .wait_sleep_until = sk_wait_sleep_until,
    .wait_ready = sk_wait_ready,
    .wait_pending = sk_wait_pending,

    .chan_new = sk_chan_new,
    .chan_sender_add = sk_chan_sender_add,
    .chan_sender_drop = sk_chan_sender_drop,
    .chan_receiver_drop = sk_chan_receiver_drop,
    .wait_send = sk_wait_send,
    .wait_recv = sk_wait_recv,
    .oneshot_new = sk_oneshot_new,
    .oneshot_send = sk_oneshot_send,
    .oneshot_sender_drop = sk_oneshot_sender_drop,
    .oneshot_receiver_drop = sk_oneshot_receiver_drop,
    .wait_oneshot = sk_wait_oneshot,

    .stopped = sk_stopped,
    .signal_release = sk_signal_release,
    .wait_signal = sk_wait_signal,
    .wait_stop = sk_wait_stop,

    .random = sk_random,
    .audit_digest = NULL, /* no CW_CAP_AUDIT */

    .buffers = NULL,
    .metrics = NULL,
    .storage = NULL,
    .network = NULL,

    .start_checkpoint = NULL, /* no CW_CAP_RECOVER */
    .recover = NULL,
    .checkpoint_free = NULL,
};

/* The only symbol the shared object exports (see the Makefile's
 * -fvisibility=hidden): everything else is reached through the table. */
__attribute__((visibility("default"))) const cw_backend *cw_backend_entry(void);

const cw_backend *cw_backend_entry(void)
{
    return &sk_backend;
}
