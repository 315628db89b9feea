// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The runtime's own metrics (MET-014, MET-015, STOR-028).
//!
//! Made when the run starts: the families `runtime_tasks_spawned`,
//! `runtime_tasks_running` and `runtime_task_polls`, labelled `name`,
//! `kind`, `execution`. A spawn finds (or makes) its three series before it
//! is admitted, so that a spawn whose series cannot be made is refused with
//! `CW_ERR_NOMEM` and counted nowhere (MET-019); a task takes its `running`
//! back once, at its first abort or its end. The storage counters are
//! registered by the run's first storage call, the network counters by
//! the first bind, dial or mock channel, all of a set or none, before the
//! call can succeed: a count never needs memory. `runtime_iterations` and the
//! buffer pools' series are read when encoding (`encode.rs`).

use super::registry::{self, Metric, Role};
use crate::ffi::*;
use crate::runtime::{Rt, Task};
use std::os::raw::c_int;
use std::ptr;

/// The series of one spawn: spawned, running and polls children.
#[derive(Clone, Copy)]
pub struct TaskSeries {
    pub spawned: *mut Metric,
    pub running: *mut Metric,
    pub polls: *mut Metric,
    /// Which of the three this spawn made (removed again if it fails).
    pub made: [bool; 3],
}

impl TaskSeries {
    pub fn none() -> TaskSeries {
        TaskSeries {
            spawned: ptr::null_mut(),
            running: ptr::null_mut(),
            polls: ptr::null_mut(),
            made: [false; 3],
        }
    }
}

fn internal(
    rt: *mut Rt,
    kind: c_int,
    name: &[u8],
    help: &[u8],
    labels: &[&[u8]],
) -> Option<*mut Metric> {
    let mut m = Metric::blank(rt, kind, Role::Internal);
    m.name.try_reserve_exact(name.len()).ok()?;
    m.name.extend_from_slice(name);
    m.help.try_reserve_exact(help.len()).ok()?;
    m.help.extend_from_slice(help);
    m.labels.try_reserve_exact(labels.len()).ok()?;
    for l in labels {
        let mut v = Vec::new();
        v.try_reserve_exact(l.len()).ok()?;
        v.extend_from_slice(l);
        m.labels.push(v);
    }
    let p = registry::make(m)?;
    // SAFETY: the live run; registration happens on its thread.
    let r = unsafe { &*rt };
    let mut list = r.metrics.list.lock().ok()?;
    if list.try_reserve(1).is_err() {
        drop(list);
        // SAFETY: the fresh metric is unlinked.
        unsafe { registry::free_metric(p) };
        return None;
    }
    list.push(p);
    Some(p)
}

const TASK_LABELS: [&[u8]; 3] = [b"name", b"kind", b"execution"];

/// The run's fixed metrics (and the spent one); `None` without memory.
pub fn start(r: &mut Rt) -> Option<()> {
    let rt: *mut Rt = r;
    r.spent_metric = crate::mem::try_raw(Metric::blank(rt, CW_METRIC_COUNTER, Role::Spent))?;
    r.m_spawned = internal(
        rt,
        CW_METRIC_COUNTER,
        b"runtime_tasks_spawned",
        b"Total number of tasks spawned",
        &TASK_LABELS,
    )?;
    r.m_running = internal(
        rt,
        CW_METRIC_GAUGE,
        b"runtime_tasks_running",
        b"Number of tasks currently running",
        &TASK_LABELS,
    )?;
    r.m_polls = internal(
        rt,
        CW_METRIC_COUNTER,
        b"runtime_task_polls",
        b"Total number of task polls",
        &TASK_LABELS,
    )?;
    Some(())
}

pub fn execution_name(exec: c_int) -> &'static [u8] {
    match exec {
        1 => b"SharedBlocking",
        2 => b"Dedicated",
        _ => b"Shared",
    }
}

/// Find or make the three series of a spawn; on failure the series made
/// here are removed again, so nothing is counted (MET-019).
pub fn task_series(r: &mut Rt, name: &[u8], root: bool, exec: c_int) -> Option<TaskSeries> {
    let kind: &[u8] = if root { b"Root" } else { b"Task" };
    let values = [name, kind, execution_name(exec)];
    let fams = [r.m_spawned, r.m_running, r.m_polls];
    let _guard = r.metrics.list.lock().ok()?;
    let mut got = [ptr::null_mut(); 3];
    let mut made = [false; 3];
    for i in 0..3 {
        match registry::child_locked(fams[i], &values) {
            Some((c, new)) => {
                got[i] = c;
                made[i] = new;
            }
            None => {
                for j in 0..i {
                    if made[j] {
                        registry::remove_child_locked(fams[j], &values);
                    }
                }
                return None;
            }
        }
    }
    Some(TaskSeries {
        spawned: got[0],
        running: got[1],
        polls: got[2],
        made,
    })
}

/// Remove the series a failed spawn made and did not count.
pub fn forget(r: &mut Rt, s: &TaskSeries) {
    let _guard = match r.metrics.list.lock() {
        Ok(g) => g,
        Err(_) => return,
    };
    let fams = [r.m_spawned, r.m_running, r.m_polls];
    let kids = [s.spawned, s.running, s.polls];
    for i in 0..3 {
        if !s.made[i] {
            continue;
        }
        // SAFETY: a child of a live family, under the lock.
        let values = unsafe { &(*kids[i]).values };
        let v: [&[u8]; 3] = [&values[0], &values[1], &values[2]];
        registry::remove_child_locked(fams[i], &v);
    }
}

/// The task leaves `running`, once (MET-014).
pub fn task_stopped(t: *mut Task) {
    // SAFETY: a live task record.
    unsafe {
        if !(*t).series.running.is_null() {
            (*(*t).series.running).gauge_add(-1);
            (*t).series.running = ptr::null_mut();
        }
    }
}

/// One resumption (MET-015).
pub fn task_polled(t: *mut Task) {
    // SAFETY: a live task record.
    unsafe {
        if !(*t).series.polls.is_null() {
            (*(*t).series.polls).counter_add(1);
        }
    }
}

/// Register the runtime's metrics `specs` (kind, name, help; no labels) all
/// or none: a set made in part would list a series nothing counts on, and
/// the next try a second series of the same name (MET-019).
fn internal_set<const N: usize>(
    rt: *mut Rt,
    specs: [(c_int, &[u8], &[u8]); N],
) -> Option<[*mut Metric; N]> {
    let mut made = [ptr::null_mut(); N];
    for (i, (kind, name, help)) in specs.iter().enumerate() {
        match internal(rt, *kind, name, help, &[]) {
            Some(p) => made[i] = p,
            None => {
                // SAFETY: the live run; registration happens on its thread.
                let r = unsafe { &*rt };
                if let Ok(mut list) = r.metrics.list.lock() {
                    list.retain(|p| !made[..i].contains(p));
                    for &p in &made[..i] {
                        // SAFETY: made above and unlinked now; no handle on
                        // it was given out.
                        unsafe { registry::free_metric(p) };
                    }
                }
                return None;
            }
        }
    }
    Some(made)
}

/// The storage metrics (STOR-028), registered by the first storage call.
pub struct StorageMetrics {
    pub open_blobs: *mut Metric,
    pub reads: *mut Metric,
    pub read_bytes: *mut Metric,
    pub writes: *mut Metric,
    pub write_bytes: *mut Metric,
    pub syncs: *mut Metric,
    pub resizes: *mut Metric,
}

/// The storage metrics of the run, made at its first storage call; `None`
/// when they could not be made (the call is then refused with
/// `CW_ERR_NOMEM`, so that no later count needs memory).
pub fn storage(r: &mut Rt) -> Option<&StorageMetrics> {
    if r.m_storage.is_none() {
        let rt: *mut Rt = r;
        let [open_blobs, reads, read_bytes, writes, write_bytes, syncs, resizes] = internal_set(
            rt,
            [
                (
                    CW_METRIC_GAUGE,
                    b"runtime_open_blobs",
                    b"Number of open blobs",
                ),
                (
                    CW_METRIC_COUNTER,
                    b"runtime_storage_reads",
                    b"Total number of disk reads",
                ),
                (
                    CW_METRIC_COUNTER,
                    b"runtime_storage_read_bytes",
                    b"Total amount of data read",
                ),
                (
                    CW_METRIC_COUNTER,
                    b"runtime_storage_writes",
                    b"Total number of disk writes",
                ),
                (
                    CW_METRIC_COUNTER,
                    b"runtime_storage_write_bytes",
                    b"Total amount of data written",
                ),
                (
                    CW_METRIC_COUNTER,
                    b"runtime_storage_syncs",
                    b"Total number of disk syncs",
                ),
                (
                    CW_METRIC_COUNTER,
                    b"runtime_storage_resizes",
                    b"Total number of blob resizes",
                ),
            ],
        )?;
        r.m_storage = Some(StorageMetrics {
            open_blobs,
            reads,
            read_bytes,
            writes,
            write_bytes,
            syncs,
            resizes,
        });
    }
    r.m_storage.as_ref()
}

/// Count on a storage metric; needs no memory (the metrics were made by
/// the run's first storage call that was not refused).
pub fn storage_count(r: &mut Rt, pick: fn(&StorageMetrics) -> *mut Metric, n: i64) {
    if let Some(s) = r.m_storage.as_ref() {
        let m = pick(s);
        // SAFETY: internal metrics live until the run ends.
        let m = unsafe { &*m };
        if m.kind == CW_METRIC_GAUGE {
            m.gauge_add(n);
        } else {
            m.counter_add(n as u64);
        }
    }
}

/// The network counters (NET-025), registered by the first successful
/// bind or dial, or the first mock channel.
pub struct NetworkMetrics {
    pub inbound_connections: *mut Metric,
    pub outbound_connections: *mut Metric,
    pub inbound_bandwidth: *mut Metric,
    pub outbound_bandwidth: *mut Metric,
}

/// Register the network counters, at 0, all four or none (NET-025: by the
/// first successful bind or dial, or the first mock channel); `false`
/// without memory, and the call is then refused with `CW_ERR_NOMEM`
/// (NET-034), so that no later count needs memory.
pub fn network_register(r: &mut Rt) -> bool {
    if r.m_network.is_none() {
        let rt: *mut Rt = r;
        let c = CW_METRIC_COUNTER;
        let made = internal_set(
            rt,
            [
                (
                    c,
                    b"runtime_inbound_connections",
                    b"Number of connections created by dialing us",
                ),
                (
                    c,
                    b"runtime_outbound_connections",
                    b"Number of connections created by dialing others",
                ),
                (
                    c,
                    b"runtime_inbound_bandwidth",
                    b"Bandwidth used by receiving data from others",
                ),
                (
                    c,
                    b"runtime_outbound_bandwidth",
                    b"Bandwidth used by sending data to others",
                ),
            ],
        );
        let [inbound_connections, outbound_connections, inbound_bandwidth, outbound_bandwidth] =
            match made {
                Some(m) => m,
                None => return false,
            };
        r.m_network = Some(NetworkMetrics {
            inbound_connections,
            outbound_connections,
            inbound_bandwidth,
            outbound_bandwidth,
        });
    }
    true
}

/// Count on a network counter; needs no memory (a listener, a connection
/// or a mock channel exists only once the counters do).
pub fn network_count(r: &mut Rt, pick: fn(&NetworkMetrics) -> *mut Metric, n: i64) {
    if let Some(m) = r.m_network.as_ref() {
        // SAFETY: internal metrics live until the run ends.
        unsafe { (*pick(m)).counter_add(n as u64) };
    }
}
