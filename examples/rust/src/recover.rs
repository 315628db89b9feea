// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Crash and recovery (spec/11-deterministic.md, DET-008..DET-011).
//!
//! A checkpoint is what survives a crash: the run's settings, its clock,
//! its random stream where it stopped, its audit digest, the deadline of
//! the history's first run, and its storage as the crash left it (durable
//! bytes, with the unsynced changes the fault settings keep replayed onto
//! them, STOR-033) with the fault settings in force. It is an object of
//! its own (it begins with `cw_object`, so `cw_recover` dispatches on it)
//! that outlives the run; the next run consumes it.

use crate::ffi::*;
use crate::runtime::{self, Resume};
use crate::table::TABLE;
use std::alloc::{alloc, dealloc, Layout};
use std::os::raw::{c_int, c_void};
use std::ptr;

#[repr(C)]
pub struct Checkpoint {
    obj: cw_object,
    resume: Resume,
}

fn result_of(out: *mut cw_run_result, local: &mut cw_run_result) -> *mut cw_run_result {
    if out.is_null() {
        local
    } else {
        // SAFETY: the caller's writable result; all-zero is a valid value.
        unsafe { ptr::write_bytes(out, 0, 1) };
        out
    }
}

/// Room for a checkpoint, had before the run starts (DET-008): a run whose
/// checkpoint could not be kept is refused rather than run.
fn room() -> Option<*mut Checkpoint> {
    let layout = Layout::new::<Checkpoint>();
    // SAFETY: a checkpoint has a non-zero size.
    let p = unsafe { alloc(layout) } as *mut Checkpoint;
    if p.is_null() {
        None
    } else {
        Some(p)
    }
}

/// Fill the room with the run's checkpoint and hand it back (or give the
/// room back when the run could not start).
fn hand_back(room: *mut Checkpoint, next: Option<Resume>, cp: *mut *mut cw_checkpoint) {
    let p = match next {
        Some(r) => {
            // SAFETY: the room is fresh memory laid out for a Checkpoint.
            unsafe {
                room.write(Checkpoint {
                    obj: cw_object { backend: &TABLE.0 },
                    resume: r,
                })
            };
            room as *mut cw_checkpoint
        }
        None => {
            // SAFETY: the unused room, allocated by `room` with this layout.
            unsafe { dealloc(room as *mut u8, Layout::new::<Checkpoint>()) };
            ptr::null_mut()
        }
    };
    if !cp.is_null() {
        // SAFETY: the caller's output.
        unsafe { *cp = p };
    } else if !p.is_null() {
        free(p);
    }
}

fn refuse(out: &mut cw_run_result) -> c_int {
    let m = b"out of memory: no room for the run's checkpoint";
    for (d, s) in out.message.iter_mut().zip(m.iter()) {
        *d = *s as std::os::raw::c_char;
    }
    out.status = CW_ERR_NOMEM;
    out.status
}

pub unsafe extern "C" fn start_checkpoint(
    cfg: *const cw_config,
    root: Option<cw_task_fn>,
    arg: *mut c_void,
    out: *mut cw_run_result,
    cp: *mut *mut cw_checkpoint,
) -> c_int {
    if !cp.is_null() {
        // SAFETY: the caller's output.
        unsafe { *cp = ptr::null_mut() };
    }
    // SAFETY: an all-zero cw_run_result is valid.
    let mut local: cw_run_result = unsafe { std::mem::zeroed() };
    let out = result_of(out, &mut local);
    // SAFETY: `out` is writable (the caller's or ours).
    let out = unsafe { &mut *out };
    let room = match room() {
        Some(r) => r,
        None => return refuse(out),
    };
    let (rc, next) = runtime::start_for_checkpoint(cfg, root, arg, out);
    hand_back(room, next, cp);
    rc
}

pub unsafe extern "C" fn recover(
    cp: *mut cw_checkpoint,
    root: Option<cw_task_fn>,
    arg: *mut c_void,
    out: *mut cw_run_result,
    next: *mut *mut cw_checkpoint,
) -> c_int {
    if !next.is_null() {
        // SAFETY: the caller's output.
        unsafe { *next = ptr::null_mut() };
    }
    // SAFETY: a checkpoint of this backend, consumed here (DET-011).
    let c = unsafe { Box::from_raw(cp as *mut Checkpoint) };
    let resume = c.resume;
    let cfg = resume.cfg;
    // SAFETY: an all-zero cw_run_result is valid.
    let mut local: cw_run_result = unsafe { std::mem::zeroed() };
    let out = result_of(out, &mut local);
    // SAFETY: `out` is writable (the caller's or ours).
    let out = unsafe { &mut *out };
    let room = if next.is_null() {
        ptr::null_mut()
    } else {
        match room() {
            Some(r) => r,
            None => return refuse(out),
        }
    };
    let (rc, after) = runtime::run(cfg, Some(resume), root, arg, out, !next.is_null());
    if !room.is_null() {
        hand_back(room, after, next);
    }
    rc
}

fn free(cp: *mut cw_checkpoint) {
    // SAFETY: a checkpoint of this backend, freed once.
    drop(unsafe { Box::from_raw(cp as *mut Checkpoint) });
}

pub unsafe extern "C" fn checkpoint_free(cp: *mut cw_checkpoint) {
    if !cp.is_null() {
        free(cp);
    }
}
