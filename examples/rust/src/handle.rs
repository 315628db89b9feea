// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Task handles (spec/04-tasks.md).
//!
//! A handle is what a join waits on: the result of its task once it ended,
//! or a result given at once (`cw_handle_ready`). The task and the caller
//! each hold it; it is freed when the caller released it and the task has
//! ended (or at the end of the run). The run's `nomem_handle` is the one
//! object every spawn without memory returns (TASK-011); releasing it does
//! nothing.

use crate::ffi::*;
use crate::obj::{self, Header, Kind, Object};
use crate::runtime::{Rt, Task};
use crate::select::WaitList;
use crate::tree;
use std::os::raw::{c_int, c_void};
use std::ptr;

#[repr(C)]
pub struct Handle {
    pub h: Header,
    pub done: bool,
    pub result: c_int,
    pub value: *mut c_void,
    pub task: *mut Task,
    pub released: bool,
    pub ready_made: bool,
    /// A ready handle given up by `cw_abort` (TASK-007, TASK-008).
    pub abandoned: bool,
    pub waiters: WaitList,
}

// SAFETY: #[repr(C)] with the Header first, kind Handle.
unsafe impl Object for Handle {}

impl Handle {
    pub fn done(rt: *mut Rt, result: c_int, value: *mut c_void) -> Handle {
        Handle {
            h: Header::new(Kind::Handle, rt),
            done: true,
            result,
            value,
            task: ptr::null_mut(),
            released: false,
            ready_made: false,
            abandoned: false,
            waiters: WaitList::new(),
        }
    }

    pub fn pending(rt: *mut Rt) -> Handle {
        let mut h = Handle::done(rt, CW_OK, ptr::null_mut());
        h.done = false;
        h
    }
}

/// `cw_handle_ready` (TASK-007).
///
/// # Safety
/// `ctx` must be a live context of this backend.
pub unsafe fn ready(ctx: *mut tree::Ctx, result: c_int, value: *mut c_void) -> *mut Handle {
    // SAFETY: forwarded; the run is live and single-threaded.
    let r = unsafe { &mut *(*ctx).h.rt };
    let rtp: *mut Rt = r;
    let mut h = Handle::done(rtp, result, value);
    h.ready_made = true;
    obj::alloc_obj(r, h).unwrap_or(r.nomem_handle)
}

/// `cw_abort` (TASK-002, TASK-005, TASK-007).
///
/// # Safety
/// `h` must be a live handle of this backend.
pub unsafe fn abort(h: *mut Handle) {
    // SAFETY: forwarded.
    unsafe {
        let r = &mut *(*h).h.rt;
        if h == r.nomem_handle {
            return;
        }
        if (*h).ready_made {
            (*h).result = CW_ERR_ABORTED;
            (*h).value = ptr::null_mut();
            (*h).abandoned = true;
            return;
        }
        // The task alone is queued; its subtree is aborted when it ends
        // (DET-018, TASK-005).
        let t = (*h).task;
        if !t.is_null() {
            tree::abort_task(r, t);
        }
    }
}

/// `cw_handle_release` (TASK-003): the task runs on.
///
/// # Safety
/// `h` must be a live handle of this backend, released once.
pub unsafe fn release(h: *mut Handle) {
    // SAFETY: forwarded.
    unsafe {
        let r = &mut *(*h).h.rt;
        if h == r.nomem_handle {
            return;
        }
        if (*h).task.is_null() {
            obj::free_obj(r, h as *mut Header);
        } else {
            (*h).released = true;
        }
    }
}
