// SPDX-License-Identifier: Apache-2.0 OR MIT
//! CRC-32C and the blob header codec (STOR-020..STOR-024): pure functions.
//!
//! The header is specified byte for byte so that blobs move between
//! implementations; `parse` checks in the order STOR-022 gives and stops at
//! the first failure, `resolve` adds what an open does (STOR-023): a region
//! too short for a header, or an interrupted V1 creation, is fresh.

use crate::ffi::*;
use std::os::raw::c_int;

const fn crc_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC_TABLE: [u32; 256] = crc_table();

/// CRC-32C continuing `crc` (0 to start), STOR-021.
pub fn crc32c(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c = CRC_TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

pub const MAGIC_V0: [u8; 4] = *b"CWIC";
pub const MAGIC_V1: [u8; 4] = *b"CWIK";
pub const V1_LEN: usize = 4096;

pub fn data_offset(layout: u16) -> u64 {
    if layout == 0 {
        8
    } else {
        V1_LEN as u64
    }
}

/// The header region of a new blob (STOR-020); `None` for an unknown layout.
pub fn create(layout: u16, version: u16, out: &mut [u8]) -> Option<usize> {
    let (magic, rv, len) = match layout {
        0 => (MAGIC_V0, 0u16, 8usize),
        1 => (MAGIC_V1, 1u16, V1_LEN),
        _ => return None,
    };
    if out.len() < len {
        return None;
    }
    out[..4].copy_from_slice(&magic);
    out[4..6].copy_from_slice(&rv.to_be_bytes());
    out[6..8].copy_from_slice(&version.to_be_bytes());
    if layout == 1 {
        let crc = crc32c(0, &out[..8]);
        out[8..12].copy_from_slice(&crc.to_be_bytes());
        for b in out[12..V1_LEN].iter_mut() {
            *b = 0;
        }
    }
    Some(len)
}

fn contains(r: cw_blob_range, v: u16) -> bool {
    r.first <= v && v <= r.last
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

/// STOR-022. `raw` holds the first `min(raw_len, 4096)` bytes.
pub fn parse(
    raw: &[u8],
    raw_len: u64,
    layouts: cw_blob_range,
    versions: cw_blob_range,
    h: &mut cw_blob_header,
) -> c_int {
    *h = cw_blob_header::default();
    h.raw_len = raw_len;
    if layouts.first > layouts.last || versions.first > versions.last || raw_len < 8 {
        return CW_ERR_INVALID;
    }
    h.magic.copy_from_slice(&raw[..4]);
    let layout: u16 = if h.magic == MAGIC_V0 {
        0
    } else if h.magic == MAGIC_V1 {
        1
    } else {
        h.fault = CW_HEADER_INVALID_MAGIC;
        return CW_ERR_BLOB_CORRUPT;
    };
    let rv = be16(&raw[4..6]);
    if rv != layout {
        h.fault = CW_HEADER_UNSUPPORTED_RUNTIME_VERSION;
        h.runtime_expected = layout;
        h.runtime_found = rv;
        return CW_ERR_BLOB_CORRUPT;
    }
    if layout == 1 {
        if raw_len < 12 {
            h.fault = CW_HEADER_TRUNCATED;
            h.required_len = 12;
            return CW_ERR_BLOB_CORRUPT;
        }
        let stored = u32::from_be_bytes([raw[8], raw[9], raw[10], raw[11]]);
        if stored != crc32c(0, &raw[..8]) {
            h.fault = CW_HEADER_INVALID_CHECKSUM;
            return CW_ERR_BLOB_CORRUPT;
        }
        if raw_len < V1_LEN as u64 {
            h.fault = CW_HEADER_TRUNCATED;
            h.required_len = V1_LEN as u64;
            return CW_ERR_BLOB_CORRUPT;
        }
        if raw[12..V1_LEN].iter().any(|&b| b != 0) {
            h.fault = CW_HEADER_INVALID_PADDING;
            return CW_ERR_BLOB_CORRUPT;
        }
    }
    let version = be16(&raw[6..8]);
    if !contains(layouts, layout) {
        h.fault = CW_HEADER_LAYOUT_MISMATCH;
        h.expected = layouts;
        h.found = layout;
        return CW_ERR_BLOB_LAYOUT_MISMATCH;
    }
    if !contains(versions, version) {
        h.fault = CW_HEADER_VERSION_MISMATCH;
        h.expected = versions;
        h.found = version;
        return CW_ERR_BLOB_VERSION_MISMATCH;
    }
    h.layout = layout;
    h.version = version;
    h.data_offset = data_offset(layout);
    h.size = raw_len - h.data_offset;
    CW_OK
}

/// Are these bytes a V1 creation cut short (STOR-023)?
fn interrupted_v1(raw: &[u8], raw_len: u64) -> bool {
    let n = raw_len as usize;
    let head_len = n.min(12);
    if raw[head_len..n].iter().any(|&b| b != 0) {
        return false;
    }
    let head = &raw[..head_len];
    let w = head.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let prefix = [0x43u8, 0x57, 0x49, 0x4B, 0x00, 0x01];
    if w <= 8 {
        let k = w.min(6);
        head[..k] == prefix[..k]
    } else {
        let crc = crc32c(0, &head[..8]).to_be_bytes();
        head[..6] == prefix && head[8..w] == crc[..w - 8]
    }
}

/// STOR-023.
pub fn resolve(
    raw: &[u8],
    raw_len: u64,
    layouts: cw_blob_range,
    versions: cw_blob_range,
    h: &mut cw_blob_header,
) -> c_int {
    *h = cw_blob_header::default();
    h.raw_len = raw_len;
    if layouts.first > layouts.last || versions.first > versions.last {
        return CW_ERR_INVALID;
    }
    if raw_len < 8 {
        h.fresh = true;
        return CW_OK;
    }
    let rc = parse(raw, raw_len, layouts, versions, h);
    if rc == CW_OK {
        return rc;
    }
    let tearable = matches!(
        h.fault,
        CW_HEADER_INVALID_MAGIC
            | CW_HEADER_UNSUPPORTED_RUNTIME_VERSION
            | CW_HEADER_INVALID_CHECKSUM
            | CW_HEADER_TRUNCATED
    );
    if raw_len <= V1_LEN as u64 && tearable && interrupted_v1(raw, raw_len) {
        h.fresh = true;
        h.healed = true;
        return CW_OK;
    }
    rc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        assert_eq!(crc32c(0, b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(0, &[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(0, &[0xFFu8; 32]), 0x62A8_AB43);
        let mut h = [0u8; 4096];
        create(1, 3, &mut h).unwrap();
        assert_eq!(
            &h[..12],
            &[0x43, 0x57, 0x49, 0x4B, 0, 1, 0, 3, 0x3B, 0x43, 0x2B, 0x28]
        );
    }
}
