// SPDX-License-Identifier: Apache-2.0 OR MIT
//! How a storage call reports a failure (STOR-018): the code, the
//! `cw_storage_error` fields and the message as the table of
//! 17-storage.md spells it. A failure is a `Fail` held by value, its
//! message in a fixed buffer, so that reporting needs no memory (RUN-007).
#![allow(clippy::result_large_err)]

use crate::ffi::*;
use crate::msg::Msg;
use std::fmt::Write;
use std::os::raw::{c_char, c_int};
use std::ptr;

/// What a failed call reports (STOR-018).
pub(super) struct Fail {
    pub(super) code: c_int,
    pub(super) os_error: c_int,
    pub(super) msg: Msg,
    pub(super) fault: c_int,
    pub(super) expected: cw_blob_range,
    pub(super) found: u16,
}

impl Fail {
    pub(super) fn new(code: c_int, msg: Msg) -> Fail {
        Fail {
            code,
            os_error: 0,
            msg,
            fault: 0,
            expected: cw_blob_range::default(),
            found: 0,
        }
    }
    pub(super) fn text(code: c_int, s: &str) -> Fail {
        Fail::new(code, Msg::from_bytes(s.as_bytes()))
    }
}

pub(super) fn hex_into(name: &[u8], out: &mut [c_char]) {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut i = 0;
    for &b in name {
        if i + 2 >= out.len() {
            break;
        }
        out[i] = D[(b >> 4) as usize] as c_char;
        out[i + 1] = D[(b & 15) as usize] as c_char;
        i += 2;
    }
    out[i] = 0;
}

pub(super) fn push_hex(m: &mut Msg, name: &[u8]) {
    for b in name {
        let _ = write!(m, "{:02x}", b);
    }
}

/// Fill the caller's `err` (when given) for a failed call.
pub(super) fn report(
    err: *mut cw_storage_error,
    part: Option<&[u8]>,
    name: Option<&[u8]>,
    f: &Fail,
) -> c_int {
    if err.is_null() {
        return f.code;
    }
    // SAFETY: the caller's error struct, writable; all-zero is a valid value.
    let e = unsafe {
        ptr::write_bytes(err, 0, 1);
        &mut *err
    };
    e.code = f.code;
    e.os_error = f.os_error;
    e.fault = f.fault;
    e.expected = f.expected;
    e.found = f.found;
    if let Some(p) = part {
        let n = p.len().min(255);
        for (d, s) in e.partition.iter_mut().zip(p[..n].iter()) {
            *d = *s as c_char;
        }
    }
    if let Some(n) = name {
        hex_into(n, &mut e.name);
    }
    let m = f.msg.bytes();
    let n = m.len().min(e.message.len() - 1);
    for (d, s) in e.message.iter_mut().zip(m[..n].iter()) {
        *d = *s as c_char;
    }
    f.code
}

pub(super) fn injected(
    code: c_int,
    prefix: &str,
    part: &[u8],
    name: Option<&[u8]>,
    kind: &str,
) -> Fail {
    // STOR-030 spells them: `io error: <p>[/<n>]: <kind>: injected fault`,
    // the others `<prefix><p>/<n> error: injected fault`.
    let mut m = Msg::new();
    let _ = write!(m, "{}{}", prefix, crate::msg::Lossy(part));
    if let Some(n) = name {
        m.push(b"/");
        push_hex(&mut m, n);
    }
    if code == CW_ERR_IO {
        let _ = write!(m, ": {}: injected fault", kind);
    } else {
        m.push(b" error: injected fault");
    }
    Fail::new(code, m)
}

/// A failure of the system, spelled as STOR-018's table does (`<os>` the
/// system's text and `(os error N)`): `io error: <p>[/<n>]: <what>: <os>`,
/// `blob resize failed: <p>/<n> error: <os>`, `blob sync failed: <p>/<n>
/// error: <os>`, the others `<prefix><p>[/<n>] error: <what>: <os>`.
pub(super) fn os_fail(
    code: c_int,
    prefix: &str,
    part: &[u8],
    nm: Option<&[u8]>,
    what: &str,
    e: c_int,
) -> Fail {
    let mut m = Msg::new();
    let _ = write!(m, "{}{}", prefix, crate::msg::Lossy(part));
    if let Some(n) = nm {
        m.push(b"/");
        push_hex(&mut m, n);
    }
    match code {
        CW_ERR_IO => {
            let _ = write!(m, ": {}: ", what);
        }
        CW_ERR_BLOB_RESIZE_FAILED | CW_ERR_BLOB_SYNC_FAILED => m.push(b" error: "),
        _ => {
            let _ = write!(m, " error: {}: ", what);
        }
    }
    super::files::os_text(&mut m, e);
    // A system call that failed for memory is CW_ERR_NOMEM (RUN-007).
    let code = if e == 12 { CW_ERR_NOMEM } else { code };
    let mut f = Fail::new(code, m);
    f.os_error = e;
    f
}

pub(super) fn name_invalid(part: &[u8]) -> Fail {
    let mut m = Msg::from_bytes(b"partition name invalid, must only contain alphanumeric, dash ('-'), or underscore ('_') characters: ");
    m.push(part);
    Fail::new(CW_ERR_PARTITION_NAME_INVALID, m)
}

pub(super) fn nomem() -> Fail {
    Fail::text(CW_ERR_NOMEM, "out of memory")
}

pub(super) fn corrupt(rc: c_int, h: &cw_blob_header, part: &[u8], nm: &[u8]) -> Fail {
    let mut m = Msg::new();
    match rc {
        CW_ERR_BLOB_LAYOUT_MISMATCH => {
            let _ = write!(
                m,
                "blob layout mismatch: expected one of V{}..=V{}, found V{}",
                h.expected.first, h.expected.last, h.found
            );
        }
        CW_ERR_BLOB_VERSION_MISMATCH => {
            let _ = write!(
                m,
                "blob version mismatch: expected one of {}..={}, found {}",
                h.expected.first, h.expected.last, h.found
            );
        }
        _ => {
            let _ = write!(m, "blob corrupt: {}/", crate::msg::Lossy(part));
            push_hex(&mut m, nm);
            m.push(b" reason: ");
            match h.fault {
                CW_HEADER_INVALID_MAGIC => {
                    let _ = write!(
                        m,
                        "invalid magic: found [{}, {}, {}, {}]",
                        h.magic[0], h.magic[1], h.magic[2], h.magic[3]
                    );
                }
                CW_HEADER_UNSUPPORTED_RUNTIME_VERSION => {
                    let _ = write!(
                        m,
                        "unsupported runtime version: expected {}, found {}",
                        h.runtime_expected, h.runtime_found
                    );
                }
                CW_HEADER_INVALID_CHECKSUM => m.push(b"invalid header checksum"),
                CW_HEADER_INVALID_PADDING => m.push(b"invalid header padding"),
                _ => {
                    let _ = write!(
                        m,
                        "truncated header: required length {}, raw length {}",
                        h.required_len, h.raw_len
                    );
                }
            }
        }
    }
    Fail {
        code: rc,
        os_error: 0,
        msg: m,
        fault: h.fault,
        expected: h.expected,
        found: h.found,
    }
}
