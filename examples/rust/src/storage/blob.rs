// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The calls on a blob handle (STOR-005..STOR-010, STOR-015, STOR-016,
//! STOR-037): clone and close, reads, writes, resizes and syncs, each
//! recording its event, drawing its fault and completing within the call
//! (DET-014), on the handle's open (its own copy of the blob's bytes,
//! `store.rs`).
#![allow(clippy::result_large_err)]

use super::fail::{injected, nomem, os_fail, push_hex, report, Fail};
use super::store::{copy_of, decide, enter, fault_event, Blob, Op, Open, Step};
use crate::audit;
use crate::buf::{bytes, pool};
use crate::ffi::*;
use crate::handle::Handle;
use crate::metrics::series::{self, StorageMetrics};
use crate::msg::Msg;
use crate::obj::{self, alloc_obj, Header, Kind};
use crate::runtime::Rt;
use std::fmt::Write;
use std::os::raw::{c_int, c_void};
use std::ptr;

/// `errno` for memory that ran out.
const ENOMEM: c_int = 12;

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
            (*rt).store.free_open(o);
            count(&mut *rt, |s| s.open_blobs, -1);
        }
        obj::free_obj(&mut *rt, b as *mut Header);
    }
}

pub(super) fn count(
    r: &mut Rt,
    pick: fn(&StorageMetrics) -> *mut crate::metrics::registry::Metric,
    n: i64,
) {
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
    o.bytes.len() - o.data_offset
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
        let f = injected(CW_ERR_IO, "io error: ", &c.o.part, Some(&c.o.name), "read");
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

/// The event of a read, and its count (STOR-028: a call is counted
/// exactly when it records its event).
fn read_event(c: &mut Call, label: &[u8], offset: u64, len: usize, options: u8) {
    count(c.r, |s| s.reads, 1);
    count(c.r, |s| s.read_bytes, len as i64);
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
    // SAFETY: `m` has at least `len` bytes of capacity.
    c.o.bytes.read(range.start as u64, unsafe {
        std::slice::from_raw_parts_mut(m.data, len)
    });
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
    c.o.bytes.read(range.start as u64, unsafe {
        std::slice::from_raw_parts_mut(dst as *mut u8, len)
    });
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
    let l = if bufs.is_null() {
        None
    } else {
        // SAFETY: the caller's live list.
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
                c.o.bytes
                    .read(at as u64, std::slice::from_raw_parts_mut(ch.data, ch.len))
            };
            at += ch.len;
        }
    }
    CW_OK
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
    if options & !CW_WRITE_ALL != 0 {
        return fail(
            &c,
            err,
            Fail::text(CW_ERR_INVALID, "invalid argument: unknown write options"),
        );
    }
    count(c.r, |s| s.writes, 1);
    count(c.r, |s| s.write_bytes, data.len() as i64);
    if options & CW_WRITE_SYNC != 0 {
        count(c.r, |s| s.syncs, 1);
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
        let f = injected(CW_ERR_IO, "io error: ", &c.o.part, Some(&c.o.name), "write");
        return fail(&c, err, f);
    }
    // The crash log's entry is had before the bytes change: a write that
    // succeeds is one a crash can replay (STOR-033), and without memory the
    // write fails having changed nothing (RUN-007).
    let entry = match log_entry(&mut c, data) {
        Some(e) => e,
        None => return fail(&c, err, nomem()),
    };
    if !c.o.bytes.put(pos, data) {
        return fail(&c, err, nomem());
    }
    // The open's view changed, whether or not the write is synced: its
    // next `cw_blob_sync` must make the whole view durable (STOR-015). A
    // synced write makes only its own bytes durable, on top of what another
    // open may have synced since, so it leaves the open dirty: were it to
    // clear the flag, that sync would only flush and a later open would
    // read the other's bytes where this one read its own. Only an open that
    // changed nothing since its last sync may leave the durable bytes as
    // they are (STOR-015's two opens).
    c.o.dirty = true;
    if options & CW_WRITE_SYNC == 0 {
        log_op(&mut c, pos, entry, false);
        return CW_OK;
    }
    // A synced write: its bytes go to the file and are flushed before the
    // durable bytes take them (STOR-015); until then they are an unsynced
    // write of this open like any other (STOR-039).
    let file = c.o.file;
    // SAFETY: files live until the run ends.
    let mut durable = match unsafe { (*file).durable.copy() } {
        Some(d) => d,
        None => {
            log_op(&mut c, pos, entry, false);
            return fail(&c, err, nomem());
        }
    };
    if !durable.put(pos, data) {
        log_op(&mut c, pos, entry, false);
        return fail(&c, err, nomem());
    }
    // SAFETY: as above; only read while the file is written.
    let old = unsafe { &(*file).durable };
    let done = c.r.store.persist_sync(file, old, &durable);
    if let Err((step, e)) = done {
        log_op(&mut c, pos, entry, false);
        let f = if step == Step::Flush && e != ENOMEM {
            // The flush failed: from now on STOR-037 (memory that ran out
            // is `CW_ERR_NOMEM` whatever the step, RUN-007, and no flush
            // failed).
            c.o.sync_failed = true;
            os_fail(
                CW_ERR_BLOB_SYNC_FAILED,
                "blob sync failed: ",
                &c.o.part,
                Some(&c.o.name),
                "sync",
                e,
            )
        } else {
            os_fail(
                CW_ERR_IO,
                "io error: ",
                &c.o.part,
                Some(&c.o.name),
                "write",
                e,
            )
        };
        return fail(&c, err, f);
    }
    // SAFETY: as above.
    unsafe { (*file).durable = durable };
    log_op(&mut c, pos, entry, true);
    CW_OK
}

/// What a write's entry in the crash log needs, had before the write
/// changes anything: room in the log and a copy of the bytes (`Some(None)`
/// when the run keeps no log; `None` without memory).
fn log_entry(c: &mut Call, data: &[u8]) -> Option<Option<Vec<u8>>> {
    if !c.r.logging {
        return Some(None);
    }
    c.r.store.log.try_reserve(1).ok()?;
    Some(Some(copy_of(data)?))
}

/// Log a write for a crash to replay (STOR-033): unsynced, or synced, in
/// the room `log_entry` had.
fn log_op(c: &mut Call, pos: usize, entry: Option<Vec<u8>>, synced: bool) {
    if let Some(bytes) = entry {
        let o: *mut Open = c.o;
        let op = if synced {
            Op::Synced { pos, bytes }
        } else {
            Op::Write { pos, bytes }
        };
        c.r.store.log(o, op);
    }
}

/// A failed write keeps the bytes `write_kept` keeps (STOR-031).
fn torn_write(c: &mut Call, pos: usize, data: &[u8]) {
    let rate = c.r.store.faults.write_kept;
    let prefix = c.r.store.faults.write_mode == 0;
    let mut run: Option<usize> = None;
    for (i, &byte) in data.iter().enumerate() {
        let kept = decide(c.r, rate);
        if kept {
            if !c.o.bytes.put(pos + i, &[byte]) {
                break;
            }
            c.o.dirty = true;
            run.get_or_insert(i);
        } else {
            if let Some(s) = run.take() {
                // Kept bytes of a failed write are unsynced like any write's
                // (STOR-031).
                if let Some(e) = log_entry(c, &data[s..i]) {
                    log_op(c, pos + s, e, false);
                }
            }
            if prefix {
                return;
            }
        }
    }
    if let Some(s) = run {
        if let Some(e) = log_entry(c, &data[s..]) {
            log_op(c, pos + s, e, false);
        }
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
    // The prologue first: an aborted task unwinds in it, abandoning this
    // frame, which must not hold the copy below then (RUN-008).
    if let Err(f) = enter(rt, "cw_blob_write_bufs") {
        return report(err, Some(&or.part), Some(&or.name), &f);
    }
    if bufs.is_null() {
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
            c.o.bytes.set_len(n as u64);
            c.o.dirty = true;
            log_resize(&mut c, n);
        }
        let mut m = Msg::new();
        let _ = write!(m, "blob resize failed: {}/", crate::msg::Lossy(&c.o.part));
        push_hex(&mut m, &c.o.name);
        m.push(b" error: injected fault");
        return fail(&c, err, Fail::new(CW_ERR_BLOB_RESIZE_FAILED, m));
    }
    // Room for the crash log's entry first: a resize that succeeds is one
    // a crash can replay (STOR-033).
    if c.r.logging && c.r.store.log.try_reserve(1).is_err() {
        return fail(&c, err, nomem());
    }
    let n = (c.o.data_offset + len) as usize;
    c.o.bytes.set_len(n as u64);
    c.o.dirty = true;
    log_resize(&mut c, n);
    CW_OK
}

/// The sync itself, after its event (STOR-015, STOR-030, STOR-037).
fn do_sync(c: &mut Call) -> Result<(), Fail> {
    // STOR-037: a sync after a failed one still draws its rate first.
    if decide(c.r, c.r.store.faults.sync) {
        fault_event(c.r, b"sync", &c.o.part, &c.o.name);
        c.o.sync_failed = true;
        let mut m = Msg::new();
        let _ = write!(m, "blob sync failed: {}/", crate::msg::Lossy(&c.o.part));
        push_hex(&mut m, &c.o.name);
        m.push(b" error: injected fault");
        return Err(Fail::new(CW_ERR_BLOB_SYNC_FAILED, m));
    }
    if c.o.sync_failed {
        return Err(sync_failed_again(c));
    }
    let file = c.o.file;
    // SAFETY: files live until the run ends; only read while the file is
    // written.
    let old = unsafe { &(*file).durable };
    let copy = if c.o.dirty {
        Some(c.o.bytes.copy().ok_or_else(nomem)?)
    } else {
        // Nothing changed through this open: the sync flushes the file
        // and leaves the durable bytes as they are, whatever another open
        // made durable since this one opened (STOR-015).
        None
    };
    // `CW_OK` only once the file took the bytes and its flush succeeded
    // (STOR-039); a failure is final for this open (STOR-037).
    let new = copy.as_ref().unwrap_or(old);
    if let Err((_, e)) = c.r.store.persist_sync(file, old, new) {
        // Memory that ran out (ours, or the system's: `ENOMEM`) is
        // `CW_ERR_NOMEM` (RUN-007), not a failed flush: STOR-037 follows
        // `CW_ERR_BLOB_SYNC_FAILED` only, and a later sync writes every
        // byte again (the file is marked stale).
        if e != ENOMEM {
            c.o.sync_failed = true;
        }
        return Err(os_fail(
            CW_ERR_BLOB_SYNC_FAILED,
            "blob sync failed: ",
            &c.o.part,
            Some(&c.o.name),
            "sync",
            e,
        ));
    }
    if let Some(copy) = copy {
        // SAFETY: as above; the borrow `old` ended.
        unsafe { (*file).durable = copy };
    }
    c.o.dirty = false;
    let id = c.o.id;
    c.r.store.log.retain(|p| p.open != id);
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
/// handle already complete with its result. The handle is had before the
/// sync is made: without memory for it the call returns the run's spent
/// handle (`CW_ERR_NOMEM`, TASK-011) having synced nothing (RUN-007),
/// never a sync made that its handle calls refused.
pub fn start_sync(b: *mut Blob) -> *mut Handle {
    let (rt, _) = blob_parts(b);
    let result = match begin(b, "cw_blob_start_sync", ptr::null_mut()) {
        Ok(mut c) => {
            let h = match alloc_obj(c.r, Handle::done(rt, CW_OK, ptr::null_mut())) {
                Some(h) => h,
                None => return c.r.nomem_handle,
            };
            count(c.r, |s| s.syncs, 1);
            audit::record(c.r, b"start_sync\0", &[&c.o.part, &c.o.name]);
            let rc = match do_sync(&mut c) {
                Ok(()) => CW_OK,
                Err(f) => f.code,
            };
            // SAFETY: the fresh handle, which only this call holds yet.
            unsafe { (*h).result = rc };
            return h;
        }
        Err(rc) => rc,
    };
    // SAFETY: the live run; single-threaded.
    let r = unsafe { &mut *rt };
    alloc_obj(r, Handle::done(rt, result, ptr::null_mut())).unwrap_or(r.nomem_handle)
}
