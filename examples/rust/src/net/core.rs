// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The run's simulated network (spec/18-network.md), deterministic
//! (NET-017): listeners, connections, the mock channel and partitions
//! (the resolver is `names.rs`), all in memory, driven by the scheduler
//! and its clock.
//!
//! A connection is two `Pipe`s, one per direction. A pipe holds the bytes
//! its stream can see (`arrived`), the sends still in flight (`flight`,
//! each with its arrival time, or the end of the sink), and the recv waits
//! armed on it. A send that arrives later than the clock, or that a
//! partition holds, goes in flight; the pipe then has one alarm of its own
//! in the run's alarm list (11-deterministic.md, step 7) that delivers what
//! is due and arms itself again. A partition holds a pipe's flights (no
//! alarm, no delivery) until a repair releases them (NET-029, NET-030).
//!
//! Halves (sinks, streams) and listeners are objects of the run. A pipe is
//! freed once both its halves are closed and nothing of it is left in
//! flight or armed (an alarm names its pipe), a connection with its last
//! pipe (RUN-009); what is left when the run ends goes with it. Closing an
//! object completes the waits armed on it with `CW_ERR_CLOSED` without
//! touching it again (NET-001): the waits are marked, unlinked and their
//! tasks woken before it is freed.

use super::addr;
use crate::audit;
use crate::buf::{bytes, lists, pool};
use crate::ffi::*;
use crate::mem::try_raw;

use crate::obj::{self, alloc_obj, Header, Kind, Object};
use crate::runtime::{self, Rt, Task};
use crate::select::{self, WaitList};
use std::collections::VecDeque;
use std::os::raw::c_int;
use std::ptr;

/// `cw_wait.state` bits of the network waits.
pub const WAITED: u64 = 2;
pub const CLOSED_UNDER: u64 = 4;

pub struct Flight {
    pub at: u64,
    pub bytes: Vec<u8>,
    pub end: bool,
}

pub struct Pipe {
    pub arrived: VecDeque<u8>,
    pub flight: VecDeque<Flight>,
    pub last_arrival: u64,
    pub sink_open: bool,
    pub stream_open: bool,
    pub ended: bool,
    pub recv_waiters: WaitList,
    pub alarm: bool,
    pub conn: *mut Conn,
    /// The address the stream's events name (its remote side).
    pub stream_remote: cw_addr,
    /// Its place in the run's `pipes`.
    idx: usize,
}

pub struct Conn {
    pub dialer: cw_addr,
    pub target: cw_addr,
    /// [0]: dialer to accepted side; [1]: accepted side to dialer.
    pub pipes: [*mut Pipe; 2],
    pub reset: bool,
}

#[repr(C)]
pub struct Half {
    pub h: Header,
    pub pipe: *mut Pipe,
    pub remote: cw_addr,
    pub poisoned: bool,
    /// The task whose recv waits on this stream (NET-035).
    pub busy: *mut Task,
}

// SAFETY: #[repr(C)] with the Header first, kind Sink or Stream.
unsafe impl Object for Half {}

struct Pending {
    peer: cw_addr,
    sink: *mut Half,
    stream: *mut Half,
}

#[repr(C)]
pub struct Listener {
    pub h: Header,
    pub addr: cw_addr,
    pending: VecDeque<Pending>,
    pub waiters: WaitList,
}

// SAFETY: #[repr(C)] with the Header first, kind Listener.
unsafe impl Object for Listener {}

pub struct Net {
    listeners: Vec<*mut Listener>,
    next_port: u32,
    conns: Vec<*mut Conn>,
    pipes: Vec<*mut Pipe>,
    partitions: Vec<(cw_addr, cw_addr)>,
    pub names: Vec<(Vec<u8>, Vec<cw_addr>)>,
}

impl Net {
    pub fn new(names: Vec<(Vec<u8>, Vec<cw_addr>)>) -> Net {
        Net {
            listeners: Vec::new(),
            next_port: CW_NET_EPHEMERAL_FIRST,
            conns: Vec::new(),
            pipes: Vec::new(),
            partitions: Vec::new(),
            names,
        }
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for &c in self.conns.iter() {
            // SAFETY: the connections still live (a freed one left the
            // list), each freed once.
            drop(unsafe { Box::from_raw(c) });
        }
        for &p in self.pipes.iter() {
            // SAFETY: the pipes still live, as above.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// Free `c` when it has no pipe left; `true` when it was freed (it left
/// `conns`, whose later entries moved down by one).
fn free_conn_if_empty(rt: &mut Rt, c: *mut Conn) -> bool {
    // SAFETY: a live connection of this run.
    unsafe {
        if !(*c).pipes[0].is_null() || !(*c).pipes[1].is_null() {
            return false;
        }
    }
    // The order of `conns` is the order repairs release in (NET-030).
    if let Some(i) = rt.net.conns.iter().position(|&x| x == c) {
        rt.net.conns.remove(i);
    }
    // SAFETY: no pipe names it any more, and it left the list.
    drop(unsafe { Box::from_raw(c) });
    true
}

/// Free pipe `p` once both its halves are closed and nothing of it is in
/// flight or armed (RUN-009), then its connection with its last pipe;
/// `true` when the connection was freed.
fn free_pipe_if_done(rt: &mut Rt, p: *mut Pipe) -> bool {
    // SAFETY: a live pipe of this run; once both halves are closed only
    // its connection, the run's list and an alarm name it, and the alarm
    // is checked here.
    unsafe {
        let pr = &*p;
        if pr.sink_open || pr.stream_open || pr.alarm || !pr.flight.is_empty() {
            return false;
        }
        let i = pr.idx;
        rt.net.pipes.swap_remove(i);
        runtime::drop_pipe_alarm_room(rt);
        if i < rt.net.pipes.len() {
            (*rt.net.pipes[i]).idx = i;
        }
        let c = pr.conn;
        drop(Box::from_raw(p));
        if c.is_null() {
            return false;
        }
        for q in (*c).pipes.iter_mut() {
            if *q == p {
                *q = ptr::null_mut();
            }
        }
        free_conn_if_empty(rt, c)
    }
}

fn rate(rt: &mut Rt, r: cw_rate) -> bool {
    if r.num == 0 {
        return false;
    }
    if r.num >= r.den {
        return true;
    }
    rt.rng.below(r.den) < r.num
}

fn cut(n: &Net, c: *mut Conn) -> bool {
    if c.is_null() {
        return false;
    }
    // SAFETY: a connection lives while one of its pipes does.
    let c = unsafe { &*c };
    n.partitions.iter().any(|(a, b)| {
        (addr::matches(a, &c.dialer) && addr::matches(b, &c.target))
            || (addr::matches(b, &c.dialer) && addr::matches(a, &c.target))
    })
}

fn cut_dial(n: &Net, dialer: &cw_addr, target: &cw_addr) -> bool {
    n.partitions.iter().any(|(a, b)| {
        (addr::matches(a, dialer) && addr::matches(b, target))
            || (addr::matches(b, dialer) && addr::matches(a, target))
    })
}

/// The prologue of a suspending network call (NET-001): from a task of the
/// run; `Err(CW_ERR_CLOSED)` while it unwinds; an aborted task unwinds here.
pub fn enter(rt: *mut Rt, call: &str) -> Result<(), c_int> {
    let t = runtime::require_task(rt, call);
    // SAFETY: `t` is the running task of `rt`.
    unsafe {
        if (*t).unwinding {
            return Err(CW_ERR_CLOSED);
        }
        if (*t).aborted {
            runtime::unwind_now(rt, t);
        }
    }
    Ok(())
}

fn event_result(rc: c_int) -> [u8; 4] {
    rc.to_be_bytes()
}

/// Complete every wait armed on `l` with `CW_ERR_CLOSED`: marked,
/// unlinked, their tasks woken (NET-001).
fn close_waits(rt: &mut Rt, l: &mut WaitList) {
    let mut w = l.head;
    while !w.is_null() {
        // SAFETY: armed waits live in the frames of suspended tasks.
        unsafe {
            let next = (*w).link[1] as *mut cw_wait;
            let t = (*w).link[2] as *mut Task;
            (*w).state |= CLOSED_UNDER;
            (*w).link = [ptr::null_mut(); 4];
            runtime::wake_task(rt, t);
            w = next;
        }
    }
    l.head = ptr::null_mut();
    l.tail = ptr::null_mut();
}

/// A new pipe, with the memory its sends cannot do without kept from the
/// start: room for the end of its sink in `flight`, and for its alarm in
/// the run's list (NET-034: a send either fails with `CW_ERR_NOMEM` or
/// arrives).
fn new_pipe(rt: &mut Rt, conn: *mut Conn, stream_remote: cw_addr) -> Option<*mut Pipe> {
    rt.net.pipes.try_reserve(1).ok()?;
    let mut flight = VecDeque::new();
    flight.try_reserve(1).ok()?;
    if !runtime::keep_pipe_alarm_room(rt) {
        return None;
    }
    let p = match try_raw(Pipe {
        arrived: VecDeque::new(),
        flight,
        last_arrival: 0,
        sink_open: true,
        stream_open: true,
        ended: false,
        recv_waiters: WaitList::new(),
        alarm: false,
        conn,
        stream_remote,
        idx: rt.net.pipes.len(),
    }) {
        Some(p) => p,
        None => {
            runtime::drop_pipe_alarm_room(rt);
            return None;
        }
    };
    rt.net.pipes.push(p);
    Some(p)
}

fn new_half(rt: &mut Rt, kind: Kind, pipe: *mut Pipe, remote: cw_addr) -> Option<*mut Half> {
    let rtp: *mut Rt = rt;
    alloc_obj(
        rt,
        Half {
            h: Header::new(kind, rtp),
            pipe,
            remote,
            poisoned: false,
            busy: ptr::null_mut(),
        },
    )
}

/// Deliver what is due on `p` (all of it when `all`), recording `deliver`
/// for each send, and wake its recv waits if anything arrived.
fn deliver_due(rt: &mut Rt, p: *mut Pipe, upto: u64) {
    // SAFETY: a pipe lives while a half, a flight or its alarm names it.
    let pr = unsafe { &mut *p };
    let mut any = false;
    while let Some(f) = pr.flight.front() {
        if f.at > upto {
            break;
        }
        let f = pr.flight.pop_front().expect("front");
        if f.end {
            pr.ended = true;
        } else {
            if pr.stream_open {
                // Room was reserved by the send (NET-034).
                pr.arrived.extend(f.bytes.iter().copied());
            }
            let t = addr::text(&pr.stream_remote);
            audit::record(
                rt,
                b"deliver\0",
                &[t.bytes(), &(f.bytes.len() as u64).to_be_bytes()],
            );
        }
        any = true;
    }
    if any {
        let l: *mut WaitList = &mut pr.recv_waiters;
        // SAFETY: the pipe's list, not otherwise borrowed.
        select::wake_list(rt, unsafe { &mut *l });
    }
}

fn arm_pipe(rt: &mut Rt, p: *mut Pipe) {
    // SAFETY: a pipe lives while a half, a flight or its alarm names it.
    let pr = unsafe { &mut *p };
    if pr.alarm || cut(&rt.net, pr.conn) {
        return;
    }
    if let Some(f) = pr.flight.front() {
        let at = f.at;
        // In the room kept for the pipe since it was made.
        runtime::arm_pipe_alarm(rt, p, at);
        pr.alarm = true;
    }
}

/// A pipe's alarm is due (step 7 of 11-deterministic.md).
pub fn pipe_due(rt: &mut Rt, p: *mut Pipe) {
    // SAFETY: a pipe lives while a half, a flight or its alarm names it.
    unsafe { (*p).alarm = false };
    // SAFETY: as above.
    if cut(&rt.net, unsafe { (*p).conn }) {
        return;
    }
    let now = rt.clock;
    deliver_due(rt, p, now);
    arm_pipe(rt, p);
    free_pipe_if_done(rt, p);
}

/// The end of a sink (its close, or a reset): seen after what is in flight.
fn push_end(rt: &mut Rt, p: *mut Pipe) {
    // SAFETY: a pipe lives while a half, a flight or its alarm names it.
    let pr = unsafe { &mut *p };
    if pr.ended || pr.flight.iter().any(|f| f.end) {
        return;
    }
    // With its stream closed nothing is in flight to it (NET-027): the end
    // is there at once, holding no alarm.
    if !pr.stream_open || (pr.flight.is_empty() && !cut(&rt.net, pr.conn)) {
        pr.ended = true;
        let l: *mut WaitList = &mut pr.recv_waiters;
        // SAFETY: the pipe's list.
        select::wake_list(rt, unsafe { &mut *l });
        return;
    }
    let at = pr.last_arrival.max(rt.clock);
    // Room for the end was kept when the pipe was made and at each send
    // since: this push does not allocate.
    debug_assert!(pr.flight.capacity() > pr.flight.len());
    pr.flight.push_back(Flight {
        at,
        bytes: Vec::new(),
        end: true,
    });
    arm_pipe(rt, p);
}

// ---- Listening and dialing -------------------------------------------------

pub fn bind(rt: *mut Rt, a: *const cw_addr, out: &mut *mut cw_listener) -> c_int {
    *out = ptr::null_mut();
    if let Err(rc) = enter(rt, "cw_bind") {
        return rc;
    }
    // SAFETY: the live run; no switch below.
    let r = unsafe { &mut *rt };
    if a.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: the caller's address.
    let given = addr::clean(unsafe { &*a });
    if !addr::valid_family(&given) {
        return CW_ERR_INVALID;
    }
    let bound = |r: &Rt, x: &cw_addr| {
        r.net.listeners.iter().any(|&l| {
            // SAFETY: bound listeners are live.
            addr::same(unsafe { &(*l).addr }, x)
        })
    };
    let mut real = given;
    let mut rc = CW_OK;
    if given.port == 0 {
        let mut port = 1024u32;
        loop {
            if (CW_NET_EPHEMERAL_FIRST..CW_NET_EPHEMERAL_END).contains(&port) {
                port = CW_NET_EPHEMERAL_END;
            }
            if port > 65535 {
                rc = CW_ERR_BIND_FAILED;
                break;
            }
            real.port = port as u16;
            if !bound(r, &real) {
                break;
            }
            port += 1;
        }
    } else if bound(r, &given)
        || (addr::is_loopback(&given)
            && (CW_NET_EPHEMERAL_FIRST..CW_NET_EPHEMERAL_END).contains(&(given.port as u32)))
    {
        rc = CW_ERR_BIND_FAILED;
    }
    let mut l = ptr::null_mut();
    if rc == CW_OK {
        let rtp: *mut Rt = r;
        // The counters, at 0, before anything is bound (NET-025, NET-034).
        if !crate::metrics::series::network_register(r) || r.net.listeners.try_reserve(1).is_err() {
            rc = CW_ERR_NOMEM;
        } else {
            match alloc_obj(
                r,
                Listener {
                    h: Header::new(Kind::Listener, rtp),
                    addr: real,
                    pending: VecDeque::new(),
                    waiters: WaitList::new(),
                },
            ) {
                Some(x) => {
                    r.net.listeners.push(x);
                    l = x;
                }
                None => rc = CW_ERR_NOMEM,
            }
        }
    }
    let t = addr::text(&given);
    audit::record(r, b"bind\0", &[t.bytes(), &event_result(rc)]);
    *out = l as *mut cw_listener;
    rc
}

pub fn local_addr(l: *const Listener, out: *mut cw_addr) -> c_int {
    if l.is_null() || out.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: the caller's live listener and output.
    unsafe { *out = (*l).addr };
    CW_OK
}

fn close_half(rt: &mut Rt, h: *mut Half, is_sink: bool) {
    // SAFETY: a live half of this run; freed once.
    unsafe {
        let p = (*h).pipe;
        if is_sink {
            (*p).sink_open = false;
            push_end(rt, p);
        } else {
            (*p).stream_open = false;
            (*p).arrived = VecDeque::new();
            // NET-027: what is in flight to a closed stream (bytes, and the
            // end of its sink after them) is dropped and in flight no
            // longer, so its alarm goes too: it neither keeps the run from
            // stalling nor moves the clock. The flight's capacity (the
            // room for the end, `push_end`) stays.
            (*p).flight.clear();
            if (*p).alarm {
                runtime::disarm_pipe_alarm(rt, p);
                (*p).alarm = false;
            }
            let l: *mut WaitList = &mut (*p).recv_waiters;
            close_waits(rt, &mut *l);
        }
        obj::free_obj(rt, h as *mut Header);
        free_pipe_if_done(rt, p);
    }
}

pub fn listener_close(l: *mut Listener) {
    // SAFETY: the caller's live listener, closed once.
    let r = unsafe { &mut *(*l).h.rt };
    r.net.listeners.retain(|&x| x != l);
    // SAFETY: as above.
    unsafe {
        let w: *mut WaitList = &mut (*l).waiters;
        close_waits(r, &mut *w);
        while let Some(p) = (*l).pending.pop_front() {
            close_half(r, p.sink, true);
            close_half(r, p.stream, false);
        }
        obj::free_obj(r, l as *mut Header);
    }
}

pub fn dial(
    rt: *mut Rt,
    a: *const cw_addr,
    sink: &mut *mut cw_sink,
    stream: &mut *mut cw_stream,
) -> c_int {
    *sink = ptr::null_mut();
    *stream = ptr::null_mut();
    if let Err(rc) = enter(rt, "cw_dial") {
        return rc;
    }
    // SAFETY: the live run; no switch below.
    let r = unsafe { &mut *rt };
    if a.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: the caller's address.
    let target = addr::clean(unsafe { &*a });
    if !addr::valid_family(&target) {
        return CW_ERR_INVALID;
    }
    if r.net.next_port >= CW_NET_EPHEMERAL_END {
        runtime::panic_current(rt, b"cw_dial: ephemeral port range exhausted");
    }
    let port = r.net.next_port as u16;
    r.net.next_port += 1;
    let dialer = addr::loopback(target.family, port);
    let listener = r
        .net
        .listeners
        .iter()
        .copied()
        // SAFETY: bound listeners are live.
        .find(|&l| addr::same(unsafe { &(*l).addr }, &target));
    // NET-031: the rate is drawn only for a dial that found a listener on a
    // target no partition cuts.
    let refused = listener.is_none()
        || cut_dial(&r.net, &dialer, &target)
        || rate(r, r.cfg.network_dial_failure);
    let rc = if refused {
        CW_ERR_CONNECTION_FAILED
    } else {
        CW_OK
    };
    let tt = addr::text(&target);
    audit::record(r, b"dial\0", &[tt.bytes(), &event_result(rc)]);
    if rc != CW_OK {
        return rc;
    }
    let l = listener.expect("found");
    // The counters, at 0, before the connection can be made (NET-025):
    // without them the dial is refused, having counted nothing (NET-034).
    if !crate::metrics::series::network_register(r) {
        return CW_ERR_NOMEM;
    }
    match connect(r, l, dialer, target) {
        Some((s, st)) => {
            crate::metrics::series::network_count(r, |m| m.outbound_connections, 1);
            *sink = s as *mut cw_sink;
            *stream = st as *mut cw_stream;
            CW_OK
        }
        None => CW_ERR_NOMEM,
    }
}

/// The connection of a dial: two pipes, four halves, queued on `l`.
fn connect(
    r: &mut Rt,
    l: *mut Listener,
    dialer: cw_addr,
    target: cw_addr,
) -> Option<(*mut Half, *mut Half)> {
    r.net.conns.try_reserve(1).ok()?;
    // SAFETY: a bound listener is live.
    unsafe { (*l).pending.try_reserve(1).ok()? };
    let c = try_raw(Conn {
        dialer,
        target,
        pipes: [ptr::null_mut(); 2],
        reset: false,
    })?;
    r.net.conns.push(c);
    // Without memory, what was made is given back at once.
    let undo = move |r: &mut Rt, halves: &[Option<*mut Half>]| {
        for h in halves.iter().flatten() {
            // SAFETY: fresh, unused halves.
            unsafe { obj::free_obj(r, *h as *mut Header) };
        }
        // SAFETY: the fresh connection and its pipes, which nothing else
        // names.
        unsafe {
            for p in (*c).pipes {
                if !p.is_null() {
                    (*p).sink_open = false;
                    (*p).stream_open = false;
                    if free_pipe_if_done(r, p) {
                        return;
                    }
                }
            }
        }
        free_conn_if_empty(r, c);
    };
    let p0 = match new_pipe(r, c, dialer) {
        Some(p) => p,
        None => {
            undo(r, &[]);
            return None;
        }
    };
    // SAFETY: fresh connection.
    unsafe { (*c).pipes[0] = p0 };
    let p1 = match new_pipe(r, c, target) {
        Some(p) => p,
        None => {
            undo(r, &[]);
            return None;
        }
    };
    // SAFETY: fresh connection.
    unsafe { (*c).pipes[1] = p1 };
    let ds = new_half(r, Kind::Sink, p0, target);
    let dr = new_half(r, Kind::Stream, p1, target);
    let as_ = new_half(r, Kind::Sink, p1, dialer);
    let ar = new_half(r, Kind::Stream, p0, dialer);
    let (ds, dr, as_, ar) = match (ds, dr, as_, ar) {
        (Some(a), Some(b), Some(c), Some(d)) => (a, b, c, d),
        (a, b, c, d) => {
            undo(r, &[a, b, c, d]);
            return None;
        }
    };
    // SAFETY: as above.
    unsafe {
        (*l).pending.push_back(Pending {
            peer: dialer,
            sink: as_,
            stream: ar,
        });
        let w: *mut WaitList = &mut (*l).waiters;
        select::wake_list(r, &mut *w);
    }
    Some((ds, dr))
}

pub fn mock_channel(rt: *mut Rt, sink: &mut *mut cw_sink, stream: &mut *mut cw_stream) -> c_int {
    *sink = ptr::null_mut();
    *stream = ptr::null_mut();
    // SAFETY: the live run.
    let r = unsafe { &mut *rt };
    // The counters, at 0, before the channel can be made (NET-025, NET-034).
    if !crate::metrics::series::network_register(r) {
        return CW_ERR_NOMEM;
    }
    let none = addr::none();
    let p = match new_pipe(r, ptr::null_mut(), none) {
        Some(p) => p,
        None => return CW_ERR_NOMEM,
    };
    let s = new_half(r, Kind::Sink, p, none);
    let st = new_half(r, Kind::Stream, p, none);
    match (s, st) {
        (Some(s), Some(st)) => {
            *sink = s as *mut cw_sink;
            *stream = st as *mut cw_stream;
            CW_OK
        }
        (s, st) => {
            for h in [s, st].iter().flatten() {
                // SAFETY: fresh, unused halves.
                unsafe { obj::free_obj(r, *h as *mut Header) };
            }
            // SAFETY: the fresh pipe, which nothing else names.
            unsafe {
                (*p).sink_open = false;
                (*p).stream_open = false;
            }
            free_pipe_if_done(r, p);
            CW_ERR_NOMEM
        }
    }
}

// ---- Waits: accept, send, recv ------------------------------------------------

pub fn accept_ready(l: &Listener) -> bool {
    !l.pending.is_empty()
}

pub fn accept_complete(rt: &mut Rt, l: *mut Listener, out: *mut cw_conn) -> c_int {
    // SAFETY: a live listener with a pending connection.
    let p = unsafe { (*l).pending.pop_front() }.expect("accept_ready");
    if !out.is_null() {
        // SAFETY: the caller's output.
        unsafe {
            (*out).peer = p.peer;
            (*out).sink = p.sink as *mut cw_sink;
            (*out).stream = p.stream as *mut cw_stream;
        }
    }
    // SAFETY: as above.
    let lt = addr::text(unsafe { &(*l).addr });
    let pt = addr::text(&p.peer);
    audit::record(rt, b"accept\0", &[lt.bytes(), pt.bytes()]);
    crate::metrics::series::network_count(rt, |m| m.inbound_connections, 1);
    CW_OK
}

pub fn accept_closed(out: *mut cw_conn) -> c_int {
    if !out.is_null() {
        // SAFETY: the caller's output.
        unsafe {
            (*out).sink = ptr::null_mut();
            (*out).stream = ptr::null_mut();
        }
    }
    CW_ERR_CLOSED
}

/// A send (never waits on this backend, NET-027): its whole outcome.
pub fn send(rt: &mut Rt, s: *mut Half, bufs: *const cw_iobufs) -> c_int {
    // SAFETY: the caller's live sink.
    let sh = unsafe { &mut *s };
    let p = sh.pipe;
    // SAFETY: a pipe lives while a half, a flight or its alarm names it.
    let pr = unsafe { &mut *p };
    let remote = addr::text(&sh.remote);
    let mut data: Vec<u8> = Vec::new();
    let mut rc = CW_OK;
    if bufs.is_null() {
        rc = CW_ERR_INVALID;
    } else {
        // SAFETY: the caller's live list, only read.
        let l = unsafe { &*(bufs as *const lists::List) };
        if data.try_reserve_exact(l.len).is_err() {
            rc = CW_ERR_NOMEM;
        } else {
            for c in l.chunks.iter() {
                // SAFETY: a chunk's readable bytes.
                data.extend_from_slice(unsafe { std::slice::from_raw_parts(c.data, c.len) });
            }
        }
    }
    let conn = pr.conn;
    if rc == CW_OK && sh.poisoned {
        rc = CW_ERR_CLOSED;
    }
    // SAFETY: a connection lives while one of its pipes does.
    let reset = !conn.is_null() && unsafe { (*conn).reset };
    if rc == CW_OK && (!pr.stream_open || reset) {
        rc = CW_ERR_SEND_FAILED;
    }
    if rc == CW_OK {
        let held: usize = pr.flight.iter().map(|f| f.bytes.len()).sum();
        // Room for every byte in flight to arrive, for this send in flight,
        // and for the end of the sink after it (`push_end`).
        if pr.arrived.try_reserve(held + data.len()).is_err() || pr.flight.try_reserve(2).is_err() {
            rc = CW_ERR_NOMEM;
        }
    }
    if rc == CW_OK && !conn.is_null() && rate(rt, rt.cfg.network_reset) {
        // NET-032: the connection resets; both streams see the end.
        // SAFETY: as above.
        unsafe {
            (*conn).reset = true;
            let [a, b] = (*conn).pipes;
            push_end(rt, a);
            push_end(rt, b);
        }
        rc = CW_ERR_SEND_FAILED;
    }
    if rc == CW_OK && !data.is_empty() {
        let (lat, jit) = (rt.cfg.network_latency, rt.cfg.network_jitter);
        let is_cut = cut(&rt.net, conn);
        let mut delay = 0u64;
        if !conn.is_null() {
            let j = if jit == 0 {
                0
            } else if jit == u64::MAX {
                rt.rng.next()
            } else {
                rt.rng.below(jit + 1)
            };
            delay = lat.saturating_add(j);
        }
        let went = !conn.is_null() && (lat != 0 || jit != 0 || is_cut);
        let at = rt.clock.saturating_add(delay).max(pr.last_arrival);
        pr.last_arrival = at;
        let n = data.len();
        crate::metrics::series::network_count(rt, |m| m.outbound_bandwidth, n as i64);
        if !is_cut && pr.flight.is_empty() && at <= rt.clock {
            // Arrives within the send: `deliver` (when it went through the
            // simulated delay), then `send` (11-deterministic.md).
            pr.arrived.extend(data.iter().copied());
            if went {
                let t = addr::text(&pr.stream_remote);
                audit::record(rt, b"deliver\0", &[t.bytes(), &(n as u64).to_be_bytes()]);
            }
            let l: *mut WaitList = &mut pr.recv_waiters;
            // SAFETY: the pipe's list.
            select::wake_list(rt, unsafe { &mut *l });
            audit::record(rt, b"send\0", &[remote.bytes(), &data, &event_result(rc)]);
        } else {
            audit::record(rt, b"send\0", &[remote.bytes(), &data, &event_result(rc)]);
            pr.flight.push_back(Flight {
                at,
                bytes: data,
                end: false,
            });
            arm_pipe(rt, p);
        }
        return rc;
    }
    if rc != CW_OK && rc != CW_ERR_INVALID {
        sh.poisoned = true;
    }
    audit::record(rt, b"send\0", &[remote.bytes(), &data, &event_result(rc)]);
    rc
}

pub fn recv_ready(rt: &Rt, s: &Half, len: usize) -> bool {
    if s.poisoned || len == 0 {
        return true;
    }
    if !s.busy.is_null() && s.busy != rt.current {
        return true;
    }
    // SAFETY: a pipe lives while a half, a flight or its alarm names it.
    let p = unsafe { &*s.pipe };
    p.arrived.len() >= len || p.ended || !p.stream_open
}

pub fn recv_complete(rt: &mut Rt, s: *mut Half, len: usize, out: *mut *mut cw_iobufs) -> c_int {
    // SAFETY: the caller's live stream.
    let sh = unsafe { &mut *s };
    let remote = addr::text(&sh.remote);
    if !out.is_null() {
        // SAFETY: the caller's output.
        unsafe { *out = ptr::null_mut() };
    }
    let fail = |rt: &mut Rt, rc: c_int| {
        audit::record(
            rt,
            b"recv\0",
            &[
                remote.bytes(),
                &(len as u64).to_be_bytes(),
                &event_result(rc),
                b"",
            ],
        );
        rc
    };
    if !sh.busy.is_null() && sh.busy != rt.current {
        // NET-035, DET-022: refused, recorded, nothing changed.
        return fail(rt, CW_ERR_INVALID);
    }
    if sh.poisoned {
        return fail(rt, CW_ERR_CLOSED);
    }
    // SAFETY: a pipe lives while a half, a flight or its alarm names it.
    let p = unsafe { &mut *sh.pipe };
    if len > 0 && p.arrived.len() < len {
        sh.poisoned = true;
        p.arrived.clear();
        return fail(rt, CW_ERR_RECV_FAILED);
    }
    let l = lists::new_list(&crate::table::TABLE.0);
    if l.is_null() {
        sh.poisoned = true;
        return fail(rt, CW_ERR_NOMEM);
    }
    let mut taken: Vec<u8> = Vec::new();
    if len > 0 {
        let mut m = bytes::empty_mut(&crate::table::TABLE.0);
        // SAFETY: the fresh list is ours.
        let lr = unsafe { &mut *l };
        if pool::alloc_any(rt.pools[0], len, &mut m) != CW_OK
            || lr.chunks.try_reserve(1).is_err()
            || taken.try_reserve_exact(len).is_err()
        {
            crate::buf::iobuf::release_mut(&mut m);
            lists::release_list(l);
            sh.poisoned = true;
            return fail(rt, CW_ERR_NOMEM);
        }
        for i in 0..len {
            let b = p.arrived.pop_front().unwrap_or(0);
            taken.push(b);
            // SAFETY: `m` has `len` bytes of capacity.
            unsafe { *m.data.add(i) = b };
        }
        m.len = len;
        let mut f = crate::buf::iobuf::freeze(&mut m);
        lists::add(lr, &mut f, false);
    }
    crate::metrics::series::network_count(rt, |m| m.inbound_bandwidth, len as i64);
    audit::record(
        rt,
        b"recv\0",
        &[
            remote.bytes(),
            &(len as u64).to_be_bytes(),
            &event_result(CW_OK),
            &taken,
        ],
    );
    if !out.is_null() {
        // SAFETY: the caller's output.
        unsafe { *out = l as *mut cw_iobufs };
    } else {
        lists::release_list(l);
    }
    CW_OK
}

pub fn peek(s: *mut Half, max: usize, dst: *mut u8) -> usize {
    // SAFETY: the caller's live stream, whose pipe lives.
    let p = unsafe { &*(*s).pipe };
    let n = max.min(p.arrived.len());
    if dst.is_null() {
        return 0;
    }
    for (i, b) in p.arrived.iter().take(n).enumerate() {
        // SAFETY: `dst` holds `max` bytes.
        unsafe { *dst.add(i) = *b };
    }
    n
}

pub fn sink_close(s: *mut Half) {
    // SAFETY: the caller's live sink.
    let r = unsafe { &mut *(*s).h.rt };
    close_half(r, s, true);
}

pub fn stream_close(s: *mut Half) {
    // SAFETY: the caller's live stream.
    let r = unsafe { &mut *(*s).h.rt };
    close_half(r, s, false);
}

/// NET-010: a recv that waited and was given up poisons its stream.
pub fn give_up_recv(s: *mut Half) {
    // SAFETY: a live stream (its wait was not closed under it).
    unsafe { (*s).poisoned = true };
}

pub fn set_busy(s: *mut Half, t: *mut Task) {
    // SAFETY: a live stream.
    unsafe { (*s).busy = t };
}

pub fn clear_busy(s: *mut Half, t: *mut Task) {
    // SAFETY: a live stream.
    unsafe {
        if (*s).busy == t {
            (*s).busy = ptr::null_mut();
        }
    }
}

pub fn recv_waiters(s: *mut Half) -> *mut WaitList {
    // SAFETY: a live stream, whose pipe lives.
    unsafe { &mut (*(*s).pipe).recv_waiters }
}

pub fn accept_waiters(l: *mut Listener) -> *mut WaitList {
    // SAFETY: a live listener.
    unsafe { &mut (*l).waiters }
}

// ---- Partitions --------------------------------------------------------------------

pub fn partition(rt: *mut Rt, a: *const cw_addr, b: *const cw_addr, add: bool) -> c_int {
    if a.is_null() || b.is_null() {
        return CW_ERR_INVALID;
    }
    // SAFETY: the caller's addresses.
    let (a, b) = unsafe { (addr::clean(&*a), addr::clean(&*b)) };
    if !addr::valid_family(&a) || !addr::valid_family(&b) {
        return CW_ERR_INVALID;
    }
    runtime::require_task(
        rt,
        if add {
            "cw_network_partition"
        } else {
            "cw_network_repair"
        },
    );
    // SAFETY: the live run.
    let r = unsafe { &mut *rt };
    let pos = r.net.partitions.iter().position(|(x, y)| {
        (addr::same(x, &a) && addr::same(y, &b)) || (addr::same(x, &b) && addr::same(y, &a))
    });
    let (ta, tb) = (addr::text(&a), addr::text(&b));
    if add {
        if pos.is_none() {
            if r.net.partitions.try_reserve(1).is_err() {
                return CW_ERR_NOMEM;
            }
            r.net.partitions.push((a, b));
        }
        audit::record(r, b"partition\0", &[ta.bytes(), tb.bytes()]);
        // NET-029: held bytes arm no alarm, those in flight included.
        let mut i = 0;
        while i < r.net.conns.len() {
            let c = r.net.conns[i];
            i += 1;
            if !cut(&r.net, c) {
                continue;
            }
            // SAFETY: listed connections are live, their pipes live or null.
            let pipes = unsafe { (*c).pipes };
            for p in pipes {
                // SAFETY: as above.
                if !p.is_null() && unsafe { (*p).alarm } {
                    runtime::disarm_pipe_alarm(r, p);
                    // SAFETY: as above.
                    unsafe { (*p).alarm = false };
                }
            }
        }
        return CW_OK;
    }
    if let Some(i) = pos {
        r.net.partitions.remove(i);
    }
    audit::record(r, b"repair\0", &[ta.bytes(), tb.bytes()]);
    // NET-030: release the held bytes of connections no longer cut, in the
    // order the connections were made, the dialer's stream first.
    let mut i = 0;
    while i < r.net.conns.len() {
        let c = r.net.conns[i];
        i += 1;
        if cut(&r.net, c) {
            continue;
        }
        // SAFETY: listed connections are live.
        let [p0, p1] = unsafe { (*c).pipes };
        let mut gone = false;
        for p in [p1, p0] {
            if p.is_null() {
                continue;
            }
            let now = r.clock;
            deliver_due(r, p, now);
            arm_pipe(r, p);
            gone |= free_pipe_if_done(r, p);
        }
        if gone {
            // `c` left the list: the next one moved into its place.
            i -= 1;
        }
    }
    CW_OK
}
