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
//! order 11-deterministic.md gives. An open is freed with its last handle,
//! a file once no partition names it and no open reads it (RUN-009); what
//! is left when the run ends goes with the store (handles are objects of
//! the run, STOR-005).
//!
//! This file holds the model and the calls on partitions (open, remove,
//! scan, faults, audit); `blob.rs` the calls on blob handles, `fail.rs`
//! the error reports (a `Fail` held by value, its message in a fixed
//! buffer: reporting an error must not need memory, RUN-007, hence the
//! allowed `result_large_err`), `files.rs` the files of
//! `persistent-storage`.
#![allow(clippy::result_large_err)]

use super::codec;
use super::fail::{corrupt, injected, name_invalid, nomem, os_fail, push_hex, report, Fail};
use super::files;
use super::sparse::Sparse;
use crate::audit;
use crate::ffi::*;
use crate::mem::try_raw;
use crate::metrics::series;
use crate::msg::Msg;
use crate::obj::{alloc_obj, Header, Kind, Object};
use crate::rng::Rng;
use crate::runtime::{self, Rt};
use std::cell::Cell;
use std::fmt::Write;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

const ENOENT: c_int = 2;
const ENOMEM: c_int = 12;

pub struct File {
    pub durable: Sparse,
    /// Where it lives, for the files of `CW_CAP_PERSISTENT_STORAGE`.
    pub part: Vec<u8>,
    pub name: Vec<u8>,
    /// Named by a partition (a removal unlinks it for good).
    pub linked: bool,
    /// Its file may differ from `durable`: a change of it failed midway,
    /// so the next one writes every byte, not only those that differ.
    pub stale: Cell<bool>,
    /// The opens reading it.
    pub opens: usize,
    /// Its place in the store's `files`.
    idx: usize,
}

pub struct Open {
    /// Names the open in the crash log (a freed open's address is reused).
    pub id: u64,
    /// Its place in the store's `opens`.
    idx: usize,
    pub handles: usize,
    pub file: *mut File,
    pub bytes: Sparse,
    pub data_offset: u64,
    pub sync_failed: bool,
    /// Changed through this open since it was opened or last synced by
    /// `cw_blob_sync` or `cw_blob_start_sync` (a `CW_WRITE_SYNC` write
    /// counts as a change: it makes only its own bytes durable, not the
    /// view): a sync of an open that changed nothing only flushes the file,
    /// and never puts its (maybe older) view over what another open made
    /// durable (STOR-015).
    pub dirty: bool,
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
pub(super) enum Op {
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

pub(super) struct Pending {
    pub(super) open: u64,
    file: *mut File,
    op: Op,
}

/// The step of `persist_sync` that failed: a synced write reports a
/// failed open, write or length as the write's (`CW_ERR_IO`), a failed
/// flush as its sync's (STOR-039).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    Open,
    Write,
    Flush,
}

/// Write into `bf` the bytes of `new` that differ from `old` (the file's
/// bytes), or all of them when the file may differ from `old` (`full`),
/// then set its length; no flush.
fn sync_into(
    bf: &files::BlobFile,
    old: &Sparse,
    new: &Sparse,
    full: bool,
) -> Result<(), (Step, c_int)> {
    let s = new.stored();
    if full {
        // Past its stored bytes `new` reads zeros: cut, then lengthen.
        bf.write_at(0, s).map_err(|e| (Step::Write, e))?;
        bf.set_len(s.len() as u64).map_err(|e| (Step::Write, e))?;
        if new.len() != s.len() as u64 {
            bf.set_len(new.len()).map_err(|e| (Step::Write, e))?;
        }
        return Ok(());
    }
    let o = old.stored();
    let at = |k: usize| if k < o.len() { o[k] } else { 0 };
    let mut i = 0;
    let mut end = old.len();
    while i < s.len() {
        if s[i] == at(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < s.len() && s[i] != at(i) {
            i += 1;
        }
        bf.write_at(start as u64, &s[start..i])
            .map_err(|e| (Step::Write, e))?;
        end = end.max(i as u64);
    }
    // Past its stored bytes `new` reads zeros: where the file holds others
    // below the new length, cut them away before the length is set.
    let cut_to = (o.len() as u64).min(new.len());
    if cut_to > s.len() as u64 && o[s.len()..cut_to as usize].iter().any(|&b| b != 0) {
        bf.set_len(s.len() as u64).map_err(|e| (Step::Write, e))?;
        end = s.len() as u64;
    }
    if end != new.len() {
        bf.set_len(new.len()).map_err(|e| (Step::Write, e))?;
    }
    Ok(())
}

pub struct Store {
    parts: Vec<Part>,
    pub faults: cw_storage_faults,
    files: Vec<*mut File>,
    opens: Vec<*mut Open>,
    next_open: u64,
    pub(super) log: Vec<Pending>,
    /// The directory of the files (STOR-027), once chosen; removed with
    /// the store when the run made it (`temp`).
    pub dir: Option<Vec<u8>>,
    pub temp: bool,
}

impl Store {
    pub fn new(faults: cw_storage_faults) -> Store {
        Store {
            parts: Vec::new(),
            faults,
            files: Vec::new(),
            opens: Vec::new(),
            next_open: 0,
            log: Vec::new(),
            dir: None,
            temp: false,
        }
    }

    fn blob_path(&self, part: &[u8], nm: &[u8]) -> Option<Vec<u8>> {
        let d = self.dir.as_ref()?;
        let h = files::hex(nm)?;
        files::path(&[d, part, &h])
    }

    /// The directory of partition `part`, NUL-terminated.
    fn part_path(&self, part: &[u8]) -> Option<Vec<u8>> {
        files::path(&[self.dir.as_ref()?, part])
    }

    /// Write a new blob's file, or a fresh one's again (STOR-002,
    /// STOR-023), when there are files: truncated, the header written,
    /// flushed; then the entries that name it made durable, the
    /// partition's directory and the storage directory. Every call is
    /// checked (STOR-039); the error names the step that failed.
    pub(super) fn persist_new(&self, f: *mut File) -> Result<(), (c_int, &'static str)> {
        let dir = match self.dir.as_ref() {
            Some(d) => d,
            None => return Ok(()),
        };
        // SAFETY: files live until the store is dropped.
        let f = unsafe { &*f };
        let p = self.blob_path(&f.part, &f.name).ok_or((ENOMEM, "open"))?;
        if let Err(e) = files::write_file(&p, f.durable.stored(), f.durable.len()) {
            f.stale.set(true);
            return Err((e, "write"));
        }
        let pp = self.part_path(&f.part).ok_or((ENOMEM, "sync"))?;
        files::sync_dir(&pp).map_err(|e| (e, "sync"))?;
        let dp = files::path(&[dir]).ok_or((ENOMEM, "sync"))?;
        files::sync_dir(&dp).map_err(|e| (e, "sync"))
    }

    /// Make `new` the bytes of `f`'s file and flush it (a sync, a synced
    /// write), when there are files. In place, and only the bytes that
    /// differ from the durable ones: a process that dies in the middle
    /// leaves every other byte as the last sync made it (STOR-015), never
    /// a truncated file. A removed blob's file is not touched: its name
    /// may be a new blob's by now (STOR-014).
    pub(super) fn persist_sync(
        &self,
        f: *mut File,
        old: &Sparse,
        new: &Sparse,
    ) -> Result<(), (Step, c_int)> {
        // SAFETY: files live until the store is dropped.
        let f = unsafe { &*f };
        if self.dir.is_none() || !f.linked {
            return Ok(());
        }
        let p = self
            .blob_path(&f.part, &f.name)
            .ok_or((Step::Open, ENOMEM))?;
        let bf = match files::BlobFile::open(&p) {
            Ok(bf) => bf,
            Err(ENOENT) => {
                // Something else removed the file: it is written whole.
                files::write_file(&p, new.stored(), new.len()).map_err(|e| {
                    f.stale.set(true);
                    (Step::Write, e)
                })?;
                f.stale.set(false);
                let pp = self.part_path(&f.part).ok_or((Step::Flush, ENOMEM))?;
                return files::sync_dir(&pp).map_err(|e| (Step::Flush, e));
            }
            Err(e) => return Err((Step::Open, e)),
        };
        let done = sync_into(&bf, old, new, f.stale.get())
            .and_then(|()| bf.finish().map_err(|e| (Step::Flush, e)));
        // After a failure the file holds some of the new bytes: it is
        // written whole (in place) the next time.
        f.stale.set(done.is_err());
        done
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
        // The durable bytes of each blob the replay may change, as its file
        // holds them, so that only what the replay changes is written
        // (`None`, or `whole`: no memory for the copy, written whole).
        let mut before: Vec<(*mut File, Option<Sparse>)> = Vec::new();
        let mut whole = false;
        for p in log.iter() {
            if whole || !self.exists(p.file) || before.iter().any(|(f, _)| *f == p.file) {
                continue;
            }
            if before.try_reserve(1).is_err() {
                whole = true;
                continue;
            }
            // SAFETY: files live until the store is dropped.
            before.push((p.file, unsafe { (*p.file).durable.copy() }));
        }
        for p in log.iter() {
            if !self.exists(p.file) {
                continue;
            }
            // SAFETY: files live until the store is dropped.
            let d = unsafe { &mut (*p.file).durable };
            match &p.op {
                Op::Resize { len } => {
                    if decide_rng(rng, self.faults.resize_kept) {
                        d.set_len(*len as u64);
                    }
                }
                Op::Synced { pos, bytes } => {
                    d.put(*pos, bytes);
                }
                Op::Write { pos, bytes } => {
                    let prefix = self.faults.write_mode == 0;
                    for (i, &b) in bytes.iter().enumerate() {
                        if decide_rng(rng, self.faults.write_kept) {
                            d.put(pos + i, &[b]);
                        } else if prefix {
                            break;
                        }
                    }
                }
            }
        }
        let mut next = Store::new(self.faults);
        next.dir = self.dir.take();
        next.temp = std::mem::replace(&mut self.temp, false);
        next.parts = std::mem::take(&mut self.parts);
        // The files still in a partition go on; the others are freed here
        // (without allocating: a crash may come short of memory).
        let mut files = std::mem::take(&mut self.files);
        for &f in files.iter() {
            if !next.exists(f) {
                // SAFETY: a file no partition names any more, freed once.
                drop(unsafe { Box::from_raw(f) });
            }
        }
        files.retain(|&f| next.exists(f));
        next.files = files;
        for (i, &f) in next.files.iter().enumerate() {
            // SAFETY: the files that go on; the opens stay behind.
            unsafe {
                (*f).idx = i;
                (*f).opens = 0;
            }
        }
        // What the replay kept goes to the files.
        if whole {
            for &f in next.files.iter() {
                next.replayed(f, None);
            }
        } else {
            for (f, old) in before.iter() {
                if next.exists(*f) {
                    next.replayed(*f, old.as_ref());
                }
            }
        }
        next
    }

    /// Write a blob's replayed bytes to its file (in place when `old`, its
    /// bytes before the replay, is known). Should the system refuse, the
    /// file keeps what the last sync made durable, a subset of what the
    /// replay kept, which a crash may leave too (STOR-015): the next run's
    /// durable bytes are then read back from it, so that the storage and
    /// its files agree.
    fn replayed(&self, f: *mut File, old: Option<&Sparse>) {
        if self.dir.is_none() {
            return;
        }
        // SAFETY: a live file of this store, linked; only read here.
        let fr = unsafe { &*f };
        let p = match self.blob_path(&fr.part, &fr.name) {
            Some(p) => p,
            None => return,
        };
        let ok = match old {
            Some(o) => self.persist_sync(f, o, &fr.durable).is_ok(),
            None => files::write_file(&p, fr.durable.stored(), fr.durable.len()).is_ok(),
        };
        if !ok {
            if let Ok(Some(v)) = files::read_file(&p) {
                // SAFETY: as above; no other reference to it is live.
                unsafe {
                    (*f).durable = Sparse::from_vec(v);
                    (*f).stale.set(false);
                }
            }
        }
    }

    pub(super) fn log(&mut self, open: *mut Open, op: Op) {
        // SAFETY: the open of a live handle, and its file.
        let (id, file) = unsafe { ((*open).id, (*open).file) };
        // A removed blob's changes are never replayed (`crash`).
        // SAFETY: as above.
        if unsafe { (*file).linked } && self.log.try_reserve(1).is_ok() {
            self.log.push(Pending { open: id, file, op });
        }
    }

    /// A new file, named by a partition; room in `files` was reserved.
    fn add_file(&mut self, f: *mut File) {
        // SAFETY: the fresh file.
        unsafe { (*f).idx = self.files.len() };
        self.files.push(f);
    }

    /// A partition no longer names `f` (a removal): freed once no open
    /// reads it.
    pub(super) fn unlink_file(&mut self, f: *mut File) {
        // SAFETY: a live file of this store.
        unsafe { (*f).linked = false };
        self.free_file_if_unused(f);
    }

    fn free_file_if_unused(&mut self, f: *mut File) {
        // SAFETY: a live file of this store; once unlinked and unread,
        // nothing but the log names it, and its entries go with it.
        unsafe {
            if (*f).linked || (*f).opens > 0 {
                return;
            }
            let i = (*f).idx;
            self.files.swap_remove(i);
            if i < self.files.len() {
                (*self.files[i]).idx = i;
            }
            self.log.retain(|p| p.file != f);
            drop(Box::from_raw(f));
        }
    }

    /// Free an open whose last handle closed (RUN-009); its unsynced
    /// changes stay in the log for a crash (STOR-004, STOR-033).
    pub(super) fn free_open(&mut self, o: *mut Open) {
        // SAFETY: a live open of this store, with no handle left.
        unsafe {
            let i = (*o).idx;
            self.opens.swap_remove(i);
            if i < self.opens.len() {
                (*self.opens[i]).idx = i;
            }
            let f = (*o).file;
            drop(Box::from_raw(o));
            (*f).opens -= 1;
            self.free_file_if_unused(f);
        }
    }

    /// Remove the partition at `pi` with every blob it names.
    fn remove_part(&mut self, pi: usize) {
        let p = self.parts.remove(pi);
        for (_, f) in p.blobs.iter() {
            self.unlink_file(*f);
        }
    }

    /// Remove blob `bi` of the partition at `pi`.
    fn remove_blob(&mut self, pi: usize, bi: usize) {
        let (_, f) = self.parts[pi].blobs.remove(bi);
        self.unlink_file(f);
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if self.temp {
            if let Some(d) = self.dir.as_ref() {
                // The end of the run: nothing is left to report a
                // failure to, and the directory is the run's own.
                let _ = files::remove_tree(d);
            }
        }
        for &f in self.files.iter() {
            // SAFETY: the files still live, each freed once (a freed one
            // left the list).
            drop(unsafe { Box::from_raw(f) });
        }
        for &o in self.opens.iter() {
            // SAFETY: the opens still live, as above.
            drop(unsafe { Box::from_raw(o) });
        }
    }
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
pub(super) fn enter(rt: *mut Rt, call: &str) -> Result<(), Fail> {
    let t = runtime::require_task(rt, call);
    // SAFETY: `t` is the running task of `rt`.
    unsafe {
        if (*t).unwinding {
            return Err(Fail::text(CW_ERR_CLOSED, "closed"));
        }
        if (*t).aborted {
            runtime::unwind_now(rt, t);
        }
        // The storage metrics are registered by the first storage call (one
        // without memory for them is refused, so no count needs memory), and
        // the directory of the files chosen (STOR-027).
        if series::storage(&mut *rt).is_none() {
            return Err(nomem());
        }
        let r = &mut *rt;
        if r.store.dir.is_none() && crate::table::capabilities() & CW_CAP_PERSISTENT_STORAGE != 0 {
            match files::choose_dir(r.cfg.storage_directory) {
                Ok((d, temp)) => {
                    r.store.dir = Some(d);
                    r.store.temp = temp;
                }
                Err(e) => {
                    let mut m = Msg::new();
                    m.push(b"io error: the storage directory: ");
                    files::os_text(&mut m, e);
                    let code = if e == 12 { CW_ERR_NOMEM } else { CW_ERR_IO };
                    let mut f = Fail::new(code, m);
                    f.os_error = e;
                    return Err(f);
                }
            }
        }
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

pub(super) fn decide(rt: &mut Rt, r: cw_rate) -> bool {
    decide_rng(&mut rt.rng, r)
}

pub(super) fn fault_event(rt: &mut Rt, kind: &[u8], part: &[u8], name: &[u8]) {
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
            "open",
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
                    // The open just made, with no handle.
                    r.store.free_open(o);
                    return report(
                        err,
                        Some(part),
                        Some(nm),
                        &Fail::text(CW_ERR_NOMEM, "out of memory"),
                    );
                }
            };
            super::blob::count(r, |s| s.open_blobs, 1);
            // SAFETY: the open is live; the outputs are the caller's.
            unsafe {
                (*o).handles = 1;
                if !size.is_null() {
                    *size = (*o).bytes.len() - (*o).data_offset;
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

pub(super) fn copy_of(b: &[u8]) -> Option<Vec<u8>> {
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
    // With files (STOR-027) the durable bytes are the file's, read anew at
    // every open: what another program wrote there is what the open reads.
    let disk: Option<Option<Vec<u8>>> = if r.store.dir.is_some() {
        let bp = r.store.blob_path(part, nm).ok_or_else(nomem)?;
        match files::read_file(&bp) {
            Ok(x) => Some(x),
            Err(e) => {
                return Err(os_fail(
                    CW_ERR_BLOB_OPEN_FAILED,
                    "blob open failed: ",
                    part,
                    Some(nm),
                    "open",
                    e,
                ))
            }
        }
    } else {
        None
    };
    if let Some(None) = disk {
        // No file: a blob this run knew was removed by other means.
        if let Ok(pi) = find_part(&r.store, part) {
            if let Ok(bi) = r.store.parts[pi]
                .blobs
                .binary_search_by(|x| x.0[..].cmp(nm))
            {
                r.store.remove_blob(pi, bi);
            }
        }
        let pp = files::path(&[r.store.dir.as_ref().expect("files"), part]).ok_or_else(nomem)?;
        if let Err(e) = files::make_dir(&pp) {
            return Err(os_fail(
                CW_ERR_PARTITION_CREATION_FAILED,
                "partition creation failed: ",
                part,
                None,
                "mkdir",
                e,
            ));
        }
    }
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
        Ok(bi) => {
            let f = r.store.parts[pi].blobs[bi].1;
            if let Some(Some(bytes)) = disk {
                // SAFETY: files live until the run ends.
                unsafe {
                    (*f).durable = Sparse::from_vec(bytes);
                    (*f).stale.set(false);
                }
            }
            f
        }
        Err(bi) => {
            let (durable, created) = match disk {
                Some(Some(bytes)) => (Sparse::from_vec(bytes), false),
                _ => (
                    Sparse::from_vec(new_header(layouts.last, versions.last).ok_or_else(nomem)?),
                    true,
                ),
            };
            let key = copy_of(nm).ok_or_else(nomem)?;
            r.store.files.try_reserve(1).map_err(|_| nomem())?;
            r.store.parts[pi]
                .blobs
                .try_reserve(1)
                .map_err(|_| nomem())?;
            let f = try_raw(File {
                durable,
                part: copy_of(part).ok_or_else(nomem)?,
                name: copy_of(nm).ok_or_else(nomem)?,
                linked: true,
                stale: Cell::new(false),
                opens: 0,
                idx: 0,
            })
            .ok_or_else(nomem)?;
            r.store.add_file(f);
            r.store.parts[pi].blobs.insert(bi, (key, f));
            if created {
                if let Err((e, what)) = r.store.persist_new(f) {
                    // No handle, and no half-made file left for a scan
                    // to list (STOR-039).
                    if let Some(bp) = r.store.blob_path(part, nm) {
                        let _ = files::remove_file(&bp);
                    }
                    r.store.remove_blob(pi, bi);
                    return Err(os_fail(
                        CW_ERR_BLOB_OPEN_FAILED,
                        "blob open failed: ",
                        part,
                        Some(nm),
                        what,
                        e,
                    ));
                }
            }
            f
        }
    };
    // SAFETY: files live until the run ends.
    let fr = unsafe { &mut *file };
    let mut h = cw_blob_header::default();
    let raw_len = fr.durable.len();
    let mut head = [0u8; codec::V1_LEN];
    let hn = raw_len.min(codec::V1_LEN as u64) as usize;
    fr.durable.read(0, &mut head[..hn]);
    let rc = codec::resolve(&head[..hn], raw_len, layouts, versions, &mut h);
    if rc != CW_OK {
        return Err(corrupt(rc, &h, part, nm));
    }
    if h.fresh {
        fr.durable = Sparse::from_vec(new_header(layouts.last, versions.last).ok_or_else(nomem)?);
        h.layout = layouts.last;
        h.version = versions.last;
        h.data_offset = codec::data_offset(layouts.last);
        if let Err((e, what)) = r.store.persist_new(file) {
            return Err(os_fail(
                CW_ERR_BLOB_OPEN_FAILED,
                "blob open failed: ",
                part,
                Some(nm),
                what,
                e,
            ));
        }
    }
    let bytes = fr.durable.copy().ok_or_else(nomem)?;
    let pn = copy_of(part).ok_or_else(nomem)?;
    let nn = copy_of(nm).ok_or_else(nomem)?;
    r.store.opens.try_reserve(1).map_err(|_| nomem())?;
    let o = try_raw(Open {
        id: r.store.next_open,
        idx: r.store.opens.len(),
        handles: 0,
        file,
        bytes,
        data_offset: h.data_offset,
        sync_failed: false,
        dirty: false,
        part: pn,
        name: nn,
    })
    .ok_or_else(nomem)?;
    r.store.next_open += 1;
    r.store.opens.push(o);
    fr.opens += 1;
    Ok((o, h.version))
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
            &injected(CW_ERR_IO, "io error: ", part, nm, "remove"),
        );
    }
    if r.store.dir.is_some() {
        return remove_files(r, part, nm, err);
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
            r.store.remove_part(pi);
            CW_OK
        }
        Some(n) => match r.store.parts[pi].blobs.binary_search_by(|x| x.0[..].cmp(n)) {
            Ok(bi) => {
                r.store.remove_blob(pi, bi);
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
            &injected(CW_ERR_IO, "io error: ", part, None, "scan"),
        );
    }
    let disk = if r.store.dir.is_some() {
        match scan_files(r, part) {
            Ok(names) => Some(names),
            Err(f) => return report(err, Some(part), None, &f),
        }
    } else {
        None
    };
    let pi = match find_part(&r.store, part) {
        _ if disk.is_some() => 0,
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
        let data: Vec<Vec<u8>> = match disk {
            Some(d) => d,
            None => {
                let blobs = &r.store.parts[pi].blobs;
                let mut data: Vec<Vec<u8>> = Vec::new();
                data.try_reserve_exact(blobs.len()).ok()?;
                for (n, _) in blobs.iter() {
                    data.push(copy_of(n)?);
                }
                data
            }
        };
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

/// `cw_storage_remove` with files: the directory is the truth (STOR-027).
fn remove_files(r: &mut Rt, part: &[u8], nm: Option<&[u8]>, err: *mut cw_storage_error) -> c_int {
    let dir = r.store.dir.as_ref().expect("files");
    let pp = match files::path(&[dir, part]) {
        Some(p) => p,
        None => return report(err, Some(part), nm, &nomem()),
    };
    let entries = match files::list(&pp[..pp.len() - 1]) {
        Ok(Some(e)) => e,
        Ok(None) => {
            if let Ok(pi) = find_part(&r.store, part) {
                r.store.remove_part(pi);
            }
            let mut m = Msg::from_bytes(b"partition missing: ");
            m.push(part);
            return report(err, Some(part), nm, &Fail::new(CW_ERR_PARTITION_MISSING, m));
        }
        Err(e) => {
            return report(
                err,
                Some(part),
                nm,
                &os_fail(CW_ERR_IO, "io error: ", part, nm, "list", e),
            )
        }
    };
    match nm {
        None => {
            // Nothing is claimed removed that the system did not remove,
            // and the removal is durable when the call returns: the
            // storage directory synced (STOR-012, STOR-039).
            if let Err(e) = files::remove_tree(&pp[..pp.len() - 1]) {
                return report(
                    err,
                    Some(part),
                    nm,
                    &os_fail(CW_ERR_IO, "io error: ", part, nm, "remove", e),
                );
            }
            let dp = files::path(&[dir]);
            if let Ok(pi) = find_part(&r.store, part) {
                r.store.remove_part(pi);
            }
            let dp = match dp {
                Some(p) => p,
                None => return report(err, Some(part), nm, &nomem()),
            };
            match files::sync_dir(&dp) {
                Ok(()) => CW_OK,
                Err(e) => report(
                    err,
                    Some(part),
                    nm,
                    &os_fail(CW_ERR_IO, "io error: ", part, nm, "sync", e),
                ),
            }
        }
        Some(n) => {
            let h = match files::hex(n) {
                Some(h) => h,
                None => return report(err, Some(part), nm, &nomem()),
            };
            if !entries.iter().any(|(e, _)| *e == h) {
                let mut m = Msg::new();
                let _ = write!(m, "blob missing: {}/", crate::msg::Lossy(part));
                push_hex(&mut m, n);
                return report(err, Some(part), nm, &Fail::new(CW_ERR_BLOB_MISSING, m));
            }
            let bp = match files::path(&[dir, part, &h]) {
                Some(p) => p,
                None => return report(err, Some(part), nm, &nomem()),
            };
            if let Err(e) = files::remove_file(&bp) {
                return report(
                    err,
                    Some(part),
                    nm,
                    &os_fail(CW_ERR_IO, "io error: ", part, nm, "remove", e),
                );
            }
            if let Ok(pi) = find_part(&r.store, part) {
                if let Ok(bi) = r.store.parts[pi].blobs.binary_search_by(|x| x.0[..].cmp(n)) {
                    r.store.remove_blob(pi, bi);
                }
            }
            // Durable when the call returns: the partition's directory
            // synced (STOR-011, STOR-039).
            match files::sync_dir(&pp) {
                Ok(()) => CW_OK,
                Err(e) => report(
                    err,
                    Some(part),
                    nm,
                    &os_fail(CW_ERR_IO, "io error: ", part, nm, "sync", e),
                ),
            }
        }
    }
}

/// The blob names of a partition's directory, sorted (STOR-013, STOR-027).
fn scan_files(r: &mut Rt, part: &[u8]) -> Result<Vec<Vec<u8>>, Fail> {
    let dir = r.store.dir.as_ref().expect("files");
    let pp = files::path(&[dir, part]).ok_or_else(nomem)?;
    let entries = match files::list(&pp[..pp.len() - 1]) {
        Ok(Some(e)) => e,
        Ok(None) => {
            let mut m = Msg::from_bytes(b"partition missing: ");
            m.push(part);
            return Err(Fail::new(CW_ERR_PARTITION_MISSING, m));
        }
        Err(e) => return Err(os_fail(CW_ERR_IO, "io error: ", part, None, "list", e)),
    };
    let mut names = Vec::new();
    names
        .try_reserve_exact(entries.len())
        .map_err(|_| nomem())?;
    for (e, regular) in entries.iter() {
        match *regular && files::is_hex_name(e) {
            true => names.push(files::unhex(e).ok_or_else(nomem)?),
            false => {
                let mut m = Msg::from_bytes(b"partition corrupt: ");
                m.push(part);
                m.push(b": ");
                m.push(e);
                m.push(if *regular {
                    b" is not a blob name in lowercase hex"
                } else {
                    b" is not a regular file"
                });
                return Err(Fail::new(CW_ERR_PARTITION_CORRUPT, m));
            }
        }
    }
    names.sort_unstable();
    Ok(names)
}

pub fn names_release(n: *mut cw_blob_names) {
    // SAFETY: a list made by `scan`, released once.
    drop(unsafe { Box::from_raw(n as *mut Names) });
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
            unsafe { (**f).durable.hash_field(&mut h) };
        }
    }
    let d = h.finish();
    // SAFETY: `out` holds 65 bytes (cw/storage.h).
    audit::hex(&d, unsafe { std::slice::from_raw_parts_mut(out, 65) });
    CW_OK
}

#[cfg(test)]
mod tests {
    use super::{files, sync_into, Sparse};

    fn sparse(stored: &[u8], len: u64) -> Sparse {
        let mut s = Sparse::from_vec(stored.to_vec());
        s.set_len(len);
        s
    }

    fn whole(s: &Sparse) -> Vec<u8> {
        let mut v = vec![0u8; s.len() as usize];
        s.read(0, &mut v);
        v
    }

    /// A sync writes only what differs, and the file then holds exactly
    /// the new bytes and length: grown, shrunk, cut then grown again.
    #[test]
    fn sync_in_place() {
        let dir = std::env::temp_dir().join(format!("cwrt-rust-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("blob");
        let mut pz = p.to_str().unwrap().as_bytes().to_vec();
        pz.push(0);
        let cases: &[(Sparse, Sparse)] = &[
            (sparse(b"abcdef", 6), sparse(b"abXdefgh", 8)),
            (sparse(b"abcdefgh", 8), sparse(b"abc", 3)),
            (sparse(b"abcdefgh", 8), sparse(b"abc", 8)),
            (sparse(b"abcdefgh", 8), sparse(b"abc", 20)),
            (sparse(b"ab", 10), sparse(b"ab\0\0\0\0\0\0\0\0z", 11)),
            (sparse(b"same", 4), sparse(b"same", 4)),
        ];
        for (old, new) in cases {
            files::write_file(&pz, old.stored(), old.len()).unwrap();
            let bf = files::BlobFile::open(&pz).unwrap();
            assert!(sync_into(&bf, old, new, false).is_ok());
            bf.finish().unwrap();
            assert_eq!(std::fs::read(&p).unwrap(), whole(new));
            // A file that may differ from `old` (a change failed midway)
            // is written whole, in place.
            std::fs::write(&p, b"zzzzzzzzzzzzzzzzzzzzzzzz").unwrap();
            let bf = files::BlobFile::open(&pz).unwrap();
            assert!(sync_into(&bf, old, new, true).is_ok());
            bf.finish().unwrap();
            assert_eq!(std::fs::read(&p).unwrap(), whole(new));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
