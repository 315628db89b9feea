// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The `storage` profile (spec/17-storage.md): the `cw_storage_ops` table.
//!
//! `codec` holds the pure functions (CRC-32C, the header), `store` the
//! run's memory storage; this file is the FFI boundary, turning the C
//! pointers into those modules' types.

pub mod blob;
pub mod codec;
mod fail;
pub mod files;
pub mod sparse;
pub mod store;

use crate::ffi::*;
use crate::runtime::{self, Rt};
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;
use store::Blob;

fn ctx_rt(ctx: *mut cw_ctx) -> *mut Rt {
    // SAFETY: every context of this backend begins with a Header.
    unsafe { runtime::rt_of(ctx as *const c_void) }
}

unsafe extern "C" fn crc32c(crc: u32, data: *const c_void, len: usize) -> u32 {
    if data.is_null() || len == 0 {
        return crc;
    }
    // SAFETY: the caller's `len` bytes.
    codec::crc32c(crc, unsafe {
        std::slice::from_raw_parts(data as *const u8, len)
    })
}

unsafe extern "C" fn header_create(
    layout: u16,
    version: u16,
    out: *mut u8,
    cap: usize,
    len: *mut usize,
) -> c_int {
    if !len.is_null() {
        // SAFETY: the caller's output.
        unsafe { *len = 0 };
    }
    if out.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: the caller's buffer of `cap` bytes.
    let buf = unsafe { std::slice::from_raw_parts_mut(out, cap) };
    match codec::create(layout, version, buf) {
        Some(n) => {
            if !len.is_null() {
                // SAFETY: as above.
                unsafe { *len = n };
            }
            CW_OK
        }
        None => CW_ERR_INVALID,
    }
}

fn raw_slice<'a>(raw: *const u8, raw_len: u64) -> &'a [u8] {
    let n = raw_len.min(codec::V1_LEN as u64) as usize;
    if raw.is_null() || n == 0 {
        return &[];
    }
    // SAFETY: the caller gives the first min(raw_len, 4096) bytes.
    unsafe { std::slice::from_raw_parts(raw, n) }
}

unsafe extern "C" fn header_parse(
    raw: *const u8,
    raw_len: u64,
    layouts: cw_blob_range,
    versions: cw_blob_range,
    out: *mut cw_blob_header,
) -> c_int {
    let mut h = cw_blob_header::default();
    let rc = if raw.is_null() && raw_len > 0 {
        h.raw_len = raw_len;
        CW_ERR_INVALID
    } else {
        codec::parse(raw_slice(raw, raw_len), raw_len, layouts, versions, &mut h)
    };
    if !out.is_null() {
        // SAFETY: the caller's output.
        unsafe { *out = h };
    }
    rc
}

unsafe extern "C" fn header_resolve(
    raw: *const u8,
    raw_len: u64,
    layouts: cw_blob_range,
    versions: cw_blob_range,
    out: *mut cw_blob_header,
) -> c_int {
    let mut h = cw_blob_header::default();
    let rc = if raw.is_null() && raw_len > 0 {
        h.raw_len = raw_len;
        CW_ERR_INVALID
    } else {
        codec::resolve(raw_slice(raw, raw_len), raw_len, layouts, versions, &mut h)
    };
    if !out.is_null() {
        // SAFETY: the caller's output.
        unsafe { *out = h };
    }
    rc
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn open(
    ctx: *mut cw_ctx,
    partition: *const c_char,
    name: *const c_void,
    name_len: usize,
    versions: cw_blob_range,
    blob: *mut *mut cw_blob,
    size: *mut u64,
    version: *mut u16,
    err: *mut cw_storage_error,
) -> c_int {
    let mut b = ptr::null_mut();
    let rc = store::open(
        ctx_rt(ctx),
        partition,
        name,
        name_len,
        versions,
        &mut b,
        size,
        version,
        err,
    );
    if !blob.is_null() {
        // SAFETY: the caller's output.
        unsafe { *blob = b };
    }
    rc
}

unsafe extern "C" fn remove(
    ctx: *mut cw_ctx,
    partition: *const c_char,
    name: *const c_void,
    name_len: usize,
    err: *mut cw_storage_error,
) -> c_int {
    store::remove(ctx_rt(ctx), partition, name, name_len, err)
}

unsafe extern "C" fn scan(
    ctx: *mut cw_ctx,
    partition: *const c_char,
    out: *mut *mut cw_blob_names,
    err: *mut cw_storage_error,
) -> c_int {
    let mut l = ptr::null_mut();
    let rc = store::scan(ctx_rt(ctx), partition, &mut l, err);
    if !out.is_null() {
        // SAFETY: the caller's output.
        unsafe { *out = l };
    }
    rc
}

unsafe extern "C" fn names_release(n: *mut cw_blob_names) {
    store::names_release(n)
}

unsafe extern "C" fn blob_clone(b: *mut cw_blob) -> *mut cw_blob {
    blob::clone_blob(b as *mut Blob) as *mut cw_blob
}

unsafe extern "C" fn blob_close(b: *mut cw_blob) {
    blob::close_blob(b as *mut Blob)
}

unsafe extern "C" fn blob_read_at(
    b: *mut cw_blob,
    offset: u64,
    len: usize,
    options: u8,
    out: *mut cw_iobuf_mut,
    err: *mut cw_storage_error,
) -> c_int {
    // SAFETY: the caller's output handle.
    blob::read_at(
        b as *mut Blob,
        offset,
        len,
        options,
        unsafe { &mut *out },
        err,
    )
}

unsafe extern "C" fn blob_read_into(
    b: *mut cw_blob,
    offset: u64,
    dst: *mut c_void,
    len: usize,
    options: u8,
    err: *mut cw_storage_error,
) -> c_int {
    blob::read_into(b as *mut Blob, offset, dst, len, options, err)
}

unsafe extern "C" fn blob_read_at_buf(
    b: *mut cw_blob,
    offset: u64,
    len: usize,
    bufs: *mut cw_iobufs_mut,
    options: u8,
    err: *mut cw_storage_error,
) -> c_int {
    blob::read_at_buf(b as *mut Blob, offset, len, bufs, options, err)
}

unsafe extern "C" fn blob_write_at(
    b: *mut cw_blob,
    offset: u64,
    src: *const c_void,
    len: usize,
    options: u8,
    err: *mut cw_storage_error,
) -> c_int {
    blob::write_at(b as *mut Blob, offset, src, len, options, err)
}

unsafe extern "C" fn blob_write_bufs(
    b: *mut cw_blob,
    offset: u64,
    bufs: *const cw_iobufs,
    options: u8,
    err: *mut cw_storage_error,
) -> c_int {
    blob::write_bufs(b as *mut Blob, offset, bufs, options, err)
}

unsafe extern "C" fn blob_resize(b: *mut cw_blob, len: u64, err: *mut cw_storage_error) -> c_int {
    blob::resize(b as *mut Blob, len, err)
}

unsafe extern "C" fn blob_sync(b: *mut cw_blob, err: *mut cw_storage_error) -> c_int {
    blob::sync(b as *mut Blob, err)
}

unsafe extern "C" fn blob_start_sync(b: *mut cw_blob) -> *mut cw_handle {
    blob::start_sync(b as *mut Blob) as *mut cw_handle
}

unsafe extern "C" fn set_faults(ctx: *mut cw_ctx, f: *const cw_storage_faults) -> c_int {
    store::set_faults(ctx_rt(ctx), f)
}

unsafe extern "C" fn audit(ctx: *mut cw_ctx, out: *mut c_char) -> c_int {
    store::storage_audit(ctx_rt(ctx), out)
}

pub static STORAGE_OPS: cw_storage_ops = cw_storage_ops {
    size: std::mem::size_of::<cw_storage_ops>() as u32,
    crc32c,
    header_create,
    header_parse,
    header_resolve,
    open,
    remove,
    scan,
    names_release,
    blob_clone,
    blob_close,
    blob_read_at,
    blob_read_into,
    blob_read_at_buf,
    blob_write_at,
    blob_write_bufs,
    blob_resize,
    blob_sync,
    blob_start_sync,
    set_faults,
    audit,
};
