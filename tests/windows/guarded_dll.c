/* A DLL built with the toolkit (`dispatchgen meson --name guarded --shared-library`)
 * whose DllMain and exported function run code built with the baseline flags:
 * the guard, its entry point, must refuse the load first on a CPU that lacks
 * the baseline (tests/test_windows_guard.py). */
#include <stdio.h>
#include <windows.h>

double baseline_payload(void);

BOOL WINAPI DllMain(HINSTANCE dll, DWORD reason, LPVOID reserved)
{
    (void)dll;
    (void)reserved;
    if (reason == DLL_PROCESS_ATTACH) {
        printf("DllMain %.1f\n", baseline_payload());
        fflush(stdout);
    }
    return TRUE;
}

__declspec(dllexport) double guarded_payload(void)
{
    return baseline_payload();
}
