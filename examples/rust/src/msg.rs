// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Messages formatted without allocating.
//!
//! Panic, stall and refusal messages are built while memory may be exhausted
//! (RUN-007), so they are written into a fixed buffer the size of
//! `cw_run_result.message`, cut at `CW_PANIC_MESSAGE_MAX - 1` bytes.

use std::fmt;

pub const MESSAGE_MAX: usize = 512;

/// A NUL-terminated message of at most `MESSAGE_MAX - 1` bytes.
#[derive(Clone, Copy)]
pub struct Msg {
    buf: [u8; MESSAGE_MAX],
    len: usize,
}

impl Msg {
    pub const fn new() -> Msg {
        Msg {
            buf: [0; MESSAGE_MAX],
            len: 0,
        }
    }

    pub fn from_bytes(b: &[u8]) -> Msg {
        let mut m = Msg::new();
        m.push(b);
        m
    }

    pub fn push(&mut self, b: &[u8]) {
        let room = MESSAGE_MAX - 1 - self.len;
        let n = b.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
        self.buf[self.len] = 0;
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Default for Msg {
    fn default() -> Self {
        Msg::new()
    }
}

impl fmt::Write for Msg {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

/// Bytes shown as text, invalid UTF-8 replaced byte by byte.
pub struct Lossy<'a>(pub &'a [u8]);

impl fmt::Display for Lossy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &c in self.0 {
            if c.is_ascii() {
                fmt::Write::write_char(f, c as char)?;
            } else {
                fmt::Write::write_char(f, '?')?;
            }
        }
        Ok(())
    }
}
