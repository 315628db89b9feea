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
use crate::mem::try_raw;
use crate::runtime::{self, Resume};
use crate::table::TABLE;
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

fn hand_back(next: Option<Resume>, cp: *mut *mut cw_checkpoint) {
    let p = match next {
        Some(r) => try_raw(Checkpoint {
            obj: cw_object { backend: &TABLE.0 },
            resume: r,
        })
        .map_or(ptr::null_mut(), |c| c as *mut cw_checkpoint),
        None => ptr::null_mut(),
    };
    if !cp.is_null() {
        // SAFETY: the caller's output.
        unsafe { *cp = p };
    } else if !p.is_null() {
        free(p);
    }
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
    let (rc, next) = runtime::start_for_checkpoint(cfg, root, arg, unsafe { &mut *out });
    hand_back(next, cp);
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
    let (rc, after) = runtime::run(cfg, Some(resume), root, arg, out, !next.is_null());
    hand_back(after, next);
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
