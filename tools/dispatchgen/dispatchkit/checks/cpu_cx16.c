/* Does the compiler build CX16 code? A 16-byte compare-and-swap, inline only with -mcx16 (the macro says so). */
#if !defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16)
    #error "no inline cmpxchg16b"
#endif

int dispatch_check_cx16(const void *mem);

int dispatch_check_cx16(const void *mem)
{
    __int128 v;
    __builtin_memcpy(&v, mem, sizeof(v));
    return (int)__sync_val_compare_and_swap(&v, (__int128)1, (__int128)2);
}
