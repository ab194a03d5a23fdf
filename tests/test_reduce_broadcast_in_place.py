"""sum/mean/prod of huge broadcast views read in place (issue 45, item 2; issue 44).

A narrow float's reduction used to convert its whole input to a float32 copy
first, and an integer reduction with dtype= cast its whole input first: a
stride-0 dim of 2^28 elements asked for 1-2 GiB. Now both read the input as it
is, a bounded chunk at a time, with the bits the copy gave (the float32
reduction of the dense float32 copy, Note [Narrow floats without the copy] in
sources/iterator/reduce_narrow.c). The memory checks run in a child under an
address-space limit far below the copy's size.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile

import numpy as np
import pytest

import dispatch as d

# 2^28 elements: the old float32 copy is 1 GiB (a float64/int64 cast 2 GiB);
# the child's address space is its start-up plus LIMIT_EXTRA.
N = 2**28
LIMIT_EXTRA = 384 << 20

_CHILD = """
import resource, sys
import dispatch as d
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
with open("/proc/self/statm") as f:
    vm = int(f.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (vm + {extra}, hard))
x = d.full([1], {value!r}, dtype=d.{dtype}).expand({n})
r = {expr}
print(repr(r.item()), r.dtype)
"""


def _in_child(dtype: str, value, expr: str) -> str:
    code = _CHILD.format(extra=LIMIT_EXTRA, value=value, dtype=dtype, n=N, expr=expr)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tempfile.gettempdir())
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


@pytest.fixture
def limited(sanitized):
    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_AS and /proc/self/statm as Linux counts them")
    if sanitized:
        pytest.skip("AddressSanitizer maps terabytes of shadow memory: no RLIMIT_AS child")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("expr, want", [
    ("x.sum()", float(N)),          # every partial sum a power of two: exact
    ("x.mean()", 1.0),
    ("x.prod()", 1.0),
    ("x.sum(dtype=d.float32)", float(N)),
])
def test_narrow_float_reduction_of_a_huge_broadcast_reads_in_place(limited, dtype, expr, want):
    if dtype == "float16" and want > 65504 and "dtype=" not in expr:
        want = float("inf")  # the float32 sum rounds to float16's inf
    out = _in_child(dtype, 1.0, expr)
    assert float(out.split()[0]) == want, out


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
@pytest.mark.parametrize("expr, want", [
    ("x.sum()", 3 * N),
    ("x.sum(dtype=d.int64)", 3 * N),
    ("x.sum(dtype=d.float64)", float(3 * N)),
    ("x.mean(dtype=d.float64)", 3.0),
    ("x.mean(dtype=d.float32)", 3.0),
    ("x.prod(dtype=d.int64)", pow(3, N, 2**64) - (2**64 if pow(3, N, 2**64) >= 2**63 else 0)),
])
def test_integer_reduction_of_a_huge_broadcast_reads_in_place(limited, dtype, expr, want):
    out = _in_child(dtype, 3, expr)
    got = out.split()[0]
    assert (float(got) if isinstance(want, float) else int(got)) == want, out


# The bits: the in-place read gives what the float32 copy gave, for every layout.

def _layouts(dtype, near_one):
    """(name, view, dims to reduce): broadcasts, strides, permutations; rows and columns."""
    rng = np.random.default_rng(45)

    def values(*shape):
        r = rng.standard_normal(shape).astype(np.float32)
        return d.from_numpy(1 + r / 512 if near_one else r * 7).to(dtype)

    four = ([0], [1], [3], [0, 1], [1, 3], [0, 2], [1, 2, 3], [0, 1, 2, 3])
    yield "broadcast", values(3, 1, 5, 1).expand(3, 700, 5, 301), four
    big = values(3, 40, 5, 33)
    yield "strided", big[:, ::3, :, 1::2], four
    yield "permuted", big.permute(2, 0, 3, 1), four
    two = ([0], [1], [0, 1])
    yield "broadcast rows", values(1, 67).expand(900, 67), two  # columns read at stride 0
    yield "every other row", values(800, 67)[::2], two          # columns read at stride 2 rows
    yield "broadcast column", values(67, 1).expand(67, 900), two
    yield "contiguous", values(300, 1031), two  # the dense row and column kernels


@pytest.mark.parametrize("dtype", [d.float16, d.bfloat16])
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "amax", "amin"])
def test_narrow_float_reductions_of_views_have_the_float32_copy_bits(dtype, op):
    f = getattr(d, op)
    for name, x, all_dims in _layouts(dtype, op == "prod"):
        ref_in = x.contiguous().to(d.float32)  # what the old path reduced
        for dims in all_dims:
            if op == "prod":  # one dim at a time (torch's overloads)
                if len(dims) > 1:
                    continue
                dims = dims[0]
            got, want = f(x, dims), f(ref_in, dims).to(dtype)
            np.testing.assert_array_equal(
                got.to(d.float32).numpy().view(np.uint32),
                want.to(d.float32).numpy().view(np.uint32), err_msg=f"{name} {op} dims={dims}")
        if op in ("sum", "mean", "prod"):
            got, want = getattr(x, op)(), getattr(ref_in, op)().to(dtype)
            assert got.to(d.float32).numpy().view(np.uint32) == \
                want.to(d.float32).numpy().view(np.uint32), f"{name} {op}"


@pytest.mark.parametrize("dtype", [d.float16, d.bfloat16])
def test_a_long_narrow_product_folded_in_chunks_has_the_float32_copy_bits(dtype):
    # past 2^20 elements a product is folded a chunk at a time in the kernel's 32 lanes
    rng = np.random.default_rng(44)
    n = 2**20 + 37
    x = d.from_numpy(1 + rng.standard_normal(n).astype(np.float32) / 4096).to(dtype)
    for view in (x, x[::2], x.reshape(1, n).expand(3, n), x.reshape(1, n).expand(2, n)[:, ::3]):
        want = view.contiguous().to(d.float32).prod().to(dtype)
        got = view.prod()
        assert got.to(d.float32).numpy().view(np.uint32) == \
            want.to(d.float32).numpy().view(np.uint32)
    v = x.reshape(1, n).expand(3, n)
    for dim in (0, 1):
        np.testing.assert_array_equal(
            d.prod(v, dim).to(d.float32).numpy().view(np.uint32),
            d.prod(v.contiguous().to(d.float32), dim).to(dtype).to(d.float32).numpy().view(np.uint32))


# float32 and float64: reduced dims that no one stride steps (a stride-0 dim
# beside a strided one) used to be copied whole, every repeat of the
# broadcast included; they are read in place in the copy's order.

_CHILD_2D = """
import resource, sys
import numpy as np
import dispatch as d
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
with open("/proc/self/statm") as f:
    vm = int(f.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (vm + {extra}, hard))
x = d.from_numpy(np.full({small}, {value!r}, np.{dtype})).expand(*{big})
r = {expr}
print(repr(r.item()), r.dtype)
"""


# N elements in all, as above: the old copy was 1 GiB (float32) or 2 GiB.
@pytest.mark.parametrize("small, big", [((1, 8), (N // 8, 8)), ((8, 1), (8, N // 8))],
                         ids=["rows", "column"])
@pytest.mark.parametrize("dtype, value, expr, want", [
    ("float32", 1.5, "x.sum()", 1.5 * N),   # every partial sum exact
    ("float32", 1.5, "x.mean()", 1.5),
    ("float32", -1.0, "x.prod()", 1.0),        # an even count of -1
    ("float64", 1.5, "x.sum()", 1.5 * N),
    ("float64", 1.5, "x.mean()", 1.5),
    ("float64", -1.0, "x.prod()", 1.0),
    ("int32", 3, "x.sum(dtype=d.float64)", 3.0 * N),
    ("int32", 3, "x.mean(dtype=d.float64)", 3.0),
])
def test_float_reduction_of_a_huge_2d_broadcast_reads_in_place(limited, small, big, dtype,
                                                               value, expr, want):
    code = _CHILD_2D.format(extra=LIMIT_EXTRA, small=small, big=big, value=value,
                            dtype=dtype, expr=expr)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tempfile.gettempdir())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert float(proc.stdout.split()[0]) == want, proc.stdout


def _float_layouts(dtype, near_one):
    """(name, view, dims to reduce): broadcasts beside strided dims, whose
    reduced dims one stride cannot step; counts past the 2^16-element chunk."""
    rng = np.random.default_rng(4502)
    npd = np.float32 if dtype == d.float32 else np.float64

    def values(*shape):
        r = rng.standard_normal(shape)
        return d.from_numpy((1 + r / 4096 if near_one else r * 7).astype(npd))

    yield "broadcast rows", values(1, 8).expand(2**14, 8), ()          # 2^17 elements
    yield "broadcast column", values(8, 1).expand(8, 2**14 + 5), ()
    yield "odd rows", values(1, 13).expand(10007, 13), ()
    b4 = values(3, 1, 5, 1).expand(3, 700, 5, 301)
    yield "broadcast 4-d", b4, ([0, 1], [1, 2], [0, 1, 2], [0, 2, 3], [1, 2, 3])
    yield "strided", values(6, 1, 9).expand(6, 9000, 9)[::2, :, 1::3], ([0, 1], [1, 2])
    yield "permuted", values(5, 1, 7).expand(5, 3000, 7).permute(2, 1, 0), ([0, 1], [1, 2])


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("dtype", [d.float32, d.float64])
@pytest.mark.parametrize("op", ["sum", "mean", "prod"])
def test_float_reductions_of_broadcast_views_have_the_copy_bits(threads, nthreads, dtype, op):
    threads(nthreads)
    bits = np.uint32 if dtype == d.float32 else np.uint64
    for name, x, some_dims in _float_layouts(dtype, op == "prod"):
        # the whole view: its row-major dense copy is what the old path reduced
        got, want = getattr(x, op)(), getattr(x.contiguous(), op)()
        assert got.numpy().view(bits) == want.numpy().view(bits), f"{name} {op}"
        if op == "prod":
            continue  # one dim at a time: one stride steps it, no copy
        for dims in some_dims:
            # the copy: kept dims first, then the reduced ones, row-major
            kept = [k for k in range(x.ndim) if k not in dims]
            ref = x.permute(*kept, *dims).contiguous()
            want = getattr(d, op)(ref, list(range(len(kept), x.ndim)))
            got = getattr(d, op)(x, dims)
            np.testing.assert_array_equal(got.numpy().view(bits), want.numpy().view(bits),
                                          err_msg=f"{name} {op} dims={dims}")
