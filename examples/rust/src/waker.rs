// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Wakers (TASK-009, TASK-010): the one object other threads may touch.
//!
//! Each task has one waker cell, made at its spawn; `cw_waker_current`
//! hands it out again with one more reference, so getting a waker never
//! allocates. A cell outlives its task and its run while references are
//! held: after the task ended (`gone`) or the run ended (the hub closed), a
//! wake does nothing. A wake made on the run's own thread, during the run,
//! applies at once; one from another thread sets the cell's `pending` flag
//! and the hub's `dirty` flag under the hub's mutex; the scheduler drains
//! those between iterations. It never waits for them: with nothing ready
//! and no alarm armed the run stalls (DET-006).

use crate::ffi::*;
use crate::mem::try_raw;
use crate::runtime::{self, Rt, State, Task, CURRENT};
use crate::table::TABLE;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

struct HubState {
    alive: bool,
    dirty: bool,
}

pub struct Hub {
    refs: AtomicUsize,
    state: Mutex<HubState>,
}

#[repr(C)]
pub struct WakerCell {
    obj: cw_object,
    refs: AtomicUsize,
    hub: *const Hub,
    rt: *const Rt,
    /// The task, valid while `gone` is false; read only on the run's thread.
    pub task: *mut Task,
    gone: AtomicBool,
    pending: AtomicBool,
}

pub fn new_hub() -> Option<*mut Hub> {
    try_raw(Hub {
        refs: AtomicUsize::new(1),
        state: Mutex::new(HubState {
            alive: true,
            dirty: false,
        }),
    })
}

fn hub_release(h: *const Hub) {
    // SAFETY: `h` is live while it has references; the last one frees it.
    unsafe {
        if (*h).refs.fetch_sub(1, Ordering::AcqRel) == 1 {
            drop(Box::from_raw(h as *mut Hub));
        }
    }
}

/// The run ends: later wakes do nothing.
pub fn hub_close(h: *mut Hub) {
    if h.is_null() {
        return;
    }
    // SAFETY: the run holds a reference to its hub until here.
    unsafe {
        if let Ok(mut s) = (*h).state.lock() {
            s.alive = false;
        }
    }
    hub_release(h);
}

pub fn new_cell(rt: &mut Rt) -> Option<*mut WakerCell> {
    let c = try_raw(WakerCell {
        obj: cw_object { backend: &TABLE.0 },
        refs: AtomicUsize::new(1),
        hub: rt.hub,
        rt,
        task: ptr::null_mut(),
        gone: AtomicBool::new(false),
        pending: AtomicBool::new(false),
    })?;
    // SAFETY: the run's hub is live.
    unsafe { (*rt.hub).refs.fetch_add(1, Ordering::AcqRel) };
    Some(c)
}

/// The task's end: drop the task's reference.
pub fn task_gone(c: *mut WakerCell) {
    // SAFETY: `c` is live; the task held one reference.
    unsafe { (*c).gone.store(true, Ordering::Release) };
    release(c);
}

/// `cw_waker_release`.
pub fn release(c: *mut WakerCell) {
    // SAFETY: `c` is live while it has references; the last one frees it.
    unsafe {
        if (*c).refs.fetch_sub(1, Ordering::AcqRel) == 1 {
            let hub = (*c).hub;
            drop(Box::from_raw(c));
            hub_release(hub);
        }
    }
}

/// `cw_waker_current`.
pub fn current(rt: &mut Rt) -> *mut WakerCell {
    let t = rt.current;
    if t.is_null() {
        runtime::die(b"cw_waker_current called outside a task of its runtime");
    }
    // SAFETY: the running task's cell is live.
    unsafe {
        let c = (*t).waker;
        (*c).refs.fetch_add(1, Ordering::AcqRel);
        c
    }
}

/// `cw_waker_wake`, from any thread.
pub fn wake(c: *mut WakerCell) {
    // SAFETY: the caller holds a reference, so the cell (and its hub) live.
    unsafe {
        let here = CURRENT.with(|x| x.get());
        if !here.is_null() && std::ptr::eq(here, (*c).rt) {
            if !(*c).gone.load(Ordering::Acquire) {
                runtime::wake_by_waker(&mut *here, (*c).task);
            }
            return;
        }
        let hub = &*(*c).hub;
        if let Ok(mut s) = hub.state.lock() {
            if s.alive && !(*c).gone.load(Ordering::Acquire) {
                (*c).pending.store(true, Ordering::Release);
                s.dirty = true;
            }
        }
    }
}

/// Apply the wakes other threads made, in task id order.
pub fn drain(rt: &mut Rt) {
    // SAFETY: the run's hub is live.
    let hub = unsafe { &*rt.hub };
    match hub.state.lock() {
        Ok(mut s) => {
            if !s.dirty {
                return;
            }
            s.dirty = false;
        }
        Err(_) => return,
    }
    for t in rt.tasks.iter() {
        // SAFETY: linked task records are live (a wake frees none); a live
        // task's cell is live.
        unsafe {
            if (*t).state == State::Done || (*t).waker.is_null() {
                continue;
            }
            if (*(*t).waker).pending.swap(false, Ordering::AcqRel) {
                runtime::wake_by_waker(rt, t);
            }
        }
    }
}
