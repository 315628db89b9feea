// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The stop signal (spec/05-signals.md).
//!
//! The run keeps one `Stop`: whether a stop was made and with which value
//! (the first wins, SIG-004), how many signals handed out before it are
//! still held, and the waits armed on it. A signal taken after the stop
//! holds nothing (SIG-003). Without memory `cw_stopped` returns the run's
//! spent signal, whose waits complete at once with `CW_ERR_NOMEM` (SIG-007).

use crate::audit;
use crate::ffi::*;
use crate::obj::{self, alloc_obj, Header, Kind, Object};
use crate::runtime::Rt;
use crate::select::{wake_list, WaitList};
use crate::tree::Ctx;
use std::os::raw::c_int;

pub struct Stop {
    pub made: bool,
    pub value: i32,
    pub held: usize,
    pub signal_waiters: WaitList,
    pub stop_waiters: WaitList,
}

impl Stop {
    pub fn new() -> Stop {
        Stop {
            made: false,
            value: 0,
            held: 0,
            signal_waiters: WaitList::new(),
            stop_waiters: WaitList::new(),
        }
    }
}

impl Default for Stop {
    fn default() -> Self {
        Stop::new()
    }
}

#[repr(C)]
pub struct Signal {
    pub h: Header,
    pub held: bool,
    pub spent: bool,
}

// SAFETY: #[repr(C)] with the Header first, kind Signal.
unsafe impl Object for Signal {}

impl Signal {
    pub fn spent(rt: *mut Rt) -> Signal {
        Signal {
            h: Header::new(Kind::Signal, rt),
            held: false,
            spent: true,
        }
    }
}

/// `cw_stopped` (SIG-001, SIG-003, SIG-007).
///
/// # Safety
/// `ctx` must be a live context of this backend.
pub unsafe fn stopped(ctx: *mut Ctx) -> *mut Signal {
    // SAFETY: forwarded; single-threaded run.
    let r = unsafe { &mut *(*ctx).h.rt };
    audit::record(r, b"stopped\0", &[]);
    let held = !r.stop.made;
    let rtp: *mut Rt = r;
    match alloc_obj(
        r,
        Signal {
            h: Header::new(Kind::Signal, rtp),
            held,
            spent: false,
        },
    ) {
        Some(s) => {
            if held {
                r.stop.held += 1;
            }
            s
        }
        None => r.spent_signal,
    }
}

/// `cw_signal_release` (SIG-002).
///
/// # Safety
/// `s` must be a live signal of this backend, released once.
pub unsafe fn release(s: *mut Signal) {
    // SAFETY: forwarded; single-threaded run.
    unsafe {
        let r = &mut *(*s).h.rt;
        if s == r.spent_signal {
            return;
        }
        if (*s).held {
            r.stop.held -= 1;
            if r.stop.held == 0 {
                let l: *mut WaitList = &mut r.stop.stop_waiters;
                wake_list(r, &mut *l);
            }
        }
        obj::free_obj(r, s as *mut Header);
    }
}

pub fn signal_ready(rt: &Rt, s: &Signal) -> bool {
    s.spent || rt.stop.made
}

/// # Safety
/// `value` is NULL or points at a writable `int32_t`.
pub unsafe fn signal_complete(rt: &Rt, s: &Signal, value: *mut i32) -> c_int {
    if s.spent {
        return CW_ERR_NOMEM;
    }
    if !value.is_null() {
        // SAFETY: forwarded.
        unsafe { *value = rt.stop.value };
    }
    CW_OK
}

/// A stop wait tried: the stop is made at the first try (SIG-006), and it
/// can complete once no signal from before the stop is held (SIG-002).
pub fn stop_try(rt: &mut Rt, w: &mut cw_wait) -> bool {
    if w.state & 1 == 0 {
        w.state |= 1;
        let v = w.arg as u32 as i32;
        audit::record(rt, b"stop\0", &[&v.to_be_bytes()]);
        if !rt.stop.made {
            rt.stop.made = true;
            rt.stop.value = v;
            let l: *mut WaitList = &mut rt.stop.signal_waiters;
            // SAFETY: `l` is a field of the live run, not otherwise borrowed
            // while the waiters are queued.
            wake_list(rt, unsafe { &mut *l });
        }
    }
    rt.stop.held == 0
}
