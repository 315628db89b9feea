/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * backend.c - the deterministic backend's table: the core's functions plus
 * this folder's scheduler.
 */
#include "buffers/buffers.h"
#include "cwrt/cwrt.h"
#include "deterministic/det.h"
#include "metrics/metrics.h"

static const cw_backend det_backend;

static int det_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    return cw_det_start_as(&det_backend, cfg, root, arg, out);
}

static int det_start_checkpoint(const cw_config *cfg, cw_task_fn root, void *arg,
                                cw_run_result *out, cw_checkpoint **cp)
{
    return cw_det_start_checkpoint_as(&det_backend, cfg, root, arg, out, cp);
}

static int det_recover(cw_checkpoint *from, cw_task_fn root, void *arg, cw_run_result *out,
                       cw_checkpoint **cp)
{
    return cw_det_recover_as(&det_backend, from, root, arg, out, cp);
}

static const cw_backend det_backend = {
    .abi_version = CW_ABI_VERSION,
    .size = sizeof(cw_backend),
    .name = "deterministic",
    .capabilities = CW_CAP_DETERMINISTIC | CW_CAP_AUDIT | CW_CAP_RECOVER,

    .start = det_start,

    CW_CORE_ENTRIES,
    .metrics = &cw_metric_entries,
    .storage = &cw_storage_entries,
    .audit_digest = cw_det_audit_digest,
    .buffers = &cw_buffer_entries,
    .network = &cw_network_memory_entries,
    .start_checkpoint = det_start_checkpoint,
    .recover = det_recover,
    .checkpoint_free = cw_det_checkpoint_free,
};

const cw_origin cw_deterministic_origin = {
    .table = &det_backend,
    .start = cw_det_start_as,
    .start_checkpoint = cw_det_start_checkpoint_as,
    .recover = cw_det_recover_as,
};

const cw_backend *cw_backend_deterministic(void)
{
    return &det_backend;
}
