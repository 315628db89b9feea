// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Channels and oneshots (spec/09-channels.md).
//!
//! Values are bytes of a fixed `elem_size`, kept in one byte queue. A
//! bounded channel reserves room for its first values when made and grows
//! on demand; growth that finds no memory makes that send fail with
//! `CW_ERR_NOMEM` (the unbounded channel's rule, 01-errors.md). A oneshot
//! holds its value's room from the start, so its send never allocates.

use crate::ffi::*;
use crate::obj::{self, alloc_obj, Header, Kind, Object};
use crate::runtime::Rt;
use crate::select::{wake_list, WaitList};
use crate::tree::Ctx;
use std::collections::VecDeque;
use std::os::raw::{c_int, c_void};
use std::ptr;

/// Values reserved up front by a bounded channel.
const PREALLOC: usize = 64;

#[repr(C)]
pub struct Chan {
    pub h: Header,
    pub elem: usize,
    pub cap: usize,
    pub buf: VecDeque<u8>,
    pub senders: usize,
    pub rx_alive: bool,
    pub send_waiters: WaitList,
    pub recv_waiters: WaitList,
}

// SAFETY: #[repr(C)] with the Header first, kind Chan.
unsafe impl Object for Chan {}

#[repr(C)]
pub struct Oneshot {
    pub h: Header,
    pub elem: usize,
    pub val: Vec<u8>,
    pub has_val: bool,
    pub tx_ended: bool,
    pub rx_ended: bool,
    pub waiters: WaitList,
}

// SAFETY: #[repr(C)] with the Header first, kind Oneshot.
unsafe impl Object for Oneshot {}

/// `cw_chan_new` (CHN-006).
///
/// # Safety
/// `ctx` must be a live context of this backend.
pub unsafe fn new(ctx: *mut Ctx, elem: usize, cap: usize) -> *mut Chan {
    if elem == 0 {
        return ptr::null_mut();
    }
    // SAFETY: forwarded; single-threaded run.
    let r = unsafe { &mut *(*ctx).h.rt };
    let mut buf = VecDeque::new();
    let first = if cap == 0 { 1 } else { cap.min(PREALLOC) };
    let bytes = match first.checked_mul(elem) {
        Some(b) => b,
        None => return ptr::null_mut(),
    };
    if buf.try_reserve(bytes).is_err() {
        return ptr::null_mut();
    }
    let rtp: *mut Rt = r;
    alloc_obj(
        r,
        Chan {
            h: Header::new(Kind::Chan, rtp),
            elem,
            cap,
            buf,
            senders: 1,
            rx_alive: true,
            send_waiters: WaitList::new(),
            recv_waiters: WaitList::new(),
        },
    )
    .unwrap_or(ptr::null_mut())
}

fn len(c: &Chan) -> usize {
    c.buf.len() / c.elem
}

pub fn send_ready(c: &Chan) -> bool {
    !c.rx_alive || c.cap == 0 || len(c) < c.cap
}

pub fn recv_ready(c: &Chan) -> bool {
    !c.buf.is_empty() || c.senders == 0
}

/// Complete a send that `send_ready` allowed.
///
/// # Safety
/// `c` live; `elem` points at `elem_size` readable bytes.
pub unsafe fn send(rt: &mut Rt, c: *mut Chan, elem: *const c_void) -> c_int {
    // SAFETY: forwarded.
    let c = unsafe { &mut *c };
    if !c.rx_alive {
        return CW_ERR_CLOSED;
    }
    if c.buf.try_reserve(c.elem).is_err() {
        return CW_ERR_NOMEM;
    }
    // SAFETY: the caller's element is `elem` bytes long.
    let v = unsafe { std::slice::from_raw_parts(elem as *const u8, c.elem) };
    c.buf.extend(v.iter().copied());
    wake_list(rt, &mut c.recv_waiters);
    CW_OK
}

/// Complete a receive that `recv_ready` allowed.
///
/// # Safety
/// `c` live; `out` points at `elem_size` writable bytes (or is NULL).
pub unsafe fn recv(rt: &mut Rt, c: *mut Chan, out: *mut c_void) -> c_int {
    // SAFETY: forwarded.
    let c = unsafe { &mut *c };
    if c.buf.is_empty() {
        return CW_ERR_CLOSED;
    }
    for i in 0..c.elem {
        let b = c.buf.pop_front().unwrap_or(0);
        if !out.is_null() {
            // SAFETY: the caller's buffer is `elem` bytes long.
            unsafe { *(out as *mut u8).add(i) = b };
        }
    }
    wake_list(rt, &mut c.send_waiters);
    CW_OK
}

fn maybe_free_chan(rt: &mut Rt, c: *mut Chan) {
    // SAFETY: `c` is live; freed once both sides are gone.
    unsafe {
        if !(*c).rx_alive && (*c).senders == 0 {
            obj::free_obj(rt, c as *mut Header);
        }
    }
}

/// # Safety
/// `c` must be a live channel of this backend.
pub unsafe fn sender_add(c: *mut Chan) {
    // SAFETY: forwarded.
    unsafe { (*c).senders += 1 };
}

/// # Safety
/// `c` must be a live channel with a sender left.
pub unsafe fn sender_drop(c: *mut Chan) {
    // SAFETY: forwarded; single-threaded run.
    unsafe {
        let r = &mut *(*c).h.rt;
        if (*c).senders == 0 {
            crate::runtime::die(b"cw_chan_sender_drop: more drops than senders");
        }
        (*c).senders -= 1;
        if (*c).senders == 0 {
            wake_list(r, &mut (*c).recv_waiters);
        }
        maybe_free_chan(r, c);
    }
}

/// # Safety
/// `c` must be a live channel whose receiver was not dropped.
pub unsafe fn receiver_drop(c: *mut Chan) {
    // SAFETY: forwarded; single-threaded run.
    unsafe {
        let r = &mut *(*c).h.rt;
        (*c).rx_alive = false;
        (*c).buf = VecDeque::new();
        wake_list(r, &mut (*c).send_waiters);
        maybe_free_chan(r, c);
    }
}

/// `cw_oneshot_new` (CHN-006).
///
/// # Safety
/// `ctx` must be a live context of this backend.
pub unsafe fn oneshot_new(ctx: *mut Ctx, elem: usize) -> *mut Oneshot {
    if elem == 0 {
        return ptr::null_mut();
    }
    // SAFETY: forwarded; single-threaded run.
    let r = unsafe { &mut *(*ctx).h.rt };
    let mut val = Vec::new();
    if val.try_reserve_exact(elem).is_err() {
        return ptr::null_mut();
    }
    val.resize(elem, 0);
    let rtp: *mut Rt = r;
    alloc_obj(
        r,
        Oneshot {
            h: Header::new(Kind::Oneshot, rtp),
            elem,
            val,
            has_val: false,
            tx_ended: false,
            rx_ended: false,
            waiters: WaitList::new(),
        },
    )
    .unwrap_or(ptr::null_mut())
}

fn maybe_free_oneshot(rt: &mut Rt, o: *mut Oneshot) {
    // SAFETY: `o` is live; freed once both sides ended.
    unsafe {
        if (*o).tx_ended && (*o).rx_ended {
            obj::free_obj(rt, o as *mut Header);
        }
    }
}

/// `cw_oneshot_send` (CHN-005): never suspends.
///
/// # Safety
/// `o` live; `elem` points at `elem_size` readable bytes.
pub unsafe fn oneshot_send(o: *mut Oneshot, elem: *const c_void) -> c_int {
    // SAFETY: forwarded; single-threaded run.
    unsafe {
        let r = &mut *(*o).h.rt;
        if (*o).tx_ended {
            return CW_ERR_INVALID;
        }
        (*o).tx_ended = true;
        if (*o).rx_ended {
            maybe_free_oneshot(r, o);
            return CW_ERR_CLOSED;
        }
        if !elem.is_null() {
            ptr::copy_nonoverlapping(elem as *const u8, (*o).val.as_mut_ptr(), (*o).elem);
        }
        (*o).has_val = true;
        wake_list(r, &mut (*o).waiters);
        CW_OK
    }
}

/// # Safety
/// `o` must be a live oneshot whose sending side has not ended.
pub unsafe fn oneshot_sender_drop(o: *mut Oneshot) {
    // SAFETY: forwarded; single-threaded run.
    unsafe {
        let r = &mut *(*o).h.rt;
        if (*o).tx_ended {
            return;
        }
        (*o).tx_ended = true;
        wake_list(r, &mut (*o).waiters);
        maybe_free_oneshot(r, o);
    }
}

/// # Safety
/// `o` must be a live oneshot whose receiving side has not ended.
pub unsafe fn oneshot_receiver_drop(o: *mut Oneshot) {
    // SAFETY: forwarded; single-threaded run.
    unsafe {
        let r = &mut *(*o).h.rt;
        (*o).rx_ended = true;
        maybe_free_oneshot(r, o);
    }
}

pub fn oneshot_ready(o: &Oneshot) -> bool {
    o.has_val || o.tx_ended
}

/// Complete a oneshot receive; it ends the receiving side.
///
/// # Safety
/// `o` live; `out` points at `elem_size` writable bytes (or is NULL).
pub unsafe fn oneshot_recv(rt: &mut Rt, o: *mut Oneshot, out: *mut c_void) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        let res = if (*o).has_val {
            if !out.is_null() {
                ptr::copy_nonoverlapping((*o).val.as_ptr(), out as *mut u8, (*o).elem);
            }
            CW_OK
        } else {
            CW_ERR_CLOSED
        };
        (*o).rx_ended = true;
        maybe_free_oneshot(rt, o);
        res
    }
}
