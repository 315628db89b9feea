// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The run's resolver (NET-020..NET-022): a table of names registered by
//! the program, answered in registration order, each call recorded
//! (`resolve`, `resolver_register`). The table survives a crash into the
//! recovered run (DET-009).

use super::addr;
use super::core::enter;
use crate::audit;
use crate::ffi::*;
use crate::msg::Msg;
use crate::runtime::{self, Rt};
use std::os::raw::{c_char, c_int};

fn cstr<'a>(p: *const c_char) -> &'a [u8] {
    // SAFETY: the caller's NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes()
}

pub fn resolve(
    rt: *mut Rt,
    host: *const c_char,
    out: *mut cw_addr,
    cap: usize,
    n: *mut usize,
    err: *mut cw_resolve_error,
) -> c_int {
    if !n.is_null() {
        // SAFETY: the caller's output.
        unsafe { *n = 0 };
    }
    if let Err(rc) = enter(rt, "cw_resolve") {
        return rc;
    }
    if host.is_null() || (out.is_null() && cap > 0) {
        return CW_ERR_INVALID;
    }
    // SAFETY: the live run.
    let r = unsafe { &mut *rt };
    let name = cstr(host);
    let found = r.net.names.iter().position(|(k, _)| k[..] == *name);
    let mut texts: Vec<Msg> = Vec::new();
    if let Some(i) = found {
        if texts.try_reserve_exact(r.net.names[i].1.len()).is_err() {
            return CW_ERR_NOMEM;
        }
        for a in r.net.names[i].1.iter() {
            let mut z = *a;
            z.port = 0;
            texts.push(addr::text(&z));
        }
    }
    let mut fields: Vec<&[u8]> = Vec::new();
    if fields.try_reserve_exact(1 + texts.len()).is_err() {
        return CW_ERR_NOMEM;
    }
    fields.push(name);
    for t in texts.iter() {
        fields.push(t.bytes());
    }
    audit::record(r, b"resolve\0", &fields);
    match found {
        Some(i) => {
            let addrs = &r.net.names[i].1;
            let k = addrs.len().min(cap);
            for (j, a) in addrs.iter().take(k).enumerate() {
                let mut z = *a;
                z.port = 0;
                // SAFETY: the caller's array of `cap` addresses.
                unsafe { *out.add(j) = z };
            }
            if !n.is_null() {
                // SAFETY: the caller's output.
                unsafe { *n = k };
            }
            CW_OK
        }
        None => {
            if !err.is_null() {
                let mut m = Msg::from_bytes(b"dns resolution failed: ");
                m.push(name);
                // SAFETY: the caller's error struct.
                let e = unsafe { &mut (*err).message };
                let b = m.bytes();
                let k = b.len().min(e.len() - 1);
                for (d, s) in e.iter_mut().zip(b[..k].iter()) {
                    *d = *s as c_char;
                }
                e[k] = 0;
            }
            CW_ERR_RESOLVE_FAILED
        }
    }
}

pub fn resolver_register(
    rt: *mut Rt,
    host: *const c_char,
    addrs: *const cw_addr,
    n: usize,
) -> c_int {
    if host.is_null() || (addrs.is_null() && n > 0) {
        return CW_ERR_INVALID;
    }
    runtime::require_task(rt, "cw_resolver_register");
    // SAFETY: the live run.
    let r = unsafe { &mut *rt };
    let name = cstr(host);
    let list: &[cw_addr] = if n == 0 {
        &[]
    } else {
        // SAFETY: the caller's `n` addresses.
        unsafe { std::slice::from_raw_parts(addrs, n) }
    };
    let mut texts: Vec<Msg> = Vec::new();
    let mut copy: Vec<cw_addr> = Vec::new();
    let mut key: Vec<u8> = Vec::new();
    if texts.try_reserve_exact(n).is_err()
        || copy.try_reserve_exact(n).is_err()
        || key.try_reserve_exact(name.len()).is_err()
        || r.net.names.try_reserve(1).is_err()
    {
        return CW_ERR_NOMEM;
    }
    for a in list {
        texts.push(addr::text(a));
        copy.push(addr::clean(a));
    }
    key.extend_from_slice(name);
    let mut fields: Vec<&[u8]> = Vec::new();
    if fields.try_reserve_exact(1 + n).is_err() {
        return CW_ERR_NOMEM;
    }
    fields.push(name);
    for t in texts.iter() {
        fields.push(t.bytes());
    }
    audit::record(r, b"resolver_register\0", &fields);
    r.net.names.retain(|(k, _)| k[..] != *name);
    if n > 0 {
        r.net.names.push((key, copy));
    }
    CW_OK
}
