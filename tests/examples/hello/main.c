/* hello: prints the variant of whoami() this CPU runs (chosen once), or with
 * --all, greets from every variant the CPU can run, highest first. */
#include <stdio.h>
#include <string.h>

#include "hello.dispatch.h"

DISPATCH_CPU_DISPATCH_DECLARE(const char *whoami, (void))
DISPATCH_CPU_DISPATCH_DECLARE(void say_hello, (void))

int main(int argc, char **argv)
{
    if (dispatch_cpu_init() != 0) {
        fprintf(stderr, "hello: %s\n", dispatch_cpu_error());
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "--all") == 0) {
        DISPATCH_CPU_DISPATCH_CALL_ALL(say_hello, ());
        return 0;
    }
    const char *(*whoami_fn)(void) = DISPATCH_CPU_DISPATCH_CALL(whoami, );
    printf("%s %s\n", whoami_fn(), DISPATCH_CPU_DISPATCH_INFO());
    return 0;
}
