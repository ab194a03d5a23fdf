/* mylib_xor_avx2, hand-written (x86-64 SysV): dst=rdi a=rsi b=rdx n=rcx.
 * The AVX2 variant's xor entry point is this file (mylib.variants.ini). */
#if DISPATCH_CPU_TARGET_IS_BASELINE
#error "mylib_avx2_xor.S is the AVX2 variant"
#endif
    .text
    .globl  mylib_xor_avx2
    .hidden mylib_xor_avx2
    .type   mylib_xor_avx2, @function
mylib_xor_avx2:
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
    .size   mylib_xor_avx2, .-mylib_xor_avx2

    .section .rodata
    .globl  mylib_xor_avx2_built_for
    .hidden mylib_xor_avx2_built_for
mylib_xor_avx2_built_for:
    .asciz  DISPATCH_CPU_TARGET_NAME
    .section .note.GNU-stack,"",@progbits
