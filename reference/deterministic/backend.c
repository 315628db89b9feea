/*
 * backend.c - the deterministic backend's table: the core's functions plus
 * this folder's scheduler.
 */
#include "cwrt/cwrt.h"
#include "deterministic/det.h"

const cw_backend cw_det_backend = {
    .abi_version = CW_ABI_VERSION,
    .size = sizeof(cw_backend),
    .name = "deterministic",
    .capabilities = CW_CAP_DETERMINISTIC | CW_CAP_AUDIT,

    .start = cw_det_start,

    .child = cw_core_child,
    .with_attribute = cw_core_with_attribute,
    .label = cw_core_label,
    .set_execution = cw_core_set_execution,
    .ctx_release = cw_core_ctx_release,

    .spawn = cw_core_spawn,
    .handle_ready = cw_core_handle_ready,
    .abort = cw_core_abort,
    .handle_release = cw_core_handle_release,
    .yield = cw_core_yield,
    .waker_current = cw_core_waker_current,
    .waker_wake = cw_core_waker_wake,
    .waker_release = cw_core_waker_release,
    .park = cw_core_park,

    .vpanic = cw_core_vpanic,
    .cleanup_push = cw_core_cleanup_push,
    .cleanup_pop = cw_core_cleanup_pop,

    .current = cw_core_current,

    .select = cw_core_select,
    .wait_join = cw_core_wait_join,
    .wait_sleep_until = cw_core_wait_sleep_until,
    .wait_ready = cw_core_wait_ready,
    .wait_pending = cw_core_wait_pending,

    .chan_new = cw_core_chan_new,
    .chan_sender_add = cw_core_chan_sender_add,
    .chan_sender_drop = cw_core_chan_sender_drop,
    .chan_receiver_drop = cw_core_chan_receiver_drop,
    .wait_send = cw_core_wait_send,
    .wait_recv = cw_core_wait_recv,
    .oneshot_new = cw_core_oneshot_new,
    .oneshot_send = cw_core_oneshot_send,
    .oneshot_sender_drop = cw_core_oneshot_sender_drop,
    .oneshot_receiver_drop = cw_core_oneshot_receiver_drop,
    .wait_oneshot = cw_core_wait_oneshot,

    .stopped = cw_core_stopped,
    .signal_release = cw_core_signal_release,
    .wait_signal = cw_core_wait_signal,
    .wait_stop = cw_core_wait_stop,

    .random = cw_core_random,
    .audit_digest = cw_det_audit_digest,
};

const cw_backend *cw_backend_deterministic(void)
{
    return &cw_det_backend;
}
