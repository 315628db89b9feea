// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The `metrics` profile (spec/16-metrics.md): the `cw_metric_ops` table
//! and registration.
//!
//! `registry` holds the metric objects and their values, `encode` the
//! OpenMetrics text, `series` the runtime's own metrics (tasks, polls,
//! storage). This file is the FFI boundary and the registration rules:
//! the `register` audit event first (MET-018), then the checks that panic
//! the caller (MET-004, MET-005), then a shared or a new metric, or the
//! spent one without memory (MET-019). The registry lock is never held
//! while panicking: the panic abandons the stack it runs on.

pub mod encode;
pub mod registry;
pub mod series;

use crate::audit;
use crate::ffi::*;
use crate::msg::{Lossy, Msg};
use crate::runtime::{self, Rt};
use crate::tree::Ctx;
use registry::{Attrs, Metric, Role};
use std::ffi::CStr;
use std::fmt::Write;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

fn bytes_of<'a>(s: *const c_char) -> &'a [u8] {
    if s.is_null() {
        return b"";
    }
    // SAFETY: the caller's NUL-terminated string, valid for the call.
    unsafe { CStr::from_ptr(s) }.to_bytes()
}

fn label_problem(l: &[u8]) -> Option<&'static str> {
    match l.first() {
        Some(c) if c.is_ascii_alphabetic() => {}
        _ => return Some("label must start with [a-zA-Z]: "),
    }
    if !l.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return Some("label must only contain [a-zA-Z0-9_]: ");
    }
    None
}

fn copy(b: &[u8]) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(b.len()).ok()?;
    v.extend_from_slice(b);
    Some(v)
}

/// The context's attributes without their NULs.
fn ctx_attrs(c: &Ctx) -> Option<Attrs> {
    let mut a = Vec::new();
    a.try_reserve_exact(c.attrs.len()).ok()?;
    for (k, v) in c.attrs.iter() {
        a.push((copy(&k[..k.len() - 1])?, copy(&v[..v.len() - 1])?));
    }
    Some(a)
}

fn fail(rt: *mut Rt, full: &[u8], reason: std::fmt::Arguments) -> ! {
    let mut m = Msg::new();
    let _ = write!(m, "metric `{}`: {}", Lossy(full), reason);
    runtime::panic_current(rt, m.bytes())
}

/// The `register` event: name, help, then each attribute's key and value
/// (MET-018, 11-deterministic.md); with more than 31 attributes and no
/// memory for the field list (or the event log's), name and help alone
/// (MET-019).
fn register_event(r: &mut Rt, name: &[u8], help: &[u8], c: &Ctx) {
    if !r.audit {
        return;
    }
    let mut fields: Vec<&[u8]> = Vec::new();
    if fields.try_reserve_exact(2 + 2 * c.attrs.len()).is_err() {
        audit::record(r, b"register\0", &[name, help]);
        return;
    }
    fields.push(name);
    fields.push(help);
    for (k, v) in c.attrs.iter() {
        fields.push(&k[..k.len() - 1]);
        fields.push(&v[..v.len() - 1]);
    }
    // Without memory for the event log's field list: name and help alone.
    if !audit::try_record(r, b"register\0", &fields) {
        audit::record(r, b"register\0", &[name, help]);
    }
}

/// `cw_register` (MET-001..MET-005, MET-018, MET-019).
///
/// # Safety
/// `ctx` must be a live context of this backend; `ty` NULL or valid.
pub unsafe fn register(
    ctx: *mut Ctx,
    name: *const c_char,
    help: *const c_char,
    ty: *const cw_metric_type,
) -> *mut Metric {
    // SAFETY: forwarded.
    let rt = unsafe { (*ctx).h.rt };
    // SAFETY: the live run and context; single-threaded registration.
    let (r, c) = unsafe { (&mut *rt, &*ctx) };
    let name = bytes_of(name);
    let help = bytes_of(help);
    register_event(r, name, help, c);
    if let Some(p) = label_problem(name) {
        let mut m = Msg::from_bytes(b"metric name: ");
        m.push(p.as_bytes());
        m.push(name);
        runtime::panic_current(rt, m.bytes());
    }
    let label = &c.label[..c.label.len() - 1];
    // The full name: for messages (cut to fit), compared piecewise, and
    // copied only when a metric is made (MET-019).
    let sep: &[u8] = if label.is_empty() { b"" } else { b"_" };
    let full_is = |n: &[u8]| {
        n.len() == label.len() + sep.len() + name.len()
            && n.starts_with(label)
            && n[label.len()..].starts_with(sep)
            && n.ends_with(name)
    };
    let mut full = Msg::new();
    full.push(label);
    full.push(sep);
    full.push(name);
    let full_b = full.bytes();
    let starts_runtime = {
        let mut it = label.iter().chain(sep.iter()).chain(name.iter());
        b"runtime".iter().all(|ch| it.next() == Some(ch))
    };
    if starts_runtime {
        let mut m = Msg::from_bytes(b"using runtime label is not allowed: ");
        m.push(full_b);
        runtime::panic_current(rt, m.bytes());
    }
    // The type as given; NULL arrays with a count are the C interface's
    // own misuses (MET-005).
    // SAFETY: the caller's type, when not NULL.
    let t: Option<&cw_metric_type> = unsafe { ty.as_ref() };
    let kind = t.map_or(0, |t| t.kind);
    let nbuckets = t.map_or(0, |t| t.nbuckets);
    let buckets_null = match t {
        Some(t) => t.buckets.is_null(),
        None => true,
    };
    let nlabels = t.map_or(0, |t| t.nlabels);
    let labels_null = match t {
        Some(t) => t.labels.is_null(),
        None => true,
    };
    if !(CW_METRIC_COUNTER..=CW_METRIC_HISTOGRAM).contains(&kind) {
        fail(
            rt,
            full_b,
            format_args!("metric kind must be a cw_metric_kind"),
        );
    }
    let hist = kind == CW_METRIC_HISTOGRAM;
    if nbuckets > 0 && !hist {
        fail(rt, full_b, format_args!("only a histogram has buckets"));
    }
    if nbuckets > 0 && buckets_null {
        fail(rt, full_b, format_args!("histogram buckets are missing"));
    }
    let buckets: &[f64] = if nbuckets == 0 {
        &[]
    } else {
        // SAFETY: the caller's `nbuckets` bounds.
        unsafe { std::slice::from_raw_parts(t.expect("type").buckets, nbuckets) }
    };
    for (i, b) in buckets.iter().enumerate() {
        if !b.is_finite() {
            fail(rt, full_b, format_args!("histogram buckets must be finite"));
        }
        if i > 0 && buckets[i - 1] >= *b {
            fail(
                rt,
                full_b,
                format_args!("histogram buckets must be strictly increasing"),
            );
        }
    }
    if nlabels > 0 && labels_null {
        fail(rt, full_b, format_args!("family label names are missing"));
    }
    // The label names, read in place: a panic abandons this frame, so
    // nothing may be allocated before the last check that panics (RUN-008).
    let label_at = |i: usize| -> &[u8] {
        // SAFETY: the caller's `nlabels` names (checked non-NULL above).
        bytes_of(unsafe { *t.expect("type").labels.add(i) })
    };
    for i in 0..nlabels {
        let l = label_at(i);
        if label_problem(l).is_some() {
            fail(
                rt,
                full_b,
                format_args!("family label names must match [a-zA-Z][a-zA-Z0-9_]*"),
            );
        }
        if (0..i).any(|j| label_at(j) == l) {
            fail(
                rt,
                full_b,
                format_args!("family label names must be distinct"),
            );
        }
        if hist && l == b"le" {
            fail(
                rt,
                full_b,
                format_args!("label name le is reserved for histogram buckets"),
            );
        }
    }
    for (k, _) in c.attrs.iter() {
        let k = &k[..k.len() - 1];
        if hist && k == b"le" {
            fail(
                rt,
                full_b,
                format_args!("attribute le is reserved for histogram buckets"),
            );
        }
        if (0..nlabels).any(|j| label_at(j) == k) {
            fail(
                rt,
                full_b,
                format_args!("a family label repeats a context attribute"),
            );
        }
    }
    let mut labels: Vec<&[u8]> = Vec::new();
    if labels.try_reserve_exact(nlabels).is_err() {
        return r.spent_metric;
    }
    for i in 0..nlabels {
        labels.push(label_at(i));
    }
    let attrs = match ctx_attrs(c) {
        Some(a) => a,
        None => return r.spent_metric,
    };
    // Conflicts and sharing, decided under the lock, panicked outside it.
    enum Found {
        Share(*mut Metric),
        /// The same key with another type (MET-004).
        Duplicate,
        /// The same name with another kind or help (MET-004).
        Family(&'static str),
        New,
    }
    let found = {
        let list = match r.metrics.list.lock() {
            Ok(l) => l,
            Err(_) => return r.spent_metric,
        };
        // MET-004, over every metric of the name: other help first, then
        // the same key with another type, then another kind.
        let same_name = || {
            list.iter().copied().filter(|&m| {
                // SAFETY: registered metrics are live under the lock.
                full_is(unsafe { &(*m).name })
            })
        };
        // SAFETY: as above.
        let f = if same_name().any(|m| unsafe { (*m).help != help }) {
            Found::Family("registered with inconsistent help text")
        // SAFETY: as above.
        } else if let Some(m) = same_name().find(|&m| unsafe { (*m).attrs == attrs }) {
            // SAFETY: as above; `handles` is guarded by the lock held.
            let m_ = unsafe { &mut *m };
            let same = m_.kind == kind
                && m_.buckets.len() == buckets.len()
                && m_
                    .buckets
                    .iter()
                    .zip(buckets)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
                && m_.labels.len() == labels.len()
                && m_
                    .labels
                    .iter()
                    .zip(labels.iter())
                    .all(|(a, b)| a[..] == **b);
            if same {
                m_.handles += 1;
                Found::Share(m)
            } else {
                Found::Duplicate
            }
        // SAFETY: as above.
        } else if same_name().any(|m| unsafe { (*m).kind != kind }) {
            Found::Family("registered with inconsistent metric type")
        } else {
            Found::New
        };
        f
    };
    // A panic abandons this frame: what it holds is given back first
    // (RUN-008).
    match found {
        Found::Share(m) => return m,
        Found::Family(why) => {
            drop(attrs);
            drop(labels);
            let mut m = Msg::new();
            let _ = write!(m, "metric family `{}` {}", Lossy(full_b), why);
            runtime::panic_current(rt, m.bytes())
        }
        Found::Duplicate => {
            drop(attrs);
            drop(labels);
            let mut m = Msg::new();
            let _ = write!(m, "duplicate metric `{}` with attributes [", Lossy(full_b));
            for (i, (k, v)) in c.attrs.iter().enumerate() {
                if i > 0 {
                    m.push(b", ");
                }
                let _ = write!(
                    m,
                    "{}={}",
                    Lossy(&k[..k.len() - 1]),
                    Lossy(&v[..v.len() - 1])
                );
            }
            m.push(b"] registered with different type");
            runtime::panic_current(rt, m.bytes())
        }
        Found::New => {}
    }
    let made = (|| {
        let mut m = Metric::blank(rt, kind, Role::Registered);
        m.handles = 1;
        m.name
            .try_reserve_exact(label.len() + sep.len() + name.len())
            .ok()?;
        m.name.extend_from_slice(label);
        m.name.extend_from_slice(sep);
        m.name.extend_from_slice(name);
        m.help = copy(help)?;
        m.attrs = attrs;
        m.buckets.try_reserve_exact(buckets.len()).ok()?;
        m.buckets.extend_from_slice(buckets);
        m.labels.try_reserve_exact(labels.len()).ok()?;
        for l in labels.iter() {
            m.labels.push(copy(l)?);
        }
        let p = registry::make(m)?;
        let mut list = r.metrics.list.lock().ok()?;
        if list.try_reserve(1).is_err() {
            drop(list);
            // SAFETY: the fresh metric is unlinked.
            unsafe { registry::free_metric(p) };
            return None;
        }
        list.push(p);
        Some(p)
    })();
    made.unwrap_or(r.spent_metric)
}

fn metric<'a>(m: *const cw_metric) -> &'a Metric {
    // SAFETY: a live metric of this backend (the caller's handle or child).
    unsafe { &*(m as *const Metric) }
}

unsafe extern "C" fn e_register(
    ctx: *mut cw_ctx,
    name: *const c_char,
    help: *const c_char,
    ty: *const cw_metric_type,
) -> *mut cw_metric {
    // SAFETY: the caller's live context.
    unsafe { register(ctx as *mut Ctx, name, help, ty) as *mut cw_metric }
}

unsafe extern "C" fn e_encode(ctx: *mut cw_ctx) -> *mut c_char {
    // SAFETY: the caller's live context.
    let rt = unsafe { runtime::rt_of(ctx as *const c_void) };
    // SAFETY: the live run.
    let r = unsafe { &mut *rt };
    audit::record(r, b"encode\0", &[]);
    encode::encode(r)
}

unsafe extern "C" fn e_clone(m: *mut cw_metric) -> *mut cw_metric {
    let me = metric(m);
    match me.role {
        Role::Child => ptr::null_mut(),
        Role::Spent | Role::Internal => m,
        Role::Registered => {
            // SAFETY: the run of a live metric is live.
            let r = unsafe { &*me.rt };
            if let Ok(_l) = r.metrics.list.lock() {
                // SAFETY: under the lock that guards `handles`.
                unsafe { (*(m as *mut Metric)).handles += 1 };
            }
            m
        }
    }
}

unsafe extern "C" fn e_release(m: *mut cw_metric) {
    let me = metric(m);
    if me.role != Role::Registered {
        return;
    }
    // SAFETY: the run of a live metric is live.
    let r = unsafe { &*me.rt };
    let p = m as *mut Metric;
    let mut gone = false;
    if let Ok(mut l) = r.metrics.list.lock() {
        // SAFETY: under the lock that guards `handles`.
        unsafe {
            (*p).handles -= 1;
            if (*p).handles == 0 {
                l.retain(|&x| x != p);
                gone = true;
            }
        }
    }
    if gone {
        // SAFETY: unlinked, and its last handle is gone.
        unsafe { registry::free_metric(p) };
    }
}

unsafe extern "C" fn e_counter_add(m: *mut cw_metric, n: u64) {
    metric(m).counter_add(n)
}

unsafe extern "C" fn e_counter_get(m: *const cw_metric) -> u64 {
    metric(m).counter_get()
}

unsafe extern "C" fn e_gauge_set(m: *mut cw_metric, v: i64) {
    metric(m).gauge_set(v)
}

unsafe extern "C" fn e_gauge_add(m: *mut cw_metric, d: i64) {
    metric(m).gauge_add(d)
}

unsafe extern "C" fn e_gauge_get(m: *const cw_metric) -> i64 {
    metric(m).gauge_get()
}

unsafe extern "C" fn e_observe(m: *mut cw_metric, v: f64) {
    metric(m).observe(v)
}

unsafe extern "C" fn e_hist_count(m: *const cw_metric) -> u64 {
    metric(m).hist_count()
}

unsafe extern "C" fn e_hist_sum(m: *const cw_metric) -> f64 {
    metric(m).hist_sum()
}

/// The values of a family's labels, one C string each.
fn values_of<'a>(f: &Metric, values: *const *const c_char) -> Option<Vec<&'a [u8]>> {
    let mut v = Vec::new();
    v.try_reserve_exact(f.labels.len()).ok()?;
    for i in 0..f.labels.len() {
        // SAFETY: the caller gives one string per label name.
        v.push(bytes_of(unsafe { *values.add(i) }));
    }
    Some(v)
}

unsafe extern "C" fn e_family_get(
    m: *mut cw_metric,
    values: *const *const c_char,
) -> *mut cw_metric {
    let f = metric(m);
    if f.role == Role::Spent {
        return m;
    }
    if !f.is_family() || values.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: the run of a live metric is live.
    let r = unsafe { &*f.rt };
    let vals = match values_of(f, values) {
        Some(v) => v,
        None => return r.spent_metric as *mut cw_metric,
    };
    let got = match r.metrics.list.lock() {
        Ok(_l) => registry::child_locked(m as *mut Metric, &vals),
        Err(_) => None,
    };
    match got {
        Some((c, _)) => c as *mut cw_metric,
        None => r.spent_metric as *mut cw_metric,
    }
}

unsafe extern "C" fn e_family_remove(m: *mut cw_metric, values: *const *const c_char) -> c_int {
    let f = metric(m);
    if !f.is_family() || values.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: the run of a live metric is live.
    let r = unsafe { &*f.rt };
    let vals = match values_of(f, values) {
        Some(v) => v,
        None => return CW_ERR_NOMEM,
    };
    let ok = match r.metrics.list.lock() {
        Ok(_l) => registry::remove_child_locked(m as *mut Metric, &vals),
        Err(_) => false,
    };
    if ok {
        CW_OK
    } else {
        CW_ERR_INVALID
    }
}

pub static METRIC_OPS: cw_metric_ops = cw_metric_ops {
    size: std::mem::size_of::<cw_metric_ops>() as u32,
    register_metric: e_register,
    encode: e_encode,
    endpoint: None,
    clone: e_clone,
    release: e_release,
    counter_add: e_counter_add,
    counter_get: e_counter_get,
    gauge_set: e_gauge_set,
    gauge_add: e_gauge_add,
    gauge_get: e_gauge_get,
    histogram_observe: e_observe,
    histogram_count: e_hist_count,
    histogram_sum: e_hist_sum,
    family_get: e_family_get,
    family_remove: e_family_remove,
};
