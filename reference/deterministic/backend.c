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
    .capabilities = CW_CAP_DETERMINISTIC | CW_CAP_AUDIT | CW_CAP_RECOVER,

    .start = cw_det_start,

    CW_CORE_ENTRIES,
    .audit_digest = cw_det_audit_digest,
    .buffers = &cw_buffer_entries,
    .network = &cw_network_memory_entries,
    .start_checkpoint = cw_det_start_checkpoint,
    .recover = cw_det_recover,
    .checkpoint_free = cw_det_checkpoint_free,
};

const cw_backend *cw_backend_deterministic(void)
{
    return &cw_det_backend;
}
