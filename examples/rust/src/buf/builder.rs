// SPDX-License-Identifier: Apache-2.0 OR MIT
//! `cw_iobufs_builder` (BUF-017): small writes copied into one inline
//! buffer, large parts linked.
//!
//! The builder records its parts in call order: ranges of the inline
//! buffer and pushed buffers. `finish` freezes the inline buffer once and
//! makes each range a slice of it, so every pushed buffer keeps its own
//! `data` and the inline bytes are copied exactly once.

use super::bytes;
use super::iobuf::{self, release, release_mut};
use super::lists::{self, List};
use super::pool::{self, Pool};
use crate::ffi::*;
use crate::mem::try_raw;
use std::os::raw::c_int;
use std::ptr;

enum Part {
    Inline(usize, usize),
    Pushed(cw_iobuf),
}

#[repr(C)]
pub struct Builder {
    obj: cw_object,
    inline: cw_iobuf_mut,
    parts: Vec<Part>,
}

pub fn new(pool: *mut Pool, capacity: usize) -> *mut Builder {
    let be = pool::backend(pool);
    let mut m = bytes::empty_mut(be);
    if capacity > 0 && pool::alloc_any(pool, capacity, &mut m) != CW_OK {
        return ptr::null_mut();
    }
    match try_raw(Builder {
        obj: cw_object { backend: be },
        inline: m,
        parts: Vec::new(),
    }) {
        Some(b) => b,
        None => {
            release_mut(&mut m);
            ptr::null_mut()
        }
    }
}

pub fn release_builder(b: *mut Builder) {
    // SAFETY: the caller's builder, released once.
    let mut b = unsafe { Box::from_raw(b) };
    release_mut(&mut b.inline);
    for p in b.parts.iter_mut() {
        if let Part::Pushed(buf) = p {
            release(buf);
        }
    }
}

pub fn put(b: &mut Builder, src: *const u8, n: usize) -> c_int {
    if n > b.inline.cap - b.inline.len {
        return CW_ERR_INVALID;
    }
    if n == 0 {
        return CW_OK;
    }
    let at = b.inline.len;
    let extend = matches!(b.parts.last(), Some(Part::Inline(_, e)) if *e == at);
    if !extend && b.parts.try_reserve(1).is_err() {
        return CW_ERR_NOMEM;
    }
    // SAFETY: `src` holds `n` bytes; the inline buffer has `n` spare.
    unsafe { ptr::copy_nonoverlapping(src, b.inline.data.add(at), n) };
    b.inline.len += n;
    if extend {
        if let Some(Part::Inline(_, e)) = b.parts.last_mut() {
            *e = at + n;
        }
    } else {
        b.parts.push(Part::Inline(at, at + n));
    }
    CW_OK
}

pub fn push(b: &mut Builder, buf: &mut cw_iobuf) -> c_int {
    if buf.len == 0 {
        lists::drop_foreign(buf);
        return CW_OK;
    }
    if !ptr::eq(buf.hdr.backend, b.obj.backend) {
        return CW_ERR_INVALID;
    }
    if b.parts.try_reserve(1).is_err() {
        return CW_ERR_NOMEM;
    }
    b.parts.push(Part::Pushed(*buf));
    *buf = bytes::empty(b.obj.backend);
    CW_OK
}

pub fn finish(b: *mut Builder) -> *mut List {
    // SAFETY: the caller's builder.
    let out = lists::new_list(unsafe { (*b).obj.backend });
    if out.is_null() {
        return out;
    }
    // SAFETY: the caller's builder and our fresh list.
    let (bld, o) = unsafe { (&mut *b, &mut *out) };
    if o.chunks.try_reserve(bld.parts.len()).is_err() {
        lists::release_list(out);
        return ptr::null_mut();
    }
    let mut frozen = iobuf::freeze(&mut bld.inline);
    for p in bld.parts.drain(..) {
        let c = match p {
            Part::Inline(s, e) => {
                let mut v = bytes::empty(o.backend());
                // SAFETY: the range lies inside the frozen inline bytes.
                unsafe { iobuf::iobuf_slice(&frozen, s, e, &mut v) };
                v
            }
            Part::Pushed(buf) => buf,
        };
        o.len += c.len;
        o.chunks.push_back(c);
    }
    release(&mut frozen);
    release_builder(b);
    out
}
