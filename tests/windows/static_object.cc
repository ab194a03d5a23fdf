// A C++ program whose static object's constructor runs code built with the
// baseline flags (baseline_payload.c) before main: the toolkit's guard must
// run before it (tests/test_windows_guard.py). No standard header: Debian's
// mingw-w64 has no C++ library for clang to use, and none is needed here.
extern "C" int printf(const char *, ...);
extern "C" double baseline_payload(void);

struct Early {
    Early() { printf("static constructor %.1f\n", baseline_payload()); }
};
static Early early;

int main()
{
    printf("main\n");
    return 0;
}
