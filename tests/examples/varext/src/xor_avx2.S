/* The AVX2 variant, hand-written (x86-64 SysV: dst=rdi a=rsi b=rdx n=rcx).
 * Its symbols are plain .globl, as upstream assembly has them: the module's
 * version script (dispatchgen meson) keeps them out of its exports. */
#if DISPATCH_CPU_TARGET_IS_BASELINE
#error "xor_avx2.S is the AVX2 variant"
#endif
    .text
    .globl  varext_xor_avx2
    .type   varext_xor_avx2, @function
varext_xor_avx2:
    xorl    %eax, %eax
    movq    %rcx, %r8
    andq    $-32, %r8
1:  cmpq    %r8, %rax
    jae     2f
    vmovdqu (%rsi,%rax), %ymm0
    vpxor   (%rdx,%rax), %ymm0, %ymm0
    vmovdqu %ymm0, (%rdi,%rax)
    addq    $32, %rax
    jmp     1b
2:  cmpq    %rcx, %rax
    jae     3f
    movzbl  (%rsi,%rax), %r9d
    xorb    (%rdx,%rax), %r9b
    movb    %r9b, (%rdi,%rax)
    incq    %rax
    jmp     2b
3:  vzeroupper
    ret
    .size   varext_xor_avx2, .-varext_xor_avx2

    .globl  varext_impl_avx2
    .type   varext_impl_avx2, @function
varext_impl_avx2:
    leaq    .Limpl(%rip), %rax
    ret
    .size   varext_impl_avx2, .-varext_impl_avx2

    .section .rodata
.Limpl:
    .asciz  "avx2-asm"
    .globl  varext_avx2_built_for
varext_avx2_built_for:
    .asciz  DISPATCH_CPU_TARGET_NAME
    .section .note.GNU-stack,"",@progbits
