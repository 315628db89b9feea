// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Chunk lists: `cw_iobufs` and `cw_iobufs_mut` (BUF-013..BUF-016, BUF-031).
//!
//! A list is an object of its own (it begins with `cw_object`, BUF-001)
//! holding its chunks in a `VecDeque` of handles, so `chunk(i)` can lend a
//! pointer into it. Lists are not objects of a run: like buffers they may
//! be used on any thread and outlive runs. Every operation that can fail
//! for memory reserves what it needs first, so a failure changes nothing.

use super::bytes;
use super::iobuf::{self, advance_mut, release, release_mut};
use super::pool::{self, Pool};
use crate::ffi::*;
use crate::mem::try_raw;
use crate::table::TABLE;
use std::collections::VecDeque;
use std::os::raw::c_int;
use std::ptr;

#[repr(C)]
pub struct List {
    obj: cw_object,
    pub chunks: VecDeque<cw_iobuf>,
    pub len: usize,
}

#[repr(C)]
pub struct MutList {
    obj: cw_object,
    pub chunks: VecDeque<cw_iobuf_mut>,
}

impl List {
    pub fn backend(&self) -> *const cw_backend {
        self.obj.backend
    }
}

pub fn new_list(be: *const cw_backend) -> *mut List {
    try_raw(List {
        obj: cw_object { backend: be },
        chunks: VecDeque::new(),
        len: 0,
    })
    .unwrap_or(ptr::null_mut())
}

/// Drop a buffer with nothing to add, whatever its backend (BUF-031).
pub fn drop_foreign(buf: &mut cw_iobuf) {
    let b = buf.hdr.backend;
    if b.is_null() {
        return;
    }
    // SAFETY: a non-NULL `hdr.backend` names a live backend table.
    let ours = ptr::eq(b, &TABLE.0) || ptr::eq(unsafe { (*b).buffers }, TABLE.0.buffers);
    if ours {
        release(buf);
    } else {
        // SAFETY: a handle of another backend with buffers: its own
        // release entry (cw_iobuf_release does the same).
        unsafe { ((*(*b).buffers.cast::<cw_buffer_ops>()).iobuf_release)(buf) };
    }
}

fn drop_foreign_mut(m: &mut cw_iobuf_mut) {
    let b = m.hdr.backend;
    if b.is_null() {
        return;
    }
    // SAFETY: a non-NULL `hdr.backend` names a live backend table.
    let ours = ptr::eq(b, &TABLE.0) || ptr::eq(unsafe { (*b).buffers }, TABLE.0.buffers);
    if ours {
        release_mut(m);
    } else {
        // SAFETY: as in drop_foreign.
        unsafe { ((*(*b).buffers.cast::<cw_buffer_ops>()).mut_release)(m) };
    }
}

/// Move `*buf` into `l` at the back or the front (BUF-013, BUF-031).
pub fn add(l: &mut List, buf: &mut cw_iobuf, front: bool) -> c_int {
    if buf.len == 0 {
        drop_foreign(buf);
        return CW_OK;
    }
    if !ptr::eq(buf.hdr.backend, l.obj.backend) {
        return CW_ERR_INVALID;
    }
    if l.chunks.try_reserve(1).is_err() {
        return CW_ERR_NOMEM;
    }
    if front {
        l.chunks.push_front(*buf);
    } else {
        l.chunks.push_back(*buf);
    }
    l.len += buf.len;
    *buf = bytes::empty(l.obj.backend);
    CW_OK
}

pub fn release_list(l: *mut List) {
    // SAFETY: the caller's list, released once.
    let mut l = unsafe { Box::from_raw(l) };
    for c in l.chunks.iter_mut() {
        release(c);
    }
}

/// Drop the first `n <= len` bytes, chunk by chunk.
pub fn advance(l: &mut List, mut n: usize) {
    l.len -= n;
    while n > 0 {
        let front = l.chunks.front_mut().expect("len counts the chunks' bytes");
        if n >= front.len {
            n -= front.len;
            let mut c = l.chunks.pop_front().expect("non-empty");
            release(&mut c);
        } else {
            // SAFETY: `n < front.len`, inside the view.
            front.data = unsafe { front.data.add(n) };
            front.len -= n;
            n = 0;
        }
    }
}

/// The chunks of `l` up to `at` bytes, moved to a new list (BUF-014).
pub fn split_to(l: &mut List, at: usize) -> Result<*mut List, c_int> {
    if at > l.len {
        return Err(CW_ERR_INVALID);
    }
    let head = new_list(l.obj.backend);
    if head.is_null() {
        return Err(CW_ERR_NOMEM);
    }
    // SAFETY: the fresh list is ours.
    let h = unsafe { &mut *head };
    let mut need = 0;
    let mut acc = 0;
    for c in l.chunks.iter() {
        if acc >= at {
            break;
        }
        need += 1;
        acc += c.len;
    }
    if h.chunks.try_reserve(need).is_err() {
        release_list(head);
        return Err(CW_ERR_NOMEM);
    }
    let mut rest = at;
    while rest > 0 {
        let front = l.chunks.front_mut().expect("at <= len");
        if rest >= front.len {
            rest -= front.len;
            let c = l.chunks.pop_front().expect("non-empty");
            h.chunks.push_back(c);
        } else {
            let mut part = bytes::empty(l.obj.backend);
            // SAFETY: the caller's chunk, split inside its view.
            unsafe { iobuf::iobuf_split_to(front, rest, &mut part) };
            h.chunks.push_back(part);
            rest = 0;
        }
    }
    h.len = at;
    l.len -= at;
    Ok(head)
}

/// All bytes in one buffer, the list left empty (BUF-015).
pub fn coalesce(l: &mut List, pool: *mut Pool, out: &mut cw_iobuf) -> c_int {
    let be = l.obj.backend;
    *out = bytes::empty(be);
    if l.chunks.is_empty() {
        return CW_OK;
    }
    if l.chunks.len() == 1 {
        *out = l.chunks.pop_front().expect("one chunk");
        l.len = 0;
        return CW_OK;
    }
    let mut m = bytes::empty_mut(be);
    let rc = if pool.is_null() {
        iobuf::alloc_mut(be, l.len, 1, false, &mut m)
    } else {
        pool::alloc_any(pool, l.len, &mut m)
    };
    if rc != CW_OK {
        return rc;
    }
    for c in l.chunks.iter_mut() {
        // SAFETY: `m` has room for all `len` bytes; chunks are readable.
        unsafe { ptr::copy_nonoverlapping(c.data, m.data.add(m.len), c.len) };
        m.len += c.len;
        release(c);
    }
    l.chunks.clear();
    l.len = 0;
    *out = iobuf::freeze(&mut m);
    CW_OK
}

pub fn new_mut_list(be: *const cw_backend) -> *mut MutList {
    try_raw(MutList {
        obj: cw_object { backend: be },
        chunks: VecDeque::new(),
    })
    .unwrap_or(ptr::null_mut())
}

pub fn release_mut_list(l: *mut MutList) {
    // SAFETY: the caller's list, released once.
    let mut l = unsafe { Box::from_raw(l) };
    for c in l.chunks.iter_mut() {
        release_mut(c);
    }
}

pub fn mut_append(l: &mut MutList, m: &mut cw_iobuf_mut) -> c_int {
    if m.cap == 0 {
        drop_foreign_mut(m);
        return CW_OK;
    }
    if !ptr::eq(m.hdr.backend, l.obj.backend) {
        return CW_ERR_INVALID;
    }
    if l.chunks.try_reserve(1).is_err() {
        return CW_ERR_NOMEM;
    }
    l.chunks.push_back(*m);
    *m = bytes::empty_mut(l.obj.backend);
    CW_OK
}

pub fn mut_len(l: &MutList) -> usize {
    l.chunks.iter().map(|c| c.len).sum()
}

pub fn mut_capacity(l: &MutList) -> usize {
    l.chunks.iter().map(|c| c.cap).sum()
}

/// The chunk `put` writes into first: the last holding bytes, else the
/// first (BUF-016).
fn put_start(l: &MutList) -> usize {
    l.chunks.iter().rposition(|c| c.len > 0).unwrap_or(0)
}

pub fn mut_spare(l: &MutList) -> usize {
    if l.chunks.is_empty() {
        return 0;
    }
    l.chunks
        .iter()
        .skip(put_start(l))
        .map(|c| c.cap - c.len)
        .sum()
}

pub fn mut_put(l: &mut MutList, src: *const u8, n: usize) -> c_int {
    if n > mut_spare(l) {
        return CW_ERR_INVALID;
    }
    let mut done = 0;
    let start = put_start(l);
    for c in l.chunks.iter_mut().skip(start) {
        if done == n {
            break;
        }
        let take = (c.cap - c.len).min(n - done);
        // SAFETY: `src` holds `n` bytes; the chunk has `take` spare bytes.
        unsafe { ptr::copy_nonoverlapping(src.add(done), c.data.add(c.len), take) };
        c.len += take;
        done += take;
    }
    CW_OK
}

pub fn mut_set_len(l: &mut MutList, n: usize) -> c_int {
    if n > mut_capacity(l) {
        return CW_ERR_INVALID;
    }
    let mut rest = n;
    for c in l.chunks.iter_mut() {
        c.len = rest.min(c.cap);
        rest -= c.len;
    }
    CW_OK
}

pub fn mut_advance(l: &mut MutList, n: usize) -> c_int {
    if n > mut_len(l) {
        return CW_ERR_INVALID;
    }
    let mut rest = n;
    let mut i = 0;
    while rest > 0 && i < l.chunks.len() {
        let c = &mut l.chunks[i];
        let take = rest.min(c.len);
        advance_mut(c, take);
        rest -= take;
        if c.cap == 0 {
            l.chunks.remove(i);
        } else {
            i += 1;
        }
    }
    CW_OK
}

pub fn mut_freeze(l: &mut MutList) -> *mut List {
    let out = new_list(l.obj.backend);
    if out.is_null() {
        return out;
    }
    // SAFETY: the fresh list is ours.
    let o = unsafe { &mut *out };
    let n = l.chunks.iter().filter(|c| c.len > 0).count();
    if o.chunks.try_reserve(n).is_err() {
        release_list(out);
        return ptr::null_mut();
    }
    for c in l.chunks.iter_mut() {
        let f = iobuf::freeze(c);
        if f.len > 0 {
            o.len += f.len;
            o.chunks.push_back(f);
        }
    }
    l.chunks.clear();
    out
}

pub fn mut_coalesce(l: &mut MutList, pool: *mut Pool, out: &mut cw_iobuf_mut) -> c_int {
    let be = l.obj.backend;
    *out = bytes::empty_mut(be);
    if l.chunks.is_empty() {
        return CW_OK;
    }
    if l.chunks.len() == 1 {
        *out = l.chunks.pop_front().expect("one chunk");
        return CW_OK;
    }
    let len = mut_len(l);
    let mut m = bytes::empty_mut(be);
    let rc = if pool.is_null() {
        iobuf::alloc_mut(be, len, 1, false, &mut m)
    } else {
        pool::alloc_any(pool, len, &mut m)
    };
    if rc != CW_OK {
        return rc;
    }
    for c in l.chunks.iter_mut() {
        if c.len > 0 {
            // SAFETY: `m` has room for all `len` bytes.
            unsafe { ptr::copy_nonoverlapping(c.data, m.data.add(m.len), c.len) };
            m.len += c.len;
        }
        release_mut(c);
    }
    l.chunks.clear();
    *out = m;
    CW_OK
}

/// A clone of every chunk of `l` (BUF-013); NULL without memory.
pub fn clone_list(l: &List) -> *mut List {
    let out = new_list(l.obj.backend);
    if out.is_null() {
        return out;
    }
    // SAFETY: the fresh list is ours.
    let o = unsafe { &mut *out };
    if o.chunks.try_reserve(l.chunks.len()).is_err() {
        release_list(out);
        return ptr::null_mut();
    }
    for c in l.chunks.iter() {
        let mut d = *c;
        // SAFETY: cloning a live chunk of `l`.
        unsafe { iobuf::iobuf_clone(c, &mut d) };
        o.chunks.push_back(d);
    }
    o.len = l.len;
    out
}
