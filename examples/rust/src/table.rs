// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The backend table (spec/10-backend.md) and its `extern "C"` entries.
//!
//! This is the FFI boundary: each entry turns the C pointers it is given
//! into this crate's object types (every object begins with a `Header`,
//! ABI-002) and calls the module that implements it. The table is a
//! `static`, so every object's `cw_object.backend` can point at it.
//!
//! `panic` is filled and `vpanic` left NULL (PAN-007): `cw_panic` formats
//! the message in the caller's C, and stable Rust cannot receive a
//! `va_list`. Profiles declared (ABI-004): `core`, `deterministic`,
//! `audit`, `persistent-storage` and `recover` (capabilities, the last
//! with its three entries), `buffers`, `metrics`, `storage` and `network`
//! (their tables). Not `parallel`.

use crate::chan::{self, Chan, Oneshot};
use crate::ffi::*;
use crate::handle::{self, Handle};
use crate::runtime::{self, Rt};
use crate::select;
use crate::signal::{self, Signal};
use crate::tree::{self, Ctx};
use crate::waker::{self, WakerCell};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

/// The profiles this backend declares beyond `core` (ABI-003, ABI-004).
const CAPABILITIES: u64 =
    CW_CAP_DETERMINISTIC | CW_CAP_AUDIT | CW_CAP_RECOVER | CW_CAP_PERSISTENT_STORAGE;

pub fn capabilities() -> u64 {
    CAPABILITIES
}

/// The table, `Sync` because it is immutable and its pointers are to
/// static data and functions.
pub struct Table(pub cw_backend);

// SAFETY: the table is never written after initialisation; its raw
// pointers point at 'static data.
unsafe impl Sync for Table {}

fn ctx_rt(ctx: *mut cw_ctx) -> *mut Rt {
    // SAFETY: every context of this backend begins with a Header.
    unsafe { runtime::rt_of(ctx as *const c_void) }
}

unsafe extern "C" fn e_start(
    cfg: *const cw_config,
    root: Option<cw_task_fn>,
    arg: *mut c_void,
    out: *mut cw_run_result,
) -> c_int {
    let mut local: cw_run_result;
    let out: &mut cw_run_result = if out.is_null() {
        // SAFETY: an all-zero cw_run_result is valid (integers, a null
        // pointer, byte arrays).
        local = unsafe { std::mem::zeroed() };
        &mut local
    } else {
        // SAFETY: the caller gives a writable result; zeroing it first
        // leaves "" in its strings.
        unsafe {
            ptr::write_bytes(out, 0, 1);
            &mut *out
        }
    };
    runtime::start(cfg, root, arg, out)
}

unsafe extern "C" fn e_child(ctx: *mut cw_ctx, label: *const c_char) -> *mut cw_ctx {
    // SAFETY: `ctx` is a live context of this backend (the caller's
    // contract, cw/context.h).
    unsafe { tree::child(ctx as *mut Ctx, label) as *mut cw_ctx }
}

unsafe extern "C" fn e_with_attribute(ctx: *mut cw_ctx, key: *const c_char, value: *const c_char) {
    // SAFETY: as in e_child.
    unsafe { tree::with_attribute(ctx as *mut Ctx, key, value) }
}

unsafe extern "C" fn e_label(ctx: *const cw_ctx) -> *const c_char {
    // SAFETY: as in e_child; the label is NUL-terminated and lives with it.
    unsafe { (*(ctx as *const Ctx)).label.as_ptr() as *const c_char }
}

unsafe extern "C" fn e_set_execution(ctx: *mut cw_ctx, execution: c_int) {
    // SAFETY: as in e_child.
    unsafe { (*(ctx as *mut Ctx)).exec = execution }
}

unsafe extern "C" fn e_ctx_release(ctx: *mut cw_ctx) {
    // SAFETY: as in e_child.
    unsafe { tree::release(ctx as *mut Ctx) }
}

unsafe extern "C" fn e_spawn(
    ctx: *mut cw_ctx,
    f: Option<cw_task_fn>,
    arg: *mut c_void,
) -> *mut cw_handle {
    // SAFETY: as in e_child.
    unsafe { tree::spawn(ctx as *mut Ctx, f, arg) as *mut cw_handle }
}

unsafe extern "C" fn e_handle_ready(
    ctx: *mut cw_ctx,
    result: c_int,
    value: *mut c_void,
) -> *mut cw_handle {
    // SAFETY: as in e_child.
    unsafe { handle::ready(ctx as *mut Ctx, result, value) as *mut cw_handle }
}

unsafe extern "C" fn e_abort(h: *mut cw_handle) {
    // SAFETY: `h` is a live handle of this backend.
    unsafe { handle::abort(h as *mut Handle) }
}

unsafe extern "C" fn e_handle_release(h: *mut cw_handle) {
    // SAFETY: as in e_abort.
    unsafe { handle::release(h as *mut Handle) }
}

unsafe extern "C" fn e_yield(ctx: *mut cw_ctx) {
    let rt = ctx_rt(ctx);
    let t = runtime::require_task(rt, "cw_yield");
    // SAFETY: `t` is the running task of the live run `rt`.
    unsafe {
        if (*t).unwinding {
            return;
        }
        if (*t).aborted {
            runtime::unwind_now(rt, t);
        }
        (*t).state = runtime::State::Suspended;
        runtime::enqueue(&mut *rt, t);
    }
    runtime::suspend(rt, t);
    // SAFETY: as above.
    if unsafe { (*t).aborted && !(*t).unwinding } {
        runtime::unwind_now(rt, t);
    }
}

unsafe extern "C" fn e_waker_current(ctx: *mut cw_ctx) -> *mut cw_waker {
    let rt = ctx_rt(ctx);
    // SAFETY: the run of a live context is live; single-threaded here.
    waker::current(unsafe { &mut *rt }) as *mut cw_waker
}

unsafe extern "C" fn e_waker_wake(w: *mut cw_waker) {
    waker::wake(w as *mut WakerCell)
}

unsafe extern "C" fn e_waker_release(w: *mut cw_waker) {
    waker::release(w as *mut WakerCell)
}

unsafe extern "C" fn e_park(ctx: *mut cw_ctx) {
    let rt = ctx_rt(ctx);
    let t = runtime::require_task(rt, "cw_park");
    // SAFETY: `t` is the running task of the live run `rt`.
    unsafe {
        if (*t).unwinding {
            return;
        }
        if (*t).aborted {
            runtime::unwind_now(rt, t);
        }
        if (*t).notified {
            (*t).notified = false;
            return;
        }
        (*t).parked = true;
    }
    runtime::suspend(rt, t);
    // SAFETY: as above.
    unsafe { (*t).parked = false };
    // SAFETY: as above.
    if unsafe { (*t).aborted && !(*t).unwinding } {
        runtime::unwind_now(rt, t);
    }
}

unsafe extern "C" fn e_panic(ctx: *mut cw_ctx, message: *const c_char) {
    let rt = ctx_rt(ctx);
    let msg: &[u8] = if message.is_null() {
        b""
    } else {
        // SAFETY: cw_panic passes its formatted, NUL-terminated message.
        unsafe { CStr::from_ptr(message) }.to_bytes()
    };
    runtime::panic_current(rt, msg)
}

unsafe extern "C" fn e_cleanup_push(ctx: *mut cw_ctx, node: *mut cw_cleanup) {
    let rt = ctx_rt(ctx);
    let t = runtime::require_task(rt, "cw_cleanup_push");
    // SAFETY: `t` is the running task; `node` lives in its frame until popped.
    unsafe {
        (*node).prev = (*t).cleanup;
        (*t).cleanup = node;
    }
}

unsafe extern "C" fn e_cleanup_pop(ctx: *mut cw_ctx, node: *mut cw_cleanup, execute: bool) {
    let rt = ctx_rt(ctx);
    let t = runtime::require_task(rt, "cw_cleanup_pop");
    // SAFETY: as in e_cleanup_push.
    unsafe {
        if (*t).cleanup != node || node.is_null() {
            runtime::panic_task(rt, t, b"cleanup handlers must be popped newest first");
        }
        (*t).cleanup = (*node).prev;
        if execute {
            if let Some(f) = (*node).func {
                f((*node).arg);
            }
        }
    }
}

unsafe extern "C" fn e_current(ctx: *mut cw_ctx) -> u64 {
    // SAFETY: the run of a live context is live.
    unsafe { (*ctx_rt(ctx)).clock }
}

unsafe extern "C" fn e_select(waits: *mut cw_wait, n: usize, block: bool) -> c_int {
    // SAFETY: the caller's array of `n` waits filled by this backend.
    unsafe { select::select(waits, n, block) }
}

unsafe extern "C" fn e_wait_join(w: *mut cw_wait, h: *mut cw_handle, out: *mut *mut c_void) {
    select::wait_join(w, h as *mut Handle, out)
}

unsafe extern "C" fn e_wait_sleep_until(w: *mut cw_wait, ctx: *mut cw_ctx, deadline: u64) {
    select::wait_sleep_until(w, ctx as *mut Ctx, deadline)
}

unsafe extern "C" fn e_wait_ready(w: *mut cw_wait, ctx: *mut cw_ctx, result: c_int) {
    select::wait_ready(w, ctx as *mut Ctx, result)
}

unsafe extern "C" fn e_wait_pending(w: *mut cw_wait, ctx: *mut cw_ctx) {
    select::wait_pending(w, ctx as *mut Ctx)
}

unsafe extern "C" fn e_chan_new(ctx: *mut cw_ctx, elem: usize, cap: usize) -> *mut cw_chan {
    // SAFETY: as in e_child.
    unsafe { chan::new(ctx as *mut Ctx, elem, cap) as *mut cw_chan }
}

unsafe extern "C" fn e_chan_sender_add(c: *mut cw_chan) {
    // SAFETY: `c` is a live channel of this backend.
    unsafe { chan::sender_add(c as *mut Chan) }
}

unsafe extern "C" fn e_chan_sender_drop(c: *mut cw_chan) {
    // SAFETY: as in e_chan_sender_add.
    unsafe { chan::sender_drop(c as *mut Chan) }
}

unsafe extern "C" fn e_chan_receiver_drop(c: *mut cw_chan) {
    // SAFETY: as in e_chan_sender_add.
    unsafe { chan::receiver_drop(c as *mut Chan) }
}

unsafe extern "C" fn e_wait_send(w: *mut cw_wait, c: *mut cw_chan, elem: *const c_void) {
    select::wait_send(w, c as *mut Chan, elem)
}

unsafe extern "C" fn e_wait_recv(w: *mut cw_wait, c: *mut cw_chan, elem: *mut c_void) {
    select::wait_recv(w, c as *mut Chan, elem)
}

unsafe extern "C" fn e_oneshot_new(ctx: *mut cw_ctx, elem: usize) -> *mut cw_oneshot {
    // SAFETY: as in e_child.
    unsafe { chan::oneshot_new(ctx as *mut Ctx, elem) as *mut cw_oneshot }
}

unsafe extern "C" fn e_oneshot_send(o: *mut cw_oneshot, elem: *const c_void) -> c_int {
    // SAFETY: `o` is a live oneshot of this backend.
    unsafe { chan::oneshot_send(o as *mut Oneshot, elem) }
}

unsafe extern "C" fn e_oneshot_sender_drop(o: *mut cw_oneshot) {
    // SAFETY: as in e_oneshot_send.
    unsafe { chan::oneshot_sender_drop(o as *mut Oneshot) }
}

unsafe extern "C" fn e_oneshot_receiver_drop(o: *mut cw_oneshot) {
    // SAFETY: as in e_oneshot_send.
    unsafe { chan::oneshot_receiver_drop(o as *mut Oneshot) }
}

unsafe extern "C" fn e_wait_oneshot(w: *mut cw_wait, o: *mut cw_oneshot, elem: *mut c_void) {
    select::wait_oneshot(w, o as *mut Oneshot, elem)
}

unsafe extern "C" fn e_stopped(ctx: *mut cw_ctx) -> *mut cw_signal {
    // SAFETY: as in e_child.
    unsafe { signal::stopped(ctx as *mut Ctx) as *mut cw_signal }
}

unsafe extern "C" fn e_signal_release(s: *mut cw_signal) {
    // SAFETY: `s` is a live signal of this backend.
    unsafe { signal::release(s as *mut Signal) }
}

unsafe extern "C" fn e_wait_signal(w: *mut cw_wait, s: *mut cw_signal, value: *mut i32) {
    select::wait_signal(w, s as *mut Signal, value)
}

unsafe extern "C" fn e_wait_stop(w: *mut cw_wait, ctx: *mut cw_ctx, value: i32) {
    select::wait_stop(w, ctx as *mut Ctx, value)
}

unsafe extern "C" fn e_random(ctx: *mut cw_ctx, buf: *mut c_void, len: usize) {
    // SAFETY: the run of a live context is live; single-threaded.
    let r = unsafe { &mut *ctx_rt(ctx) };
    crate::audit::record(r, b"rand\0", &[&(len as u64).to_be_bytes()]);
    let mut i = 0;
    while i < len {
        let v = r.rng.next().to_le_bytes();
        let n = (len - i).min(8);
        // SAFETY: `buf` holds `len` writable bytes (cw/runner.h).
        unsafe { ptr::copy_nonoverlapping(v.as_ptr(), (buf as *mut u8).add(i), n) };
        i += n;
    }
}

unsafe extern "C" fn e_audit_digest(ctx: *mut cw_ctx, out: *mut c_char) -> c_int {
    // SAFETY: the run of a live context is live.
    let r = unsafe { &*ctx_rt(ctx) };
    if !r.audit || out.is_null() {
        return CW_ERR_UNSUPPORTED;
    }
    // SAFETY: `out` holds 65 bytes (cw/runner.h).
    let out = unsafe { std::slice::from_raw_parts_mut(out, 65) };
    crate::audit::hex(&r.digest, out);
    CW_OK
}

// `c"rust"` literals need Rust 1.77; this crate builds with 1.63.
#[allow(clippy::manual_c_str_literals)]
pub static TABLE: Table = Table(cw_backend {
    abi_version: CW_ABI_VERSION,
    size: std::mem::size_of::<cw_backend>() as u32,
    name: b"rust\0".as_ptr() as *const c_char,
    capabilities: CAPABILITIES,
    start: e_start,
    child: e_child,
    with_attribute: e_with_attribute,
    label: e_label,
    set_execution: e_set_execution,
    ctx_release: e_ctx_release,
    spawn: e_spawn,
    handle_ready: e_handle_ready,
    abort: e_abort,
    handle_release: e_handle_release,
    yield_: e_yield,
    waker_current: e_waker_current,
    waker_wake: e_waker_wake,
    waker_release: e_waker_release,
    park: e_park,
    vpanic: None,
    cleanup_push: e_cleanup_push,
    cleanup_pop: e_cleanup_pop,
    current: e_current,
    select: e_select,
    wait_join: e_wait_join,
    wait_sleep_until: e_wait_sleep_until,
    wait_ready: e_wait_ready,
    wait_pending: e_wait_pending,
    chan_new: e_chan_new,
    chan_sender_add: e_chan_sender_add,
    chan_sender_drop: e_chan_sender_drop,
    chan_receiver_drop: e_chan_receiver_drop,
    wait_send: e_wait_send,
    wait_recv: e_wait_recv,
    oneshot_new: e_oneshot_new,
    oneshot_send: e_oneshot_send,
    oneshot_sender_drop: e_oneshot_sender_drop,
    oneshot_receiver_drop: e_oneshot_receiver_drop,
    wait_oneshot: e_wait_oneshot,
    stopped: e_stopped,
    signal_release: e_signal_release,
    wait_signal: e_wait_signal,
    wait_stop: e_wait_stop,
    random: e_random,
    audit_digest: Some(e_audit_digest),
    buffers: &crate::buf::BUFFER_OPS as *const cw_buffer_ops as *const c_void,
    metrics: &crate::metrics::METRIC_OPS as *const cw_metric_ops as *const c_void,
    storage: &crate::storage::STORAGE_OPS as *const cw_storage_ops as *const c_void,
    network: &crate::net::NETWORK_OPS as *const cw_network_ops as *const c_void,
    start_checkpoint: Some(crate::recover::start_checkpoint),
    recover: Some(crate::recover::recover),
    checkpoint_free: Some(crate::recover::checkpoint_free),
    panic: Some(e_panic),
});
