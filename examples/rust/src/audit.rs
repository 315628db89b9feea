// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The audit digest and the event log (spec/11-deterministic.md, "Audit
//! digest", DET-015, DET-016).
//!
//! An event replaces the digest with SHA-256 of the old digest, the label
//! and each field, each preceded by its length as 8 bytes big-endian. The
//! fields are passed as slices so that recording never allocates.

use crate::ffi::{cw_event, cw_event_field};
use crate::runtime::{Rt, Task};
use crate::sha256::Sha256;
use std::os::raw::{c_char, c_void};

/// Most fields any event of this backend has.
const MAX_FIELDS: usize = 64;

/// Record one event. `label` ends with a NUL, which is not hashed.
pub fn record(rt: &mut Rt, label: &[u8], fields: &[&[u8]]) {
    let done = try_record(rt, label, fields);
    debug_assert!(
        done,
        "an event of more than MAX_FIELDS fields recorded without memory"
    );
}

/// Record one event, or, when the event log needs a field list on the heap
/// (more than `MAX_FIELDS` fields) and there is no memory for it, record
/// nothing and return `false`: the log is given exactly the fields hashed
/// (DET-016), never some of them.
pub fn try_record(rt: &mut Rt, label: &[u8], fields: &[&[u8]]) -> bool {
    if !rt.audit {
        return true;
    }
    let mut heap: Vec<cw_event_field> = Vec::new();
    let all = rt.cfg.event_log.is_some() && fields.len() > MAX_FIELDS;
    if all && heap.try_reserve_exact(fields.len()).is_err() {
        return false;
    }
    let name = &label[..label.len() - 1];
    let mut h = Sha256::new();
    h.update(&32u64.to_be_bytes());
    h.update(&rt.digest);
    h.update(&(name.len() as u64).to_be_bytes());
    h.update(name);
    for f in fields {
        h.update(&(f.len() as u64).to_be_bytes());
        h.update(f);
    }
    rt.digest = h.finish();
    let index = rt.events;
    rt.events += 1;
    if let Some(log) = rt.cfg.event_log {
        let blank = || cw_event_field {
            data: std::ptr::null(),
            len: 0,
        };
        let mut fs: [cw_event_field; MAX_FIELDS] = [0; MAX_FIELDS].map(|_| blank());
        // More fields than the stack array holds (a register with many
        // attributes): the heap array had above.
        let (ptr_, n) = if all {
            for s in fields.iter() {
                heap.push(cw_event_field {
                    data: s.as_ptr() as *const c_void,
                    len: s.len(),
                });
            }
            (heap.as_ptr(), heap.len())
        } else {
            for (d, s) in fs.iter_mut().zip(fields.iter()) {
                d.data = s.as_ptr() as *const c_void;
                d.len = s.len();
            }
            (fs.as_ptr(), fields.len())
        };
        let ev = cw_event {
            index,
            time: rt.clock,
            label: label.as_ptr() as *const c_char,
            fields: ptr_,
            nfields: n,
            digest: rt.digest,
        };
        // SAFETY: the program's callback, given pointers valid for the call
        // (DET-016); it must not call into the runtime.
        unsafe { log(rt.cfg.event_log_arg, &ev) };
    }
    true
}

/// `process_task`: the id as 16 bytes big-endian, the task's label.
pub fn process_task(rt: &mut Rt, t: *mut Task) {
    if !rt.audit {
        return;
    }
    // SAFETY: `t` is a task of `rt`; its label is not changed while hashed.
    let (id, label) = unsafe { ((*t).id, &(*t).label as *const Vec<u8>) };
    let id = (id as u128).to_be_bytes();
    // SAFETY: as above.
    let label: &[u8] = unsafe { &*label };
    record(rt, b"process_task\0", &[&id, label]);
}

/// 64 lowercase hex digits and a NUL.
pub fn hex(d: &[u8; 32], out: &mut [c_char]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in d.iter().enumerate() {
        out[2 * i] = DIGITS[(b >> 4) as usize] as c_char;
        out[2 * i + 1] = DIGITS[(b & 15) as usize] as c_char;
    }
    out[64] = 0;
}
