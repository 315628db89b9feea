// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The run's metric registry (spec/16-metrics.md, MET-001..MET-005,
//! MET-011..MET-013, MET-019).
//!
//! A metric is one object whose pointer is every handle on it: `handles`
//! counts them (MET-002), values are atomics so that updates from any
//! thread lose nothing (MET-011). A family keeps its children, each a
//! metric of the family's kind with its label values (MET-012). The
//! registry is one list behind one mutex, since handles may be cloned and
//! released, and children made, on any thread. The run's spent metric is
//! what a registration without memory returns (MET-019). The runtime's own
//! metrics are `Internal`: always registered, never released.

use crate::ffi::*;
use crate::runtime::Rt;
use crate::table::TABLE;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    Registered,
    Internal,
    Child,
    Spent,
}

pub type Attrs = Vec<(Vec<u8>, Vec<u8>)>;

#[repr(C)]
pub struct Metric {
    obj: cw_object,
    pub rt: *mut Rt,
    pub kind: c_int,
    pub role: Role,
    pub handles: usize,
    pub name: Vec<u8>,
    pub help: Vec<u8>,
    pub attrs: Attrs,
    pub buckets: Vec<f64>,
    pub labels: Vec<Vec<u8>>,
    pub children: Vec<*mut Metric>,
    pub values: Vec<Vec<u8>>,
    pub counter: AtomicU64,
    pub gauge: AtomicI64,
    pub hist: Vec<AtomicU64>,
    pub count: AtomicU64,
    pub sum: AtomicU64,
}

impl Metric {
    pub fn blank(rt: *mut Rt, kind: c_int, role: Role) -> Metric {
        Metric {
            obj: cw_object { backend: &TABLE.0 },
            rt,
            kind,
            role,
            handles: 0,
            name: Vec::new(),
            help: Vec::new(),
            attrs: Vec::new(),
            buckets: Vec::new(),
            labels: Vec::new(),
            children: Vec::new(),
            values: Vec::new(),
            counter: AtomicU64::new(0),
            gauge: AtomicI64::new(0),
            hist: Vec::new(),
            count: AtomicU64::new(0),
            sum: AtomicU64::new(0f64.to_bits()),
        }
    }

    pub fn is_family(&self) -> bool {
        matches!(self.role, Role::Registered | Role::Internal) && !self.labels.is_empty()
    }

    /// Whether value functions act on this metric (MET-013, MET-019).
    fn holds_values(&self) -> bool {
        self.role != Role::Spent && !self.is_family()
    }

    pub fn counter_add(&self, n: u64) {
        if self.holds_values() && self.kind == CW_METRIC_COUNTER {
            self.counter.fetch_add(n, Ordering::Relaxed);
        }
    }

    pub fn counter_get(&self) -> u64 {
        if self.holds_values() && self.kind == CW_METRIC_COUNTER {
            self.counter.load(Ordering::Relaxed)
        } else {
            0
        }
    }

    pub fn gauge_set(&self, v: i64) {
        if self.holds_values() && self.kind == CW_METRIC_GAUGE {
            self.gauge.store(v, Ordering::Relaxed);
        }
    }

    pub fn gauge_add(&self, d: i64) {
        if self.holds_values() && self.kind == CW_METRIC_GAUGE {
            self.gauge.fetch_add(d, Ordering::Relaxed);
        }
    }

    pub fn gauge_get(&self) -> i64 {
        if self.holds_values() && self.kind == CW_METRIC_GAUGE {
            self.gauge.load(Ordering::Relaxed)
        } else {
            0
        }
    }

    pub fn observe(&self, v: f64) {
        if !(self.holds_values() && self.kind == CW_METRIC_HISTOGRAM) {
            return;
        }
        let i = self
            .buckets
            .iter()
            .position(|b| *b >= v)
            .unwrap_or(self.buckets.len());
        self.hist[i].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut old = self.sum.load(Ordering::Relaxed);
        loop {
            let new = (f64::from_bits(old) + v).to_bits();
            match self
                .sum
                .compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(x) => old = x,
            }
        }
    }

    pub fn hist_count(&self) -> u64 {
        if self.holds_values() && self.kind == CW_METRIC_HISTOGRAM {
            self.count.load(Ordering::Relaxed)
        } else {
            0
        }
    }

    pub fn hist_sum(&self) -> f64 {
        if self.holds_values() && self.kind == CW_METRIC_HISTOGRAM {
            f64::from_bits(self.sum.load(Ordering::Relaxed))
        } else {
            0.0
        }
    }
}

/// The registry: every metric registered in the run, in no order.
pub struct Registry {
    pub list: Mutex<Vec<*mut Metric>>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry {
            list: Mutex::new(Vec::new()),
        }
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

/// Free a metric and its children.
///
/// # Safety
/// `m` must be a metric nothing will use again, unlinked from the registry.
pub unsafe fn free_metric(m: *mut Metric) {
    // SAFETY: forwarded; children belong to their family alone.
    unsafe {
        for &c in (*m).children.iter() {
            drop(Box::from_raw(c));
        }
        drop(Box::from_raw(m));
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        if let Ok(l) = self.list.lock() {
            for &m in l.iter() {
                // SAFETY: the run is over; its metrics go with it.
                unsafe { free_metric(m) };
            }
        }
    }
}

/// Allocate `m` with room for its histogram buckets; `None` without memory.
pub fn make(mut m: Metric) -> Option<*mut Metric> {
    if m.kind == CW_METRIC_HISTOGRAM && !m.is_family() {
        let n = m.buckets.len() + 1;
        m.hist.try_reserve_exact(n).ok()?;
        for _ in 0..n {
            m.hist.push(AtomicU64::new(0));
        }
    }
    crate::mem::try_raw(m)
}

/// A child of `family` for `values`, found or made (MET-012); `None`
/// without memory. The registry lock must be held.
pub fn child_locked(family: *mut Metric, values: &[&[u8]]) -> Option<(*mut Metric, bool)> {
    // SAFETY: a live family, under the registry lock.
    let f = unsafe { &mut *family };
    let pos = f.children.binary_search_by(|&c| {
        // SAFETY: children are live while their family is.
        let cv = unsafe { &(*c).values };
        cv.iter().map(|v| &v[..]).cmp(values.iter().copied())
    });
    match pos {
        Ok(i) => Some((f.children[i], false)),
        Err(i) => {
            let mut vals = Vec::new();
            vals.try_reserve_exact(values.len()).ok()?;
            for v in values {
                let mut c = Vec::new();
                c.try_reserve_exact(v.len()).ok()?;
                c.extend_from_slice(v);
                vals.push(c);
            }
            let mut m = Metric::blank(f.rt, f.kind, Role::Child);
            m.values = vals;
            if f.kind == CW_METRIC_HISTOGRAM {
                m.buckets.try_reserve_exact(f.buckets.len()).ok()?;
                m.buckets.extend_from_slice(&f.buckets);
            }
            f.children.try_reserve(1).ok()?;
            let c = make(m)?;
            f.children.insert(i, c);
            Some((c, true))
        }
    }
}

/// Remove the child of `family` with `values`; `false` when there is none.
/// The registry lock must be held.
pub fn remove_child_locked(family: *mut Metric, values: &[&[u8]]) -> bool {
    // SAFETY: a live family, under the registry lock.
    let f = unsafe { &mut *family };
    let pos = f.children.binary_search_by(|&c| {
        // SAFETY: children are live while their family is.
        let cv = unsafe { &(*c).values };
        cv.iter().map(|v| &v[..]).cmp(values.iter().copied())
    });
    match pos {
        Ok(i) => {
            let c = f.children.remove(i);
            // SAFETY: the child is unlinked; its pointer is invalid now.
            drop(unsafe { Box::from_raw(c) });
            true
        }
        Err(_) => false,
    }
}
