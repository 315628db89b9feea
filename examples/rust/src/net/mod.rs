// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The `network` profile (spec/18-network.md): the `cw_network_ops` table.
//!
//! `addr` holds the address text and patterns, `core` the simulated
//! network, `names` the resolver; this file is the FFI boundary. `cw_sink_send` and
//! `cw_stream_recv` are a select of their one wait, as the header's
//! `cw_wait_*` forms are.

pub mod addr;
pub mod core;
pub mod names;

use self::core::{Half, Listener};
use crate::ffi::*;
use crate::runtime::{self, Rt};
use crate::select;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

fn ctx_rt(ctx: *mut cw_ctx) -> *mut Rt {
    // SAFETY: every context of this backend begins with a Header.
    unsafe { runtime::rt_of(ctx as *const c_void) }
}

unsafe extern "C" fn bind(
    ctx: *mut cw_ctx,
    a: *const cw_addr,
    out: *mut *mut cw_listener,
) -> c_int {
    let mut l = ptr::null_mut();
    let rc = core::bind(ctx_rt(ctx), a, &mut l);
    if !out.is_null() {
        // SAFETY: the caller's output.
        unsafe { *out = l };
    }
    rc
}

unsafe extern "C" fn local_addr(l: *const cw_listener, out: *mut cw_addr) -> c_int {
    core::local_addr(l as *const Listener, out)
}

unsafe extern "C" fn wait_accept(w: *mut cw_wait, l: *mut cw_listener, out: *mut cw_conn) {
    select::wait_accept(w, l as *mut Listener, out)
}

unsafe extern "C" fn listener_close(l: *mut cw_listener) {
    core::listener_close(l as *mut Listener)
}

unsafe extern "C" fn dial(
    ctx: *mut cw_ctx,
    a: *const cw_addr,
    sink: *mut *mut cw_sink,
    stream: *mut *mut cw_stream,
) -> c_int {
    let (mut s, mut st) = (ptr::null_mut(), ptr::null_mut());
    let rc = core::dial(ctx_rt(ctx), a, &mut s, &mut st);
    // SAFETY: the caller's outputs.
    unsafe {
        if !sink.is_null() {
            *sink = s;
        }
        if !stream.is_null() {
            *stream = st;
        }
    }
    rc
}

unsafe extern "C" fn wait_sink_send(w: *mut cw_wait, s: *mut cw_sink, bufs: *const cw_iobufs) {
    select::wait_sink_send(w, s as *mut Half, bufs)
}

unsafe extern "C" fn sink_send(s: *mut cw_sink, bufs: *const cw_iobufs) -> c_int {
    // SAFETY: an all-zero wait is overwritten whole by the constructor.
    let mut w: cw_wait = unsafe { std::mem::zeroed() };
    select::wait_sink_send(&mut w, s as *mut Half, bufs);
    // SAFETY: one wait filled by this backend.
    let i = unsafe { select::select(&mut w, 1, true) };
    if i < 0 {
        i
    } else {
        w.result
    }
}

unsafe extern "C" fn sink_close(s: *mut cw_sink) {
    core::sink_close(s as *mut Half)
}

unsafe extern "C" fn wait_stream_recv(
    w: *mut cw_wait,
    s: *mut cw_stream,
    len: usize,
    out: *mut *mut cw_iobufs,
) {
    select::wait_stream_recv(w, s as *mut Half, len, out)
}

unsafe extern "C" fn stream_recv(s: *mut cw_stream, len: usize, out: *mut *mut cw_iobufs) -> c_int {
    if !out.is_null() {
        // SAFETY: the caller's output.
        unsafe { *out = ptr::null_mut() };
    }
    // SAFETY: an all-zero wait is overwritten whole by the constructor.
    let mut w: cw_wait = unsafe { std::mem::zeroed() };
    select::wait_stream_recv(&mut w, s as *mut Half, len, out);
    // SAFETY: one wait filled by this backend.
    let i = unsafe { select::select(&mut w, 1, true) };
    if i < 0 {
        i
    } else {
        w.result
    }
}

unsafe extern "C" fn stream_peek(s: *mut cw_stream, max: usize, dst: *mut u8) -> usize {
    core::peek(s as *mut Half, max, dst)
}

unsafe extern "C" fn stream_close(s: *mut cw_stream) {
    core::stream_close(s as *mut Half)
}

unsafe extern "C" fn resolve(
    ctx: *mut cw_ctx,
    host: *const c_char,
    out: *mut cw_addr,
    cap: usize,
    n: *mut usize,
    err: *mut cw_resolve_error,
) -> c_int {
    names::resolve(ctx_rt(ctx), host, out, cap, n, err)
}

unsafe extern "C" fn resolver_register(
    ctx: *mut cw_ctx,
    host: *const c_char,
    addrs: *const cw_addr,
    n: usize,
) -> c_int {
    names::resolver_register(ctx_rt(ctx), host, addrs, n)
}

unsafe extern "C" fn mock_channel(
    ctx: *mut cw_ctx,
    sink: *mut *mut cw_sink,
    stream: *mut *mut cw_stream,
) -> c_int {
    let (mut s, mut st) = (ptr::null_mut(), ptr::null_mut());
    let rc = core::mock_channel(ctx_rt(ctx), &mut s, &mut st);
    // SAFETY: the caller's outputs.
    unsafe {
        if !sink.is_null() {
            *sink = s;
        }
        if !stream.is_null() {
            *stream = st;
        }
    }
    rc
}

unsafe extern "C" fn partition(ctx: *mut cw_ctx, a: *const cw_addr, b: *const cw_addr) -> c_int {
    core::partition(ctx_rt(ctx), a, b, true)
}

unsafe extern "C" fn repair(ctx: *mut cw_ctx, a: *const cw_addr, b: *const cw_addr) -> c_int {
    core::partition(ctx_rt(ctx), a, b, false)
}

pub static NETWORK_OPS: cw_network_ops = cw_network_ops {
    size: std::mem::size_of::<cw_network_ops>() as u32,
    bind,
    local_addr,
    wait_accept,
    listener_close,
    dial,
    wait_sink_send,
    sink_send,
    sink_close,
    wait_stream_recv,
    stream_recv,
    stream_peek,
    stream_close,
    resolve,
    resolver_register,
    mock_channel,
    partition,
    repair,
};
