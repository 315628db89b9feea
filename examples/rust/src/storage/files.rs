// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The files under `storage_directory` (STOR-027), for
//! `CW_CAP_PERSISTENT_STORAGE`.
//!
//! The run's storage stays the memory model of `store.rs` (so schedules,
//! faults, crashes and digests are those of a deterministic backend); the
//! files are where the *durable* bytes live between runs and where other
//! processes find them: `<dir>/<partition>/<name in lowercase hex>`, header
//! then data. A blob's durable bytes are read from its file when it is
//! opened (so what another program wrote there is what the open reads) and
//! written back when they change (creation, sync, synced write, a crash's
//! replay); removal unlinks; a scan lists the directory. The calls go to
//! the C library directly, with paths built in fallible buffers, so that a
//! refused allocation is an error, never an abort (RUN-007). Without a
//! `storage_directory` the run makes one under `$TMPDIR` (or `/tmp`) at
//! its first storage call and removes it when it ends.

use std::os::raw::{c_char, c_int, c_long, c_void};

extern "C" {
    fn open(path: *const c_char, flags: c_int, mode: u32) -> c_int;
    fn close(fd: c_int) -> c_int;
    fn read(fd: c_int, buf: *mut c_void, n: usize) -> isize;
    fn pwrite(fd: c_int, buf: *const c_void, n: usize, off: i64) -> isize;
    fn fdatasync(fd: c_int) -> c_int;
    fn fsync(fd: c_int) -> c_int;
    fn __xpg_strerror_r(e: c_int, buf: *mut c_char, n: usize) -> c_int;
    fn ftruncate(fd: c_int, len: i64) -> c_int;
    fn mkdir(path: *const c_char, mode: u32) -> c_int;
    fn rmdir(path: *const c_char) -> c_int;
    fn unlink(path: *const c_char) -> c_int;
    fn mkdtemp(template: *mut c_char) -> *mut c_char;
    fn opendir(path: *const c_char) -> *mut c_void;
    fn readdir(d: *mut c_void) -> *const Dirent;
    fn closedir(d: *mut c_void) -> c_int;
    fn getenv(name: *const c_char) -> *const c_char;
    fn __errno_location() -> *mut c_int;
    fn syscall(num: c_long, ...) -> c_long;
    fn lseek(fd: c_int, off: i64, whence: c_int) -> i64;
    fn fstatat(dirfd: c_int, path: *const c_char, st: *mut u8, flags: c_int) -> c_int;
}

/// `struct dirent` of glibc on x86-64.
#[repr(C)]
pub struct Dirent {
    d_ino: u64,
    d_off: i64,
    d_reclen: u16,
    d_type: u8,
    d_name: [c_char; 256],
}

const O_RDONLY: c_int = 0;
const O_WRONLY: c_int = 1;
const O_RDWR: c_int = 2;
const O_CREAT: c_int = 0o100;
const O_TRUNC: c_int = 0o1000;
const O_CLOEXEC: c_int = 0o2000000;
const O_DIRECTORY: c_int = 0o200000;
const SYS_GETDENTS64: c_long = 217;
const ENOENT: c_int = 2;
const EINTR: c_int = 4;
const EIO: c_int = 5;
const EISDIR: c_int = 21;
const ENAMETOOLONG: c_int = 36;
const ENOMEM: c_int = 12;
const EEXIST: c_int = 17;
const DT_UNKNOWN: u8 = 0;
const DT_DIR: u8 = 4;
const DT_REG: u8 = 8;
const AT_FDCWD: c_int = -100;
const AT_SYMLINK_NOFOLLOW: c_int = 0x100;
const S_IFMT: u32 = 0o170000;
const S_IFREG: u32 = 0o100000;
const S_IFDIR: u32 = 0o040000;

fn errno() -> c_int {
    // SAFETY: errno of this thread.
    unsafe { *__errno_location() }
}

fn clear_errno() {
    // SAFETY: errno of this thread.
    unsafe { *__errno_location() = 0 };
}

/// The system's text for `e` followed by `(os error e)`, as STOR-018
/// spells `<os>`, written without allocating.
pub fn os_text(m: &mut crate::msg::Msg, e: c_int) {
    use std::fmt::Write;
    let mut buf = [0 as c_char; 128];
    // SAFETY: a writable buffer of `buf.len()` bytes; the XSI variant
    // writes a NUL-terminated text into it, or fails and writes nothing
    // we read.
    let ok = unsafe { __xpg_strerror_r(e, buf.as_mut_ptr(), buf.len()) } == 0;
    if ok {
        // SAFETY: NUL-terminated by `strerror_r` (the buffer is zeroed,
        // and its last byte never written past).
        let t = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        m.push(t.to_bytes());
        m.push(b" ");
    }
    let _ = write!(m, "(os error {})", e);
}

/// A call's result, retried while the system says it was interrupted.
fn retry<F: FnMut() -> isize>(mut f: F) -> isize {
    loop {
        let r = f();
        if r >= 0 || errno() != EINTR {
            return r;
        }
    }
}

/// A NUL-terminated path built piece by piece; `None` without memory.
pub fn path(parts: &[&[u8]]) -> Option<Vec<u8>> {
    let n: usize = parts.iter().map(|p| p.len() + 1).sum();
    let mut v = Vec::new();
    v.try_reserve_exact(n + 1).ok()?;
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            v.push(b'/');
        }
        v.extend_from_slice(p);
    }
    v.push(0);
    Some(v)
}

pub fn hex(name: &[u8]) -> Option<Vec<u8>> {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut v = Vec::new();
    v.try_reserve_exact(name.len() * 2).ok()?;
    for &b in name {
        v.push(D[(b >> 4) as usize]);
        v.push(D[(b & 15) as usize]);
    }
    Some(v)
}

/// Is `s` a blob's file name: lowercase hex of 1 to 127 bytes?
/// (`is_multiple_of` needs Rust 1.87; this crate builds with 1.63.)
#[allow(clippy::manual_is_multiple_of)]
pub fn is_hex_name(s: &[u8]) -> bool {
    !s.is_empty()
        && s.len() % 2 == 0
        && s.len() <= 254
        && s.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// The blob name of a file name `is_hex_name` accepted; `None` without
/// memory.
pub fn unhex(s: &[u8]) -> Option<Vec<u8>> {
    let val = |c: u8| if c <= b'9' { c - b'0' } else { c - b'a' + 10 };
    let mut v = Vec::new();
    v.try_reserve_exact(s.len() / 2).ok()?;
    for pair in s.chunks(2) {
        v.push(val(pair[0]) << 4 | val(pair[1]));
    }
    Some(v)
}

/// The run's directory: the configured one, or a fresh temporary one.
pub fn choose_dir(configured: *const c_char) -> Result<(Vec<u8>, bool), c_int> {
    if !configured.is_null() {
        // SAFETY: the caller's NUL-terminated string.
        let b = unsafe { std::ffi::CStr::from_ptr(configured) }.to_bytes();
        let p = path(&[b]).ok_or(ENOMEM)?;
        make_dir(&p)?;
        return Ok((p[..p.len() - 1].to_vec_fallible().ok_or(ENOMEM)?, false));
    }
    // SAFETY: getenv with a static NUL-terminated name (`c""` literals
    // need Rust 1.77).
    #[allow(clippy::manual_c_str_literals)]
    let t = unsafe { getenv(b"TMPDIR\0".as_ptr() as *const c_char) };
    let base: &[u8] = if t.is_null() {
        b"/tmp"
    } else {
        // SAFETY: the environment's NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(t) }.to_bytes()
    };
    let mut tpl = path(&[base, b"cwrt-rust-XXXXXX"]).ok_or(ENOMEM)?;
    // SAFETY: a writable NUL-terminated template.
    let r = unsafe { mkdtemp(tpl.as_mut_ptr() as *mut c_char) };
    if r.is_null() {
        return Err(errno());
    }
    tpl.pop();
    Ok((tpl, true))
}

trait ToVecFallible {
    fn to_vec_fallible(&self) -> Option<Vec<u8>>;
}

impl ToVecFallible for [u8] {
    fn to_vec_fallible(&self) -> Option<Vec<u8>> {
        let mut v = Vec::new();
        v.try_reserve_exact(self.len()).ok()?;
        v.extend_from_slice(self);
        Some(v)
    }
}

/// `mkdir -m 0700`, an existing directory being fine.
pub fn make_dir(p: &[u8]) -> Result<(), c_int> {
    // SAFETY: a NUL-terminated path.
    if unsafe { mkdir(p.as_ptr() as *const c_char, 0o700) } != 0 && errno() != EEXIST {
        return Err(errno());
    }
    Ok(())
}

/// The whole content of a file; `Ok(None)` when it does not exist. A
/// failed `read` is an error (STOR-039): never a shorter blob.
pub fn read_file(p: &[u8]) -> Result<Option<Vec<u8>>, c_int> {
    // SAFETY: a NUL-terminated path.
    let fd =
        retry(|| unsafe { open(p.as_ptr() as *const c_char, O_RDONLY | O_CLOEXEC, 0) } as isize)
            as c_int;
    if fd < 0 {
        return if errno() == ENOENT {
            Ok(None)
        } else {
            Err(errno())
        };
    }
    let f = Fd(fd);
    // SAFETY: our descriptor.
    let len = unsafe { lseek(f.0, 0, 2) };
    if len < 0 {
        return Err(errno());
    }
    // SAFETY: as above.
    if unsafe { lseek(f.0, 0, 0) } < 0 {
        return Err(errno());
    }
    let mut v = Vec::new();
    if v.try_reserve_exact(len as usize).is_err() {
        return Err(ENOMEM);
    }
    v.resize(len as usize, 0);
    let mut at = 0;
    while at < v.len() {
        let rest = &mut v[at..];
        // SAFETY: reading into our buffer's remaining bytes.
        let n = retry(|| unsafe { read(f.0, rest.as_mut_ptr() as *mut c_void, rest.len()) });
        if n < 0 {
            return Err(errno());
        }
        if n == 0 {
            // The file is shorter than it was: what it holds now.
            break;
        }
        at += n as usize;
    }
    v.truncate(at);
    Ok(Some(v))
}

/// A descriptor of ours, closed when dropped (after an error, whose
/// `errno` was taken first).
struct Fd(c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        if self.0 >= 0 {
            // SAFETY: our descriptor, closed once.
            unsafe { close(self.0) };
        }
    }
}

impl Fd {
    /// Close, reporting the error `close` reports (a deferred write error).
    fn close(mut self) -> Result<(), c_int> {
        let fd = std::mem::replace(&mut self.0, -1);
        // SAFETY: our descriptor, closed once (not retried: after EINTR
        // the descriptor is gone on Linux).
        if unsafe { close(fd) } != 0 && errno() != EINTR {
            return Err(errno());
        }
        Ok(())
    }

    /// Write all of `bytes` at `pos`; a write that makes no progress is
    /// `EIO`.
    fn write_all_at(&self, mut pos: u64, mut bytes: &[u8]) -> Result<(), c_int> {
        while !bytes.is_empty() {
            // SAFETY: writing our bytes through our descriptor.
            let n = retry(|| unsafe {
                pwrite(
                    self.0,
                    bytes.as_ptr() as *const c_void,
                    bytes.len(),
                    pos as i64,
                )
            });
            if n < 0 {
                return Err(errno());
            }
            if n == 0 {
                return Err(EIO);
            }
            bytes = &bytes[n as usize..];
            pos += n as u64;
        }
        Ok(())
    }

    fn truncate(&self, len: u64) -> Result<(), c_int> {
        // SAFETY: our descriptor.
        if retry(|| unsafe { ftruncate(self.0, len as i64) } as isize) != 0 {
            return Err(errno());
        }
        Ok(())
    }

    fn datasync(&self) -> Result<(), c_int> {
        // SAFETY: our descriptor.
        if retry(|| unsafe { fdatasync(self.0) } as isize) != 0 {
            return Err(errno());
        }
        Ok(())
    }
}

/// A blob's file opened to change it in place (a sync, a synced write):
/// the bytes written, the length set and the flush each checked, so that
/// no call claims durable what the system did not take (STOR-039).
pub struct BlobFile(Fd);

impl BlobFile {
    /// Open the existing file (made again, mode 0600, if something else
    /// removed it).
    pub fn open(p: &[u8]) -> Result<BlobFile, c_int> {
        // SAFETY: a NUL-terminated path.
        let fd = retry(|| unsafe {
            open(
                p.as_ptr() as *const c_char,
                O_RDWR | O_CREAT | O_CLOEXEC,
                0o600,
            ) as isize
        }) as c_int;
        if fd < 0 {
            return Err(errno());
        }
        Ok(BlobFile(Fd(fd)))
    }

    pub fn write_at(&self, pos: u64, bytes: &[u8]) -> Result<(), c_int> {
        self.0.write_all_at(pos, bytes)
    }

    pub fn set_len(&self, len: u64) -> Result<(), c_int> {
        self.0.truncate(len)
    }

    /// `fdatasync`, then `close`: `Ok` only when both succeeded.
    pub fn finish(self) -> Result<(), c_int> {
        self.0.datasync()?;
        self.0.close()
    }
}

/// `fsync` a directory, so that the entries made or removed in it are
/// durable.
pub fn sync_dir(p: &[u8]) -> Result<(), c_int> {
    // SAFETY: a NUL-terminated path.
    let fd = retry(|| unsafe {
        open(
            p.as_ptr() as *const c_char,
            O_RDONLY | O_DIRECTORY | O_CLOEXEC,
            0,
        ) as isize
    }) as c_int;
    if fd < 0 {
        return Err(errno());
    }
    let f = Fd(fd);
    // SAFETY: our descriptor.
    if retry(|| unsafe { fsync(f.0) } as isize) != 0 {
        return Err(errno());
    }
    f.close()
}

/// Make a file hold `bytes`, then zeros up to `len` (a sparse tail), and
/// flush it (mode 0600): a creation, or a fresh blob made again
/// (STOR-002, STOR-023: truncated to 0 before the header is written).
/// Every call is checked (STOR-039).
pub fn write_file(p: &[u8], bytes: &[u8], len: u64) -> Result<(), c_int> {
    // SAFETY: a NUL-terminated path.
    let fd = retry(|| unsafe {
        open(
            p.as_ptr() as *const c_char,
            O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
            0o600,
        ) as isize
    }) as c_int;
    if fd < 0 {
        return Err(errno());
    }
    let f = Fd(fd);
    f.write_all_at(0, bytes)?;
    if len > bytes.len() as u64 {
        f.truncate(len)?;
    }
    f.datasync()?;
    f.close()
}

pub fn remove_file(p: &[u8]) -> Result<(), c_int> {
    // SAFETY: a NUL-terminated path.
    if unsafe { unlink(p.as_ptr() as *const c_char) } != 0 && errno() != ENOENT {
        return Err(errno());
    }
    Ok(())
}

/// Whether an entry is a regular file, a directory or something else; an
/// `lstat` that fails is an error, not "something else".
fn kind_of(dir: &[u8], name: &[u8], d_type: u8) -> Result<u8, c_int> {
    if d_type != DT_UNKNOWN {
        return Ok(d_type);
    }
    let full = path(&[dir, name]).ok_or(ENOMEM)?;
    let mut st = [0u8; 256];
    // SAFETY: a NUL-terminated path and a buffer larger than struct stat.
    if unsafe {
        fstatat(
            AT_FDCWD,
            full.as_ptr() as *const c_char,
            st.as_mut_ptr(),
            AT_SYMLINK_NOFOLLOW,
        )
    } != 0
    {
        return Err(errno());
    }
    let mode = u32::from_ne_bytes([st[24], st[25], st[26], st[27]]);
    Ok(match mode & S_IFMT {
        S_IFREG => DT_REG,
        S_IFDIR => DT_DIR,
        _ => 1,
    })
}

/// The entries of a directory (not `.` and `..`), with whether each is a
/// regular file; `Ok(None)` when the directory does not exist. A
/// `readdir` that fails is an error, never a shorter list.
#[allow(clippy::type_complexity)]
pub fn list(dir: &[u8]) -> Result<Option<Vec<(Vec<u8>, bool)>>, c_int> {
    struct Dir(*mut c_void);
    impl Drop for Dir {
        fn drop(&mut self) {
            // SAFETY: our open stream, closed once.
            unsafe { closedir(self.0) };
        }
    }
    let d0 = match path(&[dir]) {
        Some(p) => p,
        None => return Err(ENOMEM),
    };
    // SAFETY: a NUL-terminated path.
    let d = unsafe { opendir(d0.as_ptr() as *const c_char) };
    if d.is_null() {
        return if errno() == ENOENT {
            Ok(None)
        } else {
            Err(errno())
        };
    }
    let d = Dir(d);
    let mut out = Vec::new();
    loop {
        clear_errno();
        // SAFETY: our open directory stream.
        let e = unsafe { readdir(d.0) };
        if e.is_null() {
            if errno() != 0 {
                return Err(errno());
            }
            break;
        }
        // SAFETY: a dirent readdir returned, valid until the next call.
        let (name, t) = unsafe {
            (
                std::ffi::CStr::from_ptr((*e).d_name.as_ptr()).to_bytes(),
                (*e).d_type,
            )
        };
        if name == b"." || name == b".." {
            continue;
        }
        let regular = kind_of(&d0[..d0.len() - 1], name, t)? == DT_REG;
        let n = name.to_vec_fallible().ok_or(ENOMEM)?;
        out.try_reserve(1).map_err(|_| ENOMEM)?;
        out.push((n, regular));
    }
    Ok(Some(out))
}

/// Remove a directory and everything in it, without allocating (a run
/// ending short of memory still removes its temporary directory); the
/// first error met, if any (the rest is still tried).
pub fn remove_tree(dir: &[u8]) -> Result<(), c_int> {
    let mut buf = [0u8; 4096];
    if dir.len() + 1 >= buf.len() {
        return Err(ENAMETOOLONG);
    }
    buf[..dir.len()].copy_from_slice(dir);
    let mut first = 0;
    remove_tree_in(&mut buf, dir.len(), 0, &mut first);
    match first {
        0 => Ok(()),
        e => Err(e),
    }
}

fn note(first: &mut c_int, e: c_int) {
    if *first == 0 {
        *first = if e == 0 { EIO } else { e };
    }
}

fn remove_tree_in(buf: &mut [u8; 4096], len: usize, depth: usize, first: &mut c_int) {
    buf[len] = 0;
    // `getdents64` on a descriptor rather than `opendir`, which allocates.
    // SAFETY: a NUL-terminated path in `buf`.
    let fd = retry(|| unsafe {
        open(
            buf.as_ptr() as *const c_char,
            O_RDONLY | O_DIRECTORY | O_CLOEXEC,
            0,
        ) as isize
    }) as c_int;
    if fd < 0 {
        if errno() != ENOENT {
            note(first, errno());
        }
        return;
    }
    let f = Fd(fd);
    if depth < 8 {
        let mut ents = [0u8; 4096];
        loop {
            // SAFETY: reading directory entries into our stack buffer.
            let n =
                unsafe { syscall(SYS_GETDENTS64, f.0 as c_long, ents.as_mut_ptr(), ents.len()) };
            if n < 0 {
                if errno() == EINTR {
                    continue;
                }
                note(first, errno());
                break;
            }
            if n == 0 {
                break;
            }
            let mut at = 0usize;
            while at < n as usize {
                // linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name.
                let reclen = u16::from_ne_bytes([ents[at + 16], ents[at + 17]]) as usize;
                let t = ents[at + 18];
                let name_all = &ents[at + 19..at + reclen];
                let nl = name_all
                    .iter()
                    .position(|&c| c == 0)
                    .unwrap_or(name_all.len());
                let name = &name_all[..nl];
                at += reclen;
                if name == b"." || name == b".." {
                    continue;
                }
                if len + 1 + name.len() + 1 >= buf.len() {
                    note(first, ENAMETOOLONG);
                    continue;
                }
                buf[len] = b'/';
                buf[len + 1..len + 1 + name.len()].copy_from_slice(name);
                let end = len + 1 + name.len();
                buf[end] = 0;
                // SAFETY: a NUL-terminated path in `buf`.
                if unsafe { unlink(buf.as_ptr() as *const c_char) } != 0 {
                    let e = errno();
                    if t == DT_DIR || (t == DT_UNKNOWN && e == EISDIR) {
                        remove_tree_in(buf, end, depth + 1, first);
                    } else if e != ENOENT {
                        note(first, e);
                    }
                }
                buf[len] = 0;
            }
        }
    }
    drop(f);
    buf[len] = 0;
    // SAFETY: a NUL-terminated path in `buf`.
    if unsafe { rmdir(buf.as_ptr() as *const c_char) } != 0 && errno() != ENOENT {
        note(first, errno());
    }
}
