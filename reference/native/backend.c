/*
 * backend.c - the native backend's table: the core's functions plus
 * this folder's scheduler.
 */
#include "cwrt/cwrt.h"
#include "native/native.h"

const cw_backend cw_native_backend = {
    .abi_version = CW_ABI_VERSION,
    .size = sizeof(cw_backend),
    .name = "native",
    .capabilities = CW_CAP_PARALLEL | CW_CAP_PERSISTENT_STORAGE,

    .start = cw_native_start,

    CW_CORE_ENTRIES,
    .buffers = &cw_buffer_entries,
    .network = &cw_network_tcp_entries,
};

const cw_backend *cw_backend_native(void)
{
    return &cw_native_backend;
}
