// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The header every object of a run begins with, and the run's object list.
//!
//! ABI-002 wants every object to begin with a `cw_object` pointing at the
//! table; RUN-003 wants every object of a run freed when it ends, including
//! the ones the program never released. So each object starts with a
//! `Header`: the `cw_object`, its kind (to know how to free it), its run,
//! and the links of the run's intrusive list of live objects. Allocating an
//! object links it; releasing it unlinks and frees it; the end of the run
//! frees whatever is still linked.

use crate::chan::{Chan, Oneshot};
use crate::ffi::cw_object;
use crate::handle::Handle;
use crate::mem::try_raw;
use crate::runtime::Rt;
use crate::signal::Signal;
use crate::table::TABLE;
use crate::tree::Ctx;
use std::ptr;

#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Kind {
    Ctx,
    Handle,
    Chan,
    Oneshot,
    Signal,
    Blob,
    Listener,
    Sink,
    Stream,
}

#[repr(C)]
pub struct Header {
    pub obj: cw_object,
    pub kind: Kind,
    pub rt: *mut Rt,
    pub prev: *mut Header,
    pub next: *mut Header,
}

impl Header {
    pub fn new(kind: Kind, rt: *mut Rt) -> Header {
        Header {
            obj: cw_object { backend: &TABLE.0 },
            kind,
            rt,
            prev: ptr::null_mut(),
            next: ptr::null_mut(),
        }
    }
}

/// An object type of a run: `#[repr(C)]` with a `Header` first.
///
/// # Safety
/// Implementors must be `#[repr(C)]` with a `Header` as their first field,
/// whose `kind` names the implementing type.
pub unsafe trait Object {}

/// Allocate `v` and link it into `rt`'s object list; `None` without memory.
pub fn alloc_obj<T: Object>(rt: &mut Rt, v: T) -> Option<*mut T> {
    let p = try_raw(v)?;
    let h = p as *mut Header;
    // SAFETY: `T: Object` puts a `Header` at offset 0 of the fresh object,
    // and the list only holds live objects of this run.
    unsafe {
        (*h).next = rt.objects;
        (*h).prev = ptr::null_mut();
        if !rt.objects.is_null() {
            (*rt.objects).prev = h;
        }
    }
    rt.objects = h;
    Some(p)
}

/// Unlink and free one object of `rt`.
///
/// # Safety
/// `h` must be a live object of `rt`, allocated by `alloc_obj`, that nothing
/// will use again.
pub unsafe fn free_obj(rt: &mut Rt, h: *mut Header) {
    // SAFETY: per the contract, `h` and its neighbours are live objects of
    // `rt`; the kind says which type to free it as.
    unsafe {
        let (prev, next) = ((*h).prev, (*h).next);
        if prev.is_null() {
            rt.objects = next;
        } else {
            (*prev).next = next;
        }
        if !next.is_null() {
            (*next).prev = prev;
        }
        match (*h).kind {
            Kind::Ctx => drop(Box::from_raw(h as *mut Ctx)),
            Kind::Handle => drop(Box::from_raw(h as *mut Handle)),
            Kind::Chan => drop(Box::from_raw(h as *mut Chan)),
            Kind::Oneshot => drop(Box::from_raw(h as *mut Oneshot)),
            Kind::Signal => drop(Box::from_raw(h as *mut Signal)),
            Kind::Blob => drop(Box::from_raw(h as *mut crate::storage::store::Blob)),
            Kind::Listener => drop(Box::from_raw(h as *mut crate::net::core::Listener)),
            Kind::Sink | Kind::Stream => drop(Box::from_raw(h as *mut crate::net::core::Half)),
        }
    }
}

/// Free every object still linked (the end of a run, RUN-003).
pub fn free_all(rt: &mut Rt) {
    while !rt.objects.is_null() {
        let h = rt.objects;
        // SAFETY: the run is over; nothing uses its objects any more.
        unsafe { free_obj(rt, h) };
    }
}
