/*
 * C-level checks of sources/cpu/ that Python cannot reach: the table's
 * internal consistency, the /proc readers the non-x86 paths rely on, the
 * env handling through the test hook, and the trace registry.
 * Run by `meson test` (and by hand: see sources/cpu/meson.build).
 */
#ifndef _GNU_SOURCE
    #define _GNU_SOURCE /* setenv, mkstemp, getauxval under -std=c11 */
#endif
#include "cpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
    #include <sys/auxv.h>
    #include <unistd.h>
#endif
#if defined(_WIN32)
    /* The Microsoft C runtime has neither setenv nor pthreads: its own calls
     * (tests/windows/cpu_runtime runs this file under wine). An empty value
     * removes the variable there, which is what unsetenv means. */
    #include <windows.h>
    #define setenv(NAME, VALUE, OVERWRITE) _putenv_s((NAME), (VALUE))
    #define unsetenv(NAME) _putenv_s((NAME), "")
#else
    #include <pthread.h>
#endif

static int failures;

#define CHECK(COND, ...)                                              \
    do {                                                              \
        if (!(COND)) {                                                \
            ++failures;                                               \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #COND); \
            fprintf(stderr, __VA_ARGS__);                             \
            fputc('\n', stderr);                                      \
        }                                                             \
    } while (0)

/* Checks the implications of a row; returns whether all are present. */
static int implies_ok(const dispatch_cpu_feature_info *row, int have_row)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", row->implies);
    int all = 1, count = 0;
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        CHECK(++count <= DISPATCH__CPU_MAX_IMPLIES, "%s implies too many", row->name);
        const int id = dispatch_cpu_feature_id(tok);
        CHECK(id != DISPATCH_CPU_FEATURE_NONE, "%s implies unknown %s", row->name, tok);
        if (have_row) {
            CHECK(dispatch_cpu_have(id), "%s present but its implied %s is not", row->name, tok);
        }
        all = all && dispatch_cpu_have(id);
    }
    return all;
}

static void test_table(void)
{
    const int n = dispatch_cpu_feature_count();
    CHECK(n > 0, "empty table");
    for (int i = 0; i < n; ++i) {
        const dispatch_cpu_feature_info *row = dispatch_cpu_feature_at(i);
        CHECK(dispatch_cpu_feature_id(row->name) == row->id, "lookup of %s", row->name);
        CHECK(strcmp(dispatch_cpu_feature_name(row->id), row->name) == 0, "name of %d", row->id);
        const int have = dispatch_cpu_have(row->id);
        const int members = implies_ok(row, have);
        if (row->is_group && row->on_this_arch) {
            CHECK(have == members, "group %s is not the AND of its members", row->name);
        }
        if (!row->on_this_arch) {
            CHECK(!have, "%s reported on the wrong architecture", row->name);
        }
    }
    CHECK(dispatch_cpu_feature_id("avx512_skx") == DISPATCH_CPU_FEATURE_AVX512_SKX, "case");
    CHECK(dispatch_cpu_feature_id("AVX3") == DISPATCH_CPU_FEATURE_NONE, "unknown name");
    CHECK(dispatch_cpu_feature_at(n) == NULL, "row past the end");
    CHECK(dispatch_cpu_have(DISPATCH_CPU_FEATURE_MAX) == 0, "out of range id");
}

#if defined(__linux__)
static void test_proc_readers(void)
{
    unsigned long v = 0;
    CHECK(dispatch__cpu_auxv_read("/proc/self/auxv", AT_PAGESZ, &v) == 0, "AT_PAGESZ absent");
    CHECK(v == (unsigned long)sysconf(_SC_PAGESIZE), "AT_PAGESZ %lu", v);
    /* Not AT_HWCAP: glibc's getauxval(AT_HWCAP) on x86 is its own word. */
    CHECK(dispatch__cpu_auxv_read("/proc/self/auxv", AT_UID, &v) == 0, "AT_UID absent");
    CHECK(v == (unsigned long)getuid(), "AT_UID %lu", v);
    CHECK(dispatch__cpu_auxv_read("/proc/self/auxv", 0x7fff, &v) == -1, "absent entry");
    CHECK(dispatch__cpu_auxv_read("/nonexistent/auxv", AT_HWCAP, &v) == -1, "missing file");

    /* A fake cpuinfo: the first matching key wins, words match whole. */
    char path[] = "/tmp/dispatch-cpuinfo-XXXXXX";
    const int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0) {
        return;
    }
    const char text[] = "processor\t: 0\nFeatures\t: fp asimd asimdhp sve\n"
                        "Features\t: fp\nflags : sse4_1\n";
    CHECK(write(fd, text, sizeof(text) - 1) == (ssize_t)(sizeof(text) - 1), "write");
    close(fd);
    CHECK(dispatch__cpu_cpuinfo_has(path, "Features", "asimdhp") == 1, "asimdhp");
    CHECK(dispatch__cpu_cpuinfo_has(path, "Features", "sve") == 1, "last word");
    CHECK(dispatch__cpu_cpuinfo_has(path, "Features", "asimddp") == 0, "absent word");
    CHECK(dispatch__cpu_cpuinfo_has(path, "Features", "asimd") == 1, "whole word");
    CHECK(dispatch__cpu_cpuinfo_has(path, "Features", "asim") == 0, "prefix is no match");
    CHECK(dispatch__cpu_cpuinfo_has(path, "flags", "sse4_1") == 1, "other key");
    CHECK(dispatch__cpu_cpuinfo_has(path, "Hardware", "x") == -1, "missing key");
    unlink(path);
}
#endif

#if (defined(__x86_64__) || defined(__i386__)) && defined(__linux__)
static void test_x86_matches_cpuinfo(void)
{
    static const struct {
        int id;
        const char *flag;
    } map[] = {
        {DISPATCH_CPU_FEATURE_SSE2, "sse2"},       {DISPATCH_CPU_FEATURE_SSE3, "pni"},
        {DISPATCH_CPU_FEATURE_SSSE3, "ssse3"},     {DISPATCH_CPU_FEATURE_SSE41, "sse4_1"},
        {DISPATCH_CPU_FEATURE_SSE42, "sse4_2"},    {DISPATCH_CPU_FEATURE_POPCNT, "popcnt"},
        {DISPATCH_CPU_FEATURE_AVX, "avx"},         {DISPATCH_CPU_FEATURE_F16C, "f16c"},
        {DISPATCH_CPU_FEATURE_FMA3, "fma"},        {DISPATCH_CPU_FEATURE_AVX2, "avx2"},
        {DISPATCH_CPU_FEATURE_AVX512F, "avx512f"}, {DISPATCH_CPU_FEATURE_AVX512CD, "avx512cd"},
        {DISPATCH_CPU_FEATURE_AVX512ER, "avx512er"},
        {DISPATCH_CPU_FEATURE_AVX512PF, "avx512pf"},
        {DISPATCH_CPU_FEATURE_AVX5124FMAPS, "avx512_4fmaps"},
        {DISPATCH_CPU_FEATURE_AVX5124VNNIW, "avx512_4vnniw"},
        {DISPATCH_CPU_FEATURE_AVX512VL, "avx512vl"},
        {DISPATCH_CPU_FEATURE_AVX512BW, "avx512bw"},
        {DISPATCH_CPU_FEATURE_AVX512DQ, "avx512dq"},
        {DISPATCH_CPU_FEATURE_AVX512VNNI, "avx512_vnni"},
        {DISPATCH_CPU_FEATURE_AVX512IFMA, "avx512ifma"},
        {DISPATCH_CPU_FEATURE_AVX512VBMI, "avx512vbmi"},
        {DISPATCH_CPU_FEATURE_AVX512VBMI2, "avx512_vbmi2"},
        {DISPATCH_CPU_FEATURE_AVX512BITALG, "avx512_bitalg"},
        {DISPATCH_CPU_FEATURE_AVX512VPOPCNTDQ, "avx512_vpopcntdq"},
        {DISPATCH_CPU_FEATURE_AVX512BF16, "avx512_bf16"},
        {DISPATCH_CPU_FEATURE_AVX512FP16, "avx512_fp16"},
        {DISPATCH_CPU_FEATURE_LAHF, "lahf_lm"},    {DISPATCH_CPU_FEATURE_MOVBE, "movbe"},
        {DISPATCH_CPU_FEATURE_LZCNT, "abm"},       {DISPATCH_CPU_FEATURE_BMI, "bmi1"},
        {DISPATCH_CPU_FEATURE_BMI2, "bmi2"},       {DISPATCH_CPU_FEATURE_GFNI, "gfni"},
        {DISPATCH_CPU_FEATURE_VAES, "vaes"},
        {DISPATCH_CPU_FEATURE_VPCLMULQDQ, "vpclmulqdq"},
#if defined(__x86_64__)
        {DISPATCH_CPU_FEATURE_CX16, "cx16"},
#endif
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); ++i) {
        const int flag = dispatch__cpu_cpuinfo_has("/proc/cpuinfo", "flags", map[i].flag);
        if (flag < 0) {
            return; /* no /proc/cpuinfo flags line: nothing to compare with */
        }
        /* The closure may only remove a feature, never add one. */
        if (dispatch_cpu_have_detected(map[i].id)) {
            CHECK(flag == 1, "%s detected but not in /proc/cpuinfo", map[i].flag);
        }
    }
}
#endif

#if defined(__x86_64__) || defined(__i386__)
static void test_env(void)
{
    /* Keep only AVX2 and what it implies. */
    unsetenv("DISPATCH_DISABLE_CPU_FEATURES");
    setenv("DISPATCH_ENABLE_CPU_FEATURES", "avx2", 1);
    int rc = dispatch_cpu_redetect_for_tests();
    if (dispatch_cpu_have_detected(DISPATCH_CPU_FEATURE_AVX2)) {
        CHECK(rc == 0, "%s", dispatch_cpu_error());
        CHECK(dispatch_cpu_have(DISPATCH_CPU_FEATURE_AVX2), "AVX2 kept");
        CHECK(dispatch_cpu_have(DISPATCH_CPU_FEATURE_F16C), "implied F16C kept");
        CHECK(!dispatch_cpu_have(DISPATCH_CPU_FEATURE_AVX512F), "AVX512F dropped");
    } else {
        CHECK(rc == -1 && dispatch_cpu_error_kind() == DISPATCH_CPU_ERROR_ENV, "missing AVX2");
    }

    setenv("DISPATCH_DISABLE_CPU_FEATURES", "avx2", 1);
    CHECK(dispatch_cpu_redetect_for_tests() == -1, "both set");
    CHECK(dispatch_cpu_error_kind() == DISPATCH_CPU_ERROR_CONFLICT, "conflict kind");
    CHECK(dispatch_cpu_have(DISPATCH_CPU_FEATURE_AVX512F) ==
              dispatch_cpu_have_detected(DISPATCH_CPU_FEATURE_AVX512F),
          "a refused request changes nothing");

    unsetenv("DISPATCH_ENABLE_CPU_FEATURES");
    CHECK(dispatch_cpu_redetect_for_tests() == 0, "%s", dispatch_cpu_error());
    CHECK(!dispatch_cpu_have(DISPATCH_CPU_FEATURE_AVX2), "AVX2 disabled");
    CHECK(!dispatch_cpu_have(DISPATCH_CPU_FEATURE_AVX512_SKX), "what implies AVX2 too");
    CHECK(!dispatch_cpu_have(DISPATCH_CPU_FEATURE_X86_V3), "groups too");
    CHECK(dispatch_cpu_have(DISPATCH_CPU_FEATURE_AVX) == dispatch_cpu_have_detected(DISPATCH_CPU_FEATURE_AVX),
          "what AVX2 implies stays");

    /* Note [Baseline token]: ENABLE=baseline keeps the baseline alone. */
    unsetenv("DISPATCH_DISABLE_CPU_FEATURES");
    setenv("DISPATCH_ENABLE_CPU_FEATURES", "baseline", 1);
    CHECK(dispatch_cpu_redetect_for_tests() == 0, "%s", dispatch_cpu_error());
    CHECK(dispatch_cpu_have(DISPATCH_CPU_FEATURE_SSE2), "the baseline stays");
    CHECK(dispatch_cpu_have(DISPATCH_CPU_FEATURE_SSE3) ==
              dispatch_cpu_have_detected(DISPATCH_CPU_FEATURE_SSE3), "all of it");
    CHECK(!dispatch_cpu_have(DISPATCH_CPU_FEATURE_SSSE3) && !dispatch_cpu_have(DISPATCH_CPU_FEATURE_SSE42) &&
              !dispatch_cpu_have(DISPATCH_CPU_FEATURE_AVX2) && !dispatch_cpu_have(DISPATCH_CPU_FEATURE_X86_V2),
          "nothing beyond the baseline");
    setenv("DISPATCH_ENABLE_CPU_FEATURES", " Baseline,", 1);
    CHECK(dispatch_cpu_redetect_for_tests() == 0, "any case, separators: %s", dispatch_cpu_error());
    CHECK(!dispatch_cpu_have(DISPATCH_CPU_FEATURE_SSSE3), "still the baseline alone");
    setenv("DISPATCH_ENABLE_CPU_FEATURES", "baseline sse41", 1);
    if (dispatch_cpu_have_detected(DISPATCH_CPU_FEATURE_SSE41)) {
        CHECK(dispatch_cpu_redetect_for_tests() == 0, "%s", dispatch_cpu_error());
        CHECK(dispatch_cpu_have(DISPATCH_CPU_FEATURE_SSE41) && !dispatch_cpu_have(DISPATCH_CPU_FEATURE_SSE42),
              "beside a name it adds nothing");
    }
    unsetenv("DISPATCH_ENABLE_CPU_FEATURES");
    setenv("DISPATCH_DISABLE_CPU_FEATURES", "baseline", 1);
    CHECK(dispatch_cpu_redetect_for_tests() == -1 && dispatch_cpu_error_kind() == DISPATCH_CPU_ERROR_ENV,
          "DISABLE=baseline is refused");
    CHECK(strstr(dispatch_cpu_error(), "cannot disable the baseline") != NULL &&
              strstr(dispatch_cpu_error(), "DISPATCH_ENABLE_CPU_FEATURES=baseline") != NULL,
          "%s", dispatch_cpu_error());
    setenv("DISPATCH_ENABLE_CPU_FEATURES", "baselin", 1);
    unsetenv("DISPATCH_DISABLE_CPU_FEATURES");
    CHECK(dispatch_cpu_redetect_for_tests() == -1 && strstr(dispatch_cpu_error(), "'baselin'") != NULL,
          "a near miss is an unknown name: %s", dispatch_cpu_error());
    unsetenv("DISPATCH_ENABLE_CPU_FEATURES");

    char longv[DISPATCH_CPU_ENV_MAX + 2];
    memset(longv, 'x', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    setenv("DISPATCH_DISABLE_CPU_FEATURES", longv, 1);
    CHECK(dispatch_cpu_redetect_for_tests() == -1, "over-long");
    CHECK(strstr(dispatch_cpu_error(), "at most") != NULL, "%s", dispatch_cpu_error());

    unsetenv("DISPATCH_DISABLE_CPU_FEATURES");
    CHECK(dispatch_cpu_redetect_for_tests() == 0, "reset");
}
#endif

/* Many threads racing into the first detection all see one complete result
 * (run first, before anything else initialises). */
#define RACERS 8
static void *racer(void *arg)
{
    unsigned char *seen = arg;
    (void)dispatch_cpu_init();
    for (int f = 0; f < DISPATCH_CPU_FEATURE_MAX; ++f) {
        seen[f] = (unsigned char)dispatch_cpu_have(f);
    }
    return NULL;
}

#if defined(_WIN32)
typedef HANDLE test_thread;
static DWORD WINAPI racer_thread(LPVOID arg)
{
    (void)racer(arg);
    return 0;
}
static int thread_start(test_thread *t, void *arg)
{
    *t = CreateThread(NULL, 0, racer_thread, arg, 0, NULL);
    return *t != NULL ? 0 : -1;
}
static void thread_join(test_thread t)
{
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
}
#else
typedef pthread_t test_thread;
static int thread_start(test_thread *t, void *arg)
{
    return pthread_create(t, NULL, racer, arg);
}
static void thread_join(test_thread t)
{
    pthread_join(t, NULL);
}
#endif

static void test_first_detection_races(void)
{
    static unsigned char seen[RACERS][DISPATCH_CPU_FEATURE_MAX];
    test_thread threads[RACERS];
    for (int i = 0; i < RACERS; ++i) {
        CHECK(thread_start(&threads[i], seen[i]) == 0, "thread %d", i);
    }
    for (int i = 0; i < RACERS; ++i) {
        thread_join(threads[i]);
    }
    for (int i = 1; i < RACERS; ++i) {
        CHECK(memcmp(seen[0], seen[i], sizeof(seen[0])) == 0, "thread %d saw another result", i);
    }
    CHECK(seen[0][DISPATCH_CPU_FEATURE_NONE] == 0, "NONE is never present");
}

static const char *fake_chosen = "first";
static void fake_chooser(void)
{
    dispatch_cpu_trace_record_choice("fake_fn", "AVX2 baseline", fake_chosen);
}

static void test_trace(void)
{
    const int before = dispatch_cpu_trace_count();
    CHECK(dispatch_cpu_dispatch_register(fake_chooser) == 0, "register");
    CHECK(dispatch_cpu_trace_count() == before + 1, "registering runs the chooser");
    dispatch_cpu_trace_record rec;
    CHECK(dispatch_cpu_trace_get(before, &rec) == 0, "get");
    CHECK(strcmp(rec.name, "fake_fn") == 0 && strcmp(rec.chosen, "first") == 0, "record");
    fake_chosen = "second";
    (void)dispatch_cpu_redetect_for_tests();
    CHECK(dispatch_cpu_trace_count() == before + 1, "re-choosing updates, not appends");
    CHECK(dispatch_cpu_trace_get(before, &rec) == 0 && strcmp(rec.chosen, "second") == 0,
          "the test hook re-runs choosers");
    CHECK(dispatch_cpu_trace_get(before + 1, &rec) == -1, "past the end");
}

int main(void)
{
    test_first_detection_races();
    CHECK(dispatch_cpu_init() == 0 || getenv("DISPATCH_DISABLE_CPU_FEATURES") ||
              getenv("DISPATCH_ENABLE_CPU_FEATURES"),
          "%s", dispatch_cpu_error());
    test_table();
#if defined(__linux__)
    test_proc_readers();
#endif
#if defined(__x86_64__) || defined(__i386__)
    #if defined(__linux__)
    test_x86_matches_cpuinfo();
    #endif
    test_env();
#endif
    test_trace();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
