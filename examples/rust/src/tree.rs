// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Contexts and the supervision tree (spec/03-context.md).
//!
//! Each context owns a node; `cw_child` makes a node below; a spawn
//! registers the task on the spawning context's node and gives it a fresh
//! node below. When a task ends, or is aborted, its owner node and all
//! below it are aborted. The tree is walked iteratively through parent /
//! first-child / next-sibling links, so its depth costs no stack; a node
//! already aborted is skipped with its subtree, because everything below an
//! aborted node was aborted with it (or starts aborted).
//!
//! A spawn consumes its context: the context object itself becomes the new
//! task's context (moved to the new node, execution mode reset), which
//! saves an allocation and keeps the label and attributes the task
//! inherits. A node is freed as soon as nothing can reach it any more: no
//! context on it, no task registered on it, no node below it (RUN-009);
//! then its parent may go too. Until then it stays, aborted or not.

use crate::ffi::*;
use crate::handle::Handle;
use crate::mem::{try_cstring, try_raw};
use crate::metrics::series;
use crate::msg::{Lossy, Msg};
use crate::obj::{self, alloc_obj, Header, Kind, Object};
use crate::runtime::{self, Rt, State, Task};
use std::ffi::CStr;
use std::fmt::Write;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

pub struct Node {
    pub parent: *mut Node,
    pub first_child: *mut Node,
    pub next_sibling: *mut Node,
    pub prev_sibling: *mut Node,
    pub tasks: *mut Task,
    pub aborted: bool,
    /// The contexts on this node.
    pub ctxs: usize,
    /// Its place in the run's `nodes` (which frees what is left at the end).
    pub idx: usize,
}

#[repr(C)]
pub struct Ctx {
    pub h: Header,
    pub node: *mut Node,
    /// The label path, NUL-terminated.
    pub label: Vec<u8>,
    /// Sorted by key; both NUL-terminated.
    pub attrs: Vec<(Vec<u8>, Vec<u8>)>,
    pub exec: c_int,
    pub spent: bool,
    /// The task whose own context this is, if any.
    pub task: *mut Task,
}

// SAFETY: #[repr(C)] with the Header first, kind Ctx.
unsafe impl Object for Ctx {}

/// A node below `parent` (or a top node), aborted when its parent is.
pub fn new_node(rt: &mut Rt, parent: *mut Node) -> Option<*mut Node> {
    rt.nodes.try_reserve(1).ok()?;
    // SAFETY: `parent` is null or a live node of this run.
    let aborted = !parent.is_null() && unsafe { (*parent).aborted };
    let n = try_raw(Node {
        parent,
        first_child: ptr::null_mut(),
        next_sibling: ptr::null_mut(),
        prev_sibling: ptr::null_mut(),
        tasks: ptr::null_mut(),
        aborted,
        ctxs: 0,
        idx: rt.nodes.len(),
    })?;
    if !parent.is_null() {
        // SAFETY: as above; `n` is fresh.
        unsafe {
            let first = (*parent).first_child;
            (*n).next_sibling = first;
            if !first.is_null() {
                (*first).prev_sibling = n;
            }
            (*parent).first_child = n;
        }
    }
    runtime::push_node(rt, n);
    Some(n)
}

/// Free `n`, then its parent and so on, while nothing reaches them: no
/// context, no registered task, no child (RUN-009).
pub fn release_node(rt: &mut Rt, n: *mut Node) {
    let mut n = n;
    // SAFETY: `n` and its ancestors are live nodes of `rt`; a node is
    // unlinked from its parent and from `rt.nodes` before it is freed.
    unsafe {
        while !n.is_null() {
            if (*n).ctxs > 0 || !(*n).tasks.is_null() || !(*n).first_child.is_null() {
                return;
            }
            let parent = (*n).parent;
            let (prev, next) = ((*n).prev_sibling, (*n).next_sibling);
            if prev.is_null() {
                if !parent.is_null() {
                    (*parent).first_child = next;
                }
            } else {
                (*prev).next_sibling = next;
            }
            if !next.is_null() {
                (*next).prev_sibling = prev;
            }
            let i = (*n).idx;
            rt.nodes.swap_remove(i);
            if i < rt.nodes.len() {
                (*rt.nodes[i]).idx = i;
            }
            drop(Box::from_raw(n));
            n = parent;
        }
    }
}

/// Move context `c` onto node `to` (or off every node, with null),
/// freeing the node it leaves when nothing else reaches it.
///
/// # Safety
/// `c` must be a live context of `rt`; `to` null or a live node of `rt`.
pub unsafe fn set_node(rt: &mut Rt, c: *mut Ctx, to: *mut Node) {
    // SAFETY: forwarded.
    unsafe {
        let from = (*c).node;
        if !to.is_null() {
            (*to).ctxs += 1;
        }
        (*c).node = to;
        if !from.is_null() {
            (*from).ctxs -= 1;
            release_node(rt, from);
        }
    }
}

/// Free context `c` (not the spent one) and the node it leaves.
///
/// # Safety
/// `c` must be a live context of `rt` that nothing uses again.
pub unsafe fn free_ctx(rt: &mut Rt, c: *mut Ctx) {
    // SAFETY: forwarded.
    unsafe {
        set_node(rt, c, ptr::null_mut());
        obj::free_obj(rt, c as *mut Header);
    }
}

pub fn new_ctx(rt: &mut Rt, node: *mut Node, label: &[u8]) -> Option<*mut Ctx> {
    let label = try_cstring(label)?;
    let rtp: *mut Rt = rt;
    let c = alloc_obj(
        rt,
        Ctx {
            h: Header::new(Kind::Ctx, rtp),
            node: ptr::null_mut(),
            label,
            attrs: Vec::new(),
            exec: CW_EXEC_SHARED,
            spent: false,
            task: ptr::null_mut(),
        },
    )?;
    // SAFETY: the fresh context, on the caller's live node.
    unsafe { set_node(rt, c, node) };
    Some(c)
}

pub fn new_spent_ctx(rt: &mut Rt) -> Option<*mut Ctx> {
    let top = new_node(rt, ptr::null_mut())?;
    let c = new_ctx(rt, top, b"")?;
    // SAFETY: fresh object.
    unsafe { (*c).spent = true };
    Some(c)
}

/// Register `t` on node `n` (its owner).
///
/// # Safety
/// Both must be live objects of one run; `t` registered nowhere.
pub unsafe fn register(n: *mut Node, t: *mut Task) {
    // SAFETY: forwarded.
    unsafe {
        (*t).owner = n;
        (*t).reg_prev = ptr::null_mut();
        (*t).reg_next = (*n).tasks;
        if !(*n).tasks.is_null() {
            (*(*n).tasks).reg_prev = t;
        }
        (*n).tasks = t;
    }
}

/// Take `t` off its owner's list.
///
/// # Safety
/// `t` must be a live task, registered or not.
pub unsafe fn unregister(t: *mut Task) {
    // SAFETY: forwarded; the neighbours are live tasks of the same node.
    unsafe {
        let n = (*t).owner;
        if n.is_null() {
            return;
        }
        let (p, q) = ((*t).reg_prev, (*t).reg_next);
        if p.is_null() {
            (*n).tasks = q;
        } else {
            (*p).reg_next = q;
        }
        if !q.is_null() {
            (*q).reg_prev = p;
        }
        (*t).owner = ptr::null_mut();
        (*t).reg_prev = ptr::null_mut();
        (*t).reg_next = ptr::null_mut();
    }
}

/// Mark a task aborted; a suspended one is queued so that it ends at its
/// suspension point (TASK-002).
pub fn abort_task(rt: &mut Rt, t: *mut Task) {
    // SAFETY: `t` is a task of `rt`.
    unsafe {
        if (*t).state == State::Done || (*t).aborted {
            return;
        }
        (*t).aborted = true;
    }
    crate::metrics::series::task_stopped(t);
    runtime::wake_task(rt, t);
}

/// Abort `top` and everything below it (03-context.md, "The tree").
pub fn abort_subtree(rt: &mut Rt, top: *mut Node) {
    if top.is_null() {
        return;
    }
    let mut cur = top;
    // SAFETY: nodes and the tasks registered on them live until the run
    // ends; the walk follows only their links.
    unsafe {
        loop {
            let mut descend = false;
            if !(*cur).aborted {
                (*cur).aborted = true;
                let mut t = (*cur).tasks;
                while !t.is_null() {
                    let next = (*t).reg_next;
                    abort_task(rt, t);
                    t = next;
                }
                descend = !(*cur).first_child.is_null();
            }
            if descend {
                cur = (*cur).first_child;
                continue;
            }
            loop {
                if cur == top {
                    return;
                }
                if !(*cur).next_sibling.is_null() {
                    cur = (*cur).next_sibling;
                    break;
                }
                cur = (*cur).parent;
            }
        }
    }
}

fn label_error(label: &[u8]) -> Option<Msg> {
    let mut m = Msg::new();
    match label.first() {
        Some(c) if c.is_ascii_alphabetic() => {}
        _ => {
            let _ = write!(m, "label must start with [a-zA-Z]: {}", Lossy(label));
            return Some(m);
        }
    }
    if !label
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        let _ = write!(m, "label must only contain [a-zA-Z0-9_]: {}", Lossy(label));
        return Some(m);
    }
    None
}

fn bytes_of<'a>(s: *const c_char) -> &'a [u8] {
    if s.is_null() {
        return b"";
    }
    // SAFETY: the program passes a NUL-terminated string, valid for the call.
    unsafe { CStr::from_ptr(s) }.to_bytes()
}

/// `cw_child` (CTX-001..003, CTX-006).
///
/// # Safety
/// `ctx` must be a live context of this backend.
pub unsafe fn child(ctx: *mut Ctx, label: *const c_char) -> *mut Ctx {
    // SAFETY: forwarded.
    let rt = unsafe { (*ctx).h.rt };
    let label = bytes_of(label);
    if let Some(m) = label_error(label) {
        runtime::panic_current(rt, m.bytes());
    }
    // SAFETY: `ctx` is live; its label is NUL-terminated.
    let parent: &[u8] = unsafe {
        let l = &(*ctx).label;
        &*(&l[..l.len() - 1] as *const [u8])
    };
    let joined_starts_runtime = {
        let mut it = parent
            .iter()
            .chain(if parent.is_empty() {
                &b""[..]
            } else {
                &b"_"[..]
            })
            .chain(label.iter());
        b"runtime".iter().all(|c| it.next() == Some(c))
    };
    if joined_starts_runtime {
        // The label given to cw_child (CTX-003; it can only trigger at the
        // root, where it is also the joined one).
        let mut m = Msg::new();
        let _ = write!(m, "using runtime label is not allowed: ");
        m.push(label);
        runtime::panic_current(rt, m.bytes());
    }
    // SAFETY: `rt` is the live run of `ctx`; single-threaded.
    let r = unsafe { &mut *rt };
    // SAFETY: `ctx` is live.
    if unsafe { (*ctx).spent } {
        return r.spent_ctx;
    }
    let mut full = Vec::new();
    if full
        .try_reserve_exact(parent.len() + 1 + label.len() + 1)
        .is_err()
    {
        return r.spent_ctx;
    }
    full.extend_from_slice(parent);
    if !parent.is_empty() {
        full.push(b'_');
    }
    full.extend_from_slice(label);
    full.push(0);
    // SAFETY: `ctx` is live.
    let attrs = match clone_attrs(unsafe { &(*ctx).attrs }) {
        Some(a) => a,
        None => return r.spent_ctx,
    };
    // SAFETY: `ctx` is live.
    let node = match new_node(r, unsafe { (*ctx).node }) {
        Some(n) => n,
        None => return r.spent_ctx,
    };
    let c = alloc_obj(
        r,
        Ctx {
            h: Header::new(Kind::Ctx, rt),
            node: ptr::null_mut(),
            label: full,
            attrs,
            exec: CW_EXEC_SHARED,
            spent: false,
            task: ptr::null_mut(),
        },
    );
    match c {
        Some(c) => {
            // SAFETY: the fresh context and node.
            unsafe { set_node(r, c, node) };
            c
        }
        None => {
            release_node(r, node);
            r.spent_ctx
        }
    }
}

fn clone_attrs(a: &[(Vec<u8>, Vec<u8>)]) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut v = Vec::new();
    v.try_reserve_exact(a.len()).ok()?;
    for (k, val) in a {
        let k = try_cstring(&k[..k.len() - 1])?;
        let val = try_cstring(&val[..val.len() - 1])?;
        v.push((k, val));
    }
    Some(v)
}

/// `cw_with_attribute` (CTX-004, CTX-006).
///
/// # Safety
/// `ctx` must be a live context of this backend.
pub unsafe fn with_attribute(ctx: *mut Ctx, key: *const c_char, value: *const c_char) {
    // SAFETY: forwarded.
    let rt = unsafe { (*ctx).h.rt };
    let key = bytes_of(key);
    let value = bytes_of(value);
    if let Some(m) = label_error(key) {
        runtime::panic_current(rt, m.bytes());
    }
    // SAFETY: `ctx` is live and not shared with another thread.
    let c = unsafe { &mut *ctx };
    // SAFETY: `rt` is live.
    if ctx == unsafe { (*rt).spent_ctx } {
        return;
    }
    let (k, v) = match (try_cstring(key), try_cstring(value)) {
        (Some(k), Some(v)) => (k, v),
        _ => {
            c.spent = true;
            return;
        }
    };
    match c.attrs.binary_search_by(|(ak, _)| ak[..].cmp(&k[..])) {
        Ok(i) => c.attrs[i].1 = v,
        Err(i) => {
            if c.attrs.try_reserve(1).is_err() {
                c.spent = true;
                return;
            }
            c.attrs.insert(i, (k, v));
        }
    }
}

/// Release a context without spawning from it.
///
/// # Safety
/// `ctx` must be a live context of this backend.
pub unsafe fn release(ctx: *mut Ctx) {
    // SAFETY: forwarded.
    unsafe {
        let r = &mut *(*ctx).h.rt;
        if ctx == r.spent_ctx {
            return;
        }
        let t = (*ctx).task;
        if !t.is_null() {
            (*t).ctx = ptr::null_mut();
        }
        free_ctx(r, ctx);
    }
}

fn refused(r: &mut Rt, result: c_int) -> *mut Handle {
    let rtp: *mut Rt = r;
    alloc_obj(r, Handle::done(rtp, result, ptr::null_mut())).unwrap_or(r.nomem_handle)
}

/// `cw_spawn` (TASK-001, CTX-005, TASK-011).
///
/// # Safety
/// `ctx` must be a live context of this backend.
pub unsafe fn spawn(ctx: *mut Ctx, func: Option<cw_task_fn>, arg: *mut c_void) -> *mut Handle {
    // SAFETY: forwarded.
    let rt = unsafe { (*ctx).h.rt };
    // SAFETY: the run of a live context is live; single-threaded.
    let r = unsafe { &mut *rt };
    if ctx == r.spent_ctx {
        return r.nomem_handle;
    }
    // SAFETY: `ctx` is live.
    let (spent, node) = unsafe { ((*ctx).spent, (*ctx).node) };
    let func = match func {
        Some(f) if !spent => f,
        _ => {
            // SAFETY: consuming the live context.
            unsafe { release(ctx) };
            return r.nomem_handle;
        }
    };
    // The spawn's series of the task metrics, before anything else: a
    // spawn whose series cannot be made is refused and counted nowhere
    // (MET-014, MET-019).
    // SAFETY: `ctx` is live; its label is NUL-terminated.
    let (label, exec): (&[u8], c_int) = unsafe {
        let l = &(*ctx).label;
        (&*(&l[..l.len() - 1] as *const [u8]), (*ctx).exec)
    };
    let ser = match series::task_series(r, label, false, exec) {
        Some(s) => s,
        None => {
            // SAFETY: consuming the live context.
            unsafe { release(ctx) };
            return r.nomem_handle;
        }
    };
    // SAFETY: `node` is live.
    if r.ending || unsafe { (*node).aborted } {
        // A refused spawn counts as spawned, not as running (MET-014).
        // SAFETY: the series were just found or made.
        unsafe { (*ser.spawned).counter_add(1) };
        // MET-015: no polls series for a spawn that is not admitted.
        let mut only_polls = ser;
        only_polls.made[0] = false;
        only_polls.made[1] = false;
        series::forget(r, &only_polls);
        // SAFETY: consuming the live context.
        unsafe { release(ctx) };
        return refused(r, CW_ERR_CLOSED);
    }
    let made = (|| {
        let h = alloc_obj(r, Handle::pending(rt))?;
        let n = match new_node(r, node) {
            Some(n) => n,
            None => {
                // SAFETY: the fresh handle is unused.
                unsafe { obj::free_obj(r, h as *mut Header) };
                return None;
            }
        };
        // SAFETY: `ctx` is live; its label is NUL-terminated.
        let label: &[u8] = unsafe {
            let l = &(*ctx).label;
            &*(&l[..l.len() - 1] as *const [u8])
        };
        match runtime::new_task(r, func, arg, label) {
            Some(t) => Some((h, n, t)),
            None => {
                // SAFETY: the fresh handle is unused.
                unsafe { obj::free_obj(r, h as *mut Header) };
                release_node(r, n);
                None
            }
        }
    })();
    let (h, n, t) = match made {
        Some(x) => x,
        None => {
            series::forget(r, &ser);
            // SAFETY: consuming the live context.
            unsafe { release(ctx) };
            return r.nomem_handle;
        }
    };
    // SAFETY: the series were just found or made; `t` is fresh.
    unsafe {
        (*ser.spawned).counter_add(1);
        (*ser.running).gauge_add(1);
        (*t).series = ser;
    }
    // SAFETY: all fresh or live objects of this run.
    unsafe {
        register(node, t);
        let prev_owner = (*ctx).task;
        if !prev_owner.is_null() {
            (*prev_owner).ctx = ptr::null_mut();
        }
        set_node(r, ctx, n);
        (*ctx).exec = CW_EXEC_SHARED;
        (*ctx).task = t;
        (*t).ctx = ctx;
        (*t).handle = h;
        (*h).task = t;
    }
    runtime::enqueue(r, t);
    h
}
