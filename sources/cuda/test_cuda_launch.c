/* The CUDA launch planner (cuda_launch.c) on the host: no GPU, no nvcc.
 * Prints "ok" and then the layout of dcu_plan_in (offsets the Python test
 * compares with the strided engine's dispatch_strided_plan). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_launch.h"

static int failures;
#define EXPECT(c)                                                        \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                  \
        }                                                                \
    } while (0)

static void test_divider(void) {
    uint32_t ds[] = {1, 2, 3, 5, 7, 10, 16, 17, 255, 1000, 65535, 65537, 1u << 20, 12345679,
                     (1u << 31) - 1, 1u << 31};
    uint32_t ns[] = {0, 1, 2, 3, 99, 1000, 65536, 12345678, (1u << 30) + 7, (1u << 31) - 1};
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) {
        dcu_divider d;
        dcu_divider_init(&d, ds[i]);
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) EXPECT(dcu_divider_div(&d, ns[j]) == ns[j] / ds[i]);
        uint32_t x = 2463534242u;
        for (int r = 0; r < 20000; r++) { /* xorshift over [0, 2^31) */
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            uint32_t n = x & 0x7fffffffu;
            EXPECT(dcu_divider_div(&d, n) == n / ds[i]);
        }
    }
}

static dcu_plan_in plan1(int nops, int64_t n, const intptr_t *stride, char **data) {
    dcu_plan_in p;
    memset(&p, 0, sizeof p);
    p.nops = nops, p.ndim = 1, p.numel = n, p.shape[0] = n;
    for (int k = 0; k < nops; k++) p.strides[k][0] = stride[k], p.data[k] = data[k];
    return p;
}

static void test_vector_size_from_alignment(void) {
    char *base = (char *)(uintptr_t)0x10000; /* never dereferenced */
    int isz[3] = {4, 4, 4};
    intptr_t st[3] = {4, 4, 4};
    dcu_launch_record r;
    char *d4[3] = {base, base + 64, base + 128};
    dcu_plan_in p = plan1(3, 1000, st, d4);
    EXPECT(dcu_plan_launch(&p, isz, 0, 0, NULL, NULL, &r) == 1);
    EXPECT(r.path == DCU_PATH_VECTOR && r.vec == 4 && r.pieces == 1);
    char *d2[3] = {base, base + 8, base + 128}; /* an input two floats past 16 bytes */
    p = plan1(3, 1000, st, d2);
    dcu_plan_launch(&p, isz, 0, 0, NULL, NULL, &r);
    EXPECT(r.path == DCU_PATH_VECTOR && r.vec == 2);
    char *d1[3] = {base + 4, base, base}; /* the output one float past */
    p = plan1(3, 1000, st, d1);
    dcu_plan_launch(&p, isz, 0, 0, NULL, NULL, &r);
    EXPECT(r.path == DCU_PATH_VECTOR && r.vec == 1);
    p = plan1(3, 3, st, d4); /* fewer elements than a vector of 4 */
    dcu_plan_launch(&p, isz, 0, 0, NULL, NULL, &r);
    EXPECT(r.vec == 2);
    int isz_mixed[2] = {2, 8}; /* float16 out, float64 in: each aligned to vec * its itemsize */
    intptr_t st_mixed[2] = {2, 8};
    char *dm[2] = {base + 8, base + 32};
    p = plan1(2, 100, st_mixed, dm);
    EXPECT(dcu_vector_size(2, p.data, isz_mixed, 100) == 4);
    dm[1] = base + 8;
    EXPECT(dcu_vector_size(2, dm, isz_mixed, 100) == 1);
    dm[1] = base + 16, dm[0] = base + 4;
    EXPECT(dcu_vector_size(2, dm, isz_mixed, 100) == 2);
}

static int rows_seen, pieces_seen;
static int note_rows(const dcu_piece *piece, void *ctx) {
    (void)ctx;
    pieces_seen++;
    rows_seen += dcu_strided_by_rows(piece);
    return 0;
}

/* (8192, 8192) * (8192, 1): the long inner dim runs by rows; a short one,
 * or one dim, by elements. */
static void test_strided_rows(void) {
    char *base = (char *)(uintptr_t)0x10000;
    int isz[3] = {4, 4, 4};
    dcu_plan_in p;
    memset(&p, 0, sizeof p);
    p.nops = 3, p.ndim = 2, p.shape[0] = 8192, p.shape[1] = 8192, p.numel = 8192 * 8192;
    p.strides[0][0] = 4, p.strides[0][1] = 8192 * 4;
    p.strides[1][0] = 4, p.strides[1][1] = 8192 * 4;
    p.strides[2][0] = 0, p.strides[2][1] = 4; /* the (8192, 1) operand */
    for (int k = 0; k < 3; k++) p.data[k] = base + k * 4096;
    dcu_launch_record r;
    rows_seen = pieces_seen = 0;
    EXPECT(dcu_plan_launch(&p, isz, 0, 0, note_rows, NULL, &r) == 1);
    EXPECT(r.path == DCU_PATH_STRIDED && pieces_seen == 1 && rows_seen == 1);
    p.shape[0] = DCU_ROW_MIN - 1, p.numel = (int64_t)(DCU_ROW_MIN - 1) * 8192;
    rows_seen = pieces_seen = 0;
    dcu_plan_launch(&p, isz, 0, 0, note_rows, NULL, &r);
    EXPECT(pieces_seen == 1 && rows_seen == 0);
    intptr_t stepped[2] = {4, 8}; /* one dim: by elements */
    char *d[2] = {base, base + 256};
    p = plan1(2, 100000, stepped, d);
    rows_seen = pieces_seen = 0;
    dcu_plan_launch(&p, isz, 0, 0, note_rows, NULL, &r);
    EXPECT(pieces_seen == 1 && rows_seen == 0);
}

static void test_path_choice(void) {
    char *base = (char *)(uintptr_t)0x10000;
    int isz[2] = {4, 4};
    dcu_launch_record r;
    intptr_t contig[2] = {4, 4};
    char *d[2] = {base, base + 256};
    dcu_plan_in p = plan1(2, 100, contig, d);
    dcu_plan_launch(&p, isz, 1, 0, NULL, NULL, &r); /* with a cast: vector loads too */
    EXPECT(r.path == DCU_PATH_CAST && r.vec == 4);
    char *dmis[2] = {base, base + 260}; /* the input one float past 16 bytes */
    dcu_plan_in pm = plan1(2, 100, contig, dmis);
    dcu_plan_launch(&pm, isz, 1, 0, NULL, NULL, &r);
    EXPECT(r.path == DCU_PATH_CAST && r.vec == 1);
    int isz_cast[2] = {2, 4}; /* float16 out of float32: each aligned to 4 of its own */
    intptr_t contig_cast[2] = {2, 4};
    char *dcast[2] = {base + 8, base + 16};
    pm = plan1(2, 100, contig_cast, dcast);
    dcu_plan_launch(&pm, isz_cast, 1, 0, NULL, NULL, &r);
    EXPECT(r.path == DCU_PATH_CAST && r.vec == 4);
    intptr_t stepped[2] = {4, 8}; /* a[::2] */
    p = plan1(2, 100, stepped, d);
    dcu_plan_launch(&p, isz, 0, 0, NULL, NULL, &r);
    EXPECT(r.path == DCU_PATH_STRIDED && r.vec == 1);
    intptr_t bcast[2] = {4, 0};
    p = plan1(2, 100, bcast, d);
    dcu_plan_launch(&p, isz, 0, 0, NULL, NULL, &r);
    EXPECT(r.path == DCU_PATH_STRIDED);
    /* a transposed 3x5 input against a contiguous output: two dims */
    memset(&p, 0, sizeof p);
    p.nops = 2, p.ndim = 2, p.numel = 15, p.shape[0] = 5, p.shape[1] = 3;
    p.strides[0][0] = 4, p.strides[0][1] = 20, p.strides[1][0] = 12, p.strides[1][1] = 4;
    p.data[0] = d[0], p.data[1] = d[1];
    dcu_plan_launch(&p, isz, 0, 0, NULL, NULL, &r);
    EXPECT(r.path == DCU_PATH_STRIDED && r.ndim == 2);
    p.numel = 1, p.shape[0] = p.shape[1] = 1; /* a single element is contiguous */
    dcu_plan_launch(&p, isz, 0, 0, NULL, NULL, &r);
    EXPECT(r.path == DCU_PATH_VECTOR);
    /* a scalar operand (a kernel argument: stride 0, any pointer) keeps the
     * call contiguous and aligned */
    int isz3[3] = {4, 4, 4};
    intptr_t sc[3] = {4, 4, 0};
    char *ds[3] = {base, base + 256, base + 3};
    p = plan1(3, 100, sc, ds);
    dcu_plan_launch(&p, isz3, 0, 1u << 2, NULL, NULL, &r);
    EXPECT(r.path == DCU_PATH_VECTOR && r.vec == 4);
    dcu_plan_launch(&p, isz3, 0, 0, NULL, NULL, &r); /* the same operand in memory: strided */
    EXPECT(r.path == DCU_PATH_STRIDED);
    memset(&p, 0, sizeof p);
    p.nops = 2, p.ndim = 2, p.numel = 0, p.shape[0] = 0, p.shape[1] = 3;
    EXPECT(dcu_plan_launch(&p, isz, 0, 0, NULL, NULL, &r) == 0 && r.pieces == 0);
}

/* The offset calculator against the plain index walk. */
typedef struct check {
    const dcu_plan_in *whole;
    int64_t seen;
    int bad;
} check;

static int check_offsets(const dcu_piece *piece, void *arg) {
    check *c = arg;
    if (piece->numel > INT32_MAX) c->bad++;
    uint32_t step = piece->numel > 5000 ? (uint32_t)(piece->numel / 997) : 1;
    for (int64_t i = 0; i < piece->numel; i += step) {
        int64_t rest = i, off = 0;
        for (int d = 0; d < piece->ndim; d++) {
            int64_t sz = piece->div[d].divisor;
            off += (rest % sz) * piece->strides[0][d];
            rest /= sz;
        }
        for (int k = 0; k < piece->nops; k++) {
            int64_t o = dcu_piece_offset(piece, k, (uint32_t)i);
            if (k == 0 && o != off) c->bad++;
            if (o > INT32_MAX || o < -(int64_t)INT32_MAX) c->bad++;
        }
    }
    c->seen += piece->numel;
    return 0;
}

static void test_offset_calculator(void) {
    char *base = (char *)(uintptr_t)0x10000;
    dcu_plan_in p;
    memset(&p, 0, sizeof p);
    p.nops = 3, p.ndim = 3, p.shape[0] = 7, p.shape[1] = 11, p.shape[2] = 13, p.numel = 7 * 11 * 13;
    int isz[3] = {4, 4, 2};
    intptr_t s[3][3] = {{4, 28, 308}, {44 * 13, 4, 44}, {0, 2, 0}};
    for (int k = 0; k < 3; k++) {
        p.data[k] = base;
        for (int d = 0; d < 3; d++) p.strides[k][d] = s[k][d];
    }
    check c = {&p, 0, 0};
    dcu_launch_record r;
    EXPECT(dcu_plan_launch(&p, isz, 0, 0, check_offsets, &c, &r) == 1);
    EXPECT(c.bad == 0 && c.seen == p.numel && r.path == DCU_PATH_STRIDED && r.ndim == 3);
}

static void test_split_past_2_31(void) {
    char *base = (char *)(uintptr_t)0x10000;
    int isz1[2] = {1, 1};
    intptr_t st1[2] = {1, 1};
    char *d[2] = {base, base + ((int64_t)1 << 33)};
    dcu_launch_record r;
    /* an int8 tensor of 2^31 + 1 elements: two pieces, both contiguous */
    int64_t n = ((int64_t)1 << 31) + 1;
    dcu_plan_in p = plan1(2, n, st1, d);
    EXPECT(!dcu_fits_32bit(&p, isz1));
    check c = {&p, 0, 0};
    EXPECT(dcu_plan_launch(&p, isz1, 0, 0, check_offsets, &c, &r) == 2);
    EXPECT(r.pieces == 2 && r.path == DCU_PATH_VECTOR && c.seen == n && c.bad == 0);
    /* exactly 2^31 - 1 elements fit */
    p = plan1(2, INT32_MAX, st1, d);
    EXPECT(dcu_plan_launch(&p, isz1, 0, 0, NULL, NULL, &r) == 1);
    /* 2^30 float32 elements: numel fits but the byte offsets (4 GiB) do not */
    int isz4[2] = {4, 4};
    intptr_t st4[2] = {4, 4};
    p = plan1(2, (int64_t)1 << 30, st4, d);
    c = (check){&p, 0, 0};
    int pieces = dcu_plan_launch(&p, isz4, 0, 0, check_offsets, &c, &r);
    EXPECT(pieces >= 2 && c.seen == p.numel && c.bad == 0);
    /* a 2-D case: 2^16 rows of 2^16 int8 with a row stride of 2^17 (every other row) */
    memset(&p, 0, sizeof p);
    p.nops = 2, p.ndim = 2, p.shape[0] = 1 << 16, p.shape[1] = 1 << 16, p.numel = (int64_t)1 << 32;
    p.strides[0][0] = 1, p.strides[0][1] = 1 << 16, p.strides[1][0] = 1, p.strides[1][1] = 1 << 17;
    p.data[0] = d[0], p.data[1] = d[1];
    c = (check){&p, 0, 0};
    pieces = dcu_plan_launch(&p, isz1, 0, 0, check_offsets, &c, &r);
    EXPECT(pieces >= 3 && c.seen == p.numel && c.bad == 0 && r.path == DCU_PATH_STRIDED);
}

static int stop_at_second(const dcu_piece *piece, void *arg) {
    (void)piece;
    return ++*(int *)arg == 2 ? 7 : 0;
}

static void test_emit_error_stops(void) {
    char *base = (char *)(uintptr_t)0x10000;
    int isz[1] = {1};
    intptr_t st[1] = {1};
    char *d[1] = {base};
    dcu_plan_in p = plan1(1, (int64_t)1 << 33, st, d);
    int calls = 0;
    EXPECT(dcu_plan_launch(&p, isz, 0, 0, stop_at_second, &calls, NULL) == -7 && calls == 2);
}

int main(void) {
    test_divider();
    test_vector_size_from_alignment();
    test_strided_rows();
    test_path_choice();
    test_offset_calculator();
    test_split_past_2_31();
    test_emit_error_stops();
    if (failures) return 1;
    printf("ok\nlayout %zu %zu %zu %zu %zu %zu\n", sizeof(dcu_plan_in), offsetof(dcu_plan_in, ndim),
           offsetof(dcu_plan_in, numel), offsetof(dcu_plan_in, shape),
           offsetof(dcu_plan_in, strides), offsetof(dcu_plan_in, data));
    return 0;
}
