/* Linked against guarded.dll (its import), so the loader loads the DLL before
 * the program starts (tests/test_windows_guard.py). */
#include <stdio.h>

__declspec(dllimport) double guarded_payload(void);

int main(void)
{
    printf("payload %.1f\n", guarded_payload());
    return 0;
}
