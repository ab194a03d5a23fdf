#!/usr/bin/env bash
# The GPU job: build this checkout with its CUDA module on a machine with an
# NVIDIA GPU and nvcc, run the CUDA tests and the CUDA benchmark, and leave
# every output in $OUT (default: ./gpu-out). CI has no GPU and never runs
# this; on a machine without one it still runs, and the GPU tests skip
# saying why, and the benchmark exits 2 (no GPU), which is this script's
# status then.
#
#   WHEELS=DIR   a folder of wheels to install from, offline (for a machine
#                that reaches no package index; its Python may differ from
#                this one's, e.g.
#                pip download --only-binary=:all: --python-version 3.12 -d DIR \
#                    -r requirements-dev.txt flit_core   # flit_core builds the toolkit
#                ); unset: install from the index as .ci/run does.
#   CUDA_ARCH=   the meson cuda-arch option (default: the project's list;
#                e.g. sm_90 on an H100 builds faster).
#   OUT=DIR      where the logs go.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
VENV=${VENV:-$PWD/.venv-gpu}

# The machine's own numpy and torch (to compare with) stay visible.
python3 -m venv --clear --system-site-packages "$VENV"
PIP=("$VENV/bin/pip" install -q)
if [ -n "${WHEELS:-}" ]; then
    PIP+=(--no-index --find-links "$WHEELS")
fi
"${PIP[@]}" -r requirements-dev.txt
setup=()
deselect=()
if [ -n "${CUDA_ARCH:-}" ]; then
    setup=(-Csetup-args=-Dcuda-arch="$CUDA_ARCH")
    # that test checks the installed module against the default list
    deselect=(--deselect tests/test_cuda_build.py::test_module_holds_sass_for_each_requested_arch_plus_ptx)
fi
{ nvidia-smi || echo "nvidia-smi: not found"; } >"$OUT/nvidia-smi.txt" 2>&1
"${PIP[@]}" --no-build-isolation -Cbuild-dir=build-gpu -Csetup-args=-Dcuda=enabled \
    "${setup[@]}" . 2>&1 | tee "$OUT/build.txt"

cd "$OUT" # never import the source tree
"$VENV/bin/python" -m dispatch --verbose | tee dispatch.txt
cd - >/dev/null
rc=0 # -P: the source tree must not shadow the installed package
"$VENV/bin/python" -P -m pytest -q -rs -p no:cacheprovider "${deselect[@]}" tests/test_cuda_build.py tests/test_cuda_runtime.py \
    tests/test_cuda_ops.py tests/test_cuda_reductions.py tests/test_dlpack_cuda.py \
    2>&1 | tee "$OUT/tests.txt" || rc=$?
"$VENV/bin/python" tools/bench/run.py --cuda --json "$OUT/bench_cuda.json" 2>&1 |
    tee "$OUT/bench_cuda.txt" || rc=$((rc ? rc : $?))
exit "$rc"
