"""Storages: allocation, foreign memory, zero-copy NumPy, refcounts."""

import gc
import random

import numpy as np
import pytest

import dispatch


def test_cpu_allocations_are_64_byte_aligned():
    # both paths of Note [CPU allocations]: malloc below 4 MiB, huge pages above
    for n in (0, 1, 3, 17, 1000, (4 << 20) - 64, 4 << 20, (8 << 20) + 3):
        t = dispatch.empty(n, dtype=dispatch.int8)
        assert t.data_ptr() % 64 == 0
        if n:  # every byte is ours: write the ends
            t[0] = 1
            t[n - 1] = 2
            assert t[n - 1].item() == 2


def test_data_of_64_kib_or_more_starts_on_a_page():
    """Note [Outputs on a page]: so an input made by NumPy (16 bytes into its
    page) lies ahead of our output modulo 4096, never a few vectors behind
    it (4K aliasing). Both allocation paths, every size around the bounds,
    and operator results made from a NumPy input."""
    for n in (64 << 10, (64 << 10) + 1, (4 << 20) - 1, 4 << 20, (8 << 20) + 3):
        t = dispatch.empty(n, dtype=dispatch.int8)
        assert t.data_ptr() % 4096 == 0, n
        t[0], t[n - 1] = 1, 2  # every byte is ours
        assert (t[0].item(), t[n - 1].item()) == (1, 2)
    assert dispatch.empty((64 << 10) - 1, dtype=dispatch.int8).data_ptr() % 64 == 0
    a = np.random.default_rng(0).standard_normal(1 << 20)
    x = dispatch.from_numpy(a)
    for r in (dispatch.ops.neg(x), x + 1.0, x.to(dispatch.float32), x.clone()):
        assert r.data_ptr() % 4096 == 0
    assert (dispatch.ops.neg(x).numpy() == -a).all()


def test_large_results_are_backed_by_huge_pages_where_the_kernel_allows():
    """A 64 MiB result is marked MADV_HUGEPAGE; with THP in 'madvise' or
    'always' mode, its pages come from huge pages (AnonHugePages grows)."""
    try:
        mode = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        pytest.skip("no transparent huge pages on this system")
    if "[never]" in mode:
        pytest.skip("transparent huge pages are disabled here")

    def anon_huge_kb():
        for line in open("/proc/self/smaps_rollup"):
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
        pytest.skip("no AnonHugePages in /proc/self/smaps_rollup")

    before = anon_huge_kb()
    t = dispatch.zeros(1 << 24)  # 64 MiB of float32, written by zeros
    after = anon_huge_kb()
    assert t.numel() == 1 << 24
    assert after - before >= 16 * 1024  # at least a quarter on 2 MiB pages


def test_zero_size_tensors_are_allowed():
    t = dispatch.empty(0, 3)
    assert t.shape == (0, 3) and t.numel() == 0 and t.tolist() == []


def test_allocation_failure_is_a_memory_error_with_the_size():
    with pytest.raises(MemoryError, match="failed to allocate 8000000000000000000 bytes"):
        dispatch.empty(1000000000000000000, dtype=dispatch.float64)


@pytest.fixture
def no_cuda_allocator():
    """The allocator table without a "cuda" entry, whether or not this machine
    has a GPU: on one that has, the CUDA module registers its allocator at
    the first CUDA use (maybe an earlier test's in this process), and the old
    form of these tests, a bare empty(device="cuda"), made a tensor there."""
    from dispatch._core import ffi, lib

    before = lib.dispatch_allocator_get(1)
    lib.dispatch_allocator_register(1, ffi.NULL)
    try:
        yield
    finally:
        lib.dispatch_allocator_register(1, before)


def test_cuda_without_allocator_says_why(no_cuda_allocator, monkeypatch):
    from dispatch import cuda

    monkeypatch.setattr(cuda, "unavailable_reason", lambda: "no NVIDIA driver (for this test)")
    with pytest.raises(RuntimeError, match="no allocator is registered for device 'cuda': CUDA "
                                           r"is not available: no NVIDIA driver \(for this test"):
        dispatch.empty(2, device="cuda")


def test_device_without_allocator_is_refused_by_the_storage_layer(no_cuda_allocator,
                                                                  monkeypatch):
    """CUDA available (said so here) yet no allocator: the C storage layer's own
    refusal, not a crash."""
    from dispatch import cuda

    monkeypatch.setattr(cuda, "unavailable_reason", lambda: "")
    with pytest.raises(RuntimeError, match="no allocator is registered for device 'cuda' "
                                           r"\(this build or machine has no support for it\)"):
        dispatch.empty(2, device="cuda")


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = dispatch.from_numpy(a)
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t[1, 2] = -1
    assert a[1, 2] == -1


def test_numpy_is_zero_copy():
    t = dispatch.zeros(4)
    n = t.numpy()
    n[1] = 5
    assert t.tolist() == [0, 5, 0, 0]
    assert n.__array_interface__["data"][0] == t.data_ptr()


def test_from_numpy_keeps_the_array_alive():
    t = dispatch.from_numpy(np.arange(1000, dtype=np.int64))
    gc.collect()
    assert t.numpy().sum() == sum(range(1000))


def _readonly(a):
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("layout", [
    "contiguous", "offset", "transposed", "every other column", "0-d", "empty",
    "read-only", "read-only every other", "broadcast (stride 0, read-only)",
])
def test_from_numpy_views_every_layout_at_its_own_memory(layout):
    """from_numpy reads a contiguous array's address through the buffer protocol
    and any other's through __array_interface__: both give the array's own first
    element, its values and its read-only flag."""
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    a = {
        "contiguous": lambda: base,
        "offset": lambda: base.reshape(-1)[5:],
        "transposed": lambda: base.T,
        "every other column": lambda: base[:, ::2],
        "0-d": lambda: np.array(7.5),
        "empty": lambda: np.empty((0, 3)),
        "read-only": lambda: _readonly(base.copy()),
        "read-only every other": lambda: _readonly(base.copy())[::2, 1::2],
        "broadcast (stride 0, read-only)": lambda: np.broadcast_to(base[0], (3, 6)),
    }[layout]()
    for _ in range(2):  # the second call finds the dtype already matched
        t = dispatch.from_numpy(a)
        assert t.shape == a.shape
        assert t.stride() == tuple(s // a.itemsize for s in a.strides)
        assert t.tolist() == a.tolist()
        if a.size:
            assert t.data_ptr() == a.__array_interface__["data"][0]
        if a.flags.writeable:
            t.fill_(-3)
            assert (a == -3).all()
        else:
            with pytest.raises(ValueError, match="read-only"):
                t.fill_(0)


def test_numpy_dtypes_equal_to_ours_are_ours_and_others_are_refused():
    """Every NumPy spelling of one of our dtypes maps to it, the first time and
    again (a matched dtype is kept by its NumPy dtype object), and a dtype that is
    not one of ours is refused however often a native one was matched before."""
    spellings = {"l": "int64", "q": "int64", "=f4": "float32", "<f8": "float64",
                 "?": "bool", "e": "float16", "B": "uint8", "h": "int16"}
    for _ in range(2):
        for code, name in spellings.items():
            assert dispatch.from_numpy(np.zeros(2, dtype=code)).dtype == getattr(dispatch, name)
        tagged = np.dtype("f4", metadata={"unit": "m"})
        assert dispatch.from_numpy(np.zeros(2, dtype=tagged)).dtype == dispatch.float32
        swapped = np.zeros(2, dtype=np.dtype("f4").newbyteorder())
        with pytest.raises(TypeError):
            dispatch.from_numpy(swapped)
        for other in ("M8[ns]", "m8[s]", "U1", [("x", "f4")], "c8"):
            with pytest.raises(TypeError):
                dispatch.from_numpy(np.zeros(2, dtype=other))


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "every other column", "0-d",
                                    "empty", "read-only"])
@pytest.mark.parametrize("code", ["?", "u1", "i1", "i2", "i4", "i8", "f2", "f4", "f8"])
def test_tensor_of_an_array_is_its_own_copy_in_every_layout(code, layout):
    """tensor() copies an array of one of our dtypes byte for byte when it is
    contiguous and through NumPy's cast otherwise: the same values either way,
    in a fresh writable tensor the array no longer reaches; an operand of +
    is the same copy."""
    base = (np.arange(24).reshape(4, 6) % 7 - 3).astype(code)
    a = {"contiguous": lambda: base.copy(), "transposed": lambda: base.T,
         "every other column": lambda: base[:, ::2], "0-d": lambda: base[1, 2].copy().reshape(()),
         "empty": lambda: base[:0], "read-only": lambda: _readonly(base.copy())}[layout]()
    want = a.tolist()
    t = dispatch.tensor(a)
    assert t.dtype == dispatch.from_numpy(np.zeros(1, a.dtype)).dtype
    assert t.shape == a.shape and t.tolist() == want and t.is_contiguous()
    if a.size and a.flags.writeable:
        a[...] = 1
        assert t.tolist() == want  # the array's writes do not reach t
    t.fill_(0)  # writable
    if a.size and a.flags.writeable:
        assert (a == 1).all()  # nor t's the array
    wide = dispatch.tensor(a, dtype=dispatch.float64)  # a cast: NumPy's copy
    assert wide.tolist() == np.asarray(a, dtype=np.float64).tolist()
    if code not in "?" and a.size:
        assert (dispatch.zeros(a.shape, dtype=t.dtype) + a).tolist() == a.tolist()


def _views():
    base = dispatch.arange(48).view(4, 3, 4)
    yield "contiguous", base
    yield "transposed", base.permute(2, 0, 1)
    yield "strided", base[:, ::2, 1::3]
    yield "size-1 dims", base[:1, 1:2]
    yield "broadcast", dispatch.arange(4).expand(3, 4)
    yield "0-d", base[1, 2, 3]
    yield "empty", base[:0]
    yield "read-only", dispatch.from_numpy(_readonly(np.arange(6.0).reshape(2, 3)))[:, 1:]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16", "float32", "float64"])
def test_the_array_interface_built_in_c_is_the_python_one(dtype):
    """Tensor.__array_interface__ (Note [The array interface in C]) gives the dict
    of the Python function it falls back on, for every layout and dtype NumPy
    has, and NumPy's view of it is the tensor's memory and values."""
    from dispatch._tensor import _array_interface

    for what, v in _views():
        t = v.to(getattr(dispatch, dtype)) if v.dtype != getattr(dispatch, dtype) and \
            what != "read-only" else v
        if what == "read-only" and dtype != "float64":
            continue
        got = t.__array_interface__
        assert got == _array_interface(t), what
        assert [type(x) for x in got["data"]] == [int, bool], what
        n = np.asarray(t)
        assert n.tolist() == t.tolist(), what
        if t.numel():
            assert n.__array_interface__["data"][0] == t.data_ptr(), what
        assert n.flags.writeable == (what != "read-only"), what


def test_tensors_numpy_cannot_view_keep_their_errors():
    """A bfloat16 or meta tensor goes to the Python path and its TypeError."""
    for t, match in ((dispatch.ones(2).to(dispatch.bfloat16), "bfloat16"),
                     (dispatch.empty(2, device="meta"), "meta")):
        with pytest.raises(TypeError, match=match):
            t.__array_interface__  # noqa: B018
        with pytest.raises(TypeError, match=match):
            t.numpy()


def test_from_numpy_rejects_negative_strides():
    with pytest.raises(ValueError, match="negative"):
        dispatch.from_numpy(np.arange(4)[::-1])


def test_from_numpy_rejects_unsupported_dtypes():
    with pytest.raises(TypeError, match="complex128"):
        dispatch.from_numpy(np.zeros(2, dtype=np.complex128))


def test_numpy_of_meta_tensor_is_an_error():
    with pytest.raises(TypeError, match="meta"):
        dispatch.empty(2, device="meta").numpy()


def test_dropping_tensors_in_any_order_frees_every_storage():
    gc.collect()
    before_s, before_t = dispatch.live_storages(), dispatch.live_tensors()
    rng = random.Random(0)
    for _ in range(20):
        base = dispatch.from_numpy(np.arange(24, dtype=np.float64).reshape(2, 3, 4))
        objs = [base, base.T, base[1], base.view(6, 4)[::2], base + 1, (base * 2).sum(),
                dispatch.zeros(3), base.expand(2, 2, 3, 4), base.numpy()]
        rng.shuffle(objs)
        del base
        while objs:
            objs.pop(rng.randrange(len(objs)))
    gc.collect()
    assert dispatch.live_storages() == before_s
    assert dispatch.live_tensors() == before_t


def test_storage_outlives_the_tensor_through_numpy():
    t = dispatch.arange(5)
    n = t.numpy()
    del t
    gc.collect()
    assert n.tolist() == [0, 1, 2, 3, 4]


_FAULTS = """
import resource, sys, numpy as np, dispatch
# blocks of other sizes (MiB, from argv) written and freed first: the cache's
# history before the loop
held = [dispatch.ones(mib << 17, dtype=dispatch.float64) for mib in map(int, sys.argv[1:])]
del held
a = dispatch.from_numpy(np.ones(1 << 23))  # 64 MiB of float64
a + a  # the first result: fresh memory
windows = []
for _ in range(5):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        r = a + a
        del r
    windows.append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 10)
print(min(windows))
"""


def _faults_per_call(env_value, tmp_path, freed_before=()):
    """Minor page faults per `a + a` of 64 MiB in a fresh process, after
    blocks of the sizes freed_before (MiB) were made and freed: the least of
    5 windows of 10 calls. Faults the allocator does not cause only add to a
    window (on a NUMA machine the kernel's automatic NUMA balancing unmaps
    pages now and then and counts each hinting fault as a minor fault; a
    machine loaded by `pytest -n 16` stretches the loop over more of its scan
    periods), so the least window is the allocator's own count."""
    return float(_child_stdout(_FAULTS, env_value, tmp_path, *map(str, freed_before)))


def _child_stdout(script, env_value, tmp_path, *args):
    """What script prints, run with args in a fresh process whose
    DISPATCH_CPU_CACHE_MB is env_value (None: unset)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "DISPATCH_CPU_CACHE_MB"}
    if env_value is not None:
        env["DISPATCH_CPU_CACHE_MB"] = env_value
    # No -I: it drops PYTHONPATH, through which this interpreter may find cffi
    # or dispatch (a GPU job's `pip install --target` folder); an empty cwd
    # keeps the checkout's source dispatch/ off the child's sys.path.
    return subprocess.run([sys.executable, "-c", script, *args], env=env, check=True,
                          cwd=tmp_path, capture_output=True, text=True).stdout


def _malloc_keeps_large_blocks() -> bool:
    """A malloc that may keep freed 66 MiB blocks mapped (jemalloc, tcmalloc,
    mimalloc preloaded, or glibc tuned so), which would serve the next result
    without faults even with our cache off."""
    import os

    preload = os.environ.get("LD_PRELOAD", "")
    tuned = os.environ.get("GLIBC_TUNABLES", "") + "".join(
        k for k in os.environ if k.startswith("MALLOC_") and k.endswith("_"))
    return any(m in preload for m in ("jemalloc", "tcmalloc", "mimalloc")) or \
        "mmap_threshold" in tuned or "MMAP_THRESHOLD" in tuned


def test_large_out_of_place_results_pay_no_page_faults(tmp_path):
    """Note [CPU allocations]: freed large blocks are reused, so a loop of
    out-of-place operations on 64 MiB tensors takes no page fault per pass;
    with the cache off, each result faults its pages in again."""
    assert _faults_per_call(None, tmp_path) < 2
    assert _faults_per_call("not-a-number", tmp_path) < 2  # a bad value keeps the default
    if _malloc_keeps_large_blocks():
        pytest.skip("the cache-off half needs a malloc that unmaps freed 66 MiB blocks "
                    "(LD_PRELOAD / GLIBC_TUNABLES / MALLOC_* say this one may keep them)")
    assert _faults_per_call("0", tmp_path) >= 16  # 32 huge pages (or 16384 small ones) per result


def test_a_new_size_is_cached_after_older_sizes_fill_the_cache(tmp_path):
    """Note [The cache keeps the newest blocks]: once freed blocks of other
    sizes fill the cache, in slots (eight blocks) or in bytes (the limit), a
    loop of results of a new size pays no page faults once the older blocks
    are stale (32 frees of large blocks untaken; the loop makes 51): the
    oldest of them makes room. The cache used to refuse the new size for
    good, and each result faulted its pages in."""
    if _malloc_keeps_large_blocks():
        pytest.skip("a malloc that keeps freed large blocks would hide a refused block "
                    "(LD_PRELOAD / GLIBC_TUNABLES / MALLOC_* say this one may)")
    eight = (4, 6, 8, 10, 12, 14, 16, 18)  # every slot, 88 MiB of the default 256
    assert _faults_per_call(None, tmp_path, eight) < 2
    assert _faults_per_call("160", tmp_path, (100, 40)) < 2  # the bytes: 140 of 160 MiB
    # a block larger than the whole limit is still never kept
    assert _faults_per_call("48", tmp_path, (20,)) >= 16


_CYCLE = """
import resource, dispatch
# nine sizes in turn, each result freed before the next: one more size than
# the cache has slots, 34 to 50 MiB (above glibc's largest mmap threshold, so
# glibc keeps none of them; 378 MiB in all, under the limit the test sets)
sizes = [(34 + 2 * k) << 17 for k in range(9)]
for _ in range(3):  # every size made and freed a few times first
    for n in sizes:
        r = dispatch.zeros(n, dtype=dispatch.float64); del r
windows = []
for _ in range(5):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for n in sizes:
        r = dispatch.zeros(n, dtype=dispatch.float64); del r
    windows.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
print(min(windows))
"""


def test_a_loop_over_more_sizes_than_slots_keeps_most_of_them(tmp_path):
    """Note [The cache keeps the newest blocks]: blocks still in use are not
    pushed out. A loop over nine sizes (eight slots) keeps eight served from
    the cache; evicting the oldest block whatever its age would make each
    newcomer push out the block the loop needs next, and every size fault."""
    if _malloc_keeps_large_blocks():
        pytest.skip("a malloc that keeps freed large blocks would serve every size itself")
    uncached = int(_child_stdout(_CYCLE, "0", tmp_path))  # all nine fault
    cached = int(_child_stdout(_CYCLE, "1024", tmp_path))
    assert uncached >= 9 * 3, uncached  # at least three huge pages a size
    assert cached * 3 < uncached, (cached, uncached)  # one size of nine, not all of them


def test_the_block_cache_benchmark_runs_and_reports_no_faults(tmp_path):
    """tools/bench/bench_block_cache.py, as docs/performance.md runs it (from
    the checkout's root, whose source dispatch/ must not shadow the installed
    one in its children), on a small size (18 MiB results, a size none of the
    eight freed blocks has): one process, its line says 0 faults a call once
    the stale blocks made room."""
    import subprocess
    import sys
    from pathlib import Path

    if _malloc_keeps_large_blocks():
        pytest.skip("a malloc that keeps freed large blocks changes what the benchmark shows")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "tools/bench/bench_block_cache.py", "--procs", "1",
                          "--n", str(9 << 18), "--calls", "3"], cwd=root, check=True,
                         capture_output=True, text=True).stdout
    (line,) = [ln for ln in out.splitlines() if ln.startswith("  installed")]
    assert line.split()[-2:] == ["0", "faults"], out


def test_to_meta_keeps_shape_and_dtype_and_nothing_comes_back():
    """As torch's: .to("meta") makes a tensor of the same shape and dtype
    with no data; copying out of one is NotImplementedError saying so. Both
    said "CUDA is not available" before (the copy went to the CUDA module)."""
    m = dispatch.ones(3, 2, dtype=dispatch.int8).to("meta")
    assert m.device == "meta" and m.shape == (3, 2) and m.dtype is dispatch.int8
    assert m.to("meta") is m
    for back in (lambda: m.cpu(), lambda: m.to("cpu")):
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
            back()
