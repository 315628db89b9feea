// SPDX-License-Identifier: Apache-2.0 OR MIT
//! `cw_iobuf` and `cw_iobuf_mut` (BUF-001..BUF-011, BUF-029, BUF-033).
//!
//! A handle is the view plus its owner (`bytes.rs`). Views share the owner
//! and take a reference; an empty result never holds one (BUF-007), so
//! every operation that would leave or return zero bytes hands out the
//! backend's empty handle instead.

use super::bytes::{self, Bytes};
use crate::ffi::*;
use std::os::raw::{c_int, c_void};
use std::ptr;

fn owner(o: *mut c_void) -> *mut Bytes {
    o as *mut Bytes
}

/// A new view `[data, data + len)` of `b`, taking one more reference.
fn view(be: *const cw_backend, b: *mut Bytes, data: *const u8, len: usize) -> cw_iobuf {
    if len == 0 {
        return bytes::empty(be);
    }
    if !b.is_null() {
        bytes::retain(b);
    }
    cw_iobuf {
        data,
        len,
        owner: b as *mut c_void,
        ..bytes::empty(be)
    }
}

/// Drop the reference a handle holds, leaving it empty.
pub fn release(buf: &mut cw_iobuf) {
    let b = owner(buf.owner);
    if !b.is_null() {
        bytes::release(b);
    }
    *buf = bytes::empty(buf.hdr.backend);
}

pub fn release_mut(m: &mut cw_iobuf_mut) {
    let b = owner(m.owner);
    if !b.is_null() {
        bytes::release(b);
    }
    *m = bytes::empty_mut(m.hdr.backend);
}

/// A fresh `cw_iobuf_mut` of `cap` bytes at a multiple of `align`.
pub fn alloc_mut(
    be: *const cw_backend,
    cap: usize,
    align: usize,
    zeroed: bool,
    out: &mut cw_iobuf_mut,
) -> c_int {
    *out = bytes::empty_mut(be);
    if align == 0 || align & (align - 1) != 0 {
        return CW_ERR_INVALID;
    }
    if cap == 0 {
        return CW_OK;
    }
    match bytes::new_owned(cap, align, zeroed) {
        Some(b) => {
            // SAFETY: fresh record.
            let base = unsafe { (*b).base };
            *out = cw_iobuf_mut {
                data: base,
                len: if zeroed { cap } else { 0 },
                cap,
                owner: b as *mut c_void,
                ..bytes::empty_mut(be)
            };
            CW_OK
        }
        None => CW_ERR_NOMEM,
    }
}

pub unsafe extern "C" fn iobuf_copy(
    be: *const cw_backend,
    src: *const c_void,
    len: usize,
    out: *mut cw_iobuf,
) -> c_int {
    if out.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: `out` is the caller's writable handle.
    let out = unsafe { &mut *out };
    *out = bytes::empty(be);
    if src.is_null() && len > 0 {
        return CW_ERR_INVALID;
    }
    if len == 0 {
        return CW_OK;
    }
    match bytes::new_owned(len, 1, false) {
        Some(b) => {
            // SAFETY: `src` holds `len` readable bytes; `b` is fresh, `len` long.
            unsafe { ptr::copy_nonoverlapping(src as *const u8, (*b).base, len) };
            // SAFETY: fresh record.
            let base = unsafe { (*b).base };
            *out = cw_iobuf {
                data: base,
                len,
                owner: b as *mut c_void,
                ..bytes::empty(be)
            };
            CW_OK
        }
        None => CW_ERR_NOMEM,
    }
}

pub unsafe extern "C" fn iobuf_adopt(
    be: *const cw_backend,
    data: *mut c_void,
    len: usize,
    release: Option<cw_release_fn>,
    arg: *mut c_void,
    out: *mut cw_iobuf,
) -> c_int {
    if out.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: `out` is the caller's writable handle.
    let out = unsafe { &mut *out };
    *out = bytes::empty(be);
    let release = match release {
        Some(r) if !(data.is_null() && len > 0) => r,
        _ => return CW_ERR_INVALID,
    };
    if len == 0 {
        // SAFETY: the adopter's function, called once as BUF-004 says.
        unsafe { release(data, arg) };
        return CW_OK;
    }
    match bytes::new_adopted(data as *mut u8, len, release, arg) {
        Some(b) => {
            *out = cw_iobuf {
                data: data as *const u8,
                len,
                owner: b as *mut c_void,
                ..bytes::empty(be)
            };
            CW_OK
        }
        None => CW_ERR_NOMEM,
    }
}

pub unsafe extern "C" fn iobuf_static(
    be: *const cw_backend,
    data: *const c_void,
    len: usize,
    out: *mut cw_iobuf,
) {
    if out.is_null() {
        return;
    }
    let v = if len == 0 || data.is_null() {
        bytes::empty(be)
    } else {
        cw_iobuf {
            data: data as *const u8,
            len,
            ..bytes::empty(be)
        }
    };
    // SAFETY: `out` is the caller's writable handle.
    unsafe { *out = v };
}

pub unsafe extern "C" fn iobuf_clone(buf: *const cw_iobuf, out: *mut cw_iobuf) {
    // SAFETY: both are the caller's handles.
    unsafe {
        *out = *buf;
        let b = owner((*buf).owner);
        if !b.is_null() {
            bytes::retain(b);
        }
    }
}

pub unsafe extern "C" fn iobuf_release(buf: *mut cw_iobuf) {
    // SAFETY: the caller's handle.
    release(unsafe { &mut *buf })
}

pub unsafe extern "C" fn iobuf_slice(
    buf: *const cw_iobuf,
    start: usize,
    end: usize,
    out: *mut cw_iobuf,
) -> c_int {
    // SAFETY: the caller's handles.
    let (buf, out) = unsafe { (&*buf, &mut *out) };
    let be = buf.hdr.backend;
    if start > end || end > buf.len {
        *out = bytes::empty(be);
        return CW_ERR_INVALID;
    }
    // SAFETY: `start <= len`, inside the view.
    let data = unsafe { buf.data.add(start) };
    *out = view(be, owner(buf.owner), data, end - start);
    CW_OK
}

pub unsafe extern "C" fn iobuf_split_to(
    buf: *mut cw_iobuf,
    at: usize,
    head: *mut cw_iobuf,
) -> c_int {
    // SAFETY: the caller's handles.
    let (buf, head) = unsafe { (&mut *buf, &mut *head) };
    let be = buf.hdr.backend;
    if at > buf.len {
        *head = bytes::empty(be);
        return CW_ERR_INVALID;
    }
    if at == 0 {
        *head = bytes::empty(be);
    } else if at == buf.len {
        *head = *buf;
        *buf = bytes::empty(be);
    } else {
        *head = view(be, owner(buf.owner), buf.data, at);
        // SAFETY: `at < len`, inside the view.
        buf.data = unsafe { buf.data.add(at) };
        buf.len -= at;
    }
    CW_OK
}

pub unsafe extern "C" fn iobuf_advance(buf: *mut cw_iobuf, n: usize) -> c_int {
    // SAFETY: the caller's handle.
    let buf = unsafe { &mut *buf };
    if n > buf.len {
        return CW_ERR_INVALID;
    }
    if n == buf.len {
        if n > 0 {
            release(buf);
        }
    } else {
        // SAFETY: `n < len`, inside the view.
        buf.data = unsafe { buf.data.add(n) };
        buf.len -= n;
    }
    CW_OK
}

pub unsafe extern "C" fn iobuf_try_into_mut(buf: *mut cw_iobuf, out: *mut cw_iobuf_mut) -> bool {
    // SAFETY: the caller's handles.
    let (buf, out) = unsafe { (&mut *buf, &mut *out) };
    let be = buf.hdr.backend;
    *out = bytes::empty_mut(be);
    if buf.len == 0 {
        release(buf);
        return true;
    }
    let b = owner(buf.owner);
    if b.is_null() || !bytes::is_reclaimable(b) || bytes::refs(b) != 1 {
        return false;
    }
    // SAFETY: the view lies inside the allocation at `base`.
    let (base, cap) = unsafe { ((*b).base, (*b).cap) };
    let offset = buf.data as usize - base as usize;
    *out = cw_iobuf_mut {
        data: buf.data as *mut u8,
        len: buf.len,
        cap: cap - offset,
        owner: buf.owner,
        ..bytes::empty_mut(be)
    };
    *buf = bytes::empty(be);
    true
}

pub unsafe extern "C" fn iobuf_is_pooled(buf: *const cw_iobuf) -> bool {
    // SAFETY: the caller's handle.
    bytes::is_pooled(owner(unsafe { (*buf).owner }))
}

pub unsafe extern "C" fn mut_alloc(
    be: *const cw_backend,
    cap: usize,
    align: usize,
    zeroed: bool,
    out: *mut cw_iobuf_mut,
) -> c_int {
    if out.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: the caller's handle.
    alloc_mut(be, cap, align, zeroed, unsafe { &mut *out })
}

pub unsafe extern "C" fn mut_release(m: *mut cw_iobuf_mut) {
    // SAFETY: the caller's handle.
    release_mut(unsafe { &mut *m })
}

/// Consume `n <= len` bytes: data moves, len and cap shrink (BUF-009).
pub fn advance_mut(m: &mut cw_iobuf_mut, n: usize) -> c_int {
    if n > m.len {
        return CW_ERR_INVALID;
    }
    if n == 0 {
        return CW_OK;
    }
    // SAFETY: `n <= len <= cap`, inside the buffer.
    m.data = unsafe { m.data.add(n) };
    m.len -= n;
    m.cap -= n;
    if m.cap == 0 {
        release_mut(m);
    }
    CW_OK
}

pub unsafe extern "C" fn mut_advance(m: *mut cw_iobuf_mut, n: usize) -> c_int {
    // SAFETY: the caller's handle.
    advance_mut(unsafe { &mut *m }, n)
}

/// The readable bytes as a `cw_iobuf`, `m` left empty (BUF-010).
pub fn freeze(m: &mut cw_iobuf_mut) -> cw_iobuf {
    let be = m.hdr.backend;
    if m.len == 0 {
        release_mut(m);
        return bytes::empty(be);
    }
    let out = cw_iobuf {
        data: m.data,
        len: m.len,
        owner: m.owner,
        ..bytes::empty(be)
    };
    *m = bytes::empty_mut(be);
    out
}

pub unsafe extern "C" fn mut_freeze(m: *mut cw_iobuf_mut, out: *mut cw_iobuf) {
    // SAFETY: the caller's handles.
    unsafe { *out = freeze(&mut *m) };
}

pub unsafe extern "C" fn mut_is_pooled(m: *const cw_iobuf_mut) -> bool {
    // SAFETY: the caller's handle.
    bytes::is_pooled(owner(unsafe { (*m).owner }))
}
