// SPDX-License-Identifier: Apache-2.0 OR MIT
//! One run: its tasks, its ready queue, its clock and its scheduler.
//!
//! Shape. A run lives on the thread that called `cw_start`. The scheduler
//! loop (spec/11-deterministic.md, "One run") runs on that thread's own
//! stack and resumes one task at a time on the task's stack (`coro.rs`);
//! a task gives control back by switching to the scheduler's stack. Because
//! exactly one of them runs at any instant, the run's state (`Rt`) is plain
//! single-threaded data reached through raw pointers; only wakers
//! (`waker.rs`) may be touched from other threads.
//!
//! Unwinding. An aborted or panicking task must run its cleanup handlers
//! and end at its suspension point (TASK-002, PAN-004). Unwinding a Rust
//! panic through the C frames of the task function is undefined on the
//! toolchains this crate supports (no `extern "C-unwind"` before 1.71), and
//! `longjmp` over Rust frames is no better. So nothing unwinds: the task
//! runs its handlers itself, on its own stack, from the suspension point
//! (or from the `panic` entry), records its end, and switches to the
//! scheduler for the last time. Its stack, with the abandoned C and Rust
//! frames on it, is simply unmapped. The frames of this crate that can be
//! abandoned this way own nothing that needs dropping (no borrow, no
//! allocation, no lock), so nothing leaks.
//!
//! Memory. Every allocation a run makes is fallible (`mem.rs`); what each
//! call does without memory is the spent object or error its rule names.
//! The objects that a failure needs (the spent context and signal, the
//! handle of refused spawns) are made before the root runs.

use crate::audit;
use crate::buf::pool::{self, Pool};
use crate::coro::{self, Stack};
use crate::ffi::*;
use crate::handle::Handle;
use crate::mem::{try_push, try_raw};
use crate::metrics::registry::{Metric, Registry};
use crate::metrics::series::{self, StorageMetrics, TaskSeries};
use crate::msg::{Lossy, Msg};
use crate::obj::{self, alloc_obj, Header};
use crate::rng::Rng;
use crate::select;
use crate::signal::{Signal, Stop};
use crate::storage::store::Store;
use crate::tree::{self, Ctx, Node};
use crate::waker::{self, Hub, WakerCell};
use std::cell::Cell;
use std::collections::VecDeque;
use std::fmt::Write;
use std::os::raw::{c_int, c_void};
use std::ptr;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum State {
    /// Spawned, never resumed.
    New,
    Running,
    Suspended,
    Done,
}

pub struct Task {
    pub id: u64,
    pub rt: *mut Rt,
    pub func: cw_task_fn,
    pub arg: *mut c_void,
    pub state: State,
    pub queued: bool,
    pub notified: bool,
    /// Suspended in `cw_park`.
    pub parked: bool,
    /// In the ready queue because a waker woke its park (DET-020).
    pub park_woken: bool,
    pub aborted: bool,
    pub unwinding: bool,
    pub in_cleanup: bool,
    pub cleanup: *mut cw_cleanup,
    pub sp: *mut u8,
    pub stack: Option<Stack>,
    pub handle: *mut Handle,
    /// The task's own context, until it consumes or the run releases it.
    pub ctx: *mut Ctx,
    /// The node the task is registered on (its owner, 03-context.md).
    pub owner: *mut Node,
    pub reg_prev: *mut Task,
    pub reg_next: *mut Task,
    /// The label of the context it was spawned from, without NUL.
    pub label: Vec<u8>,
    pub waker: *mut WakerCell,
    /// Its series of the runtime's task metrics (MET-014, MET-015).
    pub series: TaskSeries,
    /// The links of the run's list of task records, in id order.
    pub all_prev: *mut Task,
    pub all_next: *mut Task,
}

/// One armed alarm of a sleep wait.
pub struct Alarm {
    pub time: u64,
    pub seq: u64,
    pub task: *mut Task,
    pub wait: *mut cw_wait,
    /// A stream's own alarm (NET-027): delivers, wakes no task.
    pub pipe: *mut crate::net::core::Pipe,
}

pub struct Rt {
    pub cfg: cw_config,
    pub clock: u64,
    pub deadline: Option<u64>,
    pub rng: Rng,
    pub audit: bool,
    pub digest: [u8; 32],
    pub events: u64,
    /// The task records not yet freed, in id order (a record is freed
    /// once its task ended and nothing names it, RUN-009).
    pub tasks: TaskList,
    pub next_task_id: u64,
    pub ready: VecDeque<*mut Task>,
    pub batch: VecDeque<*mut Task>,
    pub alarms: Vec<Alarm>,
    /// Room kept in `alarms` for the streams' own alarms: one slot for each
    /// live pipe whose alarm is not armed, so that arming one never needs
    /// memory (a send that went in flight must arrive, NET-034).
    pub pipe_alarm_room: usize,
    pub alarm_seq: u64,
    pub current: *mut Task,
    pub sched_sp: *mut u8,
    pub objects: *mut Header,
    pub nodes: Vec<*mut Node>,
    pub root: *mut Task,
    pub root_done: bool,
    pub root_value: *mut c_void,
    pub failed: Option<Msg>,
    pub ending: bool,
    pub stop: Stop,
    pub spent_ctx: *mut Ctx,
    pub nomem_handle: *mut Handle,
    pub spent_signal: *mut Signal,
    pub hub: *mut Hub,
    pub dead_stack: Option<Stack>,
    pub iterations: u64,
    /// The run's network and storage buffer pools (BUF-026).
    pub pools: [*mut Pool; 2],
    /// The run's memory storage (17-storage.md).
    pub store: Store,
    /// Whether unsynced storage changes are logged for a crash (STOR-033).
    pub logging: bool,
    /// The run's metric registry and the runtime's own metrics (16-metrics.md).
    pub metrics: Registry,
    pub spent_metric: *mut Metric,
    pub m_spawned: *mut Metric,
    pub m_running: *mut Metric,
    pub m_polls: *mut Metric,
    pub m_storage: Option<StorageMetrics>,
    pub m_network: Option<crate::metrics::series::NetworkMetrics>,
    /// The run's simulated network (18-network.md).
    pub net: crate::net::core::Net,
}

/// The run's task records, linked through `all_prev`/`all_next`.
pub struct TaskList {
    pub head: *mut Task,
    pub tail: *mut Task,
    pub len: usize,
}

impl TaskList {
    pub const fn new() -> TaskList {
        TaskList {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
            len: 0,
        }
    }

    fn push(&mut self, t: *mut Task) {
        // SAFETY: `t` is a fresh record, linked nowhere; the tail is live.
        unsafe {
            (*t).all_prev = self.tail;
            (*t).all_next = ptr::null_mut();
            if self.tail.is_null() {
                self.head = t;
            } else {
                (*self.tail).all_next = t;
            }
        }
        self.tail = t;
        self.len += 1;
    }

    fn unlink(&mut self, t: *mut Task) {
        // SAFETY: `t` is a linked record; its neighbours are live.
        unsafe {
            let (p, n) = ((*t).all_prev, (*t).all_next);
            if p.is_null() {
                self.head = n;
            } else {
                (*p).all_next = n;
            }
            if n.is_null() {
                self.tail = p;
            } else {
                (*n).all_prev = p;
            }
            (*t).all_prev = ptr::null_mut();
            (*t).all_next = ptr::null_mut();
        }
        self.len -= 1;
    }

    /// The records in id order; the loop body must not free the next one.
    pub fn iter(&self) -> TaskIter {
        TaskIter { cur: self.head }
    }
}

pub struct TaskIter {
    cur: *mut Task,
}

impl Iterator for TaskIter {
    type Item = *mut Task;
    fn next(&mut self) -> Option<*mut Task> {
        let t = self.cur;
        if t.is_null() {
            return None;
        }
        // SAFETY: linked records are live; the next link is read before
        // the caller may free `t`.
        self.cur = unsafe { (*t).all_next };
        Some(t)
    }
}

thread_local! {
    /// The run whose tasks this thread is executing (null outside runs).
    pub static CURRENT: Cell<*mut Rt> = const { Cell::new(ptr::null_mut()) };
}

/// End the process with a message (00-conventions.md, "When the process
/// ends").
pub fn die(what: &[u8]) -> ! {
    let mut m = Msg::from_bytes(b"cwrt-rust: ");
    m.push(what);
    m.push(b"\n");
    eprint!("{}", Lossy(m.bytes()));
    std::process::abort()
}

/// The run of `rt` must be executing one of its tasks on this thread, for a
/// call that suspends (PAN-006); otherwise the process ends.
pub fn require_task(rt: *mut Rt, call: &str) -> *mut Task {
    let here = CURRENT.with(|c| c.get());
    // SAFETY: `rt` is only dereferenced when it is the run this thread is
    // executing, hence alive.
    if here.is_null() || here != rt || unsafe { (*rt).current.is_null() } {
        let mut m = Msg::new();
        let _ = write!(m, "{} called outside a task of its runtime (PAN-006)", call);
        die(m.bytes());
    }
    // SAFETY: as above.
    unsafe { (*rt).current }
}

/// Put a suspended task in the ready queue (11-deterministic.md: a task
/// appears there at most once). Capacity is reserved at spawn, so this
/// never allocates.
pub fn enqueue(rt: &mut Rt, t: *mut Task) {
    // SAFETY: `t` is a task of `rt`, alive until the run ends.
    unsafe {
        if rt.ending || (*t).queued || (*t).state == State::Done {
            return;
        }
        (*t).queued = true;
    }
    rt.ready.push_back(t);
}

/// Wake a task waiting on an object: it runs again if it is suspended.
pub fn wake_task(rt: &mut Rt, t: *mut Task) {
    // SAFETY: `t` is a task of `rt`.
    if unsafe { (*t).state } == State::Suspended {
        enqueue(rt, t);
    }
}

/// A waker's wake (TASK-009, DET-020): a suspended task is queued; a
/// running one, or one queued by its spawn, a yield or an object, is only
/// marked notified; one queued because its park was woken counts it for
/// that park.
pub fn wake_by_waker(rt: &mut Rt, t: *mut Task) {
    // SAFETY: `t` is a task of `rt` that has not ended.
    unsafe {
        if (*t).state == State::Done {
            return;
        }
        if (*t).state == State::Suspended && !(*t).queued {
            enqueue(rt, t);
            (*t).park_woken = (*t).parked;
        } else if !((*t).queued && (*t).park_woken) {
            (*t).notified = true;
        }
    }
}

/// Give control back to the scheduler until someone queues `t` again.
pub fn suspend(rt: *mut Rt, t: *mut Task) {
    // SAFETY: `t` is the running task of `rt` on this very stack; the
    // scheduler's stack pointer was saved when it resumed us. No borrow of
    // `*rt` is held across the switch.
    unsafe {
        (*t).state = State::Suspended;
        let to = (*rt).sched_sp;
        coro::switch(&mut (*t).sp, to);
    }
}

/// Run the handlers `t` registered and did not pop, newest first (PAN-004).
pub fn run_cleanups(t: *mut Task) {
    loop {
        // SAFETY: `t` is the running task; its handler records live in its
        // own frames, which are still there (nothing has unwound).
        unsafe {
            let top = (*t).cleanup;
            if top.is_null() {
                break;
            }
            (*t).cleanup = (*top).prev;
            (*t).in_cleanup = true;
            if let Some(f) = (*top).func {
                f((*top).arg);
            }
            (*t).in_cleanup = false;
        }
    }
}

/// End the running task `t` at its suspension point: handlers, then the end
/// with `CW_ERR_CLOSED` (TASK-002). Never returns.
pub fn unwind_now(rt: *mut Rt, t: *mut Task) -> ! {
    // SAFETY: `t` is the running task of `rt`.
    unsafe { (*t).unwinding = true };
    run_cleanups(t);
    finish(rt, t, CW_ERR_CLOSED, ptr::null_mut())
}

/// Panic the running task with `msg` (06-panics.md). Never returns.
pub fn panic_task(rt: *mut Rt, t: *mut Task, msg: &[u8]) -> ! {
    // SAFETY: `t` is the running task of `rt`.
    unsafe {
        if (*t).in_cleanup {
            let mut m = Msg::from_bytes(b"panic in a cleanup handler: ");
            m.push(msg);
            die(m.bytes());
        }
        (*t).unwinding = true;
    }
    run_cleanups(t);
    // SAFETY: as above; the message is copied into the run.
    unsafe {
        let r = &mut *rt;
        if (t == r.root || !r.cfg.catch_panics) && r.failed.is_none() {
            r.failed = Some(Msg::from_bytes(msg));
        }
    }
    finish(rt, t, CW_ERR_EXITED, ptr::null_mut())
}

/// Panic whichever task of `rt` is running (misuse detected by an entry).
pub fn panic_current(rt: *mut Rt, msg: &[u8]) -> ! {
    let here = CURRENT.with(|c| c.get());
    // SAFETY: `rt` is dereferenced only when it is this thread's run.
    if here != rt || unsafe { (*rt).current.is_null() } {
        let mut m = Msg::from_bytes(b"panic outside any task: ");
        m.push(msg);
        die(m.bytes());
    }
    // SAFETY: as above.
    let t = unsafe { (*rt).current };
    panic_task(rt, t, msg)
}

/// Record the end of `t` (its handle, its supervision, its context).
/// Runs on any stack; does not switch.
pub fn complete_task(rt: &mut Rt, t: *mut Task, result: c_int, value: *mut c_void) {
    // SAFETY: `t` is a task of `rt` that has not ended; its handle, context,
    // owner node and waker cell are alive (each is freed only through here
    // or at the end of the run).
    unsafe {
        (*t).state = State::Done;
        (*t).queued = false;
        series::task_stopped(t);
        let h = (*t).handle;
        if !h.is_null() {
            (*t).handle = ptr::null_mut();
            (*h).task = ptr::null_mut();
            (*h).done = true;
            (*h).result = result;
            (*h).value = value;
            select::wake_list(rt, &mut (*h).waiters);
            if (*h).released {
                obj::free_obj(rt, h as *mut Header);
            }
        }
        let owner = (*t).owner;
        tree::abort_subtree(rt, owner);
        tree::unregister(t);
        if !owner.is_null() {
            tree::release_node(rt, owner);
        }
        let c = (*t).ctx;
        if !c.is_null() {
            (*t).ctx = ptr::null_mut();
            (*c).task = ptr::null_mut();
            tree::free_ctx(rt, c);
        }
        let w = (*t).waker;
        if !w.is_null() {
            (*t).waker = ptr::null_mut();
            waker::task_gone(w);
        }
        if t == rt.root {
            rt.root_done = true;
            rt.root_value = value;
        }
    }
}

/// Give back the record of a task that ended (RUN-009), once nothing names
/// it: not running, not in the ready queue, not the root (whose end ends
/// the run; it is freed with the run). Its handle, context, node, waker
/// and alarms were let go by `complete_task` and its last select.
pub fn free_ended(rt: &mut Rt, t: *mut Task) {
    // SAFETY: `t` is a record of `rt`, linked in its list.
    unsafe {
        if (*t).state != State::Done || (*t).queued || t == rt.root || t == rt.current {
            return;
        }
        rt.tasks.unlink(t);
        drop(Box::from_raw(t));
    }
}

/// End the running task and leave its stack for good.
pub fn finish(rt: *mut Rt, t: *mut Task, result: c_int, value: *mut c_void) -> ! {
    // SAFETY: `t` is the running task of `rt`; we are on its stack, which
    // the scheduler frees (`dead_stack`) only after this switch. Nothing
    // here holds a borrow across the switch.
    unsafe {
        complete_task(&mut *rt, t, result, value);
        (*rt).dead_stack = (*t).stack.take();
        let to = (*rt).sched_sp;
        let mut dummy: *mut u8 = ptr::null_mut();
        coro::switch(&mut dummy, to);
    }
    die(b"a finished task was resumed")
}

/// The first frame of every task stack.
unsafe extern "C" fn task_entry(arg: usize) {
    let t = arg as *mut Task;
    // SAFETY: `arg` is the task record `spawn` prepared this stack for; the
    // scheduler resumes it as the running task.
    let (rt, f, a, c) = unsafe { ((*t).rt, (*t).func, (*t).arg, (*t).ctx) };
    // SAFETY: calling the program's task function with its context, as
    // TASK-001 says, on a stack aligned for C (coro.rs).
    let v = unsafe { f(c as *mut cw_ctx, a) };
    finish(rt, t, CW_OK, v)
}

/// Switch from the scheduler into `t` until it suspends or ends.
fn resume(rt: *mut Rt, t: *mut Task) {
    // SAFETY: called on the scheduler's stack; `t` is a live, suspended (or
    // new, prepared) task of `rt`. No borrow of `*rt` spans the switch.
    unsafe {
        (*rt).current = t;
        (*t).state = State::Running;
        (*t).park_woken = false;
        let to = (*t).sp;
        coro::switch(&mut (*rt).sched_sp, to);
        (*rt).current = ptr::null_mut();
        drop((*rt).dead_stack.take());
    }
}

/// A new task record for `func(ctx, arg)`, registered nowhere yet, with its
/// stack, waker and queue capacity; `None` without memory (TASK-011).
pub fn new_task(
    rt: &mut Rt,
    func: cw_task_fn,
    arg: *mut c_void,
    label: &[u8],
) -> Option<*mut Task> {
    let mut lab = Vec::new();
    lab.try_reserve_exact(label.len()).ok()?;
    lab.extend_from_slice(label);
    rt.ready.try_reserve(rt.tasks.len + 1).ok()?;
    rt.batch.try_reserve(rt.tasks.len + 1).ok()?;
    let mut stack = Stack::new(rt.cfg.stack_size, rt.cfg.stack_guard)?;
    let id = rt.next_task_id;
    let cell = waker::new_cell(rt)?;
    let t = match try_raw(Task {
        id,
        rt,
        func,
        arg,
        state: State::New,
        queued: false,
        notified: false,
        parked: false,
        park_woken: false,
        aborted: false,
        unwinding: false,
        in_cleanup: false,
        cleanup: ptr::null_mut(),
        sp: ptr::null_mut(),
        stack: None,
        handle: ptr::null_mut(),
        ctx: ptr::null_mut(),
        owner: ptr::null_mut(),
        reg_prev: ptr::null_mut(),
        reg_next: ptr::null_mut(),
        label: lab,
        waker: cell,
        series: TaskSeries::none(),
        all_prev: ptr::null_mut(),
        all_next: ptr::null_mut(),
    }) {
        Some(t) => t,
        None => {
            waker::task_gone(cell);
            return None;
        }
    };
    let sp = stack.prepare(task_entry, t as usize);
    // SAFETY: `t` and `cell` were just allocated and are ours.
    unsafe {
        (*t).sp = sp;
        (*t).stack = Some(stack);
        (*cell).task = t;
    }
    rt.tasks.push(t);
    rt.next_task_id += 1;
    Some(t)
}

/// Why a configuration is invalid (RUN-002), or the normalized copy.
fn read_config(cfg: *const cw_config) -> Result<cw_config, &'static str> {
    let mut c = crate::config::defaults();
    if cfg.is_null() {
        return Ok(c);
    }
    // SAFETY: the caller's struct holds at least `size` bytes (that is what
    // the field means); only that much of it is read.
    let size = unsafe { (*cfg).size } as usize;
    if size < crate::config::ABI_1_0_SIZE {
        return Err("invalid configuration: size is smaller than the ABI 1.0 cw_config");
    }
    let n = size.min(std::mem::size_of::<cw_config>());
    // SAFETY: copying the first `n <= size` bytes of the caller's struct
    // over a complete default struct of the same layout.
    unsafe {
        ptr::copy_nonoverlapping(cfg as *const u8, &mut c as *mut cw_config as *mut u8, n);
    }
    c.size = std::mem::size_of::<cw_config>() as u32;
    crate::config::validate(&c)?;
    Ok(c)
}

fn set_message(out: &mut cw_run_result, m: &[u8]) {
    let n = m.len().min(out.message.len() - 1);
    for (d, s) in out.message.iter_mut().zip(m[..n].iter()) {
        *d = *s as _;
    }
    out.message[n] = 0;
}

fn free_run(rt: *mut Rt) {
    // SAFETY: the run is over: no task runs, nothing refers to its objects
    // except wakers, which only keep their own cells (and the hub) alive.
    unsafe {
        let r = &mut *rt;
        for t in r.tasks.iter() {
            let w = (*t).waker;
            if !w.is_null() {
                waker::task_gone(w);
            }
            drop(Box::from_raw(t));
        }
        r.tasks = TaskList::new();
        obj::free_all(r);
        for &n in r.nodes.iter() {
            drop(Box::from_raw(n));
        }
        r.nodes.clear();
        if !r.spent_metric.is_null() {
            drop(Box::from_raw(r.spent_metric));
        }
        waker::hub_close(r.hub);
        for p in r.pools.iter() {
            if !p.is_null() {
                pool::release(*p);
            }
        }
        drop(Box::from_raw(rt));
    }
}

/// The run's fixed objects: the spent context, signal and refused handle,
/// and the root task with its context and nodes.
fn prepare(rt: *mut Rt, root: cw_task_fn, arg: *mut c_void) -> Option<()> {
    // SAFETY: `rt` was just allocated and is not shared yet.
    let r = unsafe { &mut *rt };
    r.hub = waker::new_hub()?;
    r.pools[0] = pool::new(&crate::table::TABLE.0, &r.cfg.network_buffer_pool).ok()?;
    r.pools[1] = pool::new(&crate::table::TABLE.0, &r.cfg.storage_buffer_pool).ok()?;
    r.spent_ctx = tree::new_spent_ctx(r)?;
    r.nomem_handle = alloc_obj(r, Handle::done(rt, CW_ERR_NOMEM, ptr::null_mut()))?;
    r.spent_signal = alloc_obj(r, Signal::spent(rt))?;
    series::start(r)?;
    let root_series = series::task_series(r, b"", true, CW_EXEC_SHARED)?;
    let top = tree::new_node(r, ptr::null_mut())?;
    let node = tree::new_node(r, top)?;
    let ctx = tree::new_ctx(r, node, b"")?;
    let t = new_task(r, root, arg, b"")?;
    // SAFETY: the series were just found or made.
    unsafe {
        (*root_series.spawned).counter_add(1);
        (*root_series.running).gauge_add(1);
        (*t).series = root_series;
    }
    // SAFETY: fresh objects of this run.
    unsafe {
        tree::register(top, t);
        (*t).ctx = ctx;
        (*ctx).task = t;
    }
    r.root = t;
    enqueue(r, t);
    Some(())
}

enum End {
    Status(c_int, Msg),
}

/// The scheduler loop of 11-deterministic.md, steps 2 to 8.
fn schedule(rt: *mut Rt) -> End {
    loop {
        // Steps 2-4, on a short borrow at a time: resumed tasks use `*rt`.
        // SAFETY: single-threaded access between switches.
        unsafe {
            let r = &mut *rt;
            if let Some(d) = r.deadline {
                if r.clock >= d {
                    return End::Status(CW_ERR_RUN_TIMEOUT, Msg::from_bytes(b"runtime timeout"));
                }
            }
            std::mem::swap(&mut r.ready, &mut r.batch);
            let n = r.batch.len();
            if n > 1 {
                let mut i = n - 1;
                while i >= 1 {
                    let j = r.rng.below(i as u64 + 1) as usize;
                    r.batch.swap(i, j);
                    i -= 1;
                }
            }
        }
        let mut k = 0;
        loop {
            // SAFETY: as above; no borrow is held across `resume`.
            let t = unsafe {
                let r = &mut *rt;
                if k >= r.batch.len() {
                    break;
                }
                r.batch[k]
            };
            k += 1;
            // SAFETY: `t` is a task of this run.
            unsafe {
                (*t).queued = false;
                if (*t).state == State::Done {
                    continue;
                }
                audit::process_task(&mut *rt, t);
                series::task_polled(t);
                if (*t).state == State::New && (*t).aborted {
                    // A task aborted before it first ran ends without running.
                    complete_task(&mut *rt, t, CW_ERR_CLOSED, ptr::null_mut());
                    drop((*t).stack.take());
                } else {
                    resume(rt, t);
                }
                // The batch is not read at `k - 1` again.
                free_ended(&mut *rt, t);
                let r = &*rt;
                if r.failed.is_some() || r.root_done {
                    break;
                }
            }
        }
        // SAFETY: back on the scheduler with no task running.
        let r = unsafe { &mut *rt };
        r.batch.clear();
        if let Some(m) = r.failed {
            return End::Status(CW_ERR_PANICKED, m);
        }
        if r.root_done {
            return End::Status(CW_OK, Msg::new());
        }
        match r.clock.checked_add(r.cfg.cycle) {
            Some(c) => r.clock = c,
            None => {
                r.clock = u64::MAX;
                return End::Status(CW_ERR_RUN_TIMEOUT, Msg::from_bytes(b"runtime timeout"));
            }
        }
        if let Some(end) = step7(r) {
            return end;
        }
        r.iterations += 1;
    }
}

/// Step 7: wait for something to be ready, moving the clock to alarms.
fn step7(r: &mut Rt) -> Option<End> {
    loop {
        waker::drain(r);
        if r.ready.is_empty() {
            if let Some(a) = r.alarms.first() {
                if a.time > r.clock {
                    r.clock = a.time;
                }
            }
        }
        if let Some(d) = r.deadline {
            if r.clock >= d {
                return Some(End::Status(
                    CW_ERR_RUN_TIMEOUT,
                    Msg::from_bytes(b"runtime timeout"),
                ));
            }
        }
        while !r.alarms.is_empty() && r.alarms[0].time <= r.clock {
            let a = r.alarms.remove(0);
            if !a.pipe.is_null() {
                // Its slot is the pipe's room again.
                r.pipe_alarm_room += 1;
                crate::net::core::pipe_due(r, a.pipe);
                continue;
            }
            // SAFETY: an armed alarm's wait lives in the frame of its
            // suspended task (select disarms before it returns).
            unsafe { (*a.wait).link[3] = ptr::null_mut() };
            wake_task(r, a.task);
        }
        if !r.ready.is_empty() {
            return None;
        }
        if r.alarms.is_empty() {
            // DET-006: a stall, even while a thread outside the run holds a
            // waker of a blocked task (its wake is not part of the schedule).
            return Some(End::Status(CW_ERR_STALLED, stall_message(r)));
        }
    }
}

fn stall_message(r: &Rt) -> Msg {
    let mut m = Msg::from_bytes(b"runtime stalled: no task can make progress; blocked:");
    let mut named = 0usize;
    let mut more = 0usize;
    for t in r.tasks.iter() {
        // SAFETY: linked task records are live.
        let t = unsafe { &*t };
        if t.state == State::Done {
            continue;
        }
        if named == 16 {
            more += 1;
            continue;
        }
        m.push(b" ");
        if t.label.is_empty() {
            m.push(b"root");
        } else {
            m.push(&t.label);
        }
        let _ = write!(m, "#{}", t.id);
        named += 1;
    }
    if more > 0 {
        let _ = write!(m, " (and {} more)", more);
    }
    m
}

/// At the end of a run, unwind every task still alive in ascending id
/// order; drop the ones that never ran (RUN-003).
fn end_tasks(rt: *mut Rt) {
    // SAFETY: on the scheduler's stack; each resumed task runs its handlers
    // and switches back for good.
    unsafe {
        (*rt).ending = true;
        // No task is spawned (`ending`) or freed (`free_run` frees them)
        // from here on, so the list holds still.
        let mut next = (*rt).tasks.head;
        while !next.is_null() {
            let t = next;
            next = (*t).all_next;
            match (*t).state {
                State::Done => {}
                State::New => {
                    complete_task(&mut *rt, t, CW_ERR_CLOSED, ptr::null_mut());
                    drop((*t).stack.take());
                }
                _ => {
                    (*t).aborted = true;
                    resume(rt, t);
                }
            }
        }
    }
}

/// What a recovered run takes over from the crashed one (DET-009).
pub struct Resume {
    pub cfg: cw_config,
    pub clock: u64,
    pub deadline: Option<u64>,
    pub rng: Rng,
    pub digest: [u8; 32],
    pub store: Store,
    /// The resolver's names (DET-009).
    pub names: Vec<(Vec<u8>, Vec<cw_addr>)>,
}

/// `cw_start` (02-runner.md).
pub fn start(
    cfg: *const cw_config,
    root: Option<cw_task_fn>,
    arg: *mut c_void,
    out: &mut cw_run_result,
) -> c_int {
    let cfg = match read_config(cfg) {
        Ok(c) => c,
        Err(why) => {
            set_message(out, why.as_bytes());
            out.status = CW_ERR_INVALID;
            return out.status;
        }
    };
    run(cfg, None, root, arg, out, false).0
}

/// `cw_start_checkpoint`'s validation, then the run (DET-008).
pub fn start_for_checkpoint(
    cfg: *const cw_config,
    root: Option<cw_task_fn>,
    arg: *mut c_void,
    out: &mut cw_run_result,
) -> (c_int, Option<Resume>) {
    match read_config(cfg) {
        Ok(c) => run(c, None, root, arg, out, true),
        Err(why) => {
            set_message(out, why.as_bytes());
            out.status = CW_ERR_INVALID;
            (out.status, None)
        }
    }
}

/// One run of a history: fresh (`resume` None) or recovered; with
/// `crash`, it ends by crashing and hands back what the next run needs.
pub fn run(
    cfg: cw_config,
    resume: Option<Resume>,
    root: Option<cw_task_fn>,
    arg: *mut c_void,
    out: &mut cw_run_result,
    crash: bool,
) -> (c_int, Option<Resume>) {
    let root = match root {
        Some(f) => f,
        None => {
            set_message(out, b"invalid configuration: no root task");
            out.status = CW_ERR_INVALID;
            return (out.status, None);
        }
    };
    let audit = cfg.audit && crate::table::capabilities() & CW_CAP_AUDIT != 0;
    let (clock, deadline, rng, digest, store, names) = match resume {
        Some(r) => (r.clock, r.deadline, r.rng, r.digest, r.store, r.names),
        None => (
            cfg.start_time,
            if cfg.timeout == CW_FOREVER {
                None
            } else {
                Some(cfg.start_time.saturating_add(cfg.timeout))
            },
            Rng::new(cfg.seed, cfg.random_bytes, cfg.random_len),
            [0; 32],
            Store::new(cfg.storage_faults),
            Vec::new(),
        ),
    };
    let rt = match try_raw(Rt {
        cfg,
        clock,
        deadline,
        rng,
        audit,
        digest,
        events: 0,
        tasks: TaskList::new(),
        next_task_id: 0,
        ready: VecDeque::new(),
        batch: VecDeque::new(),
        alarms: Vec::new(),
        pipe_alarm_room: 0,
        alarm_seq: 0,
        current: ptr::null_mut(),
        sched_sp: ptr::null_mut(),
        objects: ptr::null_mut(),
        nodes: Vec::new(),
        root: ptr::null_mut(),
        root_done: false,
        root_value: ptr::null_mut(),
        failed: None,
        ending: false,
        stop: Stop::new(),
        spent_ctx: ptr::null_mut(),
        nomem_handle: ptr::null_mut(),
        spent_signal: ptr::null_mut(),
        hub: ptr::null_mut(),
        dead_stack: None,
        iterations: 0,
        pools: [ptr::null_mut(); 2],
        store,
        logging: crash,
        metrics: Registry::new(),
        spent_metric: ptr::null_mut(),
        m_spawned: ptr::null_mut(),
        m_running: ptr::null_mut(),
        m_polls: ptr::null_mut(),
        m_storage: None,
        m_network: None,
        net: crate::net::core::Net::new(names),
    }) {
        Some(rt) => rt,
        None => {
            set_message(out, b"out of memory: the run's state");
            out.status = CW_ERR_NOMEM;
            return (out.status, None);
        }
    };
    let outer = CURRENT.with(|c| c.replace(rt));
    if prepare(rt, root, arg).is_none() {
        // SAFETY: nothing ran; the partial run is ours to free.
        unsafe {
            (*rt).ending = true;
            for t in (*rt).tasks.iter() {
                drop((*t).stack.take());
            }
        }
        free_run(rt);
        CURRENT.with(|c| c.set(outer));
        set_message(out, b"out of memory: the run could not start");
        out.status = CW_ERR_NOMEM;
        return (out.status, None);
    }
    let End::Status(status, msg) = schedule(rt);
    end_tasks(rt);
    // SAFETY: every task has ended; the run's state is ours again.
    let next = unsafe {
        let r = &mut *rt;
        out.status = status;
        out.value = if status == CW_OK {
            r.root_value
        } else {
            ptr::null_mut()
        };
        set_message(out, msg.bytes());
        if r.audit {
            audit::hex(&r.digest, &mut out.digest);
        }
        out.end_time = r.clock;
        out.iterations = r.iterations;
        if crash {
            let faults = r.store.faults;
            let mut store = std::mem::replace(&mut r.store, Store::new(faults));
            let durable = store.crash(&mut r.rng);
            drop(store);
            let rng = std::mem::replace(&mut r.rng, Rng::new(0, ptr::null(), 0));
            Some(Resume {
                cfg: r.cfg,
                clock: r.clock,
                deadline: r.deadline,
                rng,
                digest: r.digest,
                store: durable,
                names: std::mem::take(&mut r.net.names),
            })
        } else {
            None
        }
    };
    free_run(rt);
    CURRENT.with(|c| c.set(outer));
    (status, next)
}

/// The run an object belongs to.
///
/// # Safety
/// `p` must point at a live object of this backend (it begins with a
/// `Header`).
pub unsafe fn rt_of(p: *const c_void) -> *mut Rt {
    // SAFETY: forwarded from the caller.
    unsafe { (*(p as *const Header)).rt }
}

/// Reserve room for one more armed alarm, keeping them sorted by (time, arm
/// order); `false` without memory (CLK-008). The room kept for the pipes'
/// alarms is not taken.
pub fn arm_alarm(rt: &mut Rt, t: *mut Task, w: *mut cw_wait, time: u64) -> bool {
    if rt.alarms.try_reserve(1 + rt.pipe_alarm_room).is_err() {
        return false;
    }
    let seq = rt.alarm_seq;
    rt.alarm_seq += 1;
    let pos = rt
        .alarms
        .partition_point(|a| (a.time, a.seq) <= (time, seq));
    rt.alarms.insert(
        pos,
        Alarm {
            time,
            seq,
            task: t,
            wait: w,
            pipe: ptr::null_mut(),
        },
    );
    true
}

/// Keep room in the alarm list for the alarm of a new pipe; `false`
/// without memory (the pipe is then not made).
pub fn keep_pipe_alarm_room(rt: &mut Rt) -> bool {
    if rt.alarms.try_reserve(1 + rt.pipe_alarm_room).is_err() {
        return false;
    }
    rt.pipe_alarm_room += 1;
    true
}

/// Give back the room kept for a pipe that is freed (its alarm not armed).
pub fn drop_pipe_alarm_room(rt: &mut Rt) {
    rt.pipe_alarm_room -= 1;
}

/// Arm the alarm of a stream with bytes in flight (NET-027), in the room
/// kept for its pipe: never fails, never allocates.
pub fn arm_pipe_alarm(rt: &mut Rt, p: *mut crate::net::core::Pipe, time: u64) {
    debug_assert!(rt.pipe_alarm_room > 0 && rt.alarms.capacity() > rt.alarms.len());
    rt.pipe_alarm_room -= 1;
    let seq = rt.alarm_seq;
    rt.alarm_seq += 1;
    let pos = rt
        .alarms
        .partition_point(|a| (a.time, a.seq) <= (time, seq));
    rt.alarms.insert(
        pos,
        Alarm {
            time,
            seq,
            task: ptr::null_mut(),
            wait: ptr::null_mut(),
            pipe: p,
        },
    );
}

/// Disarm a pipe's alarm (a partition holds its bytes); its room is kept.
pub fn disarm_pipe_alarm(rt: &mut Rt, p: *mut crate::net::core::Pipe) {
    if let Some(i) = rt.alarms.iter().position(|a| a.pipe == p) {
        rt.alarms.remove(i);
        rt.pipe_alarm_room += 1;
    }
}

pub fn disarm_alarm(rt: &mut Rt, w: *mut cw_wait) {
    if let Some(i) = rt
        .alarms
        .iter()
        .position(|a| a.wait == w && a.pipe.is_null())
    {
        rt.alarms.remove(i);
    }
}

/// Keep `try_push` reachable for the modules that grow run vectors.
pub fn push_node(rt: &mut Rt, n: *mut Node) -> bool {
    try_push(&mut rt.nodes, n)
}
