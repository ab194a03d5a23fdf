/*
 * The baseline guard of a program or library built with `dispatchgen meson
 * --name NAME`: before any code compiled with the baseline flags runs, it
 * checks that the CPU has every baseline feature, and if not it prints one
 * line naming the program and what the CPU lacks, and exits with status 1.
 *
 * Note [Program guard]
 * A Python module has a place for the check that the interpreter calls
 * first (its PyInit, Note [Module guard] in cpu_module_guard.c); a program
 * has none: every --sources file is compiled with the baseline flags, `main`
 * included, and so may be any constructor of the user's code. So the guard
 * registers itself with the loader, from this file, which is compiled with
 * the CPU runtime WITHOUT the baseline flags (Note [Baseline guard]):
 *
 * - ELF executables: an entry of .preinit_array. The dynamic loader (or a
 *   static executable's start code) calls these after relocation and before
 *   every initializer, those of the shared libraries (libc's included) and
 *   the executable's own constructors, so neither a constructor of the user's
 *   code nor a function of the executable that a library's constructor calls
 *   (an interposed malloc) runs first.
 * - Shared objects have no .preinit_array (the linker refuses one), so with
 *   DISPATCH_PROGRAM_GUARD_CONSTRUCTOR (`dispatchgen meson --shared-library`)
 *   the guard is a constructor of priority 101, the first the compiler lets
 *   a user have: it runs before the library's other constructors, and before
 *   any code of the program that loads it calls into the library.
 * - Other object formats (Mach-O): that constructor too.
 * - Windows executables (PE, mingw-w64 gcc or clang): an entry of
 *   .CRT$XIB, a C initializer. The C runtime's start code runs the
 *   .CRT$XI* entries in name order (its own in .CRT$XIA*, then this one),
 *   then .CRT$XC*, and only then main's __main runs the constructors of
 *   .ctors (a C constructor of any priority and C++ static objects, with
 *   gcc and clang alike). The start code ignores what an entry returns, so
 *   the guard exits itself. Before it run only the loader, the TLS callbacks
 *   (a C++ thread_local's dynamic initializer among them) and the CRT's own
 *   set-up.
 * - Windows DLLs (DISPATCH_PROGRAM_GUARD_CONSTRUCTOR on _WIN32): no C
 *   initializer can fail a load (the C runtime's DLL start code ignores them
 *   too), so the guard is the DLL's entry point, dispatch__pg_dll_entry
 *   (`dispatchgen meson --shared-library` puts `-Wl,--entry=` for it in the
 *   runtime's link args when the compiler targets Windows). It returns FALSE
 *   to DLL_PROCESS_ATTACH before the C runtime or DllMain runs: LoadLibrary
 *   returns NULL (ERROR_DLL_INIT_FAILED), and a program linked against the
 *   DLL fails to start before its main. Otherwise it hands every call to
 *   mingw-w64's own entry, DllMainCRTStartup.
 *
 * Flags of the build's own c_args (CFLAGS) reach every object, this one's
 * too: a baseline raised there (`-mavx2` in CFLAGS joins the baseline) is
 * compiled into the guard as well. Raise it with cpu-baseline instead.
 *
 * What runs before either: the loader's relocation, which calls IFUNC
 * resolvers (glibc's own are built for the minimum CPU; a resolver of the
 * user's, compiled with the baseline flags, would run unguarded) and, in a
 * shared object, the constructors of the libraries it depends on.
 *
 * The check reads the hardware only (dispatch__cpu_detect_hardware): the env
 * variables cannot make a missing instruction run. It must not call
 * dispatch_cpu_init(), which caches its result: before libc's own
 * initializer the environment is not set up yet (getenv finds nothing), and
 * the cached result would ignore the program's <PREFIX>_DISABLE/ENABLE
 * variables for good. A refused env request is still dispatch_cpu_init()'s
 * error, which the program reports itself. Output
 * is snprintf + write(2) (WriteFile on Windows): no stdio stream is touched
 * before main.
 */
#ifndef _GNU_SOURCE
    #define _GNU_SOURCE
#endif
#define DISPATCH_NO_CPU_INTRINSICS_HEADERS
#include "dispatch/_cpu_dispatch.h"
#include "dispatch/cpu_runtime.h"
#include "cpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
    #include <windows.h>
#else
    #include <unistd.h>
#endif

/* The name as its character codes (`hello` -> 104,101,108,108,111): a name
 * passed as a token would be macro-expanded (`linux` is 1 under -std=gnu11)
 * and one passed as a string literal needs quotes that a build's command
 * line may not keep. */
#ifndef DISPATCH_PROGRAM_NAME_CHARS
    #error "compile cpu_program_guard.c with -DDISPATCH_PROGRAM_NAME_CHARS=<its name's codes>"
#endif
static const char dispatch__pg_name[] = {DISPATCH_PROGRAM_NAME_CHARS, 0};
#define DISPATCH__PG_NAME dispatch__pg_name

#define DISPATCH__PG_ID(NAME, ...) DISPATCH_CPU_FEATURE_##NAME,
static const int dispatch__pg_baseline[] = {
    DISPATCH_WITH_CPU_BASELINE_CALL(DISPATCH__PG_ID, _)
    DISPATCH_CPU_FEATURE_NONE
};

/* All of `text` to stderr, unbuffered. */
static void dispatch__pg_write(const char *text, size_t todo)
{
#if defined(_WIN32)
    HANDLE err = GetStdHandle(STD_ERROR_HANDLE);
    while (todo > 0) {
        DWORD wrote = 0;
        if (!WriteFile(err, text, (DWORD)todo, &wrote, NULL) || wrote == 0) {
            break;
        }
        text += wrote;
        todo -= wrote;
    }
#else
    while (todo > 0) {
        ssize_t wrote = write(2, text, todo);
        if (wrote <= 0) {
            break;
        }
        text += wrote;
        todo -= (size_t)wrote;
    }
#endif
}

/* 0 when the CPU has every baseline feature; else the one line, and 1. */
static int dispatch__pg_refuses(void)
{
    char missing[512];
    unsigned char hardware[DISPATCH_CPU_FEATURE_MAX];
    size_t len = 0;
    missing[0] = '\0';
    dispatch__cpu_detect_hardware(hardware);
    for (const int *id = dispatch__pg_baseline; *id != DISPATCH_CPU_FEATURE_NONE; ++id) {
        if (hardware[*id]) {
            continue;
        }
        int n = snprintf(missing + len, sizeof(missing) - len, len ? " %s" : "%s",
                         dispatch_cpu_feature_name(*id));
        if (n > 0 && (size_t)n < sizeof(missing) - len) {
            len += (size_t)n;
        }
    }
    if (len == 0) {
        return 0;
    }
    char line[1536];
    int n = snprintf(line, sizeof(line),
        "%s: this CPU lacks %s, which this build of %s requires (its baseline is '%s' and "
        "all of its code may use those instructions); build it with a lower cpu-baseline "
        "or run it on a CPU that has them\n",
        DISPATCH__PG_NAME, missing, DISPATCH__PG_NAME, DISPATCH_WITH_CPU_BASELINE);
    if (n > 0) {
        dispatch__pg_write(line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
    }
    return 1;
}

static void dispatch__pg_check(void)
{
    if (dispatch__pg_refuses()) {
        _Exit(1); /* no atexit handler or destructor of the user's code may run either */
    }
}

#if defined(_WIN32) && defined(DISPATCH_PROGRAM_GUARD_CONSTRUCTOR)
/* The C runtime's own DLL entry, which this one calls once the CPU passed:
 * mingw-w64's DllMainCRTStartup, or the Microsoft C runtime's
 * _DllMainCRTStartup (cl and clang-cl, which define _MSC_VER). */
#if defined(_MSC_VER)
    #define DllMainCRTStartup _DllMainCRTStartup
#endif
BOOL WINAPI DllMainCRTStartup(HANDLE dll, DWORD reason, LPVOID reserved);
BOOL WINAPI dispatch__pg_dll_entry(HANDLE dll, DWORD reason, LPVOID reserved);

static int dispatch__pg_refused;

BOOL WINAPI dispatch__pg_dll_entry(HANDLE dll, DWORD reason, LPVOID reserved)
{
    if (reason == DLL_PROCESS_ATTACH && dispatch__pg_refuses()) {
        dispatch__pg_refused = 1;
        return FALSE;
    }
    if (dispatch__pg_refused) {
        return TRUE; /* the loader's DLL_PROCESS_DETACH: the C runtime never started */
    }
    return DllMainCRTStartup(dll, reason, reserved);
}
#elif defined(_WIN32)
static int dispatch__pg_initializer(void)
{
    dispatch__pg_check();
    return 0;
}
#if defined(_MSC_VER) && !defined(__clang__)
/* cl has no GNU attributes: its way to place data in a section; not static,
 * so that no optimization drops it as unused */
#pragma section(".CRT$XIB", read)
int (*const dispatch__pg_entry)(void);
__declspec(allocate(".CRT$XIB")) int (*const dispatch__pg_entry)(void) = dispatch__pg_initializer;
#else
__attribute__((used, section(".CRT$XIB")))
static int (*const dispatch__pg_entry)(void) = dispatch__pg_initializer;
#endif
#elif defined(__ELF__) && !defined(DISPATCH_PROGRAM_GUARD_CONSTRUCTOR)
/* glibc passes (argc, argv, envp), musl nothing: the guard reads none. */
static void dispatch__pg_preinit(void)
{
    dispatch__pg_check();
}
__attribute__((used, section(".preinit_array")))
static void (*const dispatch__pg_entry)(void) = dispatch__pg_preinit;
#elif defined(__GNUC__) || defined(__clang__)
__attribute__((constructor(101))) static void dispatch__pg_constructor(void)
{
    dispatch__pg_check();
}
#else
    #error "the program guard needs an ELF .preinit_array, a Windows .CRT$XI entry or GCC/clang constructors"
#endif
