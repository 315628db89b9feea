// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Waits and `cw_select` (spec/08-select.md).
//!
//! A `cw_wait` says what to try (`ops` holds its kind), on what (`object`),
//! with what (`out`, `arg`). `cw_select` tries the waits in index order and
//! completes the first that can; if none can, it *arms* them and suspends
//! the task. Arming links the wait itself into its object's waiter list
//! through `link[0..2]` (`link[2]` the task, `link[3]` the list), or, for a
//! sleep, records an alarm: it needs no allocation except the alarm's
//! (CLK-008). An object that changes wakes every armed waiter, in arm
//! order (DET-019); the woken task disarms everything, tries again in index
//! order, so the lowest ready index wins (SEL-001), and, when it must wait
//! again, arms afresh, at the back of every list and behind every alarm
//! armed meanwhile (DET-019, DET-021). Before returning, every armed wait
//! is disarmed, so a losing wait leaves nothing behind (SEL-002).
//!
//! Trying is split in `probe` (can it complete? no effect, except the stop
//! wait's first try, SIG-006) and `complete` (do it), so that the waits are
//! disarmed before the one that wins runs (which may free its object).

use crate::chan::{self, Chan, Oneshot};
use crate::ffi::*;
use crate::handle::Handle;
use crate::obj::Header;
use crate::runtime::{self, Rt, Task};
use crate::signal::{self, Signal};
use crate::table::TABLE;
use crate::tree::Ctx;
use std::os::raw::{c_int, c_void};
use std::ptr;

pub const K_JOIN: usize = 1;
pub const K_SLEEP: usize = 2;
pub const K_READY: usize = 3;
pub const K_PENDING: usize = 4;
pub const K_SEND: usize = 5;
pub const K_RECV: usize = 6;
pub const K_ONESHOT: usize = 7;
pub const K_SIGNAL: usize = 8;
pub const K_STOP: usize = 9;
pub const K_ACCEPT: usize = 10;
pub const K_NSEND: usize = 11;
pub const K_NRECV: usize = 12;

use crate::net::core::{self as net, Half, Listener, CLOSED_UNDER, WAITED};

/// `link[3]` of a wait whose alarm is armed.
/// (`ptr::dangling_mut` would say so, but it needs Rust 1.84.)
#[allow(clippy::manual_dangling_ptr)]
const ALARM: *mut c_void = 1 as *mut c_void;

/// The waits armed on one object, linked through their `link` fields.
pub struct WaitList {
    pub head: *mut cw_wait,
    pub tail: *mut cw_wait,
}

impl WaitList {
    pub const fn new() -> WaitList {
        WaitList {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
        }
    }
}

impl Default for WaitList {
    fn default() -> Self {
        WaitList::new()
    }
}

/// Queue the task of every wait armed on `l` (they stay armed).
pub fn wake_list(rt: &mut Rt, l: &mut WaitList) {
    let mut w = l.head;
    while !w.is_null() {
        // SAFETY: armed waits live in the frames of suspended tasks, which
        // disarm them before those frames go.
        unsafe {
            let t = (*w).link[2] as *mut Task;
            w = (*w).link[1] as *mut cw_wait;
            runtime::wake_task(rt, t);
        }
    }
}

fn arm_on(l: *mut WaitList, w: *mut cw_wait, t: *mut Task) {
    // SAFETY: `l` is the list of a live object; `w` is in the running
    // task's select array, unarmed.
    unsafe {
        (*w).link = [
            (*l).tail as *mut c_void,
            ptr::null_mut(),
            t as *mut c_void,
            l as *mut c_void,
        ];
        if (*l).tail.is_null() {
            (*l).head = w;
        } else {
            (*(*l).tail).link[1] = w as *mut c_void;
        }
        (*l).tail = w;
    }
}

fn disarm(rt: &mut Rt, w: *mut cw_wait) {
    // SAFETY: `w` is in the running task's select array; if armed, its
    // neighbours and list are live (objects outlive their armed waits).
    unsafe {
        let l = (*w).link[3];
        if l.is_null() {
            return;
        }
        if l == ALARM {
            runtime::disarm_alarm(rt, w);
        } else {
            if kind(&*w) == K_NRECV {
                net::clear_busy((*w).object as *mut Half, (*w).link[2] as *mut Task);
            }
            let l = l as *mut WaitList;
            let p = (*w).link[0] as *mut cw_wait;
            let n = (*w).link[1] as *mut cw_wait;
            if p.is_null() {
                (*l).head = n;
            } else {
                (*p).link[1] = n as *mut c_void;
            }
            if n.is_null() {
                (*l).tail = p;
            } else {
                (*n).link[0] = p as *mut c_void;
            }
        }
        (*w).link = [ptr::null_mut(); 4];
    }
}

fn kind(w: &cw_wait) -> usize {
    w.ops as usize
}

/// Can `w` complete now? Side effect only for a stop's first try.
fn probe(rt: &mut Rt, w: *mut cw_wait) -> bool {
    // SAFETY: `w` is a filled wait whose object is a live object of `rt`
    // (a network object closed under it is never touched: CLOSED_UNDER).
    unsafe {
        let o = (*w).object;
        if (*w).state & CLOSED_UNDER != 0 {
            return true;
        }
        match kind(&*w) {
            K_ACCEPT => net::accept_ready(&*(o as *mut Listener)),
            K_NSEND => true,
            K_NRECV => net::recv_ready(rt, &*(o as *mut Half), (*w).arg as usize),
            K_JOIN => (*(o as *mut Handle)).done,
            K_SLEEP => (*w).arg != CW_TIME_MAX && rt.clock >= (*w).arg,
            K_READY => true,
            K_PENDING => false,
            K_SEND => chan::send_ready(&*(o as *mut Chan)),
            K_RECV => chan::recv_ready(&*(o as *mut Chan)),
            K_ONESHOT => chan::oneshot_ready(&*(o as *mut Oneshot)),
            K_SIGNAL => signal::signal_ready(rt, &*(o as *mut Signal)),
            K_STOP => signal::stop_try(rt, &mut *w),
            _ => runtime::die(b"cw_select: a wait that was not filled by this backend"),
        }
    }
}

/// Complete `w`, which `probe` said can; returns its result.
fn complete(rt: &mut Rt, w: *mut cw_wait) -> c_int {
    // SAFETY: as in `probe`.
    unsafe {
        let o = (*w).object;
        if (*w).state & CLOSED_UNDER != 0 {
            return match kind(&*w) {
                K_ACCEPT => net::accept_closed((*w).out as *mut cw_conn),
                K_NRECV => {
                    let out = (*w).out as *mut *mut cw_iobufs;
                    if !out.is_null() {
                        *out = ptr::null_mut();
                    }
                    CW_ERR_CLOSED
                }
                _ => CW_ERR_CLOSED,
            };
        }
        match kind(&*w) {
            K_ACCEPT => net::accept_complete(rt, o as *mut Listener, (*w).out as *mut cw_conn),
            K_NSEND => net::send(rt, o as *mut Half, (*w).out as *const cw_iobufs),
            K_NRECV => net::recv_complete(
                rt,
                o as *mut Half,
                (*w).arg as usize,
                (*w).out as *mut *mut cw_iobufs,
            ),
            K_JOIN => {
                // TASK-008: the value with CW_OK, NULL with another result,
                // untouched for an aborted ready handle (its join does not
                // complete the handle).
                let h = &*(o as *mut Handle);
                let out = (*w).out as *mut *mut c_void;
                if !out.is_null() && !h.abandoned {
                    *out = if h.result == CW_OK {
                        h.value
                    } else {
                        ptr::null_mut()
                    };
                }
                h.result
            }
            K_SLEEP => CW_OK,
            K_READY => (*w).arg as i64 as c_int,
            K_SEND => chan::send(rt, o as *mut Chan, (*w).out),
            K_RECV => chan::recv(rt, o as *mut Chan, (*w).out),
            K_ONESHOT => chan::oneshot_recv(rt, o as *mut Oneshot, (*w).out),
            K_SIGNAL => signal::signal_complete(rt, &*(o as *mut Signal), (*w).out as *mut i32),
            K_STOP => CW_OK,
            _ => CW_ERR_INVALID,
        }
    }
}

/// Arm `w` for task `t`; `false` when a sleep's alarm found no memory.
fn arm(rt: &mut Rt, t: *mut Task, w: *mut cw_wait) -> bool {
    // SAFETY: as in `probe`.
    unsafe {
        let o = (*w).object;
        match kind(&*w) {
            K_ACCEPT => arm_on(net::accept_waiters(o as *mut Listener), w, t),
            K_NRECV => {
                arm_on(net::recv_waiters(o as *mut Half), w, t);
                net::set_busy(o as *mut Half, t);
                (*w).state |= WAITED;
            }
            K_JOIN => arm_on(&mut (*(o as *mut Handle)).waiters, w, t),
            // A sleep until CW_TIME_MAX never completes (CLK-003): no alarm.
            K_SLEEP if (*w).arg != CW_TIME_MAX => {
                if !runtime::arm_alarm(rt, t, w, (*w).arg) {
                    return false;
                }
                (*w).link[3] = ALARM;
            }
            K_SEND => arm_on(&mut (*(o as *mut Chan)).send_waiters, w, t),
            K_RECV => arm_on(&mut (*(o as *mut Chan)).recv_waiters, w, t),
            K_ONESHOT => arm_on(&mut (*(o as *mut Oneshot)).waiters, w, t),
            K_SIGNAL => arm_on(&mut rt.stop.signal_waiters, w, t),
            K_STOP => arm_on(&mut rt.stop.stop_waiters, w, t),
            _ => {}
        }
    }
    true
}

/// NET-010: the recv waits of this select that waited and did not win
/// (another wait completed, the task unwinds) poison their streams.
fn give_up(waits: *mut cw_wait, n: usize, winner: usize) {
    for i in 0..n {
        if i == winner {
            continue;
        }
        // SAFETY: the caller's array of `n` waits; a stream closed under its
        // wait is not touched.
        unsafe {
            let w = &*waits.add(i);
            if kind(w) == K_NRECV && w.state & WAITED != 0 && w.state & CLOSED_UNDER == 0 {
                net::give_up_recv(w.object as *mut Half);
            }
        }
    }
}

fn disarm_all(rt: &mut Rt, waits: *mut cw_wait, n: usize) {
    for i in 0..n {
        // SAFETY: `waits` holds `n` waits (the caller's array).
        disarm(rt, unsafe { waits.add(i) });
    }
}

/// `cw_select` / `cw_poll` (SEL-001..003, TASK-002, PAN-005).
///
/// # Safety
/// `waits` must hold `n` waits filled by this backend, of one run.
pub unsafe fn select(waits: *mut cw_wait, n: usize, block: bool) -> c_int {
    if n == 0 || waits.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: every wait's object begins with a Header of its run.
    let rtp = unsafe { (*((*waits).object as *mut Header)).rt };
    let t = if block {
        runtime::require_task(rtp, "cw_select")
    } else {
        // SAFETY: reading the run's running task, if any.
        unsafe { (*rtp).current }
    };
    for i in 0..n {
        // SAFETY: the caller's array of `n` waits.
        unsafe {
            (*waits.add(i)).link = [ptr::null_mut(); 4];
            (*waits.add(i)).state &= !WAITED;
        }
    }
    loop {
        {
            // SAFETY: single-threaded access to the live run, no switch
            // while borrowed.
            let rt = unsafe { &mut *rtp };
            // A stop made by a wait of this very select (SIG-006) can make
            // an earlier wait ready: then try them all once more.
            let mut passes = 0;
            loop {
                let made_before = rt.stop.made;
                for i in 0..n {
                    // SAFETY: as above.
                    let w = unsafe { waits.add(i) };
                    if probe(rt, w) {
                        disarm_all(rt, waits, n);
                        give_up(waits, n, i);
                        let res = complete(rt, w);
                        // SAFETY: as above.
                        unsafe { (*w).result = res };
                        return i as c_int;
                    }
                }
                passes += 1;
                if made_before == rt.stop.made || passes > 1 {
                    break;
                }
            }
            if !block {
                return CW_ERR_WOULD_BLOCK;
            }
            // SAFETY: `t` is the running task (require_task).
            let (unwinding, aborted) = unsafe { ((*t).unwinding, (*t).aborted) };
            if unwinding {
                disarm_all(rt, waits, n);
                give_up(waits, n, usize::MAX);
                return CW_ERR_CLOSED;
            }
            if aborted {
                disarm_all(rt, waits, n);
                give_up(waits, n, usize::MAX);
                runtime::unwind_now(rtp, t);
            }
            // A wake kept for the next park is this suspension's early
            // return: try again, then suspend as usual (DET-020).
            // SAFETY: as above.
            if unsafe { (*t).notified } {
                // SAFETY: as above.
                unsafe { (*t).notified = false };
                continue;
            }
            // Armed afresh at every suspension: a task woken by a change
            // that did not let it complete goes to the back of every
            // waiter list and alarm it waits on (DET-019, DET-021).
            for i in 0..n {
                // SAFETY: as above.
                let w = unsafe { waits.add(i) };
                if !arm(rt, t, w) {
                    disarm_all(rt, waits, n);
                    // SAFETY: as above.
                    unsafe { (*w).result = CW_ERR_NOMEM };
                    return i as c_int;
                }
            }
        }
        runtime::suspend(rtp, t);
        // SAFETY: single-threaded access to the live run, after the switch.
        disarm_all(unsafe { &mut *rtp }, waits, n);
        // SAFETY: `t` is the running task again.
        if unsafe { (*t).aborted && !(*t).unwinding } {
            // Aborted while suspended: end here, without trying again.
            // SAFETY: single-threaded access to the live run.
            disarm_all(unsafe { &mut *rtp }, waits, n);
            give_up(waits, n, usize::MAX);
            runtime::unwind_now(rtp, t);
        }
    }
}

fn fill(w: *mut cw_wait, k: usize, object: *mut c_void, out: *mut c_void, arg: u64) {
    // SAFETY: `w` points at the caller's (possibly uninitialised) wait,
    // which is written whole.
    unsafe {
        w.write(cw_wait {
            backend: &TABLE.0,
            result: CW_OK,
            ops: k as *const c_void,
            object,
            out,
            arg,
            state: 0,
            link: [ptr::null_mut(); 4],
        })
    }
}

pub fn wait_join(w: *mut cw_wait, h: *mut Handle, out: *mut *mut c_void) {
    fill(w, K_JOIN, h as *mut c_void, out as *mut c_void, 0)
}

pub fn wait_sleep_until(w: *mut cw_wait, ctx: *mut Ctx, deadline: u64) {
    fill(w, K_SLEEP, ctx as *mut c_void, ptr::null_mut(), deadline)
}

pub fn wait_ready(w: *mut cw_wait, ctx: *mut Ctx, result: c_int) {
    fill(
        w,
        K_READY,
        ctx as *mut c_void,
        ptr::null_mut(),
        result as i64 as u64,
    )
}

pub fn wait_pending(w: *mut cw_wait, ctx: *mut Ctx) {
    fill(w, K_PENDING, ctx as *mut c_void, ptr::null_mut(), 0)
}

pub fn wait_send(w: *mut cw_wait, c: *mut Chan, elem: *const c_void) {
    fill(w, K_SEND, c as *mut c_void, elem as *mut c_void, 0)
}

pub fn wait_recv(w: *mut cw_wait, c: *mut Chan, elem: *mut c_void) {
    fill(w, K_RECV, c as *mut c_void, elem, 0)
}

pub fn wait_oneshot(w: *mut cw_wait, o: *mut Oneshot, elem: *mut c_void) {
    fill(w, K_ONESHOT, o as *mut c_void, elem, 0)
}

pub fn wait_signal(w: *mut cw_wait, s: *mut Signal, value: *mut i32) {
    fill(w, K_SIGNAL, s as *mut c_void, value as *mut c_void, 0)
}

pub fn wait_stop(w: *mut cw_wait, ctx: *mut Ctx, value: i32) {
    fill(
        w,
        K_STOP,
        ctx as *mut c_void,
        ptr::null_mut(),
        value as u32 as u64,
    )
}

pub fn wait_accept(w: *mut cw_wait, l: *mut Listener, out: *mut cw_conn) {
    fill(w, K_ACCEPT, l as *mut c_void, out as *mut c_void, 0)
}

pub fn wait_sink_send(w: *mut cw_wait, s: *mut Half, bufs: *const cw_iobufs) {
    fill(w, K_NSEND, s as *mut c_void, bufs as *mut c_void, 0)
}

pub fn wait_stream_recv(w: *mut cw_wait, s: *mut Half, len: usize, out: *mut *mut cw_iobufs) {
    fill(w, K_NRECV, s as *mut c_void, out as *mut c_void, len as u64)
}
