// SPDX-License-Identifier: Apache-2.0 OR MIT
//! OpenMetrics text (MET-006..MET-010, MET-016).
//!
//! The registry is gathered into items (a metric: name, help, kind,
//! attributes, its series), sorted by name, then attributes, then a
//! family's label values, and written with the escaping of MET-009 and the
//! number format of MET-008. The text is built in a growable buffer whose
//! every growth is fallible and then copied to `malloc`ed memory, which the
//! caller frees; without memory the encode returns NULL (MET-019). Sorting
//! is unstable (it allocates nothing; keys are distinct).

use super::registry::{Metric, Role};
use crate::buf::pool;
use crate::ffi::*;
use crate::msg::Msg;
use crate::runtime::Rt;
use std::fmt::Write;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::Ordering;

extern "C" {
    fn malloc(n: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

/// The text being made: first only measured, then written into one
/// buffer of exactly that size (so the only allocation an encode makes for
/// its text is the one it returns).
struct Out {
    buf: *mut u8,
    cap: usize,
    len: usize,
    overflow: bool,
}

impl Out {
    fn push(&mut self, b: &[u8]) {
        if !self.buf.is_null() {
            if self.len + b.len() > self.cap {
                self.overflow = true;
                return;
            }
            // SAFETY: `buf` holds `cap` bytes and the bytes fit.
            unsafe { ptr::copy_nonoverlapping(b.as_ptr(), self.buf.add(self.len), b.len()) };
        }
        self.len += b.len();
    }
}

impl Write for Out {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

/// MET-009: `\` `"` and newline escaped, ill-formed UTF-8 bytes as U+FFFD.
fn escaped(o: &mut Out, s: &[u8]) {
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        match c {
            b'\\' => o.push(b"\\\\"),
            b'"' => o.push(b"\\\""),
            b'\n' => o.push(b"\\n"),
            0..=0x7f => o.push(&[c]),
            _ => {
                let n = match c {
                    0xc2..=0xdf => 2,
                    0xe0..=0xef => 3,
                    0xf0..=0xf4 => 4,
                    _ => 0,
                };
                if n > 0 && i + n <= s.len() && std::str::from_utf8(&s[i..i + n]).is_ok() {
                    o.push(&s[i..i + n]);
                    i += n;
                    continue;
                }
                o.push("\u{FFFD}".as_bytes());
            }
        }
        i += 1;
    }
}

/// MET-008: the shortest decimal that reads back, positional for
/// exponents -6 to 20 (with a digit after the point), else scientific.
fn number(o: &mut Out, v: f64) {
    if v.is_nan() {
        return o.push(b"NaN");
    }
    if v.is_infinite() {
        return o.push(if v > 0.0 { b"+Inf" } else { b"-Inf" });
    }
    let mut e = Msg::new();
    let _ = write!(e, "{:e}", v);
    let s = e.bytes();
    let at = s.iter().position(|&c| c == b'e').unwrap_or(s.len());
    let exp: i32 = std::str::from_utf8(&s[at + 1..])
        .ok()
        .and_then(|x| x.parse().ok())
        .unwrap_or(0);
    if (-6..=20).contains(&exp) {
        let mut p = Msg::new();
        let _ = write!(p, "{}", v);
        o.push(p.bytes());
        if !p.bytes().contains(&b'.') {
            o.push(b".0");
        }
    } else {
        o.push(s);
    }
}

enum Val {
    Counter(u64),
    Gauge(i64),
}

/// One metric of the output: a registered one, or a pool's.
struct Item<'a> {
    name: &'a [u8],
    help: &'a [u8],
    kind: c_int,
    attrs: &'a [(Vec<u8>, Vec<u8>)],
    labels: &'a [Vec<u8>],
    family: Option<&'a Metric>,
    single: Option<&'a Metric>,
    synth: Option<(u64, Val)>,
    size_class: Option<usize>,
}

fn labels(o: &mut Out, it: &Item, values: &[Vec<u8>], le: Option<f64>, size_class: Option<usize>) {
    let mut first = true;
    let mut sep = |o: &mut Out| {
        o.push(if first { b"{" } else { b"," });
        first = false;
    };
    for (k, v) in it.attrs.iter() {
        sep(o);
        o.push(k);
        o.push(b"=\"");
        escaped(o, v);
        o.push(b"\"");
    }
    for (k, v) in it.labels.iter().zip(values.iter()) {
        sep(o);
        o.push(k);
        o.push(b"=\"");
        escaped(o, v);
        o.push(b"\"");
    }
    if let Some(sc) = size_class {
        sep(o);
        let _ = write!(o, "size_class=\"{}\"", sc);
    }
    if let Some(b) = le {
        sep(o);
        o.push(b"le=\"");
        number(o, b);
        o.push(b"\"");
    }
    if !first {
        o.push(b"}");
    }
}

fn sample(o: &mut Out, it: &Item, m: Option<&Metric>, val: Option<&Val>, values: &[Vec<u8>]) {
    let name = it.name;
    match (it.kind, m, val) {
        (CW_METRIC_COUNTER, _, _) => {
            let n = match (m, val) {
                (Some(m), _) => m.counter.load(Ordering::Relaxed),
                (_, Some(Val::Counter(n))) => *n,
                _ => 0,
            };
            o.push(name);
            o.push(b"_total");
            labels(o, it, values, None, it.size_class);
            let _ = writeln!(o, " {}", n);
        }
        (CW_METRIC_GAUGE, _, _) => {
            let n = match (m, val) {
                (Some(m), _) => m.gauge.load(Ordering::Relaxed),
                (_, Some(Val::Gauge(n))) => *n,
                _ => 0,
            };
            o.push(name);
            labels(o, it, values, None, it.size_class);
            let _ = writeln!(o, " {}", n);
        }
        (_, Some(m), _) => {
            let count = m.count.load(Ordering::Relaxed);
            let sum = f64::from_bits(m.sum.load(Ordering::Relaxed));
            let sums = !(m.buckets.iter().any(|b| *b < 0.0) || sum < 0.0 || sum.is_nan());
            if sums {
                o.push(name);
                o.push(b"_sum");
                labels(o, it, values, None, None);
                o.push(b" ");
                number(o, sum);
                o.push(b"\n");
                o.push(name);
                o.push(b"_count");
                labels(o, it, values, None, None);
                let _ = writeln!(o, " {}", count);
            }
            let mut cum = 0u64;
            for (i, b) in m.buckets.iter().enumerate() {
                cum += m.hist[i].load(Ordering::Relaxed);
                o.push(name);
                o.push(b"_bucket");
                labels(o, it, values, Some(*b), None);
                let _ = writeln!(o, " {}", cum);
            }
            o.push(name);
            o.push(b"_bucket");
            labels(o, it, values, Some(f64::INFINITY), None);
            let _ = writeln!(o, " {}", count);
        }
        _ => {}
    }
}

fn kind_name(k: c_int) -> &'static str {
    match k {
        CW_METRIC_COUNTER => "counter",
        CW_METRIC_GAUGE => "gauge",
        _ => "histogram",
    }
}

const POOL_NAMES: [(&[u8], &[u8]); 2] = [
    (b"runtime_network_buffer_pool_buffer_pool_", b"network"),
    (b"runtime_storage_buffer_pool_buffer_pool_", b"storage"),
];

/// `cw_metrics_encode` (MET-006): the text, malloc'ed, or NULL.
pub fn encode(r: &mut Rt) -> *mut c_char {
    // Names of the synthesized series, kept alive for the items.
    let mut names: Vec<Vec<u8>> = Vec::new();
    let mut pool_rows: Vec<(usize, u64, u64, usize)> = Vec::new(); // (pool, created, exhausted, size)
    let mut oversized = [0u64; 2];
    for (pi, &p) in r.pools.iter().enumerate() {
        if p.is_null() {
            continue;
        }
        let mut ci = 0;
        loop {
            // SAFETY: an all-zero stats struct is valid.
            let mut st: cw_bufpool_stats = unsafe { std::mem::zeroed() };
            if pool::stats(p, ci, &mut st) != CW_OK {
                break;
            }
            oversized[pi] = st.oversized;
            // A row without memory is left out of this text: MET-019 lets a
            // pool's series that cannot be made at an encode appear at a later one.
            if (st.created > 0 || st.exhausted > 0) && pool_rows.try_reserve(1).is_ok() {
                pool_rows.push((pi, st.created, st.exhausted, st.size));
            }
            ci += 1;
        }
    }
    for (prefix, _) in POOL_NAMES.iter() {
        for suffix in [&b"created"[..], b"exhausted", b"oversized"] {
            let mut n = Vec::new();
            if n.try_reserve_exact(prefix.len() + suffix.len()).is_err()
                || names.try_reserve(1).is_err()
            {
                return ptr::null_mut();
            }
            n.extend_from_slice(prefix);
            n.extend_from_slice(suffix);
            names.push(n);
        }
    }
    let iterations = r.iterations;
    let list = match r.metrics.list.lock() {
        Ok(l) => l,
        Err(_) => return ptr::null_mut(),
    };
    let mut items: Vec<Item> = Vec::new();
    if items
        .try_reserve(list.len() + pool_rows.len() * 2 + 3)
        .is_err()
    {
        return ptr::null_mut();
    }
    for &m in list.iter() {
        // SAFETY: registered metrics are live under the lock.
        let m = unsafe { &*m };
        if m.role == Role::Registered && m.handles == 0 {
            continue;
        }
        let fam = m.is_family();
        items.push(Item {
            name: &m.name,
            help: &m.help,
            kind: m.kind,
            attrs: &m.attrs,
            labels: &m.labels,
            family: if fam { Some(m) } else { None },
            single: if fam { None } else { Some(m) },
            synth: None,
            size_class: None,
        });
    }
    items.push(Item {
        name: b"runtime_iterations",
        help: b"Total number of iterations",
        kind: CW_METRIC_COUNTER,
        attrs: &[],
        labels: &[],
        family: None,
        single: None,
        synth: Some((0, Val::Counter(iterations))),
        size_class: None,
    });
    for &(pi, created, exhausted, size) in pool_rows.iter() {
        items.push(Item {
            name: &names[pi * 3],
            help: b"Number of tracked buffers created for the pool",
            kind: CW_METRIC_GAUGE,
            attrs: &[],
            labels: &[],
            family: None,
            single: None,
            synth: Some((size as u64, Val::Gauge(created as i64))),
            size_class: Some(size),
        });
        items.push(Item {
            name: &names[pi * 3 + 1],
            help: b"Total number of failed allocations due to pool exhaustion",
            kind: CW_METRIC_COUNTER,
            attrs: &[],
            labels: &[],
            family: None,
            single: None,
            synth: Some((size as u64, Val::Counter(exhausted))),
            size_class: Some(size),
        });
    }
    for (pi, ov) in oversized.iter().enumerate() {
        if r.pools[pi].is_null() {
            continue;
        }
        items.push(Item {
            name: &names[pi * 3 + 2],
            help: b"Total number of oversized allocation requests",
            kind: CW_METRIC_COUNTER,
            attrs: &[],
            labels: &[],
            family: None,
            single: None,
            synth: Some((0, Val::Counter(*ov))),
            size_class: None,
        });
    }
    items.sort_unstable_by(|a, b| {
        a.name
            .cmp(b.name)
            .then_with(|| a.attrs.cmp(b.attrs))
            .then_with(|| {
                a.synth
                    .as_ref()
                    .map(|s| s.0)
                    .cmp(&b.synth.as_ref().map(|s| s.0))
            })
    });
    // Measure, then write into a buffer of that size; values updated by
    // other threads meanwhile can change the length: then measure again.
    let mut result = ptr::null_mut();
    for _ in 0..8 {
        let mut m = Out {
            buf: ptr::null_mut(),
            cap: 0,
            len: 0,
            overflow: false,
        };
        render(&items, &mut m);
        // SAFETY: malloc of the text and its NUL; the caller frees it.
        let p = unsafe { malloc(m.len + 1) } as *mut u8;
        if p.is_null() {
            break;
        }
        let mut o = Out {
            buf: p,
            cap: m.len,
            len: 0,
            overflow: false,
        };
        render(&items, &mut o);
        if o.overflow {
            // SAFETY: our own allocation, not handed out.
            unsafe { free(p as *mut c_void) };
            continue;
        }
        // SAFETY: `p` holds cap + 1 bytes.
        unsafe { *p.add(o.len) = 0 };
        result = p as *mut c_char;
        break;
    }
    drop(list);
    result
}

fn render(items: &[Item], o: &mut Out) {
    let o = &mut *o;
    let mut i = 0;
    while i < items.len() {
        let name = items[i].name;
        let mut j = i;
        let mut any = false;
        while j < items.len() && items[j].name == name {
            let it = &items[j];
            any |= match it.family {
                Some(f) => !f.children.is_empty(),
                None => true,
            };
            j += 1;
        }
        if any {
            o.push(b"# HELP ");
            o.push(name);
            o.push(b" ");
            escaped(o, items[i].help);
            o.push(b".\n# TYPE ");
            o.push(name);
            o.push(b" ");
            o.push(kind_name(items[i].kind).as_bytes());
            o.push(b"\n");
            for it in items[i..j].iter() {
                match (it.family, it.single, &it.synth) {
                    (Some(f), _, _) => {
                        for &c in f.children.iter() {
                            // SAFETY: children are live under the lock.
                            let c = unsafe { &*c };
                            sample(o, it, Some(c), None, &c.values);
                        }
                    }
                    (_, Some(m), _) => sample(o, it, Some(m), None, &[]),
                    (_, _, Some((_, v))) => sample(o, it, None, Some(v), &[]),
                    _ => {}
                }
            }
        }
        i = j;
    }
    o.push(b"# EOF\n");
}
