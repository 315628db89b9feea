/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * entries.c - the storage table both reference backends carry. Which kind of
 * storage a run gets is decided when it is made (storage.c).
 */
#include "storage/storage.h"

const cw_storage_ops cw_storage_entries = {
    .size = sizeof(cw_storage_ops),
    .crc32c = cw_crc32c_update,
    .header_create = cw_header_create,
    .header_parse = cw_header_parse,
    .header_resolve = cw_header_resolve,
    .open = cw_storage_open_entry,
    .remove = cw_storage_remove_entry,
    .scan = cw_storage_scan_entry,
    .names_release = cw_names_release,
    .blob_clone = cw_blob_clone_entry,
    .blob_close = cw_blob_close_entry,
    .blob_read_at = cw_blob_read_at_entry,
    .blob_read_into = cw_blob_read_into_entry,
    .blob_read_at_buf = cw_blob_read_at_buf_entry,
    .blob_write_at = cw_blob_write_at_entry,
    .blob_write_bufs = cw_blob_write_bufs_entry,
    .blob_resize = cw_blob_resize_entry,
    .blob_sync = cw_blob_sync_entry,
    .blob_start_sync = cw_blob_start_sync_entry,
    .set_faults = cw_storage_set_faults_entry,
    .audit = cw_storage_audit_entry,
};
