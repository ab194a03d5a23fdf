/* The CUDA reduction planner (cuda_reduce_plan.c) on the host: paths,
 * coalescing, vector width, splits, 64-bit index math and the emulated
 * summation order. No GPU, no nvcc. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_reduce_plan.h"

static int failures;
#define CHECK(cond)                                                       \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            failures++;                                                   \
        }                                                                 \
    } while (0)

static dcr_plan plan(int nd, const int64_t *shape, const int64_t *strides, uint32_t mask,
                     int isz, uintptr_t data) {
    dcr_plan p;
    char err[128];
    CHECK(dcr_plan_make(&p, nd, shape, strides, mask, isz, data, err, sizeof err) == 0);
    return p;
}

static void test_paths(void) {
    /* rows of a contiguous (4, 8) float32: inner, vector 4 (rows 32 bytes) */
    dcr_plan p = plan(2, (int64_t[]){4, 8}, (int64_t[]){32, 4}, 2u, 4, 256);
    CHECK(p.path == DCR_PATH_INNER && p.vec == 4 && p.nout == 4 && p.count == 8);
    CHECK(p.tpo == DCR_THREADS && p.splits == 1); /* few outputs: a block each */
    /* rows of 5 floats: 20-byte rows, no vector; a misaligned base neither */
    p = plan(2, (int64_t[]){4, 5}, (int64_t[]){20, 4}, 2u, 4, 256);
    CHECK(p.path == DCR_PATH_INNER && p.vec == 1);
    p = plan(2, (int64_t[]){4, 8}, (int64_t[]){32, 4}, 2u, 4, 260);
    CHECK(p.path == DCR_PATH_INNER && p.vec == 1);
    p = plan(2, (int64_t[]){4, 8}, (int64_t[]){32, 4}, 2u, 4, 264);
    CHECK(p.vec == 2);
    /* float64: 4 x 8 bytes is past 16, so 2 */
    p = plan(1, (int64_t[]){64}, (int64_t[]){8}, 1u, 8, 256);
    CHECK(p.path == DCR_PATH_INNER && p.vec == 2 && p.nout == 1 && p.nk == 0);
    /* many short rows: a warp per output */
    p = plan(2, (int64_t[]){100000, 8}, (int64_t[]){32, 4}, 2u, 4, 256);
    CHECK(p.tpo == DCR_WARP && p.nout == 100000);
    /* columns of a contiguous (1000, 64): outer, a thread per output */
    p = plan(2, (int64_t[]){1000, 64}, (int64_t[]){256, 4}, 1u, 4, 256);
    CHECK(p.path == DCR_PATH_OUTER && p.tpo == 1 && p.nout == 64 && p.count == 1000);
    CHECK(p.nr == 1 && p.rstride[0] == 256);
    /* the transpose of a contiguous (5, 4): dim 0 has stride 4 -> inner;
     * dim 1 (stride 20) with the kept dim contiguous -> outer */
    p = plan(2, (int64_t[]){4, 5}, (int64_t[]){4, 16}, 1u, 4, 256);
    CHECK(p.path == DCR_PATH_INNER && p.count == 4 && p.nout == 5 && p.kstride[0] == 16);
    p = plan(2, (int64_t[]){4, 5}, (int64_t[]){4, 16}, 2u, 4, 256);
    CHECK(p.path == DCR_PATH_OUTER);
    /* every other column of a (4, 10): neither contiguous -> strided */
    p = plan(2, (int64_t[]){4, 5}, (int64_t[]){40, 8}, 2u, 4, 256);
    CHECK(p.path == DCR_PATH_STRIDED && p.nr == 1 && p.rstride[0] == 8);
    /* an expanded (stride 0) reduced dim: not contiguous */
    p = plan(2, (int64_t[]){3, 1000}, (int64_t[]){4, 0}, 2u, 4, 256);
    CHECK(p.path == DCR_PATH_OUTER && p.rstride[0] == 0);
    /* nothing reduced (a size-1 dim): outer, count 1 */
    p = plan(2, (int64_t[]){7, 1}, (int64_t[]){4, 4}, 2u, 4, 256);
    CHECK(p.path == DCR_PATH_OUTER && p.count == 1 && p.nr == 0 && p.nout == 7);
    /* 0-dim */
    p = plan(0, NULL, NULL, 0u, 4, 256);
    CHECK(p.nout == 1 && p.count == 1 && p.nk == 0 && p.nr == 0);
    /* an empty reduced dim: count 0 */
    p = plan(2, (int64_t[]){3, 0}, (int64_t[]){0, 4}, 2u, 4, 256);
    CHECK(p.count == 0 && p.nout == 3 && p.splits == 1);
    /* too many dims */
    dcr_plan q;
    char err[128];
    CHECK(dcr_plan_make(&q, DCR_MAX_DIMS + 1, NULL, NULL, 0, 4, 0, err, sizeof err) < 0);
    CHECK(strstr(err, "at most") != NULL);
}

static void test_coalescing(void) {
    /* full reduction of a contiguous (2, 3, 4): one run of 24 */
    dcr_plan p = plan(3, (int64_t[]){2, 3, 4}, (int64_t[]){48, 16, 4}, 7u, 4, 256);
    CHECK(p.nr == 1 && p.rshape[0] == 24 && p.rstride[0] == 4 && p.nk == 0 && p.nout == 1);
    /* dims 0 and 2 of (2, 3, 4): two reduced dims that do not merge */
    p = plan(3, (int64_t[]){2, 3, 4}, (int64_t[]){48, 16, 4}, 5u, 4, 256);
    CHECK(p.nr == 2 && p.rshape[0] == 2 && p.rshape[1] == 4 && p.count == 8);
    CHECK(p.path == DCR_PATH_STRIDED && p.nk == 1 && p.kstride[0] == 16);
    /* keepdim's size-1 dims and the kept (2, 3) of (2, 3, 4) over dim 2 merge */
    p = plan(3, (int64_t[]){2, 3, 4}, (int64_t[]){48, 16, 4}, 4u, 4, 256);
    CHECK(p.nk == 1 && p.kshape[0] == 6 && p.kstride[0] == 16);
    CHECK(dcr_out_offset(&p, 5) == 80 && dcr_red_offset(&p, 3) == 12);
    /* the reduced dims keep their row-major order (argmax's index) */
    p = plan(2, (int64_t[]){3, 4}, (int64_t[]){4, 12}, 3u, 4, 256);
    CHECK(p.nr == 2 && p.rshape[0] == 3 && p.rshape[1] == 4);
    CHECK(dcr_red_offset(&p, 5) == 1 * 4 + 1 * 12);
}

static void test_splits(void) {
    /* a full sum of 2^28 floats: split into 4096 chunks of 65536 */
    dcr_plan p = plan(1, (int64_t[]){(int64_t)1 << 28}, (int64_t[]){4}, 1u, 4, 256);
    CHECK(p.splits == 4096 && p.chunk == 65536 && p.path == DCR_PATH_INNER && p.vec == 4);
    CHECK(!p.idx64);
    /* 2^20: 128 chunks of 8192 */
    p = plan(1, (int64_t[]){(int64_t)1 << 20}, (int64_t[]){4}, 1u, 4, 256);
    CHECK(p.splits == 128 && p.chunk == 8192);
    /* the split is a function of the shape only: the alignment changes the
     * vector width, never the split */
    dcr_plan q = plan(1, (int64_t[]){(int64_t)1 << 20}, (int64_t[]){4}, 1u, 4, 260);
    CHECK(q.splits == p.splits && q.chunk == p.chunk && q.tpo == p.tpo && q.vec == 1);
    /* below two chunks: no split */
    p = plan(1, (int64_t[]){2 * DCR_SPLIT_MIN - 1}, (int64_t[]){4}, 1u, 4, 256);
    CHECK(p.splits == 1 && p.chunk == p.count);
    /* many outputs: no split */
    p = plan(2, (int64_t[]){8192, 65536}, (int64_t[]){65536 * 4, 4}, 2u, 4, 256);
    CHECK(p.splits == 1);
    /* columns: a few outputs over many rows split too, each split a whole
     * number of rows per lane, DCR_OUTER_MIN_ROWS or more */
    p = plan(2, (int64_t[]){1 << 20, 4}, (int64_t[]){16, 4}, 1u, 4, 256);
    CHECK(p.path == DCR_PATH_OUTER && p.splits > 1 && p.chunk % p.lanes == 0);
    CHECK(p.chunk / p.lanes >= DCR_OUTER_MIN_ROWS);
    CHECK((p.splits - 1) * p.chunk < p.count && p.splits * p.chunk >= p.count);
    /* 2^31 elements (expanded): 64-bit index math */
    p = plan(1, (int64_t[]){(int64_t)1 << 31}, (int64_t[]){0}, 1u, 4, 256);
    CHECK(p.idx64 && p.splits >= 1);
    p = plan(1, (int64_t[]){((int64_t)1 << 31) - 1}, (int64_t[]){0}, 1u, 4, 256);
    CHECK(!p.idx64);
}

static void test_emulation(void) {
    /* integers in float32 are exact: every order gives n(n+1)/2 */
    int64_t sizes[] = {1, 3, 4, 5, 31, 32, 33, 1000, 1024, 1025, 5000, 20000, 100000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int64_t n = sizes[k];
        float *x = malloc((size_t)n * sizeof *x);
        for (int64_t i = 0; i < n; i++) x[i] = (float)(i % 64);
        double want = 0;
        for (int64_t i = 0; i < n; i++) want += x[i];
        dcr_plan p = plan(1, (int64_t[]){n}, (int64_t[]){4}, 1u, 4, 256);
        float got;
        dcr_emulate_sum_f32(&p, (const char *)x, &got);
        CHECK((double)got == want);
        /* the same sum over a strided view and over columns */
        dcr_plan c = plan(2, (int64_t[]){n, 1}, (int64_t[]){4, 4}, 1u, 4, 256);
        dcr_emulate_sum_f32(&c, (const char *)x, &got);
        CHECK((double)got == want);
        free(x);
    }
    /* rows and columns of a (3, 5) float64 */
    double m[15];
    for (int i = 0; i < 15; i++) m[i] = i;
    dcr_plan p = plan(2, (int64_t[]){3, 5}, (int64_t[]){40, 8}, 2u, 8, 256);
    double r[5];
    dcr_emulate_sum_f64(&p, (const char *)m, r);
    CHECK(r[0] == 10 && r[1] == 35 && r[2] == 60);
    p = plan(2, (int64_t[]){3, 5}, (int64_t[]){40, 8}, 1u, 8, 256);
    dcr_emulate_sum_f64(&p, (const char *)m, r);
    CHECK(r[0] == 15 && r[4] == 27);
    /* an empty sum is 0 */
    p = plan(1, (int64_t[]){0}, (int64_t[]){8}, 1u, 8, 256);
    dcr_emulate_sum_f64(&p, (const char *)m, r);
    CHECK(r[0] == 0);
}

/* The first kernel's threads, all splits. */
static int64_t threads_of(const dcr_plan *p) {
    return dcr_blocks_x(p) * p->splits * DCR_THREADS;
}

/* The combine's shape: a tree of ctpo threads per output (the lanes on the
 * outer path), each thread at most ceil(splits / ctpo) partials in order. */
static void check_combine(const dcr_plan *p) {
    if (p->splits == 1) {
        CHECK(p->ctpo == 0);
        return;
    }
    if (p->path == DCR_PATH_OUTER) { /* the lanes, all the block's columns at once */
        CHECK(p->ctpo == p->lanes);
        /* every column of the block in one pass: 1 lane a column at most
         * 256 columns; so few partials a lane that the fill (8 x 132 blocks)
         * bounds them: splits <= 1056 */
        CHECK((p->splits + p->ctpo - 1) / p->ctpo <= DCR_FILL_THREADS / DCR_THREADS);
        return;
    }
    CHECK(p->ctpo == (p->splits > 256 ? DCR_THREADS : DCR_WARP));
    CHECK((p->splits + p->ctpo - 1) / p->ctpo <= 16); /* 4096 partials: 16 per thread */
}

/* Issue 26's table: each shape fills 132 SMs (2048 threads each, 8 x 132 x
 * 256 since issue 48) where its data allows, and combines its partials in
 * parallel. */
static void test_the_issue_table_fills_the_gpu(void) {
    const int64_t fill = 8 * 132 * 256;
    CHECK(DCR_FILL_THREADS == fill);
    /* full sums, float32 (and float16 at 2^26: the same bytes per load) */
    for (int lg = 24; lg <= 28; lg += 2) {
        int64_t n = (int64_t)1 << lg;
        dcr_plan p = plan(1, (int64_t[]){n}, (int64_t[]){4}, 1u, 4, 256);
        CHECK(p.path == DCR_PATH_INNER && p.vec == 4 && p.group == 4 && p.tpo == DCR_THREADS);
        CHECK(threads_of(&p) >= fill);
        CHECK(p.splits >= 2048 && p.ctpo == DCR_THREADS);
        check_combine(&p);
    }
    dcr_plan h = plan(1, (int64_t[]){(int64_t)1 << 26}, (int64_t[]){2}, 1u, 2, 256);
    CHECK(h.vec * h.itemsize == 16 && h.group == 8); /* 8 halves a load: float32's 16 bytes */
    CHECK(threads_of(&h) >= fill && h.ctpo == DCR_THREADS);
    check_combine(&h);
    /* sum(dim=0): (8192, 8192) and (65536, 1024) fill the GPU with 4
     * columns per thread to within one block column, never past the fill
     * (a last wave of a few blocks: Note [Outer reductions]); (4096, 16) has
     * 65536 elements: as many threads as give each 4 columns of
     * DCR_OUTER_MIN_ROWS rows */
    struct { int64_t rows, cols; } outer[] = {{8192, 8192}, {65536, 1024}, {4096, 16}};
    for (size_t k = 0; k < sizeof outer / sizeof *outer; k++) {
        int64_t r = outer[k].rows, c = outer[k].cols;
        dcr_plan p = plan(2, (int64_t[]){r, c}, (int64_t[]){c * 4, 4}, 1u, 4, 256);
        CHECK(p.path == DCR_PATH_OUTER && p.vec == 4 && p.nout == c && p.count == r);
        int64_t tx = DCR_THREADS / p.lanes;
        CHECK(tx * p.lanes == DCR_THREADS && tx <= DCR_WARP && p.lanes <= r);
        int64_t allowed = (c / 4) * (r / DCR_OUTER_MIN_ROWS);
        int64_t column = dcr_blocks_x(&p) * DCR_THREADS; /* one split's threads */
        CHECK(threads_of(&p) + column >= (allowed < fill ? allowed : fill));
        CHECK(threads_of(&p) <= fill);
        CHECK(p.splits == 1 || p.chunk / p.lanes >= DCR_OUTER_MIN_ROWS);
        check_combine(&p);
        if (c == 16) CHECK(p.splits > 1 && p.lanes == 64); /* not one block any more */
    }
    /* amax(dim=0) of (8192, 8192): the plan does not depend on the op, so
     * max/min run sum's outer path (cols_kernel, 4 columns a thread) */
    dcr_plan a = plan(2, (int64_t[]){8192, 8192}, (int64_t[]){8192 * 4, 4}, 1u, 4, 256);
    CHECK(a.path == DCR_PATH_OUTER && a.splits > 1);
    CHECK(threads_of(&a) <= fill && threads_of(&a) + dcr_blocks_x(&a) * DCR_THREADS > fill);
    /* float16 columns: 8 a load, planned as 4 a thread (Note [Outer
     * reductions]): float32's splits, half its blocks, each over twice the
     * columns */
    dcr_plan c16 = plan(2, (int64_t[]){8192, 8192}, (int64_t[]){8192 * 2, 2}, 1u, 2, 256);
    CHECK(c16.vec == 8 && dcr_blocks_x(&c16) == 32 && c16.splits == a.splits);
    CHECK(threads_of(&c16) * 2 == threads_of(&a));
    /* the block's shape does not depend on the alignment: a misaligned
     * float16 input (vec 1) gets the same lanes and splits */
    dcr_plan m16 = plan(2, (int64_t[]){8192, 8192}, (int64_t[]){8192 * 2, 2}, 1u, 2, 258);
    CHECK(m16.vec == 1 && m16.lanes == c16.lanes && m16.splits == c16.splits && m16.chunk == c16.chunk);
    /* float64: 2 columns a thread */
    dcr_plan c64 = plan(2, (int64_t[]){8192, 8192}, (int64_t[]){8192 * 8, 8}, 1u, 8, 256);
    CHECK(c64.vec == 2 && threads_of(&c64) <= fill && threads_of(&c64) * 2 > fill);
}

static void test_outer_vector_width(void) {
    /* an odd column count, a misaligned base, a padded row: one column a thread */
    dcr_plan p = plan(2, (int64_t[]){64, 10}, (int64_t[]){40, 4}, 1u, 4, 256);
    CHECK(p.path == DCR_PATH_OUTER && p.vec == 1);
    p = plan(2, (int64_t[]){64, 16}, (int64_t[]){64, 4}, 1u, 4, 260);
    CHECK(p.vec == 1);
    p = plan(2, (int64_t[]){64, 16}, (int64_t[]){68, 4}, 1u, 4, 256);
    CHECK(p.vec == 1);
    /* the same shapes aligned: 4; float64: 2 */
    p = plan(2, (int64_t[]){64, 16}, (int64_t[]){64, 4}, 1u, 4, 256);
    CHECK(p.vec == 4);
    p = plan(2, (int64_t[]){64, 16}, (int64_t[]){128, 8}, 1u, 8, 256);
    CHECK(p.vec == 2);
    /* the block's shape comes from the shape and dtype alone, never the alignment */
    p = plan(2, (int64_t[]){64, 16}, (int64_t[]){64, 4}, 1u, 4, 256);
    dcr_plan q = plan(2, (int64_t[]){64, 16}, (int64_t[]){64, 4}, 1u, 4, 260);
    CHECK(q.lanes == p.lanes && q.splits == p.splits && q.chunk == p.chunk);
    /* many columns: 32 threads across, 8 lanes; few rows: no more lanes than rows */
    p = plan(2, (int64_t[]){64, 1 << 20}, (int64_t[]){4 << 20, 4}, 1u, 4, 256);
    CHECK(p.lanes == 8 && p.splits == 1);
    p = plan(2, (int64_t[]){3, 100000}, (int64_t[]){400000, 4}, 1u, 4, 256);
    CHECK(p.lanes == 2 && p.splits == 1);
}

/* Sums in float32 of values whose exact sum float32 holds: every order gives it. */
static void test_emulation_of_outer_and_combine(void) {
    int64_t shapes[][2] = {{4096, 16}, {1000, 12}, {20000, 8}, {33, 64}, {70000, 3}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        int64_t r = shapes[k][0], c = shapes[k][1];
        float *x = malloc((size_t)(r * c) * sizeof *x);
        for (int64_t i = 0; i < r * c; i++) x[i] = (float)(i % 61);
        dcr_plan p = plan(2, (int64_t[]){r, c}, (int64_t[]){c * 4, 4}, 1u, 4, 256);
        CHECK(p.path == DCR_PATH_OUTER);
        float *got = malloc((size_t)c * sizeof *got);
        dcr_emulate_sum_f32(&p, (const char *)x, got);
        for (int64_t j = 0; j < c; j++) {
            double want = 0;
            for (int64_t i = 0; i < r; i++) want += x[i * c + j];
            CHECK((double)got[j] == want);
        }
        free(got);
        free(x);
    }
}

/* Note [One launch per reduction]: every plan is one kernel, and a split
 * one's block columns (one counter each) fit the counters' first
 * allocation, DCR_MAX_BLOCKS, so the buffer never grows in practice; its
 * splits fit grid y. Full sums, rows and columns over a sweep of shapes,
 * 2-, 4- and 8-byte dtypes, aligned and not. */
static void test_one_launch_and_the_counters_fit(void) {
    int isz[] = {2, 4, 8};
    uintptr_t bases[] = {256, 260};
    int splits_seen = 0;
    for (int k = 0; k < 3; k++)
        for (int b = 0; b < 2; b++) {
            int z = isz[k];
            uintptr_t base = bases[b] - (bases[b] % (uintptr_t)z);
            for (int64_t n = 1; n <= ((int64_t)1 << 31); n = n * 3 + 1) {
                dcr_plan p = plan(1, (int64_t[]){n}, (int64_t[]){z}, 1u, z, base);
                CHECK(p.launches == 1);
                if (p.splits > 1) {
                    splits_seen++;
                    CHECK(dcr_blocks_x(&p) <= DCR_MAX_BLOCKS && p.splits <= 65535);
                }
            }
            for (int64_t r = 1; r <= ((int64_t)1 << 20); r = r * 5 + 3)
                for (int64_t c = 1; c <= ((int64_t)1 << 16) && r * c <= ((int64_t)1 << 28); c = c * 7 + 1)
                    for (uint32_t mask = 1; mask <= 2; mask++) {
                        dcr_plan p = plan(2, (int64_t[]){r, c}, (int64_t[]){c * z, z}, mask, z, base);
                        CHECK(p.launches == 1);
                        if (p.splits > 1) {
                            splits_seen++;
                            CHECK(dcr_blocks_x(&p) <= DCR_MAX_BLOCKS && p.splits <= 65535);
                        }
                    }
        }
    CHECK(splits_seen > 100); /* the sweep reaches split plans on both paths */
}

int main(void) {
    test_paths();
    test_coalescing();
    test_splits();
    test_emulation();
    test_the_issue_table_fills_the_gpu();
    test_outer_vector_width();
    test_emulation_of_outer_and_combine();
    test_one_launch_and_the_counters_fit();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
