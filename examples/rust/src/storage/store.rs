// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The run's memory storage (spec/17-storage.md), deterministic (DET-014).
//!
//! Model. A partition is a sorted list of blob names, each naming a
//! `File`: the blob's *durable* physical bytes (header and data, what a
//! crash keeps). An open makes an `Open`: its own copy of the physical
//! bytes, which its handles (the `Blob` objects, clones included) read and
//! write; a sync copies them back to the file, a `CW_WRITE_SYNC` write
//! applies its bytes to both. So one open does not see another's unsynced
//! writes (STOR-004, "memory storage: it does not"), a removal detaches the
//! file from its partition while its opens keep reading (STOR-014), and
//! `cw_storage_audit` hashes exactly the durable bytes (STOR-036).
//!
//! Every call completes within the call: no suspension, no other event,
//! the clock still (DET-014). Each call records its audit event at issue
//! time (STOR-029), then draws its kind's fault rate (STOR-030), in the
//! order 11-deterministic.md gives. Files and opens are freed when the run
//! ends (handles are objects of the run, STOR-005).
//!
//! A failure is a `Fail` held by value (its message in a fixed buffer), not
//! boxed: reporting an error must not need memory (RUN-007), hence the
//! allowed `result_large_err`.
#![allow(clippy::result_large_err)]

use super::codec;
use crate::audit;
use crate::buf::{bytes, pool};
use crate::ffi::*;
use crate::handle::Handle;
use crate::mem::try_raw;
use crate::metrics::series::{self, StorageMetrics};
use crate::msg::Msg;
use crate::obj::{self, alloc_obj, Header, Kind, Object};
use crate::rng::Rng;
use crate::runtime::{self, Rt};
use std::fmt::Write;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

pub struct File {
    pub durable: Vec<u8>,
}

pub struct Open {
    pub handles: usize,
    pub file: *mut File,
    pub bytes: Vec<u8>,
    pub data_offset: u64,
    pub sync_failed: bool,
    pub part: Vec<u8>,
    pub name: Vec<u8>,
}

#[repr(C)]
pub struct Blob {
    pub h: Header,
    pub open: *mut Open,
}

// SAFETY: #[repr(C)] with the Header first, kind Blob.
unsafe impl Object for Blob {}

struct Part {
    name: Vec<u8>,
    blobs: Vec<(Vec<u8>, *mut File)>,
}

/// An unsynced change, kept for a crash to replay (STOR-033).
enum Op {
    Write {
        pos: usize,
        bytes: Vec<u8>,
    },
    /// A `CW_WRITE_SYNC` write: durable already, replayed (always) so that
    /// it stays on top of the unsynced writes made before it (STOR-015).
    Synced {
        pos: usize,
        bytes: Vec<u8>,
    },
    Resize {
        len: usize,
    },
}

struct Pending {
    open: *mut Open,
    file: *mut File,
    op: Op,
}

pub struct Store {
    parts: Vec<Part>,
    pub faults: cw_storage_faults,
    files: Vec<*mut File>,
    opens: Vec<*mut Open>,
    log: Vec<Pending>,
}

impl Store {
    pub fn new(faults: cw_storage_faults) -> Store {
        Store {
            parts: Vec::new(),
            faults,
            files: Vec::new(),
            opens: Vec::new(),
            log: Vec::new(),
        }
    }

    fn exists(&self, f: *mut File) -> bool {
        self.parts
            .iter()
            .any(|p| p.blobs.iter().any(|(_, x)| *x == f))
    }

    /// The crash at the end of a checkpointed run (DET-008, STOR-033):
    /// the unsynced changes of the blobs that still exist are replayed onto
    /// their durable bytes, in the order they were made, as the fault
    /// settings keep them; what is left is the next run's storage.
    pub fn crash(&mut self, rng: &mut Rng) -> Store {
        let log = std::mem::take(&mut self.log);
        for p in log.iter() {
            if !self.exists(p.file) {
                continue;
            }
            // SAFETY: files live until the store is dropped.
            let d = unsafe { &mut (*p.file).durable };
            match &p.op {
                Op::Resize { len } => {
                    if decide_rng(rng, self.faults.resize_kept) {
                        set_len(d, *len);
                    }
                }
                Op::Synced { pos, bytes } => {
                    put_bytes(d, *pos, bytes);
                }
                Op::Write { pos, bytes } => {
                    let prefix = self.faults.write_mode == 0;
                    for (i, &b) in bytes.iter().enumerate() {
                        if decide_rng(rng, self.faults.write_kept) {
                            put_bytes(d, pos + i, &[b]);
                        } else if prefix {
                            break;
                        }
                    }
                }
            }
        }
        let mut next = Store::new(self.faults);
        next.parts = std::mem::take(&mut self.parts);
        let kept: Vec<*mut File> = self
            .files
            .iter()
            .copied()
            .filter(|&f| next.exists(f))
            .collect();
        self.files.retain(|f| !kept.contains(f));
        next.files = kept;
        next
    }

    fn log(&mut self, open: *mut Open, op: Op) {
        if self.log.try_reserve(1).is_ok() {
            // SAFETY: the open of a live handle.
            let file = unsafe { (*open).file };
            self.log.push(Pending { open, file, op });
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        for &f in self.files.iter() {
            // SAFETY: files are only freed here, when the run ends.
            drop(unsafe { Box::from_raw(f) });
        }
        for &o in self.opens.iter() {
            // SAFETY: opens are only freed here, when the run ends.
            drop(unsafe { Box::from_raw(o) });
        }
    }
}

/// What a failed call reports (STOR-018).
struct Fail {
    code: c_int,
    msg: Msg,
    fault: c_int,
    expected: cw_blob_range,
    found: u16,
}

impl Fail {
    fn new(code: c_int, msg: Msg) -> Fail {
        Fail {
            code,
            msg,
            fault: 0,
            expected: cw_blob_range::default(),
            found: 0,
        }
    }
    fn text(code: c_int, s: &str) -> Fail {
        Fail::new(code, Msg::from_bytes(s.as_bytes()))
    }
}

fn hex_into(name: &[u8], out: &mut [c_char]) {
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

fn push_hex(m: &mut Msg, name: &[u8]) {
    for b in name {
        let _ = write!(m, "{:02x}", b);
    }
}

/// Fill the caller's `err` (when given) for a failed call.
fn report(err: *mut cw_storage_error, part: Option<&[u8]>, name: Option<&[u8]>, f: &Fail) -> c_int {
    if err.is_null() {
        return f.code;
    }
    // SAFETY: the caller's error struct, writable; all-zero is a valid value.
    let e = unsafe {
        ptr::write_bytes(err, 0, 1);
        &mut *err
    };
    e.code = f.code;
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

fn cstr<'a>(p: *const c_char) -> Option<&'a [u8]> {
    if p.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string of the caller, valid for the call.
    Some(unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes())
}

fn partition_valid(p: &[u8]) -> bool {
    !p.is_empty()
        && p.len() <= 255
        && p.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_')
}

/// The storage call prologue (STOR-019): from a task of the run; CLOSED
/// while unwinding; an aborted task unwinds here, before the call.
fn enter(rt: *mut Rt, call: &str) -> Result<(), Fail> {
    let t = runtime::require_task(rt, call);
    // SAFETY: `t` is the running task of `rt`.
    unsafe {
        if (*t).unwinding {
            return Err(Fail::text(CW_ERR_CLOSED, "closed"));
        }
        if (*t).aborted {
            runtime::unwind_now(rt, t);
        }
        // The storage metrics are registered by the first storage call.
        series::storage(&mut *rt);
    }
    Ok(())
}

/// One decision of a rate (11-deterministic.md): no draw for 0 and 1.
fn decide_rng(rng: &mut Rng, r: cw_rate) -> bool {
    if r.num == 0 {
        return false;
    }
    if r.num >= r.den {
        return true;
    }
    rng.below(r.den) < r.num
}

fn decide(rt: &mut Rt, r: cw_rate) -> bool {
    decide_rng(&mut rt.rng, r)
}

fn injected(code: c_int, prefix: &str, part: &[u8], name: Option<&[u8]>) -> Fail {
    let mut m = Msg::new();
    let _ = write!(m, "{}{}", prefix, crate::msg::Lossy(part));
    if let Some(n) = name {
        m.push(b"/");
        push_hex(&mut m, n);
    }
    if code == CW_ERR_IO {
        m.push(b": injected fault");
    } else {
        m.push(b" error: injected fault");
    }
    Fail::new(code, m)
}

fn fault_event(rt: &mut Rt, kind: &[u8], part: &[u8], name: &[u8]) {
    audit::record(rt, b"fault\0", &[kind, part, name]);
}

fn find_part(s: &Store, p: &[u8]) -> Result<usize, usize> {
    s.parts.binary_search_by(|x| x.name[..].cmp(p))
}

/// `cw_storage_open_versioned` (STOR-002, STOR-003, STOR-023, STOR-025).
#[allow(clippy::too_many_arguments)]
pub fn open(
    rt: *mut Rt,
    partition: *const c_char,
    name: *const c_void,
    name_len: usize,
    versions: cw_blob_range,
    out: &mut *mut cw_blob,
    size: *mut u64,
    version: *mut u16,
    err: *mut cw_storage_error,
) -> c_int {
    *out = ptr::null_mut();
    let part = cstr(partition);
    if let Err(f) = enter(rt, "cw_storage_open") {
        return report(err, part, None, &f);
    }
    let part = match part {
        Some(p) if !name.is_null() && (1..=127).contains(&name_len) && versions.first <= versions.last => p,
        _ => return report(err, part, None, &Fail::text(CW_ERR_INVALID, "invalid argument: a NULL argument, a blob name of 0 or more than 127 bytes, or a version range with first > last")),
    };
    // SAFETY: the caller's name of `name_len` bytes.
    let nm = unsafe { std::slice::from_raw_parts(name as *const u8, name_len) };
    // SAFETY: the live run, single-threaded, no switch below.
    let r = unsafe { &mut *rt };
    audit::record(
        r,
        b"open\0",
        &[
            part,
            nm,
            &versions.first.to_be_bytes(),
            &versions.last.to_be_bytes(),
        ],
    );
    if !partition_valid(part) {
        return report(err, Some(part), Some(nm), &name_invalid(part));
    }
    if decide(r, r.store.faults.open) {
        fault_event(r, b"open", part, nm);
        let f = injected(
            CW_ERR_BLOB_OPEN_FAILED,
            "blob open failed: ",
            part,
            Some(nm),
        );
        return report(err, Some(part), Some(nm), &f);
    }
    match open_inner(r, part, nm, versions) {
        Ok((o, v)) => {
            let rtp: *mut Rt = r;
            let b = match alloc_obj(
                r,
                Blob {
                    h: Header::new(Kind::Blob, rtp),
                    open: o,
                },
            ) {
                Some(b) => b,
                None => {
                    // SAFETY: the open just made, with no handle.
                    unsafe { (*o).bytes = Vec::new() };
                    return report(
                        err,
                        Some(part),
                        Some(nm),
                        &Fail::text(CW_ERR_NOMEM, "out of memory"),
                    );
                }
            };
            count(r, |s| s.open_blobs, 1);
            // SAFETY: the open is live; the outputs are the caller's.
            unsafe {
                (*o).handles = 1;
                if !size.is_null() {
                    *size = (*o).bytes.len() as u64 - (*o).data_offset;
                }
                if !version.is_null() {
                    *version = v;
                }
            }
            *out = b as *mut cw_blob;
            CW_OK
        }
        Err(f) => report(err, Some(part), Some(nm), &f),
    }
}

fn name_invalid(part: &[u8]) -> Fail {
    let mut m = Msg::from_bytes(b"partition name invalid, must only contain alphanumeric, dash ('-'), or underscore ('_') characters: ");
    m.push(part);
    Fail::new(CW_ERR_PARTITION_NAME_INVALID, m)
}

fn nomem() -> Fail {
    Fail::text(CW_ERR_NOMEM, "out of memory")
}

fn copy_of(b: &[u8]) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(b.len()).ok()?;
    v.extend_from_slice(b);
    Some(v)
}

fn new_header(layout: u16, version: u16) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(codec::V1_LEN).ok()?;
    v.resize(codec::V1_LEN, 0);
    let n = codec::create(layout, version, &mut v)?;
    v.truncate(n);
    Some(v)
}

fn open_inner(
    r: &mut Rt,
    part: &[u8],
    nm: &[u8],
    versions: cw_blob_range,
) -> Result<(*mut Open, u16), Fail> {
    let layouts = r.cfg.blob_layouts;
    let pi = match find_part(&r.store, part) {
        Ok(i) => i,
        Err(i) => {
            let name = copy_of(part).ok_or_else(nomem)?;
            r.store.parts.try_reserve(1).map_err(|_| nomem())?;
            r.store.parts.insert(
                i,
                Part {
                    name,
                    blobs: Vec::new(),
                },
            );
            i
        }
    };
    let file = match r.store.parts[pi]
        .blobs
        .binary_search_by(|x| x.0[..].cmp(nm))
    {
        Ok(bi) => r.store.parts[pi].blobs[bi].1,
        Err(bi) => {
            let durable = new_header(layouts.last, versions.last).ok_or_else(nomem)?;
            let key = copy_of(nm).ok_or_else(nomem)?;
            r.store.files.try_reserve(1).map_err(|_| nomem())?;
            r.store.parts[pi]
                .blobs
                .try_reserve(1)
                .map_err(|_| nomem())?;
            let f = try_raw(File { durable }).ok_or_else(nomem)?;
            r.store.files.push(f);
            r.store.parts[pi].blobs.insert(bi, (key, f));
            f
        }
    };
    // SAFETY: files live until the run ends.
    let fr = unsafe { &mut *file };
    let mut h = cw_blob_header::default();
    let raw_len = fr.durable.len();
    let rc = codec::resolve(
        &fr.durable[..raw_len.min(codec::V1_LEN)],
        raw_len as u64,
        layouts,
        versions,
        &mut h,
    );
    if rc != CW_OK {
        return Err(corrupt(rc, &h, part, nm));
    }
    if h.fresh {
        fr.durable = new_header(layouts.last, versions.last).ok_or_else(nomem)?;
        h.layout = layouts.last;
        h.version = versions.last;
        h.data_offset = codec::data_offset(layouts.last);
    }
    let bytes = copy_of(&fr.durable).ok_or_else(nomem)?;
    let pn = copy_of(part).ok_or_else(nomem)?;
    let nn = copy_of(nm).ok_or_else(nomem)?;
    r.store.opens.try_reserve(1).map_err(|_| nomem())?;
    let o = try_raw(Open {
        handles: 0,
        file,
        bytes,
        data_offset: h.data_offset,
        sync_failed: false,
        part: pn,
        name: nn,
    })
    .ok_or_else(nomem)?;
    r.store.opens.push(o);
    Ok((o, h.version))
}

fn corrupt(rc: c_int, h: &cw_blob_header, part: &[u8], nm: &[u8]) -> Fail {
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
        msg: m,
        fault: h.fault,
        expected: h.expected,
        found: h.found,
    }
}

/// `cw_storage_remove` (STOR-011, STOR-012).
pub fn remove(
    rt: *mut Rt,
    partition: *const c_char,
    name: *const c_void,
    name_len: usize,
    err: *mut cw_storage_error,
) -> c_int {
    let part = cstr(partition);
    if let Err(f) = enter(rt, "cw_storage_remove") {
        return report(err, part, None, &f);
    }
    let part =
        match part {
            Some(p) if name.is_null() || (1..=127).contains(&name_len) => p,
            _ => return report(
                err,
                part,
                None,
                &Fail::text(
                    CW_ERR_INVALID,
                    "invalid argument: a NULL partition or a blob name of 0 or more than 127 bytes",
                ),
            ),
        };
    let nm: Option<&[u8]> = if name.is_null() {
        None
    } else {
        // SAFETY: the caller's name of `name_len` bytes.
        Some(unsafe { std::slice::from_raw_parts(name as *const u8, name_len) })
    };
    // SAFETY: the live run, single-threaded, no switch below.
    let r = unsafe { &mut *rt };
    let mut field = [0u8; 128];
    let flen = match nm {
        Some(n) => {
            field[0] = 1;
            field[1..1 + n.len()].copy_from_slice(n);
            1 + n.len()
        }
        None => 1,
    };
    audit::record(r, b"remove\0", &[part, &field[..flen]]);
    if !partition_valid(part) {
        return report(err, Some(part), nm, &name_invalid(part));
    }
    if decide(r, r.store.faults.remove) {
        fault_event(r, b"remove", part, nm.unwrap_or(b""));
        return report(
            err,
            Some(part),
            nm,
            &injected(CW_ERR_IO, "io error: ", part, nm),
        );
    }
    let pi = match find_part(&r.store, part) {
        Ok(i) => i,
        Err(_) => {
            let mut m = Msg::from_bytes(b"partition missing: ");
            m.push(part);
            return report(err, Some(part), nm, &Fail::new(CW_ERR_PARTITION_MISSING, m));
        }
    };
    match nm {
        None => {
            r.store.parts.remove(pi);
            CW_OK
        }
        Some(n) => match r.store.parts[pi].blobs.binary_search_by(|x| x.0[..].cmp(n)) {
            Ok(bi) => {
                r.store.parts[pi].blobs.remove(bi);
                CW_OK
            }
            Err(_) => {
                let mut m = Msg::new();
                let _ = write!(m, "blob missing: {}/", crate::msg::Lossy(part));
                push_hex(&mut m, n);
                report(err, Some(part), nm, &Fail::new(CW_ERR_BLOB_MISSING, m))
            }
        },
    }
}

/// The list `cw_storage_scan` hands out; it may outlive the run.
#[repr(C)]
pub struct Names {
    pub pub_: cw_blob_names,
    entries: Vec<cw_blob_name>,
    data: Vec<Vec<u8>>,
}

/// `cw_storage_scan` (STOR-013).
pub fn scan(
    rt: *mut Rt,
    partition: *const c_char,
    out: &mut *mut cw_blob_names,
    err: *mut cw_storage_error,
) -> c_int {
    *out = ptr::null_mut();
    let part = cstr(partition);
    if let Err(f) = enter(rt, "cw_storage_scan") {
        return report(err, part, None, &f);
    }
    let part = match part {
        Some(p) => p,
        None => {
            return report(
                err,
                None,
                None,
                &Fail::text(CW_ERR_INVALID, "invalid argument: a NULL partition"),
            )
        }
    };
    // SAFETY: the live run, single-threaded, no switch below.
    let r = unsafe { &mut *rt };
    audit::record(r, b"scan\0", &[part]);
    if !partition_valid(part) {
        return report(err, Some(part), None, &name_invalid(part));
    }
    if decide(r, r.store.faults.scan) {
        fault_event(r, b"scan", part, b"");
        return report(
            err,
            Some(part),
            None,
            &injected(CW_ERR_IO, "io error: ", part, None),
        );
    }
    let pi = match find_part(&r.store, part) {
        Ok(i) => i,
        Err(_) => {
            let mut m = Msg::from_bytes(b"partition missing: ");
            m.push(part);
            return report(
                err,
                Some(part),
                None,
                &Fail::new(CW_ERR_PARTITION_MISSING, m),
            );
        }
    };
    let made = (|| {
        let blobs = &r.store.parts[pi].blobs;
        let mut data: Vec<Vec<u8>> = Vec::new();
        data.try_reserve_exact(blobs.len()).ok()?;
        for (n, _) in blobs.iter() {
            data.push(copy_of(n)?);
        }
        let mut entries = Vec::new();
        entries.try_reserve_exact(data.len()).ok()?;
        for d in data.iter() {
            entries.push(cw_blob_name {
                data: d.as_ptr(),
                len: d.len(),
            });
        }
        let names = try_raw(Names {
            pub_: cw_blob_names {
                hdr: cw_object {
                    backend: &crate::table::TABLE.0,
                },
                count: entries.len(),
                names: ptr::null(),
            },
            entries,
            data,
        })?;
        // SAFETY: fresh; the entries' buffer does not move with the box.
        unsafe { (*names).pub_.names = (*names).entries.as_ptr() };
        Some(names)
    })();
    match made {
        Some(n) => {
            *out = n as *mut cw_blob_names;
            CW_OK
        }
        None => report(err, Some(part), None, &nomem()),
    }
}

pub fn names_release(n: *mut cw_blob_names) {
    // SAFETY: a list made by `scan`, released once.
    drop(unsafe { Box::from_raw(n as *mut Names) });
}

fn blob_parts(b: *mut Blob) -> (*mut Rt, *mut Open) {
    // SAFETY: a live blob handle of this backend.
    unsafe { ((*b).h.rt, (*b).open) }
}

pub fn clone_blob(b: *mut Blob) -> *mut Blob {
    let (rt, o) = blob_parts(b);
    // SAFETY: the live run; single-threaded.
    let r = unsafe { &mut *rt };
    match alloc_obj(
        r,
        Blob {
            h: Header::new(Kind::Blob, rt),
            open: o,
        },
    ) {
        Some(c) => {
            // SAFETY: the open is live while it has handles.
            unsafe { (*o).handles += 1 };
            c
        }
        None => ptr::null_mut(),
    }
}

pub fn close_blob(b: *mut Blob) {
    let (rt, o) = blob_parts(b);
    // SAFETY: the live run and open; the handle is released once.
    unsafe {
        (*o).handles -= 1;
        if (*o).handles == 0 {
            (*o).bytes = Vec::new();
            count(&mut *rt, |s| s.open_blobs, -1);
        }
        obj::free_obj(&mut *rt, b as *mut Header);
    }
}

fn count(r: &mut Rt, pick: fn(&StorageMetrics) -> *mut crate::metrics::registry::Metric, n: i64) {
    series::storage_count(r, pick, n);
}

/// The part of a blob call common to every kind: prologue, event, checks.
struct Call<'a> {
    r: &'a mut Rt,
    o: &'a mut Open,
}

fn begin<'a>(b: *mut Blob, call: &str, err: *mut cw_storage_error) -> Result<Call<'a>, c_int> {
    let (rt, o) = blob_parts(b);
    // SAFETY: the open of a live handle.
    let or = unsafe { &mut *o };
    if let Err(f) = enter(rt, call) {
        return Err(report(err, Some(&or.part), Some(&or.name), &f));
    }
    // SAFETY: the live run, single-threaded; no switch while borrowed.
    let r = unsafe { &mut *rt };
    Ok(Call { r, o: or })
}

fn fail(c: &Call, err: *mut cw_storage_error, f: Fail) -> c_int {
    report(err, Some(&c.o.part), Some(&c.o.name), &f)
}

fn overflow(c: &Call, offset: u64, len: u64) -> bool {
    match c
        .o
        .data_offset
        .checked_add(offset)
        .and_then(|x| x.checked_add(len))
    {
        Some(end) => end > i64::MAX as u64,
        None => true,
    }
}

fn logical_len(o: &Open) -> u64 {
    o.bytes.len() as u64 - o.data_offset
}

/// The checks of a read after its event: overflow, fault, length.
fn read_checks(
    c: &mut Call,
    offset: u64,
    len: usize,
    err: *mut cw_storage_error,
) -> Result<(), c_int> {
    if overflow(c, offset, len as u64) {
        return Err(fail(
            c,
            err,
            Fail::text(CW_ERR_OFFSET_OVERFLOW, "offset overflow"),
        ));
    }
    if decide(c.r, c.r.store.faults.read) {
        fault_event(c.r, b"read", &c.o.part, &c.o.name);
        let f = injected(CW_ERR_IO, "io error: ", &c.o.part, Some(&c.o.name));
        return Err(fail(c, err, f));
    }
    // "A read of 0 bytes always succeeds" (STOR-006): whatever the offset,
    // but not against an injected fault (STOR-030, refusal R8).
    if len > 0 && offset + len as u64 > logical_len(c.o) {
        return Err(fail(
            c,
            err,
            Fail::text(CW_ERR_BLOB_INSUFFICIENT_LENGTH, "blob insufficient length"),
        ));
    }
    Ok(())
}

fn read_event(c: &mut Call, label: &[u8], offset: u64, len: usize, options: u8) {
    audit::record(
        c.r,
        label,
        &[
            &c.o.part,
            &c.o.name,
            &offset.to_be_bytes(),
            &(len as u64).to_be_bytes(),
            &[options],
        ],
    );
}

fn src_range(c: &Call, offset: u64, len: usize) -> std::ops::Range<usize> {
    let s = (c.o.data_offset + offset) as usize;
    s..s + len
}

pub fn read_at(
    b: *mut Blob,
    offset: u64,
    len: usize,
    options: u8,
    out: &mut cw_iobuf_mut,
    err: *mut cw_storage_error,
) -> c_int {
    // SAFETY: all-zero is the unset handle (BUF-001).
    *out = unsafe { std::mem::zeroed() };
    let mut c = match begin(b, "cw_blob_read_at", err) {
        Ok(c) => c,
        Err(rc) => return rc,
    };
    count(c.r, |s| s.reads, 1);
    count(c.r, |s| s.read_bytes, len as i64);
    if options & !CW_READ_ALL != 0 {
        return fail(
            &c,
            err,
            Fail::text(CW_ERR_INVALID, "invalid argument: unknown read options"),
        );
    }
    read_event(&mut c, b"read_at\0", offset, len, options);
    if let Err(rc) = read_checks(&mut c, offset, len, err) {
        return rc;
    }
    if len == 0 {
        *out = bytes::empty_mut(&crate::table::TABLE.0);
        return CW_OK;
    }
    let mut m = bytes::empty_mut(&crate::table::TABLE.0);
    if pool::alloc_any(c.r.pools[1], len, &mut m) != CW_OK {
        return fail(&c, err, nomem());
    }
    let range = src_range(&c, offset, len);
    // SAFETY: `m` has at least `len` bytes of capacity.
    unsafe { ptr::copy_nonoverlapping(c.o.bytes[range].as_ptr(), m.data, len) };
    m.len = len;
    *out = m;
    CW_OK
}

pub fn read_into(
    b: *mut Blob,
    offset: u64,
    dst: *mut c_void,
    len: usize,
    options: u8,
    err: *mut cw_storage_error,
) -> c_int {
    let mut c = match begin(b, "cw_blob_read_into", err) {
        Ok(c) => c,
        Err(rc) => return rc,
    };
    count(c.r, |s| s.reads, 1);
    count(c.r, |s| s.read_bytes, len as i64);
    if options & !CW_READ_ALL != 0 || (dst.is_null() && len > 0) {
        return fail(
            &c,
            err,
            Fail::text(
                CW_ERR_INVALID,
                "invalid argument: unknown read options or a NULL destination",
            ),
        );
    }
    read_event(&mut c, b"read_at_buf\0", offset, len, options);
    if let Err(rc) = read_checks(&mut c, offset, len, err) {
        return rc;
    }
    if len == 0 {
        return CW_OK;
    }
    let range = src_range(&c, offset, len);
    // SAFETY: `dst` holds `len` writable bytes (the caller's contract).
    unsafe { ptr::copy_nonoverlapping(c.o.bytes[range].as_ptr(), dst as *mut u8, len) };
    CW_OK
}

pub fn read_at_buf(
    b: *mut Blob,
    offset: u64,
    len: usize,
    bufs: *mut cw_iobufs_mut,
    options: u8,
    err: *mut cw_storage_error,
) -> c_int {
    use crate::buf::lists::{self, MutList};
    let mut c = match begin(b, "cw_blob_read_at_buf", err) {
        Ok(c) => c,
        Err(rc) => return rc,
    };
    count(c.r, |s| s.reads, 1);
    count(c.r, |s| s.read_bytes, len as i64);
    // SAFETY: the caller's live list, or NULL.
    let l = if bufs.is_null() {
        None
    } else {
        Some(unsafe { &mut *(bufs as *mut MutList) })
    };
    let l = match l {
        Some(l) if options & !CW_READ_ALL == 0 && lists::mut_capacity(l) >= len => l,
        _ => {
            return fail(
                &c,
                err,
                Fail::text(
                    CW_ERR_INVALID,
                    "invalid argument: unknown read options, or buffers shorter than the read",
                ),
            )
        }
    };
    read_event(&mut c, b"read_at_buf\0", offset, len, options);
    if let Err(rc) = read_checks(&mut c, offset, len, err) {
        return rc;
    }
    lists::mut_set_len(l, len);
    let mut at = src_range(&c, offset, len).start;
    for ch in l.chunks.iter() {
        if ch.len > 0 {
            // SAFETY: each chunk's readable length lies in its capacity.
            unsafe {
                ptr::copy_nonoverlapping(c.o.bytes[at..at + ch.len].as_ptr(), ch.data, ch.len)
            };
            at += ch.len;
        }
    }
    CW_OK
}

/// Write `src` at physical `pos` of `v`, growing it with zeros.
fn put_bytes(v: &mut Vec<u8>, pos: usize, src: &[u8]) -> bool {
    let end = pos + src.len();
    if end > v.len() {
        if v.try_reserve(end - v.len()).is_err() {
            return false;
        }
        v.resize(end, 0);
    }
    v[pos..end].copy_from_slice(src);
    true
}

fn write_common(
    b: *mut Blob,
    offset: u64,
    data: &[u8],
    options: u8,
    err: *mut cw_storage_error,
    call: &str,
) -> c_int {
    let mut c = match begin(b, call, err) {
        Ok(c) => c,
        Err(rc) => return rc,
    };
    count(c.r, |s| s.writes, 1);
    count(c.r, |s| s.write_bytes, data.len() as i64);
    if options & CW_WRITE_SYNC != 0 {
        count(c.r, |s| s.syncs, 1);
    }
    if options & !CW_WRITE_ALL != 0 {
        return fail(
            &c,
            err,
            Fail::text(CW_ERR_INVALID, "invalid argument: unknown write options"),
        );
    }
    audit::record(
        c.r,
        b"write_at\0",
        &[
            &c.o.part,
            &c.o.name,
            &offset.to_be_bytes(),
            data,
            &[options],
        ],
    );
    if overflow(&c, offset, data.len() as u64) {
        return fail(
            &c,
            err,
            Fail::text(CW_ERR_OFFSET_OVERFLOW, "offset overflow"),
        );
    }
    if data.is_empty() {
        return CW_OK;
    }
    if options & CW_WRITE_SYNC != 0 && c.o.sync_failed {
        let f = sync_failed_again(&c);
        return fail(&c, err, f);
    }
    let pos = (c.o.data_offset + offset) as usize;
    if decide(c.r, c.r.store.faults.write) {
        fault_event(c.r, b"write", &c.o.part, &c.o.name);
        torn_write(&mut c, pos, data);
        let f = injected(CW_ERR_IO, "io error: ", &c.o.part, Some(&c.o.name));
        return fail(&c, err, f);
    }
    if !put_bytes(&mut c.o.bytes, pos, data) {
        return fail(&c, err, nomem());
    }
    if c.r.logging {
        if let Some(bytes) = copy_of(data) {
            let o: *mut Open = c.o;
            let op = if options & CW_WRITE_SYNC == 0 {
                Op::Write { pos, bytes }
            } else {
                Op::Synced { pos, bytes }
            };
            c.r.store.log(o, op);
        }
    }
    if options & CW_WRITE_SYNC != 0 {
        // SAFETY: files live until the run ends.
        let f = unsafe { &mut *c.o.file };
        if !put_bytes(&mut f.durable, pos, data) {
            return fail(&c, err, nomem());
        }
    }
    CW_OK
}

/// A failed write keeps the bytes `write_kept` keeps (STOR-031).
fn torn_write(c: &mut Call, pos: usize, data: &[u8]) {
    let rate = c.r.store.faults.write_kept;
    let prefix = c.r.store.faults.write_mode == 0;
    let mut run: Option<usize> = None;
    for (i, &byte) in data.iter().enumerate() {
        let kept = decide(c.r, rate);
        if kept {
            if !put_bytes(&mut c.o.bytes, pos + i, &[byte]) {
                break;
            }
            run.get_or_insert(i);
        } else {
            if let Some(s) = run.take() {
                log_write(c, pos + s, &data[s..i]);
            }
            if prefix {
                return;
            }
        }
    }
    if let Some(s) = run {
        log_write(c, pos + s, &data[s..]);
    }
}

/// Kept bytes of a failed write are unsynced like any write's (STOR-031).
fn log_write(c: &mut Call, pos: usize, bytes: &[u8]) {
    if !c.r.logging {
        return;
    }
    if let Some(bytes) = copy_of(bytes) {
        let o: *mut Open = c.o;
        c.r.store.log(o, Op::Write { pos, bytes });
    }
}

fn log_resize(c: &mut Call, len: usize) {
    if c.r.logging {
        let o: *mut Open = c.o;
        c.r.store.log(o, Op::Resize { len });
    }
}

fn sync_failed_again(c: &Call) -> Fail {
    let mut m = Msg::new();
    let _ = write!(m, "blob sync failed: {}/", crate::msg::Lossy(&c.o.part));
    push_hex(&mut m, &c.o.name);
    m.push(b" error: an earlier sync of this open failed");
    Fail::new(CW_ERR_BLOB_SYNC_FAILED, m)
}

pub fn write_at(
    b: *mut Blob,
    offset: u64,
    src: *const c_void,
    len: usize,
    options: u8,
    err: *mut cw_storage_error,
) -> c_int {
    if src.is_null() && len > 0 {
        let (_, o) = blob_parts(b);
        // SAFETY: the open of a live handle.
        let o = unsafe { &*o };
        if let Err(f) = enter(blob_parts(b).0, "cw_blob_write_at") {
            return report(err, Some(&o.part), Some(&o.name), &f);
        }
        return report(
            err,
            Some(&o.part),
            Some(&o.name),
            &Fail::text(CW_ERR_INVALID, "invalid argument: a NULL source"),
        );
    }
    let data: &[u8] = if len == 0 {
        b""
    } else {
        // SAFETY: the caller's `len` bytes.
        unsafe { std::slice::from_raw_parts(src as *const u8, len) }
    };
    write_common(b, offset, data, options, err, "cw_blob_write_at")
}

pub fn write_bufs(
    b: *mut Blob,
    offset: u64,
    bufs: *const cw_iobufs,
    options: u8,
    err: *mut cw_storage_error,
) -> c_int {
    use crate::buf::lists::List;
    let (rt, o) = blob_parts(b);
    // SAFETY: the open of a live handle.
    let or = unsafe { &*o };
    if bufs.is_null() {
        if let Err(f) = enter(rt, "cw_blob_write_bufs") {
            return report(err, Some(&or.part), Some(&or.name), &f);
        }
        return report(
            err,
            Some(&or.part),
            Some(&or.name),
            &Fail::text(CW_ERR_INVALID, "invalid argument: NULL buffers"),
        );
    }
    // SAFETY: the caller's live list, only read.
    let l = unsafe { &*(bufs as *const List) };
    let mut data = Vec::new();
    if data.try_reserve_exact(l.len).is_err() {
        return report(err, Some(&or.part), Some(&or.name), &nomem());
    }
    for ch in l.chunks.iter() {
        // SAFETY: a chunk's readable bytes.
        data.extend_from_slice(unsafe { std::slice::from_raw_parts(ch.data, ch.len) });
    }
    write_common(b, offset, &data, options, err, "cw_blob_write_bufs")
}

fn set_len(v: &mut Vec<u8>, n: usize) -> bool {
    if n > v.len() {
        if v.try_reserve(n - v.len()).is_err() {
            return false;
        }
        v.resize(n, 0);
    } else {
        v.truncate(n);
    }
    true
}

pub fn resize(b: *mut Blob, len: u64, err: *mut cw_storage_error) -> c_int {
    let mut c = match begin(b, "cw_blob_resize", err) {
        Ok(c) => c,
        Err(rc) => return rc,
    };
    count(c.r, |s| s.resizes, 1);
    audit::record(
        c.r,
        b"resize\0",
        &[&c.o.part, &c.o.name, &len.to_be_bytes()],
    );
    if overflow(&c, 0, len) {
        return fail(
            &c,
            err,
            Fail::text(CW_ERR_OFFSET_OVERFLOW, "offset overflow"),
        );
    }
    if decide(c.r, c.r.store.faults.resize) {
        fault_event(c.r, b"resize", &c.o.part, &c.o.name);
        let old = logical_len(c.o);
        let (lo, hi) = if old < len { (old, len) } else { (len, old) };
        if hi - lo >= 2 && decide(c.r, c.r.store.faults.resize_partial) {
            let mid = lo + 1 + c.r.rng.below(hi - lo - 1);
            let n = (c.o.data_offset + mid) as usize;
            if set_len(&mut c.o.bytes, n) {
                log_resize(&mut c, n);
            }
        }
        let mut m = Msg::new();
        let _ = write!(m, "blob resize failed: {}/", crate::msg::Lossy(&c.o.part));
        push_hex(&mut m, &c.o.name);
        m.push(b" error: injected fault");
        return fail(&c, err, Fail::new(CW_ERR_BLOB_RESIZE_FAILED, m));
    }
    let n = (c.o.data_offset + len) as usize;
    if !set_len(&mut c.o.bytes, n) {
        return fail(&c, err, nomem());
    }
    log_resize(&mut c, n);
    CW_OK
}

/// The sync itself, after its event (STOR-015, STOR-030, STOR-037).
fn do_sync(c: &mut Call) -> Result<(), Fail> {
    if c.o.sync_failed {
        return Err(sync_failed_again(c));
    }
    if decide(c.r, c.r.store.faults.sync) {
        fault_event(c.r, b"sync", &c.o.part, &c.o.name);
        c.o.sync_failed = true;
        let mut m = Msg::new();
        let _ = write!(m, "blob sync failed: {}/", crate::msg::Lossy(&c.o.part));
        push_hex(&mut m, &c.o.name);
        m.push(b" error: injected fault");
        return Err(Fail::new(CW_ERR_BLOB_SYNC_FAILED, m));
    }
    let copy = copy_of(&c.o.bytes).ok_or_else(nomem)?;
    // SAFETY: files live until the run ends.
    unsafe { (*c.o.file).durable = copy };
    let o: *mut Open = c.o;
    c.r.store.log.retain(|p| p.open != o);
    Ok(())
}

pub fn sync(b: *mut Blob, err: *mut cw_storage_error) -> c_int {
    let mut c = match begin(b, "cw_blob_sync", err) {
        Ok(c) => c,
        Err(rc) => return rc,
    };
    count(c.r, |s| s.syncs, 1);
    audit::record(c.r, b"sync\0", &[&c.o.part, &c.o.name]);
    match do_sync(&mut c) {
        Ok(()) => CW_OK,
        Err(f) => fail(&c, err, f),
    }
}

/// `cw_blob_start_sync` (STOR-016, DET-014): the whole sync now, and a
/// handle already complete with its result.
pub fn start_sync(b: *mut Blob) -> *mut Handle {
    let (rt, _) = blob_parts(b);
    let result = match begin(b, "cw_blob_start_sync", ptr::null_mut()) {
        Ok(mut c) => {
            count(c.r, |s| s.syncs, 1);
            audit::record(c.r, b"start_sync\0", &[&c.o.part, &c.o.name]);
            match do_sync(&mut c) {
                Ok(()) => CW_OK,
                Err(f) => f.code,
            }
        }
        Err(rc) => rc,
    };
    // SAFETY: the live run; single-threaded.
    let r = unsafe { &mut *rt };
    alloc_obj(r, Handle::done(rt, result, ptr::null_mut())).unwrap_or(r.nomem_handle)
}

/// `cw_storage_set_faults` (STOR-034).
pub fn set_faults(rt: *mut Rt, f: *const cw_storage_faults) -> c_int {
    runtime::require_task(rt, "cw_storage_set_faults");
    if f.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: the caller's settings.
    let f = unsafe { *f };
    let mut c = crate::config::defaults();
    c.storage_faults = f;
    if crate::config::validate(&c).is_err() {
        return CW_ERR_INVALID;
    }
    // SAFETY: the live run.
    unsafe { (*rt).store.faults = f };
    CW_OK
}

/// `cw_storage_audit` (STOR-036): a digest of the durable content.
pub fn storage_audit(rt: *mut Rt, out: *mut c_char) -> c_int {
    use crate::sha256::Sha256;
    fn field(h: &mut Sha256, x: &[u8]) {
        h.update(&(x.len() as u64).to_be_bytes());
        h.update(x);
    }
    runtime::require_task(rt, "cw_storage_audit");
    // SAFETY: the live run.
    let r = unsafe { &*rt };
    let mut h = Sha256::new();
    field(&mut h, b"cw-storage-audit");
    for p in r.store.parts.iter() {
        field(&mut h, &p.name);
        field(&mut h, &(p.blobs.len() as u64).to_be_bytes());
        for (n, f) in p.blobs.iter() {
            field(&mut h, n);
            // SAFETY: files live until the run ends.
            field(&mut h, unsafe { &(**f).durable });
        }
    }
    let d = h.finish();
    // SAFETY: `out` holds 65 bytes (cw/storage.h).
    audit::hex(&d, unsafe { std::slice::from_raw_parts_mut(out, 65) });
    CW_OK
}
