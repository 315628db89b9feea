// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Allocation that reports failure instead of aborting.
//!
//! RUN-007 forbids ending the process when an allocation is refused, and the
//! suite refuses allocations on purpose (it interposes `malloc`). Rust's
//! `Box::new` and `Vec::push` abort on failure, so every allocation a run
//! makes goes through these helpers, which return `None`/`Err` instead.

use std::alloc::{alloc, Layout};

/// `Box::new(v)`, or `None` when the allocator refuses.
pub fn try_box<T>(v: T) -> Option<Box<T>> {
    let layout = Layout::new::<T>();
    if layout.size() == 0 {
        return Some(Box::new(v));
    }
    // SAFETY: the layout has a non-zero size, as `alloc` requires.
    let p = unsafe { alloc(layout) } as *mut T;
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is fresh, non-null and laid out for one `T`, so writing
    // `v` into it and handing it to `Box` (which frees it with the same
    // global allocator and layout) is sound.
    unsafe {
        p.write(v);
        Some(Box::from_raw(p))
    }
}

/// A leaked `try_box`: the raw pointer an FFI object lives at.
pub fn try_raw<T>(v: T) -> Option<*mut T> {
    try_box(v).map(Box::into_raw)
}

/// `v.push(x)`, or `false` when the vector cannot grow.
pub fn try_push<T>(v: &mut Vec<T>, x: T) -> bool {
    if v.try_reserve(1).is_err() {
        return false;
    }
    v.push(x);
    true
}

/// A copy of `bytes` followed by a NUL, or `None` without memory.
pub fn try_cstring(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(bytes.len() + 1).ok()?;
    v.extend_from_slice(bytes);
    v.push(0);
    Some(v)
}
