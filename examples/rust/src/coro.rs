// SPDX-License-Identifier: Apache-2.0 OR MIT
//! Task stacks and the switch between them.
//!
//! A task is a stackful coroutine (00-conventions.md) and, on a backend
//! without `CW_CAP_PARALLEL`, every task of a run executes on the thread
//! that called `cw_start`. So a task gets a stack of its own (`mmap`, with
//! an inaccessible guard page below it when `stack_guard` is set) and the
//! scheduler moves between stacks with a ten-instruction switch written in
//! `global_asm!` (stable since Rust 1.59): it saves the callee-saved
//! registers and the x87/SSE control words on the old stack, stores the
//! stack pointer, loads the other one and restores. No C is needed, and no
//! thread per task: a switch costs nanoseconds, and a task that is
//! abandoned (unwound, see `runtime.rs`) is freed by unmapping its stack.
//!
//! The first switch into a stack "returns" into `cwrs_boot`, which calls the
//! entry with its argument on a 16-byte aligned stack (TASK-012); the entry
//! never returns (it switches away for the last time).

use std::os::raw::{c_int, c_long, c_void};
use std::ptr;

#[cfg(not(target_arch = "x86_64"))]
compile_error!("cwrt-rust switches stacks with x86-64 assembly only");

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl cwrs_switch",
    ".hidden cwrs_switch",
    ".type cwrs_switch,@function",
    "cwrs_switch:",
    "push rbp",
    "push rbx",
    "push r12",
    "push r13",
    "push r14",
    "push r15",
    "sub rsp, 8",
    "stmxcsr dword ptr [rsp]",
    "fnstcw word ptr [rsp+4]",
    "mov [rdi], rsp",
    "mov rsp, rsi",
    "ldmxcsr dword ptr [rsp]",
    "fldcw word ptr [rsp+4]",
    "add rsp, 8",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    "ret",
    ".size cwrs_switch, .-cwrs_switch",
    ".p2align 4",
    ".globl cwrs_boot",
    ".hidden cwrs_boot",
    ".type cwrs_boot,@function",
    "cwrs_boot:",
    "mov rdi, r13",
    "call r12",
    "ud2",
    ".size cwrs_boot, .-cwrs_boot",
);

extern "C" {
    fn cwrs_switch(save: *mut *mut u8, to: *mut u8);
    fn cwrs_boot();
    fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        off: i64,
    ) -> *mut c_void;
    fn munmap(addr: *mut c_void, len: usize) -> c_int;
    fn mprotect(addr: *mut c_void, len: usize, prot: c_int) -> c_int;
    fn sysconf(name: c_int) -> c_long;
}

const PROT_NONE: c_int = 0;
const PROT_READ: c_int = 1;
const PROT_WRITE: c_int = 2;
const MAP_PRIVATE: c_int = 0x02;
const MAP_ANONYMOUS: c_int = 0x20;
const MAP_NORESERVE: c_int = 0x4000;
const MAP_STACK: c_int = 0x20000;
const SC_PAGESIZE: c_int = 30;

/// The entry a fresh stack starts in; it must never return.
pub type Entry = unsafe extern "C" fn(usize);

/// One mapped task stack. Unmapped on drop.
pub struct Stack {
    base: *mut u8,
    len: usize,
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { sysconf(SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

impl Stack {
    /// A stack of at least `usable` bytes, plus a guard page below when
    /// `guard`; `None` when the mapping is refused (TASK-011).
    pub fn new(usable: usize, guard: bool) -> Option<Stack> {
        let page = page_size();
        let usable = usable.checked_add(page - 1)? / page * page;
        let len = usable.checked_add(if guard { page } else { 0 })?;
        // SAFETY: an anonymous private mapping with no address hint touches
        // no existing memory.
        let p = unsafe {
            mmap(
                ptr::null_mut(),
                len,
                PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                -1,
                0,
            )
        };
        if p as isize == -1 || p.is_null() {
            return None;
        }
        // SAFETY: the first page lies inside the mapping just made.
        if guard && unsafe { mprotect(p, page, PROT_NONE) } != 0 {
            // SAFETY: unmapping exactly the mapping made above.
            unsafe { munmap(p, len) };
            return None;
        }
        Some(Stack {
            base: p as *mut u8,
            len,
        })
    }

    /// Lay out a first frame so that the first switch to the returned stack
    /// pointer calls `entry(arg)` on a 16-byte aligned stack.
    pub fn prepare(&mut self, entry: Entry, arg: usize) -> *mut u8 {
        let top = (self.base as usize + self.len) & !15;
        let sp = top - 80;
        let words: [usize; 8] = [
            0x037F_0000_1F80,        // MXCSR 0x1F80 at [sp], x87 control word 0x037F at [sp+4]
            0,                       // r15
            0,                       // r14
            arg,                     // r13: the entry's argument
            entry as Entry as usize, // r12: the entry
            0,                       // rbx
            0,                       // rbp
            cwrs_boot as unsafe extern "C" fn() as usize,
        ];
        // SAFETY: [sp, sp + 64) lies inside the writable top of this stack
        // (it is at least a page long), and `sp` is 8-byte aligned.
        unsafe { ptr::copy_nonoverlapping(words.as_ptr(), sp as *mut usize, 8) };
        sp as *mut u8
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping this value owns; no task runs
        // on it any more (the scheduler drops a stack only after switching
        // away from it for good).
        unsafe { munmap(self.base as *mut c_void, self.len) };
    }
}

/// Save the current stack pointer in `*save` and continue on `to`, a stack
/// pointer saved by an earlier `switch` or made by `Stack::prepare`.
///
/// # Safety
/// `to` must be a live, suspended stack of this thread, and nothing on the
/// current stack may be borrowed by the code that runs on `to` in a way that
/// outlives the current frame.
pub unsafe fn switch(save: *mut *mut u8, to: *mut u8) {
    // SAFETY: forwarded from the caller's contract.
    unsafe { cwrs_switch(save, to) }
}
