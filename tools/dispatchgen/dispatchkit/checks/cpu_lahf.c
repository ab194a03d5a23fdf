/* Does the compiler build LAHF code? The macro of -msahf, and the instructions themselves. */
#if !defined(__LAHF_SAHF__)
    #error "no lahf/sahf"
#endif

int dispatch_check_lahf(const void *mem);

int dispatch_check_lahf(const void *mem)
{
    unsigned char flags = *(const unsigned char *)mem;
    __asm__ volatile("sahf\n\tlahf" : "+a"(flags) : : "cc");
    return flags;
}
