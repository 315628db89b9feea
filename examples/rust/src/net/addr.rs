// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Addresses: their text (NET-002), patterns (NET-028), loopbacks.

use crate::ffi::*;
use crate::msg::Msg;
use std::fmt::Write;

/// The standard text of an address (NET-002, RFC 5952), as
/// `cw_addr_format` writes it.
pub fn text(a: &cw_addr) -> Msg {
    let mut m = Msg::new();
    if a.family == CW_ADDR_IPV4 {
        let _ = write!(
            m,
            "{}.{}.{}.{}:{}",
            a.ip[0], a.ip[1], a.ip[2], a.ip[3], a.port
        );
        return m;
    }
    let mut g = [0u16; 8];
    for (i, x) in g.iter_mut().enumerate() {
        *x = (a.ip[2 * i] as u16) << 8 | a.ip[2 * i + 1] as u16;
    }
    let (mut best, mut bestlen) = (usize::MAX, 1usize);
    let mut i = 0;
    while i < 8 {
        let mut j = i;
        while j < 8 && g[j] == 0 {
            j += 1;
        }
        if j - i > bestlen {
            best = i;
            bestlen = j - i;
        }
        i = if j > i { j } else { i + 1 };
    }
    m.push(b"[");
    let mut i = 0;
    while i < 8 {
        if i == best {
            m.push(b"::");
            i += bestlen;
            continue;
        }
        let after_gap = best != usize::MAX && i == best + bestlen;
        if i != 0 && !after_gap {
            m.push(b":");
        }
        let _ = write!(m, "{:x}", g[i]);
        i += 1;
    }
    let _ = write!(m, "]:{}", a.port);
    m
}

fn ip_len(a: &cw_addr) -> usize {
    if a.family == CW_ADDR_IPV4 {
        4
    } else {
        16
    }
}

pub fn valid_family(a: &cw_addr) -> bool {
    a.family == CW_ADDR_IPV4 || a.family == CW_ADDR_IPV6
}

/// Same family, IP and port (the bytes past the family's IP ignored).
pub fn same(a: &cw_addr, b: &cw_addr) -> bool {
    a.family == b.family && a.port == b.port && a.ip[..ip_len(a)] == b.ip[..ip_len(b)]
}

/// Does pattern `p` match address `a` (NET-028)?
pub fn matches(p: &cw_addr, a: &cw_addr) -> bool {
    if p.family != a.family {
        return false;
    }
    let n = ip_len(p);
    let unspecified = p.ip[..n].iter().all(|&b| b == 0);
    (unspecified || p.ip[..n] == a.ip[..n]) && (p.port == 0 || p.port == a.port)
}

pub fn is_loopback(a: &cw_addr) -> bool {
    if a.family == CW_ADDR_IPV4 {
        a.ip[..4] == [127, 0, 0, 1]
    } else {
        a.ip[..15].iter().all(|&b| b == 0) && a.ip[15] == 1
    }
}

pub fn loopback(family: u8, port: u16) -> cw_addr {
    let mut a = cw_addr {
        family,
        ip: [0; 16],
        port,
    };
    if family == CW_ADDR_IPV4 {
        a.ip[..4].copy_from_slice(&[127, 0, 0, 1]);
    } else {
        a.ip[15] = 1;
    }
    a
}

/// `0.0.0.0:0`, the address a mock channel's halves name in events.
pub fn none() -> cw_addr {
    cw_addr {
        family: CW_ADDR_IPV4,
        ip: [0; 16],
        port: 0,
    }
}

/// A copy with the bytes past the family's IP cleared.
pub fn clean(a: &cw_addr) -> cw_addr {
    let mut c = *a;
    let n = ip_len(a);
    for b in c.ip[n..].iter_mut() {
        *b = 0;
    }
    c
}
