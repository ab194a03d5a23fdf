"""tools/bench/bench_cuda.py's issue rows without a GPU: the reduction rows
are the ones whose plan it reads back, and a plan prints as the words
docs/cuda.md's H200 figures quote (the timings themselves need a GPU:
run.py --cuda exits 2 without one)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "bench"))
import bench_cuda  # noqa: E402


def test_every_reduction_kind_has_rows_and_every_row_kind_is_known():
    kinds = {kind for _, _, kind, _ in bench_cuda.ROWS}
    assert set(bench_cuda.REDUCTIONS) <= kinds
    assert kinds - set(bench_cuda.REDUCTIONS) == {"cast", "bmul", "clone", "copy"}
    labels = [label for label, *_ in bench_cuda.ROWS]
    assert len(labels) == len(set(labels))


def test_a_plan_prints_its_path_width_splits_blocks_and_lanes():
    # the plan dispatch.cuda.last_reduce() gave for float16 sum(0) of (8192, 8192) on an H200
    plan = {"path": "outer", "vec": 8, "threads_per_output": 1, "splits": 9, "outputs": 8192,
            "elements": 8192, "lanes": 8, "combine_threads_per_output": 32, "blocks": 288,
            "launches": 1}
    text = bench_cuda._plan_text(plan)
    assert text == "outer, vec 8, 9 splits, 288 blocks, lanes 8, 1 threads an output"


# tools/bench/cuda_profile_rows.py: the profiler's device times (issue 48, item 2)

import cuda_profile_rows  # noqa: E402


class _Event:
    """A profiler event as torch's kineto results give one (methods)."""

    def __init__(self, name, device, ns):
        self._n, self._d, self._ns = name, device, ns

    def name(self):
        return self._n

    def device_type(self):
        return f"DeviceType.{self._d}"

    def duration_ns(self):
        return self._ns


def test_profile_rows_sum_the_device_activities_per_call_and_skip_the_host_ones():
    events = [_Event("cudaLaunchKernel", "CPU", 5000), _Event("cols_kernel<float, 0, 4>", "CUDA", 84000),
              _Event("cols_kernel<float, 0, 4>", "CUDA", 86000), _Event("Memcpy DtoD", "CUDA", 2000),
              _Event("cudaDeviceSynchronize", "CPU", 90000)]
    acts = cuda_profile_rows.device_activities(events)
    assert acts == [("cols_kernel<float, 0, 4>", 84.0), ("cols_kernel<float, 0, 4>", 86.0),
                    ("Memcpy DtoD", 2.0)]
    s = cuda_profile_rows.summarize(acts, reps=2)
    assert s == {"device_us": 86.0, "launches": 1.5, "longest": "cols_kernel<float, 0, 4>"}
    assert cuda_profile_rows.summarize([], reps=3) == {"device_us": 0.0, "launches": 0.0,
                                                       "longest": "-"}


def test_profile_rows_cover_item_2_and_exit_2_saying_why_without_a_gpu(capsys):
    kinds = {kind for _, _, kind in cuda_profile_rows.ROWS}
    assert {"amax0", "amin0", "amax1", "sum0", "sum", "copy"} <= kinds
    assert kinds <= set(bench_cuda.REDUCTIONS) | {"copy"}
    if not cuda_profile_rows.refusal():
        import pytest

        pytest.skip("a GPU and torch's CUDA profiler are here: the refusal is not reached")
    assert cuda_profile_rows.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cuda_profile_rows: ") and len(err.strip()) > len("cuda_profile_rows: ")


def test_profile_rows_take_other_rows_by_kind_and_shape_and_quote_a_bad_one(capsys):
    import pytest

    assert set(cuda_profile_rows.KINDS) == {kind for _, _, kind, _ in bench_cuda.ROWS}
    assert cuda_profile_rows.parse_row("sum0", "64x2097152") == ("sum0 64x2097152",
                                                                 (64, 2097152), "sum0")
    assert cuda_profile_rows.parse_row("copy", "1048576")[1] == (1048576,)
    for kind, shape, words in [("summ", "8x8", "'summ'"), ("sum0", "8x0", "'8x0'"),
                               ("sum0", "8xy", "'8xy'"), ("amax1", "64", "two dims")]:
        with pytest.raises(ValueError, match=words):
            cuda_profile_rows.parse_row(kind, shape)
    with pytest.raises(SystemExit) as e:
        cuda_profile_rows.main(["--row", "sum0", "8192by8192"])
    assert e.value.code == 2 and "'8192by8192'" in capsys.readouterr().err
