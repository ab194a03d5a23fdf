/* Note [2-D loops] in loops.h, in core: (1) dispatch_strided_plan_walk2d
 * against the plain walk: every range [begin, end) of plans of 1 to 4 dims,
 * with and without a broadcast operand, must visit each element exactly once
 * with the pointers the plain walk gives it, whatever splits the range across
 * calls of the 1-D and the 2-D loop (a thread's range starts and ends
 * anywhere); (2) the table gives a 2-D loop only with the 1-D loop it was
 * registered with. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/dtype.h"
#include "dispatch/loops.h"
#include "dispatch/strided.h"

static int failures;
static long calls_2d;

enum { MAXEL = 4 * 3 * 5 * 7 };

/* Each loop records, per output element (by its byte offset), the input
 * offset it was visited with and the number of visits; and the elements in
 * the order visited, so that a range's check and reset cost its length, not
 * the plan's (every range of a 420-element plan: a whole record compared and
 * cleared per range took 35 s under qemu's s390x). */
typedef struct {
    const char *out0, *in0;
    int visits[MAXEL];
    intptr_t seen_in[MAXEL];
    long count;         /* visits, all elements together */
    int log[2 * MAXEL]; /* the element of each visit, while count fits */
} record;

static void visit(char **data, const intptr_t *s, intptr_t n, void *ctx) {
    record *r = ctx;
    for (intptr_t i = 0; i < n; i++) {
        intptr_t o = (data[0] + i * s[0] - r->out0) / (intptr_t)sizeof(int32_t);
        r->visits[o]++;
        r->seen_in[o] = data[1] + i * s[1] - r->in0;
        if (r->count < 2 * MAXEL) r->log[r->count] = (int)o;
        r->count++;
    }
}

/* Whether got visited what want did: as many visits in all, and at each
 * element want visited as many, with the same input offset (so none
 * elsewhere). */
static int same_visits(const record *want, const record *got) {
    if (got->count != want->count || want->count > 2 * MAXEL) return 0;
    for (long k = 0; k < want->count; k++) {
        const int o = want->log[k];
        if (got->visits[o] != want->visits[o] || got->seen_in[o] != want->seen_in[o]) return 0;
    }
    return 1;
}

/* Back to no visits: the elements logged, or all of them where the log
 * overflowed. */
static void reset(record *r) {
    if (r->count > 2 * MAXEL) memset(r->visits, 0, sizeof r->visits);
    else
        for (long k = 0; k < r->count; k++) r->visits[r->log[k]] = 0;
    r->count = 0;
}

static void visit2d(char **data, const intptr_t *s, const intptr_t *outer, intptr_t n,
                    intptr_t rows, void *ctx) {
    calls_2d++;
    for (intptr_t j = 0; j < rows; j++) {
        char *d[2] = {data[0] + j * outer[0], data[1] + j * outer[1]};
        visit(d, s, n, ctx);
    }
}

static void check(int nd, const int64_t *shape, int bcast_dim) {
    static int32_t out[MAXEL], in[MAXEL];
    intptr_t bs[DISPATCH_MAX_OPERANDS][DISPATCH_MAX_DIMS];
    intptr_t so = sizeof(int32_t), si = sizeof(int32_t);
    for (int d = nd - 1; d >= 0; d--) {
        bs[0][d] = so, so *= (intptr_t)shape[d];
        bs[1][d] = d == bcast_dim ? 0 : si;
        if (d != bcast_dim) si *= (intptr_t)shape[d];
    }
    char *data[2] = {(char *)out, (char *)in};
    dispatch_strided_plan p;
    dispatch_strided_plan_init(&p, 2, data, nd, shape, bs);
    static record want, got; /* no visits between ranges (static: zeroed) */
    want.out0 = got.out0 = (char *)out, want.in0 = got.in0 = (char *)in;
    for (int64_t b = 0; b <= p.numel; b++) {
        for (int64_t e = b; e <= p.numel; e++) {
            dispatch_strided_plan_walk(&p, b, e, visit, &want);
            dispatch_strided_plan_walk2d(&p, b, e, visit, visit2d, &got);
            if (!same_visits(&want, &got) && failures++ < 10)
                fprintf(stderr, "FAIL ndim %d (plan %d dims), broadcast dim %d, range [%lld, %lld)\n",
                        nd, p.ndim, bcast_dim, (long long)b, (long long)e);
            reset(&want), reset(&got);
        }
    }
}

/* Two stand-in loops of (ADD, INT32) and a 2-D loop of the first. */
static void loop_a(char **d, const intptr_t *s, intptr_t n, void *c) { (void)d, (void)s, (void)n, (void)c; }
static void loop_b(char **d, const intptr_t *s, intptr_t n, void *c) { (void)d, (void)s, (void)n, (void)c; }
static void loop2d_a(char **d, const intptr_t *s, const intptr_t *o, intptr_t n, intptr_t r, void *c) {
    (void)d, (void)s, (void)o, (void)n, (void)r, (void)c;
}

static void expect(int ok, const char *what) {
    if (!ok && failures++ < 10) fprintf(stderr, "FAIL table: %s\n", what);
}

static void check_table(void) {
    const int L = DISPATCH_LOOP_ADD, D = DISPATCH_INT32;
    dispatch_loop_fn before = dispatch_loop_get(L, D);
    dispatch_loop2d_fn before2d = dispatch_loop2d_get(L, D, before);
    dispatch_loop_register2d(L, D, loop_a, loop2d_a);
    expect(dispatch_loop_get(L, D) == loop_a, "the 1-D loop registered with a form");
    expect(dispatch_loop2d_get(L, D, loop_a) == loop2d_a, "the form of its own loop");
    expect(dispatch_loop2d_get(L, D, loop_b) == NULL, "no form for another loop");
    expect(dispatch_loop2d_get(L, D + 1, loop_a) == NULL, "no form in another dtype's slot");
    dispatch_loop_register(L, D, loop_b);
    expect(dispatch_loop2d_get(L, D, loop_b) == NULL, "a loop registered without a form has none");
    expect(dispatch_loop2d_get(L, D, loop_a) == NULL, "the replaced loop's form is gone");
    expect(dispatch_loop2d_get(-1, D, loop_a) == NULL && dispatch_loop2d_get(L, D, NULL) == NULL,
           "out of range");
    dispatch_loop_register2d(L, D, before, before2d);
    expect(dispatch_loop_get(L, D) == before, "restored");
}

int main(void) {
    check_table();
    const int64_t shapes[][4] = {{7}, {5, 7}, {3, 5, 7}, {4, 3, 5, 7}, {1, 5, 1, 7}};
    const int nds[] = {1, 2, 3, 4, 4};
    for (int i = 0; i < 5; i++)
        for (int bd = -1; bd < nds[i]; bd++) check(nds[i], shapes[i], bd);
    printf("test_loop2d: %ld calls of the 2-D loop, %d failures\n", calls_2d, failures);
    if (calls_2d == 0) {
        fprintf(stderr, "the 2-D loop was never called: nothing was tested\n");
        return 1;
    }
    return failures != 0;
}
