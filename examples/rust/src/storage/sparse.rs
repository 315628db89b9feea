// SPDX-License-Identifier: Apache-2.0 OR MIT
//! A blob's physical bytes: those stored, then zeros up to its length.
//!
//! A resize may make a blob far longer than memory can hold (a file would
//! be sparse), and a read past its end must be refused as such, not for
//! lack of memory (STOR-006). So the bytes past the last one written are
//! not stored: they read as zeros. Writing past the stored bytes stores
//! the gap (a write far past the end may fail for memory, as 17-storage.md
//! allows a memory storage to).

use crate::sha256::Sha256;

#[derive(Default)]
pub struct Sparse {
    stored: Vec<u8>,
    len: u64,
}

impl Sparse {
    pub fn from_vec(v: Vec<u8>) -> Sparse {
        let len = v.len() as u64;
        Sparse { stored: v, len }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// The stored bytes (a prefix of the blob; the rest is zeros).
    pub fn stored(&self) -> &[u8] {
        &self.stored
    }

    /// A copy; `None` without memory.
    pub fn copy(&self) -> Option<Sparse> {
        let mut v = Vec::new();
        v.try_reserve_exact(self.stored.len()).ok()?;
        v.extend_from_slice(&self.stored);
        Some(Sparse {
            stored: v,
            len: self.len,
        })
    }

    /// Write `src` at `pos`, growing the blob; `false` without memory.
    pub fn put(&mut self, pos: usize, src: &[u8]) -> bool {
        let end = pos + src.len();
        if end > self.stored.len() {
            if self.stored.try_reserve(end - self.stored.len()).is_err() {
                return false;
            }
            self.stored.resize(end, 0);
        }
        self.stored[pos..end].copy_from_slice(src);
        self.len = self.len.max(end as u64);
        true
    }

    /// Make the blob `n` bytes long: cut, or zeros added (not stored).
    pub fn set_len(&mut self, n: u64) {
        if (n as usize as u64) == n && (n as usize) < self.stored.len() {
            self.stored.truncate(n as usize);
        }
        self.len = n;
    }

    /// Copy `dst.len()` bytes from `pos` (within the length).
    pub fn read(&self, pos: u64, dst: &mut [u8]) {
        for (i, d) in dst.iter_mut().enumerate() {
            let at = pos + i as u64;
            *d = if at < self.stored.len() as u64 {
                self.stored[at as usize]
            } else {
                0
            };
        }
    }

    /// Hash as one audit field: the length, then every byte.
    pub fn hash_field(&self, h: &mut Sha256) {
        h.update(&self.len.to_be_bytes());
        h.update(&self.stored);
        let zeros = [0u8; 4096];
        let mut left = self.len - self.stored.len() as u64;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            h.update(&zeros[..n]);
            left -= n as u64;
        }
    }
}
