// SPDX-License-Identifier: Apache-2.0 OR MIT
//! cwrt-rust: a backend of the cwrt task-runtime interface, written from
//! the spec alone (spec/*.md, spec/include/cw/*.h), in Rust with the
//! standard library only.
//!
//! The shared object exports one symbol, `cw_backend_entry`, returning the
//! table of `table.rs`. The modules, one idea each: `ffi` (the C structs),
//! `table` (the entries), `runtime` (a run and its scheduler), `coro`
//! (stacks and the stack switch), `tree` (contexts and supervision),
//! `handle`, `select`, `chan`, `signal`, `waker`, `config`, `audit`,
//! `sha256`, `rng`, `mem` (fallible allocation), `msg` (messages without
//! allocation), `obj` (the object header and the run's object list), and
//! the profiles beyond core: `buf`, `storage`, `metrics`, `net`, `recover`.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![allow(clippy::missing_safety_doc)]

mod audit;
mod buf;
mod chan;
mod config;
mod coro;
pub mod ffi;
mod handle;
mod mem;
mod metrics;
mod msg;
mod net;
mod obj;
mod recover;
mod rng;
mod runtime;
mod select;
mod sha256;
mod signal;
mod storage;
mod table;
mod tree;
mod waker;

/// The entry point a loader finds with `dlsym` (cw/backend.h).
#[no_mangle]
pub extern "C" fn cw_backend_entry() -> *const ffi::cw_backend {
    &table::TABLE.0
}
