/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Context switch for x86_64 (System V ABI).
 *
 * Only what a callee must preserve is saved: rbx, rbp, r12-r15, and the
 * control halves of MXCSR and the x87 FPU, which the ABI also counts as
 * callee-saved.  Everything else is dead across a call anyway, so the
 * caller has already spilled whatever it still needs.  The return address
 * pushed by the call is the resume point, so `ret` on the new stack is
 * the jump itself.
 *
 * Frame left at the saved stack pointer, lowest address first; coro.c
 * builds the same frame by hand to start a coroutine:
 *
 *	+0	MXCSR (4 bytes), x87 control word (2 bytes), padding
 *	+8	r15
 *	+16	r14
 *	+24	r13
 *	+32	r12
 *	+40	rbx
 *	+48	rbp
 *	+56	return address
 */
#if defined(__x86_64__) && !defined(__ILP32__) && !defined(CW_CORO_UCONTEXT)

#if defined(__CET__) && (__CET__ & 1)
# define ENDBR endbr64
#else
# define ENDBR
#endif

	.text

/* void cw__coro_jump(void **save, void *to) */
	.p2align 4
	.globl	cw__coro_jump
	.hidden	cw__coro_jump
	.type	cw__coro_jump, @function
cw__coro_jump:
	.cfi_startproc
	ENDBR
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbp, -16
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -24
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	.cfi_offset %r12, -32
	pushq	%r13
	.cfi_adjust_cfa_offset 8
	.cfi_offset %r13, -40
	pushq	%r14
	.cfi_adjust_cfa_offset 8
	.cfi_offset %r14, -48
	pushq	%r15
	.cfi_adjust_cfa_offset 8
	.cfi_offset %r15, -56
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)

	/* The frame on the other stack has the same shape, so the unwind
	 * notes above stay true across the exchange. */
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp

	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%r15
	.cfi_adjust_cfa_offset -8
	popq	%r14
	.cfi_adjust_cfa_offset -8
	popq	%r13
	.cfi_adjust_cfa_offset -8
	popq	%r12
	.cfi_adjust_cfa_offset -8
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	cw__coro_jump, .-cw__coro_jump

/*
 * First code run on a new stack, reached by the `ret` above with r12 and
 * rbx as coro.c preset them: call rbx(r12).  rsp is 16-byte aligned here,
 * as the call requires.  The function never returns; ud2 makes sure that
 * a broken promise traps instead of running off into whatever follows.
 *
 * It is entered by `ret`, never by an indirect call or jump, so it needs
 * no endbr64.  Marking the return address undefined tells debuggers and
 * unwinders that the stack ends here.
 */
	.p2align 4
	.globl	cw__coro_trampoline
	.hidden	cw__coro_trampoline
	.type	cw__coro_trampoline, @function
cw__coro_trampoline:
	.cfi_startproc
	.cfi_undefined %rip
	xorl	%ebp, %ebp
	movq	%r12, %rdi
	call	*%rbx
	ud2
	.cfi_endproc
	.size	cw__coro_trampoline, .-cw__coro_trampoline

#if defined(__CET__) && (__CET__ & 1)
/*
 * Declare IBT support, which the endbr64 above provides, so this object
 * does not switch it off for the whole program.  Shadow stacks are
 * deliberately not claimed: jumping between stacks with `ret` is exactly
 * what they forbid.
 */
	.section .note.gnu.property, "a"
	.p2align 3
	.long	4			/* name size */
	.long	16			/* descriptor size */
	.long	5			/* NT_GNU_PROPERTY_TYPE_0 */
	.asciz	"GNU"
	.long	0xc0000002		/* GNU_PROPERTY_X86_FEATURE_1_AND */
	.long	4			/* data size */
	.long	1			/* GNU_PROPERTY_X86_FEATURE_1_IBT */
	.p2align 3
#endif

#endif

/*
 * Even when the body above is compiled out, the object must say it does
 * not need an executable stack, or the linker would make every thread
 * stack of the program executable.  (%progbits is understood by the
 * assemblers of every target; @ starts a comment on some.)
 */
#if defined(__ELF__)
	.section .note.GNU-stack, "", %progbits
#endif
