/* Loads the DLL named by argv[1] with LoadLibrary, as a program or Python
 * does, and calls its guarded_payload (tests/test_windows_guard.py). */
#include <stdio.h>
#include <windows.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: load_dll DLL\n");
        return 2;
    }
    HMODULE dll = LoadLibraryA(argv[1]);
    if (dll == NULL) {
        printf("LoadLibrary failed: error %lu\n", (unsigned long)GetLastError());
        return 4;
    }
    double (*payload)(void) = (double (*)(void))(void (*)(void))GetProcAddress(dll, "guarded_payload");
    if (payload == NULL) {
        printf("GetProcAddress failed: error %lu\n", (unsigned long)GetLastError());
        return 5;
    }
    printf("payload %.1f\n", payload());
    FreeLibrary(dll);
    return 0;
}
