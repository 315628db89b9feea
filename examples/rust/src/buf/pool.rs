// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Buffer pools (spec/12-buffers.md, "Pools", BUF-019..BUF-026).
//!
//! One size class per power of two from `min_size` to `max_size`, each
//! with its counters and a free list of parked `Bytes` records (memory and
//! record reused together, so a reuse allocates nothing). A class reserves
//! its free list's room when it creates a buffer, so parking never
//! allocates. The pool is behind one mutex: pool functions may be called
//! from any thread (BUF-025). No per-thread cache is kept (the spec allows
//! one, "MAY"), so every parked buffer is visible to every thread.
//!
//! A pool is reference counted: its handle and every buffer it created
//! hold one reference, so buffers outlive the pool (BUF-024); after the
//! pool's release, a returning buffer is freed instead of parked.

use super::bytes::{self, Bytes, Source};
use crate::ffi::*;
use crate::mem::try_raw;
use std::alloc::{alloc, dealloc, Layout};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

struct Class {
    size: usize,
    created: u64,
    exhausted: u64,
    free: Vec<*mut Bytes>,
}

struct Inner {
    released: bool,
    classes: Vec<Class>,
    oversized: u64,
}

#[repr(C)]
pub struct Pool {
    obj: cw_object,
    refs: AtomicUsize,
    pub cfg: cw_bufpool_config,
    inner: Mutex<Inner>,
}

fn pow2(v: usize) -> bool {
    v != 0 && v & (v - 1) == 0
}

/// `cw_bufpool_config_check`, with the same messages (BUF-019, BUF-026).
pub fn check(cfg: &cw_bufpool_config) -> Option<&'static str> {
    if !pow2(cfg.alignment) {
        return Some("[BUF-019] alignment must be a power of two");
    }
    if !pow2(cfg.min_size) || !pow2(cfg.max_size) {
        return Some("[BUF-019] class sizes must be powers of two");
    }
    if cfg.max_size < cfg.min_size {
        return Some("[BUF-019] max_size must be >= min_size");
    }
    if cfg.max_size > usize::MAX / 4 {
        return Some("[BUF-019] max_size is too large");
    }
    if cfg.min_size < cfg.alignment {
        return Some("[BUF-019] the smallest class must be >= alignment");
    }
    if cfg.pool_min_size > cfg.min_size {
        return Some("[BUF-019] pool_min_size must be <= the smallest class");
    }
    if cfg.max_per_class == 0 {
        return Some("[BUF-019] max_per_class must be >= 1");
    }
    if cfg.parallelism == 0 {
        return Some("[BUF-019] parallelism must be >= 1");
    }
    None
}

fn unref(p: *const Pool) {
    // SAFETY: `p` is live while it has references; the last frees it.
    unsafe {
        if (*p).refs.fetch_sub(1, Ordering::AcqRel) == 1 {
            drop(Box::from_raw(p as *mut Pool));
        }
    }
}

/// Free a parked record and its memory.
///
/// # Safety
/// `b` must be a record of class size `size` and alignment `align` that
/// nothing references.
unsafe fn free_record(b: *mut Bytes, size: usize, align: usize) {
    // SAFETY: forwarded; the memory was allocated with this layout.
    unsafe {
        dealloc((*b).base, Layout::from_size_align_unchecked(size, align));
        drop(Box::from_raw(b));
    }
}

/// Make one buffer of class `ci` (the lock held); `None` without memory.
fn create(p: *const Pool, inner: &mut Inner, ci: usize, align: usize) -> Option<*mut Bytes> {
    let size = inner.classes[ci].size;
    let need = inner.classes[ci].created as usize + 1;
    let free = &mut inner.classes[ci].free;
    if free.capacity() < need {
        free.try_reserve_exact(need - free.len()).ok()?;
    }
    let layout = Layout::from_size_align(size, align).ok()?;
    // SAFETY: class sizes are at least 1.
    let base = unsafe { alloc(layout) };
    if base.is_null() {
        return None;
    }
    let b = match try_raw(Bytes {
        refs: AtomicUsize::new(1),
        base,
        cap: size,
        source: Source::Pooled { pool: p, class: ci },
    }) {
        Some(b) => b,
        None => {
            // SAFETY: freeing what was just allocated.
            unsafe { dealloc(base, layout) };
            return None;
        }
    };
    inner.classes[ci].created += 1;
    // SAFETY: `p` is live (the caller holds the pool).
    unsafe { (*p).refs.fetch_add(1, Ordering::AcqRel) };
    Some(b)
}

/// A pooled buffer's last reference is gone (BUF-021).
pub fn give_back(p: *const Pool, ci: usize, b: *mut Bytes) {
    // SAFETY: the buffer holds a reference on its pool, so `p` is live.
    let pool = unsafe { &*p };
    let align = pool.cfg.alignment;
    if let Ok(mut inner) = pool.inner.lock() {
        if inner.released {
            let size = inner.classes[ci].size;
            // SAFETY: the last reference to `b` is gone.
            unsafe { free_record(b, size, align) };
        } else {
            // Room was reserved when the class created the buffer.
            inner.classes[ci].free.push(b);
            return;
        }
    }
    unref(p);
}

/// `cw_bufpool_new` (BUF-019, BUF-032).
pub fn new(be: *const cw_backend, cfg: &cw_bufpool_config) -> Result<*mut Pool, c_int> {
    if check(cfg).is_some() {
        return Err(CW_ERR_INVALID);
    }
    let mut classes = Vec::new();
    let mut s = cfg.min_size;
    loop {
        if classes.try_reserve(1).is_err() {
            return Err(CW_ERR_NOMEM);
        }
        classes.push(Class {
            size: s,
            created: 0,
            exhausted: 0,
            free: Vec::new(),
        });
        if s >= cfg.max_size {
            break;
        }
        s <<= 1;
    }
    let p = try_raw(Pool {
        obj: cw_object { backend: be },
        refs: AtomicUsize::new(1),
        cfg: *cfg,
        inner: Mutex::new(Inner {
            released: false,
            classes,
            oversized: 0,
        }),
    })
    .ok_or(CW_ERR_NOMEM)?;
    if cfg.prefill {
        let ok = {
            // SAFETY: the fresh pool is ours alone.
            let pool = unsafe { &*p };
            let mut inner = pool.inner.lock().map_err(|_| CW_ERR_NOMEM)?;
            let n = inner.classes.len();
            let mut ok = true;
            'all: for ci in 0..n {
                for _ in 0..cfg.max_per_class {
                    match create(p, &mut inner, ci, cfg.alignment) {
                        Some(b) => {
                            // SAFETY: fresh record, parked unreferenced.
                            unsafe { (*b).refs.store(0, Ordering::Release) };
                            inner.classes[ci].free.push(b);
                        }
                        None => {
                            ok = false;
                            break 'all;
                        }
                    }
                }
            }
            ok
        };
        if !ok {
            release(p);
            return Err(CW_ERR_NOMEM);
        }
    }
    Ok(p)
}

/// `cw_bufpool_release`: parked buffers are freed, the rest later.
pub fn release(p: *mut Pool) {
    // SAFETY: the caller's handle is a reference.
    let pool = unsafe { &*p };
    let mut freed = 0;
    if let Ok(mut inner) = pool.inner.lock() {
        inner.released = true;
        let align = pool.cfg.alignment;
        for c in inner.classes.iter_mut() {
            for &b in c.free.iter() {
                // SAFETY: parked records are unreferenced.
                unsafe { free_record(b, c.size, align) };
                freed += 1;
            }
            c.free = Vec::new();
        }
    }
    for _ in 0..freed {
        unref(p);
    }
    unref(p);
}

/// `cw_bufpool_try_alloc` (BUF-020).
pub fn try_alloc(p: *mut Pool, cap: usize, out: &mut cw_iobuf_mut, why: *mut c_int) -> c_int {
    let be = backend(p);
    *out = bytes::empty_mut(be);
    let set_why = |w: c_int| {
        if !why.is_null() {
            // SAFETY: the caller's `why`, when given, is writable.
            unsafe { *why = w };
        }
    };
    set_why(0);
    if cap == 0 {
        return CW_OK;
    }
    // SAFETY: the caller holds the pool.
    let pool = unsafe { &*p };
    let cfg = pool.cfg;
    if cap < cfg.pool_min_size {
        return match bytes::new_owned(cap, cfg.alignment, false) {
            Some(b) => {
                // SAFETY: fresh record.
                let base = unsafe { (*b).base };
                *out = cw_iobuf_mut {
                    data: base,
                    cap,
                    owner: b as *mut _,
                    ..bytes::empty_mut(be)
                };
                CW_OK
            }
            None => CW_ERR_NOMEM,
        };
    }
    let mut inner = match pool.inner.lock() {
        Ok(g) => g,
        Err(_) => return CW_ERR_NOMEM,
    };
    if cap > cfg.max_size {
        inner.oversized += 1;
        set_why(CW_BUFPOOL_OVERSIZED);
        return CW_ERR_POOL;
    }
    let ci = inner
        .classes
        .iter()
        .position(|c| c.size >= cap)
        .unwrap_or(0);
    let b = if let Some(b) = inner.classes[ci].free.pop() {
        // SAFETY: a parked record, now referenced by the new handle.
        unsafe { (*b).refs.store(1, Ordering::Release) };
        b
    } else if inner.classes[ci].created < cfg.max_per_class as u64 {
        match create(p, &mut inner, ci, cfg.alignment) {
            Some(b) => b,
            None => return CW_ERR_NOMEM,
        }
    } else {
        inner.classes[ci].exhausted += 1;
        set_why(CW_BUFPOOL_EXHAUSTED);
        return CW_ERR_POOL;
    };
    // SAFETY: `b` is live and ours.
    let (base, size) = unsafe { ((*b).base, (*b).cap) };
    *out = cw_iobuf_mut {
        data: base,
        cap: size,
        owner: b as *mut _,
        ..bytes::empty_mut(be)
    };
    CW_OK
}

/// `cw_bufpool_alloc` (BUF-022).
pub fn alloc_any(p: *mut Pool, cap: usize, out: &mut cw_iobuf_mut) -> c_int {
    let mut why = 0;
    let rc = try_alloc(p, cap, out, &mut why);
    if rc != CW_ERR_POOL {
        return rc;
    }
    let be = backend(p);
    // SAFETY: the caller holds the pool.
    let align = unsafe { (*p).cfg.alignment };
    match bytes::new_owned(cap, align, false) {
        Some(b) => {
            // SAFETY: fresh record.
            let base = unsafe { (*b).base };
            *out = cw_iobuf_mut {
                data: base,
                cap,
                owner: b as *mut _,
                ..bytes::empty_mut(be)
            };
            CW_OK
        }
        None => CW_ERR_NOMEM,
    }
}

/// The backend the pool was made by.
pub fn backend(p: *const Pool) -> *const cw_backend {
    // SAFETY: the caller holds the pool.
    unsafe { (*p).obj.backend }
}

/// `cw_bufpool_class_stats` (BUF-023).
pub fn stats(p: *const Pool, ci: usize, out: &mut cw_bufpool_stats) -> c_int {
    // SAFETY: the caller holds the pool.
    let pool = unsafe { &*p };
    let inner = match pool.inner.lock() {
        Ok(g) => g,
        Err(_) => return CW_ERR_INVALID,
    };
    let c = match inner.classes.get(ci) {
        Some(c) => c,
        None => return CW_ERR_INVALID,
    };
    *out = cw_bufpool_stats {
        size: c.size,
        max_buffers: pool.cfg.max_per_class,
        created: c.created,
        exhausted: c.exhausted,
        idle: c.free.len() as u64,
        oversized: inner.oversized,
    };
    CW_OK
}
