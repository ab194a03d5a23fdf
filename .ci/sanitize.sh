#!/bin/sh
# AddressSanitizer + UndefinedBehaviorSanitizer job: build the package with
# -Db_sanitize=address,undefined, run the C test binaries (meson test), then
# the whole Python suite with libasan preloaded into the interpreter.
#
#   .ci/sanitize.sh            (BUILD=build-asan VENV=build-asan-venv by default)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-asan}
VENV=${VENV:-$ROOT/build-asan-venv}
CC=${CC:-gcc}

# --clear: a venv left by another checkout (its package built from that
# checkout) must not be reused.
python3 -m venv --clear --system-site-packages "$VENV"
cd "$ROOT"   # requirements-dev.txt names the toolkit as ./tools/dispatchgen
"$VENV/bin/pip" install -q -r "$ROOT/requirements-dev.txt"
PATH="$VENV/bin:$PATH"   # meson and ninja, wherever pip put them
export PATH
# No CUDA module here: nvcc compiles its .cu files with flags of its own, never
# sanitized, and its C host code (the caching allocator, the launch and
# reduction planners) runs only with a GPU; that code's C tests (meson test
# below: cuda_cache, cuda_launch, cuda_reduce_plan) are built whatever the
# option says, so they run under ASan here. The plain job builds the module.
# -Dtests=true: the C test programs, which pip builds leave out (pyproject.toml).
# Installed, not editable (the build folder stays for meson test below): an
# editable package runs ninja on its build folder at every import, and here
# that was pyenv's ninja shim (bash and pyenv, libasan preloaded into each),
# 0.44 s of CPU in every fresh interpreter that imports dispatch; the plain
# job tests an installed package too.
# -g1 after debugoptimized's -g: line tables and functions (inlined frames
# too), which is all a sanitizer's report prints, without the variables'
# locations: the kernels' per-target objects compile in about a fifth less
# CPU (int_loops, cast_loops, sum, narrow_loops and exp_log at AVX512_SKX:
# 82 -> 64 CPU-s), and a report names the same frames and lines.
"$VENV/bin/pip" install -q --no-build-isolation -Cbuild-dir="$BUILD" -Csetup-args=-Dtests=true \
    -Csetup-args=-Db_sanitize=address,undefined -Csetup-args=-Db_lundef=false \
    -Csetup-args=-Dbuildtype=debugoptimized -Csetup-args=-Dc_args=-g1 \
    -Csetup-args=-Dcuda=disabled "$ROOT"

# UBSan findings are errors, not log lines.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# allocator_may_return_null: the MemoryError test asks for an impossible size.
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
meson test -C "$BUILD" --print-errorlogs

# ThreadSanitizer cannot share a process with ASan: the thread pool's stress
# test (Note [Joining a job without a lock] in sources/iterator/parallel.c)
# builds once more on its own, with -fsanitize=thread; a race is an error.
"$CC" -std=c11 -O1 -g -fsanitize=thread -I"$ROOT/sources/include" -I"$BUILD/sources/include" \
    -o "$BUILD/test_parallel_tsan" "$ROOT/sources/iterator/test_parallel.c" \
    "$ROOT/sources/iterator/parallel.c" -lpthread
TSAN_OPTIONS=halt_on_error=1 "$BUILD/test_parallel_tsan"

# CPython itself is not built with ASan: preload the runtime, and leave leak
# checking to the live-storage tests (the interpreter keeps memory at exit).
LIBASAN=$("$CC" -print-file-name=libasan.so)
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=0
cd "$ROOT"
# The whole suite, not a subset; tests that would run this ASan build under
# qemu-user, and files that never load it (they build other trees with plain
# flags), skip here, saying why (tests/conftest.py), and run in the plain job.
# --durations, --cpu-durations: the slowest tests named in the log, by wall
# time and by CPU, as .ci/run does for the main job (where this job's time
# goes).
# -P: the checkout's own dispatch/ (sources, no extension) is not put on
# sys.path before the installed package.
# --max-worker-restart=0 and the time limit: an xdist worker that a sanitizer
# aborts is a finding; replaced, its stand-in once left the job waiting on
# two idle workers until it was killed 30 minutes later (stop 93). Now the
# crash ends the run, and a run past SANITIZER_PYTEST_SECONDS (the job takes
# about 20 minutes beside the main one on 2 cores) is stopped, its workers
# with it (timeout signals its process group), and fails.
limit=${SANITIZER_PYTEST_SECONDS:-3000}
rc=0
timeout --kill-after=30 "$limit" env LD_PRELOAD="$LIBASAN" "$VENV/bin/python" -P -m pytest -q \
    -p no:cacheprovider --max-worker-restart=0 --durations=20 --cpu-durations=30 || rc=$?
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "sanitize.sh: the suite ran past ${limit} s (SANITIZER_PYTEST_SECONDS) and was stopped" >&2
fi
exit "$rc"
