/*
 * What the C runtime sees on an emulated CPU, for tests/test_cross_matrix.py:
 * the arch, then one line per feature of this arch ("VSX3 1"), after a
 * baseline check done as the Python guards do it (Note [Baseline guard] in
 * sources/cpu/cpu_baseline_guard.c): this file and the CPU runtime are
 * compiled WITHOUT the baseline flags, and only when every baseline feature
 * is present does it call cross_payload(), compiled WITH them (payload.c).
 * A missing feature exits 3 with the baseline error, never SIGILL.
 */
#define DISPATCH_NO_CPU_INTRINSICS_HEADERS
#include "dispatch/_cpu_dispatch.h"
#include "dispatch/cpu_runtime.h"

#include <stdio.h>
#include <string.h>

double cross_payload(void);

#define CROSS_ID(NAME, ...) DISPATCH_CPU_FEATURE_##NAME,
static const int baseline[] = {DISPATCH_WITH_CPU_BASELINE_CALL(CROSS_ID, _) DISPATCH_CPU_FEATURE_NONE};

int main(void)
{
    char missing[512] = "";
    for (const int *id = baseline; *id != DISPATCH_CPU_FEATURE_NONE; ++id) {
        if (!dispatch_cpu_have_detected(*id)) {
            strncat(missing, " ", sizeof(missing) - strlen(missing) - 1);
            strncat(missing, dispatch_cpu_feature_name(*id), sizeof(missing) - strlen(missing) - 1);
        }
    }
    printf("arch %s\n", dispatch_cpu_arch());
    for (int i = 0; i < dispatch_cpu_feature_count(); i++) {
        const dispatch_cpu_feature_info *row = dispatch_cpu_feature_at(i);
        if (row->on_this_arch && !row->is_group)
            printf("%s %d\n", row->name, dispatch_cpu_have_detected(row->id));
    }
    if (missing[0]) {
        printf("baseline error: this CPU lacks%s of the build's baseline (%s)\n", missing,
               dispatch_cpu_baseline_names());
        return 3;
    }
    printf("payload %.1f\n", cross_payload());
    return 0;
}
