// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The shared storage behind buffer handles, and the backend's empty handles.
//!
//! A `cw_iobuf` or `cw_iobuf_mut` is a view (`data`, `len`, `cap`); its
//! `owner` is a `Bytes` record: an atomic reference count, the allocation's
//! start and capacity, and where the memory came from (our allocator, the
//! caller's `cw_iobuf_adopt`, or a pool's size class). The last release
//! frees the memory, calls the adopter's `release`, or parks the record in
//! its pool class (BUF-021). Static views and empty handles have no owner
//! (BUF-005, BUF-007); empty handles point `data` at a static byte so it is
//! never NULL (BUF-029). Every handle names the backend table the call
//! was given (or its operand's): a copy of this table is another backend
//! (BUF-029, BUF-013). References may be taken and dropped on any thread
//! (BUF-003), hence the atomics.

use super::pool::{self, Pool};
use crate::ffi::*;
use crate::mem::try_raw;
use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::os::raw::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

pub enum Source {
    Owned {
        layout: Layout,
    },
    Adopted {
        release: cw_release_fn,
        arg: *mut c_void,
    },
    Pooled {
        pool: *const Pool,
        class: usize,
    },
}

pub struct Bytes {
    pub refs: AtomicUsize,
    pub base: *mut u8,
    pub cap: usize,
    pub source: Source,
}

static EMPTY_BYTE: u8 = 0;

/// The empty `cw_iobuf` of backend `be` (BUF-029).
pub fn empty(be: *const cw_backend) -> cw_iobuf {
    cw_iobuf {
        hdr: cw_object { backend: be },
        data: &EMPTY_BYTE,
        len: 0,
        owner: ptr::null_mut(),
    }
}

/// The empty `cw_iobuf_mut` of backend `be` (BUF-029); `cap` 0, never
/// written.
pub fn empty_mut(be: *const cw_backend) -> cw_iobuf_mut {
    cw_iobuf_mut {
        hdr: cw_object { backend: be },
        data: &EMPTY_BYTE as *const u8 as *mut u8,
        len: 0,
        cap: 0,
        owner: ptr::null_mut(),
    }
}

/// `n` bytes of our own at a multiple of `align` (a power of two), with
/// one reference; `None` without memory.
pub fn new_owned(n: usize, align: usize, zeroed: bool) -> Option<*mut Bytes> {
    let layout = Layout::from_size_align(n.max(1), align).ok()?;
    // SAFETY: the layout's size is at least 1.
    let base = unsafe {
        if zeroed {
            alloc_zeroed(layout)
        } else {
            alloc(layout)
        }
    };
    if base.is_null() {
        return None;
    }
    match try_raw(Bytes {
        refs: AtomicUsize::new(1),
        base,
        cap: n,
        source: Source::Owned { layout },
    }) {
        Some(b) => Some(b),
        None => {
            // SAFETY: freeing what was just allocated with this layout.
            unsafe { dealloc(base, layout) };
            None
        }
    }
}

/// The adopter's bytes with one reference; `None` without memory.
pub fn new_adopted(
    data: *mut u8,
    len: usize,
    release: cw_release_fn,
    arg: *mut c_void,
) -> Option<*mut Bytes> {
    try_raw(Bytes {
        refs: AtomicUsize::new(1),
        base: data,
        cap: len,
        source: Source::Adopted { release, arg },
    })
}

/// One more reference; a count past 2^32 ends the process (BUF-003).
pub fn retain(b: *mut Bytes) {
    // SAFETY: the caller holds a reference, so `b` is live.
    let old = unsafe { (*b).refs.fetch_add(1, Ordering::Relaxed) };
    if old >= 1 << 32 {
        crate::runtime::die(b"a buffer is shared more than 2^32 times at once");
    }
}

/// Drop one reference; the last frees, calls `release` or parks.
pub fn release(b: *mut Bytes) {
    // SAFETY: the caller holds a reference, so `b` is live; the last
    // reference owns it alone.
    unsafe {
        if (*b).refs.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        match (*b).source {
            Source::Owned { layout } => {
                dealloc((*b).base, layout);
                drop(Box::from_raw(b));
            }
            Source::Adopted { release, arg } => {
                let data = (*b).base;
                drop(Box::from_raw(b));
                release(data as *mut c_void, arg);
            }
            Source::Pooled { pool, class } => pool::give_back(pool, class, b),
        }
    }
}

/// The number of references (1 means unique).
pub fn refs(b: *mut Bytes) -> usize {
    // SAFETY: the caller holds a reference.
    unsafe { (*b).refs.load(Ordering::Acquire) }
}

pub fn is_pooled(b: *mut Bytes) -> bool {
    // SAFETY: the caller holds a reference.
    !b.is_null() && matches!(unsafe { &(*b).source }, Source::Pooled { .. })
}

/// Whether `try_into_mut` may take these bytes back (BUF-011).
pub fn is_reclaimable(b: *mut Bytes) -> bool {
    // SAFETY: the caller holds a reference.
    !matches!(unsafe { &(*b).source }, Source::Adopted { .. })
}
