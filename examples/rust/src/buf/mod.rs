// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The `buffers` profile (spec/12-buffers.md): the `cw_buffer_ops` table.
//!
//! The submodules hold the logic (`bytes`: shared storage, `iobuf`: single
//! handles, `lists`, `builder`, `pool`); this file is the FFI boundary of
//! the list, builder and pool entries, turning their C pointers into the
//! Rust types. Buffers are not objects of a run: they work on any thread
//! and outlive runs (BUF-018, BUF-024), so nothing here touches `Rt`
//! except `runtime_pool`.

pub mod builder;
pub mod bytes;
pub mod iobuf;
pub mod lists;
pub mod pool;

use crate::ffi::*;
use builder::Builder;
use lists::{List, MutList};
use pool::Pool;
use std::os::raw::{c_int, c_void};
use std::ptr;

unsafe extern "C" fn bufs_new(b: *const cw_backend) -> *mut cw_iobufs {
    lists::new_list(b) as *mut cw_iobufs
}

unsafe extern "C" fn bufs_release(l: *mut cw_iobufs) {
    lists::release_list(l as *mut List)
}

unsafe extern "C" fn bufs_append(l: *mut cw_iobufs, buf: *mut cw_iobuf) -> c_int {
    // SAFETY: the caller's live list and handle (cw/iobuf.h).
    unsafe { lists::add(&mut *(l as *mut List), &mut *buf, false) }
}

unsafe extern "C" fn bufs_prepend(l: *mut cw_iobufs, buf: *mut cw_iobuf) -> c_int {
    // SAFETY: as in bufs_append.
    unsafe { lists::add(&mut *(l as *mut List), &mut *buf, true) }
}

unsafe extern "C" fn bufs_len(l: *const cw_iobufs) -> usize {
    // SAFETY: the caller's live list.
    unsafe { (*(l as *const List)).len }
}

unsafe extern "C" fn bufs_chunk_count(l: *const cw_iobufs) -> usize {
    // SAFETY: the caller's live list.
    unsafe { (*(l as *const List)).chunks.len() }
}

unsafe extern "C" fn bufs_chunk(l: *const cw_iobufs, i: usize) -> *const cw_iobuf {
    // SAFETY: the caller's live list; the chunk is lent until it changes.
    match unsafe { (*(l as *const List)).chunks.get(i) } {
        Some(c) => c,
        None => ptr::null(),
    }
}

unsafe extern "C" fn bufs_clone(l: *const cw_iobufs) -> *mut cw_iobufs {
    // SAFETY: the caller's live list.
    lists::clone_list(unsafe { &*(l as *const List) }) as *mut cw_iobufs
}

unsafe extern "C" fn bufs_split_to(
    l: *mut cw_iobufs,
    at: usize,
    head: *mut *mut cw_iobufs,
) -> c_int {
    // SAFETY: the caller's live list and output.
    unsafe {
        *head = ptr::null_mut();
        match lists::split_to(&mut *(l as *mut List), at) {
            Ok(h) => {
                *head = h as *mut cw_iobufs;
                CW_OK
            }
            Err(rc) => rc,
        }
    }
}

unsafe extern "C" fn bufs_advance(l: *mut cw_iobufs, n: usize) -> c_int {
    // SAFETY: the caller's live list.
    let l = unsafe { &mut *(l as *mut List) };
    if n > l.len {
        return CW_ERR_INVALID;
    }
    lists::advance(l, n);
    CW_OK
}

unsafe extern "C" fn bufs_coalesce(
    l: *mut cw_iobufs,
    p: *mut cw_bufpool,
    out: *mut cw_iobuf,
) -> c_int {
    // SAFETY: the caller's live list, pool (or NULL) and handle.
    unsafe { lists::coalesce(&mut *(l as *mut List), p as *mut Pool, &mut *out) }
}

unsafe extern "C" fn mbufs_new(b: *const cw_backend) -> *mut cw_iobufs_mut {
    lists::new_mut_list(b) as *mut cw_iobufs_mut
}

unsafe extern "C" fn mbufs_release(l: *mut cw_iobufs_mut) {
    lists::release_mut_list(l as *mut MutList)
}

unsafe extern "C" fn mbufs_append(l: *mut cw_iobufs_mut, m: *mut cw_iobuf_mut) -> c_int {
    // SAFETY: the caller's live list and handle.
    unsafe { lists::mut_append(&mut *(l as *mut MutList), &mut *m) }
}

unsafe extern "C" fn mbufs_len(l: *const cw_iobufs_mut) -> usize {
    // SAFETY: the caller's live list.
    lists::mut_len(unsafe { &*(l as *const MutList) })
}

unsafe extern "C" fn mbufs_capacity(l: *const cw_iobufs_mut) -> usize {
    // SAFETY: the caller's live list.
    lists::mut_capacity(unsafe { &*(l as *const MutList) })
}

unsafe extern "C" fn mbufs_spare(l: *const cw_iobufs_mut) -> usize {
    // SAFETY: the caller's live list.
    lists::mut_spare(unsafe { &*(l as *const MutList) })
}

unsafe extern "C" fn mbufs_chunk_count(l: *const cw_iobufs_mut) -> usize {
    // SAFETY: the caller's live list.
    unsafe { (*(l as *const MutList)).chunks.len() }
}

unsafe extern "C" fn mbufs_chunk(l: *const cw_iobufs_mut, i: usize) -> *const cw_iobuf_mut {
    // SAFETY: the caller's live list; the chunk is lent until it changes.
    match unsafe { (*(l as *const MutList)).chunks.get(i) } {
        Some(c) => c,
        None => ptr::null(),
    }
}

unsafe extern "C" fn mbufs_put(l: *mut cw_iobufs_mut, src: *const c_void, n: usize) -> c_int {
    // SAFETY: the caller's live list; `src` holds `n` bytes.
    lists::mut_put(unsafe { &mut *(l as *mut MutList) }, src as *const u8, n)
}

unsafe extern "C" fn mbufs_set_len(l: *mut cw_iobufs_mut, n: usize) -> c_int {
    // SAFETY: the caller's live list.
    lists::mut_set_len(unsafe { &mut *(l as *mut MutList) }, n)
}

unsafe extern "C" fn mbufs_advance(l: *mut cw_iobufs_mut, n: usize) -> c_int {
    // SAFETY: the caller's live list.
    lists::mut_advance(unsafe { &mut *(l as *mut MutList) }, n)
}

unsafe extern "C" fn mbufs_freeze(l: *mut cw_iobufs_mut) -> *mut cw_iobufs {
    // SAFETY: the caller's live list.
    lists::mut_freeze(unsafe { &mut *(l as *mut MutList) }) as *mut cw_iobufs
}

unsafe extern "C" fn mbufs_coalesce(
    l: *mut cw_iobufs_mut,
    p: *mut cw_bufpool,
    out: *mut cw_iobuf_mut,
) -> c_int {
    // SAFETY: the caller's live list, pool (or NULL) and handle.
    unsafe { lists::mut_coalesce(&mut *(l as *mut MutList), p as *mut Pool, &mut *out) }
}

unsafe extern "C" fn builder_new(p: *mut cw_bufpool, capacity: usize) -> *mut cw_iobufs_builder {
    builder::new(p as *mut Pool, capacity) as *mut cw_iobufs_builder
}

unsafe extern "C" fn builder_release(b: *mut cw_iobufs_builder) {
    builder::release_builder(b as *mut Builder)
}

unsafe extern "C" fn builder_put(b: *mut cw_iobufs_builder, src: *const c_void, n: usize) -> c_int {
    // SAFETY: the caller's live builder; `src` holds `n` bytes.
    builder::put(unsafe { &mut *(b as *mut Builder) }, src as *const u8, n)
}

unsafe extern "C" fn builder_push(b: *mut cw_iobufs_builder, buf: *mut cw_iobuf) -> c_int {
    // SAFETY: the caller's live builder and handle.
    unsafe { builder::push(&mut *(b as *mut Builder), &mut *buf) }
}

unsafe extern "C" fn builder_finish(b: *mut cw_iobufs_builder) -> *mut cw_iobufs {
    builder::finish(b as *mut Builder) as *mut cw_iobufs
}

unsafe extern "C" fn pool_new(
    b: *const cw_backend,
    cfg: *const cw_bufpool_config,
    out: *mut *mut cw_bufpool,
) -> c_int {
    // SAFETY: the caller's configuration and output.
    unsafe {
        *out = ptr::null_mut();
        if cfg.is_null() {
            return CW_ERR_INVALID;
        }
        match pool::new(b, &*cfg) {
            Ok(p) => {
                *out = p as *mut cw_bufpool;
                CW_OK
            }
            Err(rc) => rc,
        }
    }
}

unsafe extern "C" fn pool_release(p: *mut cw_bufpool) {
    pool::release(p as *mut Pool)
}

unsafe extern "C" fn pool_try_alloc(
    p: *mut cw_bufpool,
    cap: usize,
    out: *mut cw_iobuf_mut,
    why: *mut c_int,
) -> c_int {
    // SAFETY: the caller's live pool and handle.
    pool::try_alloc(p as *mut Pool, cap, unsafe { &mut *out }, why)
}

unsafe extern "C" fn pool_alloc(p: *mut cw_bufpool, cap: usize, out: *mut cw_iobuf_mut) -> c_int {
    // SAFETY: the caller's live pool and handle.
    pool::alloc_any(p as *mut Pool, cap, unsafe { &mut *out })
}

unsafe extern "C" fn pool_config(p: *const cw_bufpool, out: *mut cw_bufpool_config) {
    // SAFETY: the caller's live pool and output.
    unsafe { *out = (*(p as *const Pool)).cfg };
}

unsafe extern "C" fn pool_stats(
    p: *const cw_bufpool,
    cls: usize,
    out: *mut cw_bufpool_stats,
) -> c_int {
    // SAFETY: the caller's live pool and output.
    pool::stats(p as *const Pool, cls, unsafe { &mut *out })
}

unsafe extern "C" fn runtime_pool(ctx: *mut cw_ctx, kind: c_int) -> *mut cw_bufpool {
    // SAFETY: `ctx` is a live context; its run is live.
    let rt = unsafe { crate::runtime::rt_of(ctx as *const c_void) };
    // SAFETY: as above.
    let pools = unsafe { (*rt).pools };
    match kind {
        0 => pools[0] as *mut cw_bufpool,
        1 => pools[1] as *mut cw_bufpool,
        _ => ptr::null_mut(),
    }
}

pub static BUFFER_OPS: cw_buffer_ops = cw_buffer_ops {
    size: std::mem::size_of::<cw_buffer_ops>() as u32,
    iobuf_copy: iobuf::iobuf_copy,
    iobuf_adopt: iobuf::iobuf_adopt,
    iobuf_static: iobuf::iobuf_static,
    iobuf_clone: iobuf::iobuf_clone,
    iobuf_release: iobuf::iobuf_release,
    iobuf_slice: iobuf::iobuf_slice,
    iobuf_split_to: iobuf::iobuf_split_to,
    iobuf_advance: iobuf::iobuf_advance,
    iobuf_try_into_mut: iobuf::iobuf_try_into_mut,
    iobuf_is_pooled: iobuf::iobuf_is_pooled,
    mut_alloc: iobuf::mut_alloc,
    mut_release: iobuf::mut_release,
    mut_advance: iobuf::mut_advance,
    mut_freeze: iobuf::mut_freeze,
    mut_is_pooled: iobuf::mut_is_pooled,
    bufs_new,
    bufs_release,
    bufs_append,
    bufs_prepend,
    bufs_len,
    bufs_chunk_count,
    bufs_chunk,
    bufs_clone,
    bufs_split_to,
    bufs_advance,
    bufs_coalesce,
    mbufs_new,
    mbufs_release,
    mbufs_append,
    mbufs_len,
    mbufs_capacity,
    mbufs_spare,
    mbufs_chunk_count,
    mbufs_chunk,
    mbufs_put,
    mbufs_set_len,
    mbufs_advance,
    mbufs_freeze,
    mbufs_coalesce,
    builder_new,
    builder_release,
    builder_put,
    builder_push,
    builder_finish,
    pool_new,
    pool_release,
    pool_try_alloc,
    pool_alloc,
    pool_config,
    pool_stats,
    runtime_pool,
};
