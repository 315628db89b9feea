// SPDX-License-Identifier: Apache-2.0 OR MIT
//! `#[repr(C)]` mirrors of the structs of `spec/include/cw/*.h`.
//!
//! Everything the C side reads or writes goes through these types and
//! nothing else, so the whole ABI surface is in one file that
//! `abi-check/run.sh` compares, field by field, with what the C compiler
//! computes from the kit's headers. Field order, types and names follow the
//! headers exactly; the C names are kept (hence `non_camel_case_types`) so a
//! reader can grep one against the other.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

/// `CW_ABI_VERSION` of the headers this backend mirrors (ABI 1.6).
pub const CW_ABI_VERSION: u32 = 0x0001_0006;

pub const CW_CAP_DETERMINISTIC: u64 = 1 << 0;
pub const CW_CAP_AUDIT: u64 = 1 << 1;
pub const CW_CAP_PERSISTENT_STORAGE: u64 = 1 << 3;
pub const CW_CAP_RECOVER: u64 = 1 << 4;

pub const CW_OK: c_int = 0;
pub const CW_ERR_EXITED: c_int = -1;
pub const CW_ERR_CLOSED: c_int = -2;
pub const CW_ERR_ABORTED: c_int = -3;
pub const CW_ERR_NOMEM: c_int = -50;
pub const CW_ERR_INVALID: c_int = -51;
pub const CW_ERR_WOULD_BLOCK: c_int = -52;
pub const CW_ERR_UNSUPPORTED: c_int = -53;
pub const CW_ERR_PANICKED: c_int = -60;
pub const CW_ERR_STALLED: c_int = -61;
pub const CW_ERR_RUN_TIMEOUT: c_int = -62;

pub const CW_EXEC_SHARED: c_int = 0;

pub const CW_TIME_MAX: u64 = u64::MAX;
pub const CW_FOREVER: u64 = u64::MAX;

/// Opaque object types, as the C side sees them.
#[repr(C)]
pub struct cw_ctx {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_handle {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_chan {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_oneshot {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_signal {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_waker {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_checkpoint {
    _opaque: [u8; 0],
}

pub type cw_task_fn = unsafe extern "C" fn(*mut cw_ctx, *mut c_void) -> *mut c_void;

/// `cw/types.h`: the common prefix of every object (ABI-002).
#[derive(Clone, Copy)]
#[repr(C)]
pub struct cw_object {
    pub backend: *const cw_backend,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct cw_rate {
    pub num: u64,
    pub den: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct cw_blob_range {
    pub first: u16,
    pub last: u16,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct cw_bufpool_config {
    pub min_size: usize,
    pub max_size: usize,
    pub max_per_class: u32,
    pub alignment: usize,
    pub pool_min_size: usize,
    pub thread_cache: u32,
    pub parallelism: u32,
    pub prefill: bool,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct cw_storage_faults {
    pub open: cw_rate,
    pub read: cw_rate,
    pub write: cw_rate,
    pub sync: cw_rate,
    pub resize: cw_rate,
    pub remove: cw_rate,
    pub scan: cw_rate,
    pub write_kept: cw_rate,
    pub write_mode: u32,
    pub resize_partial: cw_rate,
    pub resize_kept: cw_rate,
}

#[repr(C)]
pub struct cw_event_field {
    pub data: *const c_void,
    pub len: usize,
}

#[repr(C)]
pub struct cw_event {
    pub index: u64,
    pub time: u64,
    pub label: *const c_char,
    pub fields: *const cw_event_field,
    pub nfields: usize,
    pub digest: [u8; 32],
}

pub type cw_event_fn = unsafe extern "C" fn(*mut c_void, *const cw_event);

/// `cw/runner.h`: the settings of one run.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cw_config {
    pub size: u32,
    pub seed: u64,
    pub cycle: u64,
    pub start_time: u64,
    pub timeout: u64,
    pub catch_panics: bool,
    pub stack_size: usize,
    pub stack_guard: bool,
    pub worker_threads: u32,
    pub blocking_threads: u32,
    pub network_buffer_pool: cw_bufpool_config,
    pub storage_buffer_pool: cw_bufpool_config,
    pub audit: bool,
    pub metrics_address: *const c_char,
    pub storage_directory: *const c_char,
    pub blob_layouts: cw_blob_range,
    pub tcp_nodelay: bool,
    pub zero_linger: bool,
    pub connect_timeout: u64,
    pub read_timeout: u64,
    pub write_timeout: u64,
    pub read_buffer_size: usize,
    pub network_latency: u64,
    pub network_jitter: u64,
    pub event_log: Option<cw_event_fn>,
    pub event_log_arg: *mut c_void,
    pub network_dial_failure: cw_rate,
    pub network_reset: cw_rate,
    pub storage_faults: cw_storage_faults,
    pub random_bytes: *const u8,
    pub random_len: usize,
    pub io_backend: u32,
}

/// `cw/runner.h`: the outcome of `cw_start`.
#[repr(C)]
pub struct cw_run_result {
    pub status: c_int,
    pub value: *mut c_void,
    pub message: [c_char; 512],
    pub digest: [c_char; 65],
    pub end_time: u64,
    pub iterations: u64,
}

/// `cw/select.h`: one operation that may have to wait. Only `result` is the
/// caller's; the rest is this backend's (see `select.rs`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cw_wait {
    pub backend: *const cw_backend,
    pub result: c_int,
    pub ops: *const c_void,
    pub object: *mut c_void,
    pub out: *mut c_void,
    pub arg: u64,
    pub state: u64,
    pub link: [*mut c_void; 4],
}

/// `cw/panic.h`: a cleanup handler record, in the caller's frame.
#[repr(C)]
pub struct cw_cleanup {
    pub prev: *mut cw_cleanup,
    pub func: Option<unsafe extern "C" fn(*mut c_void)>,
    pub arg: *mut c_void,
}

/// `va_list` as a parameter is a pointer on every ABI this crate supports;
/// the entry is left NULL anyway (PAN-007: `panic` is filled instead).
pub type va_list_ptr = *mut c_void;

/// `cw/backend.h`: the table.
#[repr(C)]
pub struct cw_backend {
    pub abi_version: u32,
    pub size: u32,
    pub name: *const c_char,
    pub capabilities: u64,

    pub start: unsafe extern "C" fn(
        *const cw_config,
        Option<cw_task_fn>,
        *mut c_void,
        *mut cw_run_result,
    ) -> c_int,

    pub child: unsafe extern "C" fn(*mut cw_ctx, *const c_char) -> *mut cw_ctx,
    pub with_attribute: unsafe extern "C" fn(*mut cw_ctx, *const c_char, *const c_char),
    pub label: unsafe extern "C" fn(*const cw_ctx) -> *const c_char,
    pub set_execution: unsafe extern "C" fn(*mut cw_ctx, c_int),
    pub ctx_release: unsafe extern "C" fn(*mut cw_ctx),

    pub spawn: unsafe extern "C" fn(*mut cw_ctx, Option<cw_task_fn>, *mut c_void) -> *mut cw_handle,
    pub handle_ready: unsafe extern "C" fn(*mut cw_ctx, c_int, *mut c_void) -> *mut cw_handle,
    pub abort: unsafe extern "C" fn(*mut cw_handle),
    pub handle_release: unsafe extern "C" fn(*mut cw_handle),
    pub yield_: unsafe extern "C" fn(*mut cw_ctx),
    pub waker_current: unsafe extern "C" fn(*mut cw_ctx) -> *mut cw_waker,
    pub waker_wake: unsafe extern "C" fn(*mut cw_waker),
    pub waker_release: unsafe extern "C" fn(*mut cw_waker),
    pub park: unsafe extern "C" fn(*mut cw_ctx),

    pub vpanic: Option<unsafe extern "C" fn(*mut cw_ctx, *const c_char, va_list_ptr)>,
    pub cleanup_push: unsafe extern "C" fn(*mut cw_ctx, *mut cw_cleanup),
    pub cleanup_pop: unsafe extern "C" fn(*mut cw_ctx, *mut cw_cleanup, bool),

    pub current: unsafe extern "C" fn(*mut cw_ctx) -> u64,

    pub select: unsafe extern "C" fn(*mut cw_wait, usize, bool) -> c_int,
    pub wait_join: unsafe extern "C" fn(*mut cw_wait, *mut cw_handle, *mut *mut c_void),
    pub wait_sleep_until: unsafe extern "C" fn(*mut cw_wait, *mut cw_ctx, u64),
    pub wait_ready: unsafe extern "C" fn(*mut cw_wait, *mut cw_ctx, c_int),
    pub wait_pending: unsafe extern "C" fn(*mut cw_wait, *mut cw_ctx),

    pub chan_new: unsafe extern "C" fn(*mut cw_ctx, usize, usize) -> *mut cw_chan,
    pub chan_sender_add: unsafe extern "C" fn(*mut cw_chan),
    pub chan_sender_drop: unsafe extern "C" fn(*mut cw_chan),
    pub chan_receiver_drop: unsafe extern "C" fn(*mut cw_chan),
    pub wait_send: unsafe extern "C" fn(*mut cw_wait, *mut cw_chan, *const c_void),
    pub wait_recv: unsafe extern "C" fn(*mut cw_wait, *mut cw_chan, *mut c_void),
    pub oneshot_new: unsafe extern "C" fn(*mut cw_ctx, usize) -> *mut cw_oneshot,
    pub oneshot_send: unsafe extern "C" fn(*mut cw_oneshot, *const c_void) -> c_int,
    pub oneshot_sender_drop: unsafe extern "C" fn(*mut cw_oneshot),
    pub oneshot_receiver_drop: unsafe extern "C" fn(*mut cw_oneshot),
    pub wait_oneshot: unsafe extern "C" fn(*mut cw_wait, *mut cw_oneshot, *mut c_void),

    pub stopped: unsafe extern "C" fn(*mut cw_ctx) -> *mut cw_signal,
    pub signal_release: unsafe extern "C" fn(*mut cw_signal),
    pub wait_signal: unsafe extern "C" fn(*mut cw_wait, *mut cw_signal, *mut i32),
    pub wait_stop: unsafe extern "C" fn(*mut cw_wait, *mut cw_ctx, i32),

    pub random: unsafe extern "C" fn(*mut cw_ctx, *mut c_void, usize),
    pub audit_digest: Option<unsafe extern "C" fn(*mut cw_ctx, *mut c_char) -> c_int>,

    pub buffers: *const c_void,
    pub metrics: *const c_void,
    pub storage: *const c_void,
    pub network: *const c_void,

    pub start_checkpoint: Option<
        unsafe extern "C" fn(
            *const cw_config,
            Option<cw_task_fn>,
            *mut c_void,
            *mut cw_run_result,
            *mut *mut cw_checkpoint,
        ) -> c_int,
    >,
    pub recover: Option<
        unsafe extern "C" fn(
            *mut cw_checkpoint,
            Option<cw_task_fn>,
            *mut c_void,
            *mut cw_run_result,
            *mut *mut cw_checkpoint,
        ) -> c_int,
    >,
    pub checkpoint_free: Option<unsafe extern "C" fn(*mut cw_checkpoint)>,

    pub panic: Option<unsafe extern "C" fn(*mut cw_ctx, *const c_char)>,
}

// ---- Buffers (cw/iobuf.h, cw/bufpool.h), ABI 1.1 ----------------------------

pub const CW_ERR_POOL: c_int = -35;
pub const CW_BUFPOOL_EXHAUSTED: c_int = 1;
pub const CW_BUFPOOL_OVERSIZED: c_int = 2;
pub const CW_BUFPOOL_CACHE_AUTO: u32 = u32::MAX;

/// An immutable view of shared bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cw_iobuf {
    pub hdr: cw_object,
    pub data: *const u8,
    pub len: usize,
    pub owner: *mut c_void,
}

/// A mutable buffer with one owner.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cw_iobuf_mut {
    pub hdr: cw_object,
    pub data: *mut u8,
    pub len: usize,
    pub cap: usize,
    pub owner: *mut c_void,
}

#[repr(C)]
pub struct cw_bufpool_stats {
    pub size: usize,
    pub max_buffers: u32,
    pub created: u64,
    pub exhausted: u64,
    pub idle: u64,
    pub oversized: u64,
}

#[repr(C)]
pub struct cw_iobufs {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_iobufs_mut {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_iobufs_builder {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_bufpool {
    _opaque: [u8; 0],
}

pub type cw_release_fn = unsafe extern "C" fn(*mut c_void, *mut c_void);

/// `cw/iobuf.h`: the buffer entries, reached through `cw_backend.buffers`.
#[repr(C)]
pub struct cw_buffer_ops {
    pub size: u32,

    pub iobuf_copy:
        unsafe extern "C" fn(*const cw_backend, *const c_void, usize, *mut cw_iobuf) -> c_int,
    pub iobuf_adopt: unsafe extern "C" fn(
        *const cw_backend,
        *mut c_void,
        usize,
        Option<cw_release_fn>,
        *mut c_void,
        *mut cw_iobuf,
    ) -> c_int,
    pub iobuf_static: unsafe extern "C" fn(*const cw_backend, *const c_void, usize, *mut cw_iobuf),
    pub iobuf_clone: unsafe extern "C" fn(*const cw_iobuf, *mut cw_iobuf),
    pub iobuf_release: unsafe extern "C" fn(*mut cw_iobuf),
    pub iobuf_slice: unsafe extern "C" fn(*const cw_iobuf, usize, usize, *mut cw_iobuf) -> c_int,
    pub iobuf_split_to: unsafe extern "C" fn(*mut cw_iobuf, usize, *mut cw_iobuf) -> c_int,
    pub iobuf_advance: unsafe extern "C" fn(*mut cw_iobuf, usize) -> c_int,
    pub iobuf_try_into_mut: unsafe extern "C" fn(*mut cw_iobuf, *mut cw_iobuf_mut) -> bool,
    pub iobuf_is_pooled: unsafe extern "C" fn(*const cw_iobuf) -> bool,

    pub mut_alloc:
        unsafe extern "C" fn(*const cw_backend, usize, usize, bool, *mut cw_iobuf_mut) -> c_int,
    pub mut_release: unsafe extern "C" fn(*mut cw_iobuf_mut),
    pub mut_advance: unsafe extern "C" fn(*mut cw_iobuf_mut, usize) -> c_int,
    pub mut_freeze: unsafe extern "C" fn(*mut cw_iobuf_mut, *mut cw_iobuf),
    pub mut_is_pooled: unsafe extern "C" fn(*const cw_iobuf_mut) -> bool,

    pub bufs_new: unsafe extern "C" fn(*const cw_backend) -> *mut cw_iobufs,
    pub bufs_release: unsafe extern "C" fn(*mut cw_iobufs),
    pub bufs_append: unsafe extern "C" fn(*mut cw_iobufs, *mut cw_iobuf) -> c_int,
    pub bufs_prepend: unsafe extern "C" fn(*mut cw_iobufs, *mut cw_iobuf) -> c_int,
    pub bufs_len: unsafe extern "C" fn(*const cw_iobufs) -> usize,
    pub bufs_chunk_count: unsafe extern "C" fn(*const cw_iobufs) -> usize,
    pub bufs_chunk: unsafe extern "C" fn(*const cw_iobufs, usize) -> *const cw_iobuf,
    pub bufs_clone: unsafe extern "C" fn(*const cw_iobufs) -> *mut cw_iobufs,
    pub bufs_split_to: unsafe extern "C" fn(*mut cw_iobufs, usize, *mut *mut cw_iobufs) -> c_int,
    pub bufs_advance: unsafe extern "C" fn(*mut cw_iobufs, usize) -> c_int,
    pub bufs_coalesce:
        unsafe extern "C" fn(*mut cw_iobufs, *mut cw_bufpool, *mut cw_iobuf) -> c_int,

    pub mbufs_new: unsafe extern "C" fn(*const cw_backend) -> *mut cw_iobufs_mut,
    pub mbufs_release: unsafe extern "C" fn(*mut cw_iobufs_mut),
    pub mbufs_append: unsafe extern "C" fn(*mut cw_iobufs_mut, *mut cw_iobuf_mut) -> c_int,
    pub mbufs_len: unsafe extern "C" fn(*const cw_iobufs_mut) -> usize,
    pub mbufs_capacity: unsafe extern "C" fn(*const cw_iobufs_mut) -> usize,
    pub mbufs_spare: unsafe extern "C" fn(*const cw_iobufs_mut) -> usize,
    pub mbufs_chunk_count: unsafe extern "C" fn(*const cw_iobufs_mut) -> usize,
    pub mbufs_chunk: unsafe extern "C" fn(*const cw_iobufs_mut, usize) -> *const cw_iobuf_mut,
    pub mbufs_put: unsafe extern "C" fn(*mut cw_iobufs_mut, *const c_void, usize) -> c_int,
    pub mbufs_set_len: unsafe extern "C" fn(*mut cw_iobufs_mut, usize) -> c_int,
    pub mbufs_advance: unsafe extern "C" fn(*mut cw_iobufs_mut, usize) -> c_int,
    pub mbufs_freeze: unsafe extern "C" fn(*mut cw_iobufs_mut) -> *mut cw_iobufs,
    pub mbufs_coalesce:
        unsafe extern "C" fn(*mut cw_iobufs_mut, *mut cw_bufpool, *mut cw_iobuf_mut) -> c_int,

    pub builder_new: unsafe extern "C" fn(*mut cw_bufpool, usize) -> *mut cw_iobufs_builder,
    pub builder_release: unsafe extern "C" fn(*mut cw_iobufs_builder),
    pub builder_put: unsafe extern "C" fn(*mut cw_iobufs_builder, *const c_void, usize) -> c_int,
    pub builder_push: unsafe extern "C" fn(*mut cw_iobufs_builder, *mut cw_iobuf) -> c_int,
    pub builder_finish: unsafe extern "C" fn(*mut cw_iobufs_builder) -> *mut cw_iobufs,

    pub pool_new: unsafe extern "C" fn(
        *const cw_backend,
        *const cw_bufpool_config,
        *mut *mut cw_bufpool,
    ) -> c_int,
    pub pool_release: unsafe extern "C" fn(*mut cw_bufpool),
    pub pool_try_alloc:
        unsafe extern "C" fn(*mut cw_bufpool, usize, *mut cw_iobuf_mut, *mut c_int) -> c_int,
    pub pool_alloc: unsafe extern "C" fn(*mut cw_bufpool, usize, *mut cw_iobuf_mut) -> c_int,
    pub pool_config: unsafe extern "C" fn(*const cw_bufpool, *mut cw_bufpool_config),
    pub pool_stats: unsafe extern "C" fn(*const cw_bufpool, usize, *mut cw_bufpool_stats) -> c_int,
    pub runtime_pool: unsafe extern "C" fn(*mut cw_ctx, c_int) -> *mut cw_bufpool,
}

// ---- Storage (cw/storage.h), ABI 1.1 and 1.4 --------------------------------

pub const CW_ERR_WRITE_FAILED: c_int = -12;
pub const CW_ERR_PARTITION_NAME_INVALID: c_int = -20;
pub const CW_ERR_PARTITION_CREATION_FAILED: c_int = -21;
pub const CW_ERR_PARTITION_MISSING: c_int = -22;
pub const CW_ERR_PARTITION_CORRUPT: c_int = -23;
pub const CW_ERR_BLOB_OPEN_FAILED: c_int = -24;
pub const CW_ERR_BLOB_MISSING: c_int = -25;
pub const CW_ERR_BLOB_RESIZE_FAILED: c_int = -26;
pub const CW_ERR_BLOB_SYNC_FAILED: c_int = -27;
pub const CW_ERR_BLOB_INSUFFICIENT_LENGTH: c_int = -28;
pub const CW_ERR_BLOB_CORRUPT: c_int = -29;
pub const CW_ERR_BLOB_LAYOUT_MISMATCH: c_int = -30;
pub const CW_ERR_BLOB_VERSION_MISMATCH: c_int = -31;
pub const CW_ERR_OFFSET_OVERFLOW: c_int = -33;
pub const CW_ERR_IO: c_int = -34;

pub const CW_READ_ALL: u8 = 1;
pub const CW_WRITE_SYNC: u8 = 1;
pub const CW_WRITE_ALL: u8 = 3;

pub const CW_HEADER_OK: c_int = 0;
pub const CW_HEADER_INVALID_MAGIC: c_int = 1;
pub const CW_HEADER_UNSUPPORTED_RUNTIME_VERSION: c_int = 2;
pub const CW_HEADER_INVALID_CHECKSUM: c_int = 3;
pub const CW_HEADER_INVALID_PADDING: c_int = 4;
pub const CW_HEADER_TRUNCATED: c_int = 5;
pub const CW_HEADER_LAYOUT_MISMATCH: c_int = 6;
pub const CW_HEADER_VERSION_MISMATCH: c_int = 7;

#[repr(C)]
pub struct cw_blob {
    _opaque: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct cw_blob_name {
    pub data: *const u8,
    pub len: usize,
}

#[repr(C)]
pub struct cw_blob_names {
    pub hdr: cw_object,
    pub count: usize,
    pub names: *const cw_blob_name,
}

#[repr(C)]
pub struct cw_storage_error {
    pub code: c_int,
    pub os_error: c_int,
    pub fault: c_int,
    pub expected: cw_blob_range,
    pub found: u16,
    pub partition: [c_char; 256],
    pub name: [c_char; 255],
    pub message: [c_char; 768],
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct cw_blob_header {
    pub fault: c_int,
    pub fresh: bool,
    pub healed: bool,
    pub layout: u16,
    pub version: u16,
    pub data_offset: u64,
    pub size: u64,
    pub magic: [u8; 4],
    pub runtime_expected: u16,
    pub runtime_found: u16,
    pub required_len: u64,
    pub raw_len: u64,
    pub expected: cw_blob_range,
    pub found: u16,
}

/// `cw/storage.h`: the storage entries, reached through `cw_backend.storage`.
#[repr(C)]
pub struct cw_storage_ops {
    pub size: u32,
    pub crc32c: unsafe extern "C" fn(u32, *const c_void, usize) -> u32,
    pub header_create: unsafe extern "C" fn(u16, u16, *mut u8, usize, *mut usize) -> c_int,
    pub header_parse: unsafe extern "C" fn(
        *const u8,
        u64,
        cw_blob_range,
        cw_blob_range,
        *mut cw_blob_header,
    ) -> c_int,
    pub header_resolve: unsafe extern "C" fn(
        *const u8,
        u64,
        cw_blob_range,
        cw_blob_range,
        *mut cw_blob_header,
    ) -> c_int,
    pub open: unsafe extern "C" fn(
        *mut cw_ctx,
        *const c_char,
        *const c_void,
        usize,
        cw_blob_range,
        *mut *mut cw_blob,
        *mut u64,
        *mut u16,
        *mut cw_storage_error,
    ) -> c_int,
    pub remove: unsafe extern "C" fn(
        *mut cw_ctx,
        *const c_char,
        *const c_void,
        usize,
        *mut cw_storage_error,
    ) -> c_int,
    pub scan: unsafe extern "C" fn(
        *mut cw_ctx,
        *const c_char,
        *mut *mut cw_blob_names,
        *mut cw_storage_error,
    ) -> c_int,
    pub names_release: unsafe extern "C" fn(*mut cw_blob_names),
    pub blob_clone: unsafe extern "C" fn(*mut cw_blob) -> *mut cw_blob,
    pub blob_close: unsafe extern "C" fn(*mut cw_blob),
    pub blob_read_at: unsafe extern "C" fn(
        *mut cw_blob,
        u64,
        usize,
        u8,
        *mut cw_iobuf_mut,
        *mut cw_storage_error,
    ) -> c_int,
    pub blob_read_into: unsafe extern "C" fn(
        *mut cw_blob,
        u64,
        *mut c_void,
        usize,
        u8,
        *mut cw_storage_error,
    ) -> c_int,
    pub blob_read_at_buf: unsafe extern "C" fn(
        *mut cw_blob,
        u64,
        usize,
        *mut cw_iobufs_mut,
        u8,
        *mut cw_storage_error,
    ) -> c_int,
    pub blob_write_at: unsafe extern "C" fn(
        *mut cw_blob,
        u64,
        *const c_void,
        usize,
        u8,
        *mut cw_storage_error,
    ) -> c_int,
    pub blob_write_bufs: unsafe extern "C" fn(
        *mut cw_blob,
        u64,
        *const cw_iobufs,
        u8,
        *mut cw_storage_error,
    ) -> c_int,
    pub blob_resize: unsafe extern "C" fn(*mut cw_blob, u64, *mut cw_storage_error) -> c_int,
    pub blob_sync: unsafe extern "C" fn(*mut cw_blob, *mut cw_storage_error) -> c_int,
    pub blob_start_sync: unsafe extern "C" fn(*mut cw_blob) -> *mut cw_handle,
    pub set_faults: unsafe extern "C" fn(*mut cw_ctx, *const cw_storage_faults) -> c_int,
    pub audit: unsafe extern "C" fn(*mut cw_ctx, *mut c_char) -> c_int,
}

// ---- Metrics (cw/metrics.h), ABI 1.1 -----------------------------------------

pub const CW_METRIC_COUNTER: c_int = 1;
pub const CW_METRIC_GAUGE: c_int = 2;
pub const CW_METRIC_HISTOGRAM: c_int = 3;

#[repr(C)]
pub struct cw_metric {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct cw_metric_type {
    pub kind: c_int,
    pub buckets: *const f64,
    pub nbuckets: usize,
    pub labels: *const *const c_char,
    pub nlabels: usize,
}

/// `cw/metrics.h`: the metric entries, reached through `cw_backend.metrics`.
#[repr(C)]
pub struct cw_metric_ops {
    pub size: u32,
    pub register_metric: unsafe extern "C" fn(
        *mut cw_ctx,
        *const c_char,
        *const c_char,
        *const cw_metric_type,
    ) -> *mut cw_metric,
    pub encode: unsafe extern "C" fn(*mut cw_ctx) -> *mut c_char,
    pub endpoint: Option<unsafe extern "C" fn(*mut cw_ctx, *mut c_char, usize) -> c_int>,
    pub clone: unsafe extern "C" fn(*mut cw_metric) -> *mut cw_metric,
    pub release: unsafe extern "C" fn(*mut cw_metric),
    pub counter_add: unsafe extern "C" fn(*mut cw_metric, u64),
    pub counter_get: unsafe extern "C" fn(*const cw_metric) -> u64,
    pub gauge_set: unsafe extern "C" fn(*mut cw_metric, i64),
    pub gauge_add: unsafe extern "C" fn(*mut cw_metric, i64),
    pub gauge_get: unsafe extern "C" fn(*const cw_metric) -> i64,
    pub histogram_observe: unsafe extern "C" fn(*mut cw_metric, f64),
    pub histogram_count: unsafe extern "C" fn(*const cw_metric) -> u64,
    pub histogram_sum: unsafe extern "C" fn(*const cw_metric) -> f64,
    pub family_get: unsafe extern "C" fn(*mut cw_metric, *const *const c_char) -> *mut cw_metric,
    pub family_remove: unsafe extern "C" fn(*mut cw_metric, *const *const c_char) -> c_int,
}

// ---- Network (cw/network.h), ABI 1.1 and 1.4 --------------------------------

pub const CW_ERR_BIND_FAILED: c_int = -10;
pub const CW_ERR_CONNECTION_FAILED: c_int = -11;
pub const CW_ERR_SEND_FAILED: c_int = -14;
pub const CW_ERR_RECV_FAILED: c_int = -15;
pub const CW_ERR_RESOLVE_FAILED: c_int = -16;
pub const CW_ADDR_IPV4: u8 = 4;
pub const CW_ADDR_IPV6: u8 = 6;
pub const CW_NET_EPHEMERAL_FIRST: u32 = 32768;
pub const CW_NET_EPHEMERAL_END: u32 = 61000;

#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct cw_addr {
    pub family: u8,
    pub ip: [u8; 16],
    pub port: u16,
}

#[repr(C)]
pub struct cw_listener {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_sink {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cw_stream {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct cw_conn {
    pub peer: cw_addr,
    pub sink: *mut cw_sink,
    pub stream: *mut cw_stream,
}

#[repr(C)]
pub struct cw_resolve_error {
    pub message: [c_char; 320],
}

/// `cw/network.h`: the network entries, reached through `cw_backend.network`.
#[repr(C)]
pub struct cw_network_ops {
    pub size: u32,
    pub bind: unsafe extern "C" fn(*mut cw_ctx, *const cw_addr, *mut *mut cw_listener) -> c_int,
    pub local_addr: unsafe extern "C" fn(*const cw_listener, *mut cw_addr) -> c_int,
    pub wait_accept: unsafe extern "C" fn(*mut cw_wait, *mut cw_listener, *mut cw_conn),
    pub listener_close: unsafe extern "C" fn(*mut cw_listener),
    pub dial: unsafe extern "C" fn(
        *mut cw_ctx,
        *const cw_addr,
        *mut *mut cw_sink,
        *mut *mut cw_stream,
    ) -> c_int,
    pub wait_sink_send: unsafe extern "C" fn(*mut cw_wait, *mut cw_sink, *const cw_iobufs),
    pub sink_send: unsafe extern "C" fn(*mut cw_sink, *const cw_iobufs) -> c_int,
    pub sink_close: unsafe extern "C" fn(*mut cw_sink),
    pub wait_stream_recv:
        unsafe extern "C" fn(*mut cw_wait, *mut cw_stream, usize, *mut *mut cw_iobufs),
    pub stream_recv: unsafe extern "C" fn(*mut cw_stream, usize, *mut *mut cw_iobufs) -> c_int,
    pub stream_peek: unsafe extern "C" fn(*mut cw_stream, usize, *mut u8) -> usize,
    pub stream_close: unsafe extern "C" fn(*mut cw_stream),
    pub resolve: unsafe extern "C" fn(
        *mut cw_ctx,
        *const c_char,
        *mut cw_addr,
        usize,
        *mut usize,
        *mut cw_resolve_error,
    ) -> c_int,
    pub resolver_register:
        unsafe extern "C" fn(*mut cw_ctx, *const c_char, *const cw_addr, usize) -> c_int,
    pub mock_channel:
        unsafe extern "C" fn(*mut cw_ctx, *mut *mut cw_sink, *mut *mut cw_stream) -> c_int,
    pub partition: unsafe extern "C" fn(*mut cw_ctx, *const cw_addr, *const cw_addr) -> c_int,
    pub repair: unsafe extern "C" fn(*mut cw_ctx, *const cw_addr, *const cw_addr) -> c_int,
}
