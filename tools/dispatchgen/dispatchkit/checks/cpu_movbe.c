/* Does the compiler build MOVBE code? A byte-swapping load. */
#if !defined(__MOVBE__)
    #error "no movbe"
#endif

int dispatch_check_movbe(const void *mem);

int dispatch_check_movbe(const void *mem)
{
    unsigned int v;
    __asm__("movbe %1, %0" : "=r"(v) : "m"(*(const unsigned int *)mem));
    return (int)v;
}
