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
