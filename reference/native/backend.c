/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * backend.c - the native backend's table: the core's functions plus
 * this folder's scheduler.
 */
#include "buffers/buffers.h"
#include "cwrt/cwrt.h"
#include "metrics/metrics.h"
#include "native/native.h"

static const cw_backend native_backend;

static int native_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    return cw_native_start_as(&native_backend, cfg, root, arg, out);
}

static const cw_backend native_backend = {
    .abi_version = CW_ABI_VERSION,
    .size = sizeof(cw_backend),
    .name = "native",
    .capabilities = CW_CAP_PARALLEL | CW_CAP_PERSISTENT_STORAGE,

    .start = native_start,

    CW_CORE_ENTRIES,
    .metrics = &cw_metric_entries,
    .storage = &cw_storage_entries,
    .buffers = &cw_buffer_entries,
    .network = &cw_network_tcp_entries,
};

const cw_origin cw_native_origin = {
    .table = &native_backend,
    .start = cw_native_start_as,
};

const cw_backend *cw_backend_native(void)
{
    return &native_backend;
}
