/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Context switch for AArch64 (AAPCS64).
 *
 * Only what a callee must preserve is saved: x19-x28, the frame pointer
 * x29, the link register x30 (the resume point), sp, and the low halves
 * d8-d15 of v8-v15.  FPCR is kept per context too, as its rounding and
 * flush-to-zero controls must survive a call just like the x86 MXCSR;
 * writing it can be slow on some cores, so it is written only when the
 * two contexts differ.
 *
 * Frame left at the saved stack pointer, offsets in bytes; coro.c builds
 * the same frame by hand to start a coroutine:
 *
 *	0	x19, x20	16	x21, x22	32	x23, x24
 *	48	x25, x26	64	x27, x28	80	x29, x30
 *	96	d8, d9		112	d10, d11	128	d12, d13
 *	144	d14, d15	160	FPCR		168	padding
 */
#if defined(__aarch64__) && !defined(__ILP32__) && !defined(CW_CORO_UCONTEXT)

#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
# define BTI_C hint #34
#else
# define BTI_C
#endif

#define FRAME 176

	.text

/* void cw__coro_jump(void **save, void *to) */
	.p2align 4
	.globl	cw__coro_jump
	.hidden	cw__coro_jump
	.type	cw__coro_jump, %function
cw__coro_jump:
	.cfi_startproc
	BTI_C
	sub	sp, sp, #FRAME
	.cfi_def_cfa_offset FRAME
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #80]
	.cfi_offset x29, -96
	.cfi_offset x30, -88
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	mrs	x10, fpcr
	str	x10, [sp, #160]

	/* The frame on the other stack has the same shape, so the unwind
	 * notes above stay true across the exchange. */
	mov	x9, sp
	str	x9, [x0]
	mov	sp, x1

	ldr	x9, [sp, #160]
	cmp	x9, x10
	b.eq	1f
	msr	fpcr, x9
1:
	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	add	sp, sp, #FRAME
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	cw__coro_jump, .-cw__coro_jump

/*
 * First code run on a new stack, reached by the `ret` above with x19 and
 * x20 as coro.c preset them: call x20(x19).  The function never returns;
 * brk makes sure that a broken promise traps instead of running off into
 * whatever follows.
 *
 * It is entered by `ret`, which branch target identification does not
 * check, so it needs no landing pad.  Marking the return address
 * undefined tells debuggers and unwinders that the stack ends here.
 */
	.p2align 4
	.globl	cw__coro_trampoline
	.hidden	cw__coro_trampoline
	.type	cw__coro_trampoline, %function
cw__coro_trampoline:
	.cfi_startproc
	.cfi_undefined x30
	mov	x0, x19
	blr	x20
	brk	#0x3e8
	.cfi_endproc
	.size	cw__coro_trampoline, .-cw__coro_trampoline

#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
/*
 * Declare BTI support, which the landing pad above provides, so this
 * object does not switch it off for the whole program.
 */
	.section .note.gnu.property, "a"
	.p2align 3
	.long	4			/* name size */
	.long	16			/* descriptor size */
	.long	5			/* NT_GNU_PROPERTY_TYPE_0 */
	.asciz	"GNU"
	.long	0xc0000000		/* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
	.long	4			/* data size */
	.long	1			/* GNU_PROPERTY_AARCH64_FEATURE_1_BTI */
	.p2align 3
#endif

#endif

/*
 * Even when the body above is compiled out, the object must say it does
 * not need an executable stack, or the linker would make every thread
 * stack of the program executable.
 */
#if defined(__ELF__)
	.section .note.GNU-stack, "", %progbits
#endif
