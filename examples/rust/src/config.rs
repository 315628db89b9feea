// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The run configuration: defaults and validation (RUN-002).
//!
//! A caller built against an older header passes a shorter `cw_config`
//! (its `size`); the fields it lacks keep the values `cw_config_default`
//! gives, so `defaults` mirrors that inline function. Validation refuses
//! every value RUN-002 lists, including those of fields this backend does
//! not use, so that a configuration is valid on every backend or on none.

use crate::ffi::*;
use std::ptr;

/// The end of the ABI 1.0 fields of `cw_config` (the end of
/// `blocking_threads`, not the padded `sizeof`): the smallest `size`
/// accepted (RUN-002).
pub const ABI_1_0_SIZE: usize = 68;

#[cfg(test)]
/// The offset just past `blocking_threads`, checked against ABI_1_0_SIZE by
/// the unit test below.
pub fn abi_1_0_end() -> usize {
    let c = std::mem::MaybeUninit::<cw_config>::uninit();
    let base = c.as_ptr();
    // SAFETY: only field addresses are computed, nothing is read.
    let f = unsafe { ptr::addr_of!((*base).blocking_threads) };
    f as usize - base as usize + 4
}

fn page_size() -> usize {
    extern "C" {
        fn sysconf(name: std::os::raw::c_int) -> std::os::raw::c_long;
    }
    // SAFETY: sysconf has no preconditions; 30 is _SC_PAGESIZE on Linux.
    let p = unsafe { sysconf(30) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

const ZERO_RATE: cw_rate = cw_rate { num: 0, den: 1 };

pub fn defaults() -> cw_config {
    let page = page_size();
    let network = cw_bufpool_config {
        min_size: 1024,
        max_size: 128 * 1024,
        max_per_class: 4096,
        alignment: 128,
        pool_min_size: 0,
        thread_cache: CW_BUFPOOL_CACHE_AUTO,
        parallelism: 1,
        prefill: false,
    };
    let storage = cw_bufpool_config {
        min_size: page,
        max_size: (8 << 20).max(page),
        max_per_class: 64,
        alignment: page,
        ..network
    };
    cw_config {
        size: std::mem::size_of::<cw_config>() as u32,
        seed: 42,
        cycle: 1_000_000,
        start_time: 0,
        timeout: CW_FOREVER,
        catch_panics: false,
        stack_size: 128 * 1024,
        stack_guard: true,
        worker_threads: 0,
        blocking_threads: 64,
        network_buffer_pool: network,
        storage_buffer_pool: storage,
        audit: true,
        metrics_address: ptr::null(),
        storage_directory: ptr::null(),
        blob_layouts: cw_blob_range { first: 0, last: 1 },
        tcp_nodelay: true,
        zero_linger: true,
        connect_timeout: 10_000_000_000,
        read_timeout: 60_000_000_000,
        write_timeout: 60_000_000_000,
        read_buffer_size: 64 * 1024,
        network_latency: 0,
        network_jitter: 0,
        event_log: None,
        event_log_arg: ptr::null_mut(),
        network_dial_failure: ZERO_RATE,
        network_reset: ZERO_RATE,
        storage_faults: cw_storage_faults {
            open: ZERO_RATE,
            read: ZERO_RATE,
            write: ZERO_RATE,
            sync: ZERO_RATE,
            resize: ZERO_RATE,
            remove: ZERO_RATE,
            scan: ZERO_RATE,
            write_kept: ZERO_RATE,
            write_mode: 0,
            resize_partial: ZERO_RATE,
            resize_kept: ZERO_RATE,
        },
        random_bytes: ptr::null(),
        random_len: 0,
        io_backend: 0,
    }
}

fn rate_ok(r: cw_rate) -> bool {
    r.num <= r.den && !(r.num != 0 && r.den == 0)
}

/// RUN-002: `Err` with the reason for an invalid configuration.
pub fn validate(c: &cw_config) -> Result<(), &'static str> {
    if c.cycle == 0 {
        return Err("invalid configuration: cycle must be above 0");
    }
    if c.stack_size == 0 || c.stack_size > 1 << 30 {
        return Err("invalid configuration: stack_size must be in 1..=1 GiB");
    }
    if c.blob_layouts.first > c.blob_layouts.last || c.blob_layouts.last > 1 {
        return Err("invalid configuration: blob_layouts is not a range of known layouts");
    }
    let f = &c.storage_faults;
    let rates = [
        c.network_dial_failure,
        c.network_reset,
        f.open,
        f.read,
        f.write,
        f.sync,
        f.resize,
        f.remove,
        f.scan,
        f.write_kept,
        f.resize_partial,
        f.resize_kept,
    ];
    if !rates.iter().all(|r| rate_ok(*r)) {
        return Err("invalid configuration: a rate is above 1 or has a zero denominator");
    }
    if f.write_mode > 1 {
        return Err("invalid configuration: storage_faults.write_mode is unknown");
    }
    if crate::buf::pool::check(&c.network_buffer_pool).is_some() {
        return Err("invalid configuration: network_buffer_pool is refused by cw_bufpool_config_check (BUF-019)");
    }
    if crate::buf::pool::check(&c.storage_buffer_pool).is_some() {
        return Err("invalid configuration: storage_buffer_pool is refused by cw_bufpool_config_check (BUF-019)");
    }
    if c.io_backend > 2 {
        return Err("invalid configuration: io_backend is unknown");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn abi_1_0_size() {
        let end = super::abi_1_0_end();
        assert_eq!(end, super::ABI_1_0_SIZE);
    }
}
