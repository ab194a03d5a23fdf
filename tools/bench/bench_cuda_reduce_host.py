"""The host's share of a small CUDA reduction, measurable without a GPU: the
"cuda" device is given a malloc allocator and a device reduction that does
nothing (both C, compiled here), so a call times everything a real one does
on the host except the CUDA module's own work (its plan, about 0.1 us, and
the kernel launch).

    python tools/bench/bench_cuda_reduce_host.py [--repeat 7] [--number 20000] [--json]

Run it in a process of its own (it registers the device's allocator and
reduction for the whole process) with cwd outside a checkout. Prints the
best of --repeat rounds of --number calls per row, in microseconds, and the
same reductions of the same shapes on the CPU beside them.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

SHIM = r"""
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
static void *shim_alloc(size_t n, void *c) { (void)c; return malloc(n ? n : 1); }
static void shim_free(void *p, void *c) { (void)c; free(p); }
/* dispatch_allocator's layout (dispatch/storage.h) */
struct shim_allocator {
    const char *name;
    void *(*alloc)(size_t, void *);
    void (*free)(void *, void *);
    void *ctx;
    const char *(*failure_message)(void *);
} shim_allocator = {"host-shim", shim_alloc, shim_free, NULL, NULL};
long shim_calls;
/* dispatch_device_reduce_fn: the device's work left out */
int shim_reduce(int op, int dtype, const char *in, int ndim, const int64_t *shape,
                const int64_t *strides, uint32_t mask, int out_dtype, char *out,
                int64_t *indices, char *err, size_t errcap) {
    (void)op, (void)dtype, (void)in, (void)ndim, (void)shape, (void)strides, (void)mask;
    (void)out_dtype, (void)out, (void)indices, (void)err, (void)errcap;
    shim_calls++;
    return 0;
}
"""


def _shim(tmp: Path) -> ctypes.CDLL:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("bench_cuda_reduce_host: no C compiler on PATH")
    src, so = tmp / "shim.c", tmp / "libshim.so"
    src.write_text(SHIM)
    subprocess.run([cc, "-O2", "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
    return ctypes.CDLL(str(so))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import dispatch
    from dispatch import cuda
    from dispatch._core import ffi, lib

    with tempfile.TemporaryDirectory() as tmp:
        shim = _shim(Path(tmp))
        allocator = ffi.cast("dispatch_allocator *",
                             ctypes.addressof(ctypes.c_char.in_dll(shim, "shim_allocator")))
        lib.dispatch_allocator_register(1, allocator)
        fn = ffi.cast("dispatch_device_reduce_fn",
                      ctypes.cast(shim.shim_reduce, ctypes.c_void_p).value)
        assert lib.dispatch_device_reduce_register(1, fn) == 0
        assert lib.dispatch_kernels_register_device(lib.dispatch_key_from_name(b"CUDA")) > 0
        cuda._lib = lambda: None  # no CUDA module: the shim is the device

        ops = dispatch.ops
        shapes = {"(4096, 16)": (4096, 16), "2^20": (1 << 20,), "(64, 64)": (64, 64)}
        rows = [
            ("ops.sum(x, 0)", "(4096, 16)", lambda x: ops.sum(x, 0)),
            ("x.sum(0)", "(4096, 16)", lambda x: x.sum(0)),
            ("ops.amax(x, 0)", "(4096, 16)", lambda x: ops.amax(x, 0)),
            ("ops.sum(x)", "2^20", lambda x: ops.sum(x)),
            ("ops.sum(x, 1)", "(64, 64)", lambda x: ops.sum(x, 1)),
        ]
        dev = {k: dispatch.empty(*s, device="cuda") for k, s in shapes.items()}
        cpu = {k: dispatch.zeros(*s) for k, s in shapes.items()}

        def best(f, x):
            t = 1e9
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                for _ in range(args.number):
                    f(x)
                t = min(t, (time.perf_counter() - t0) / args.number)
            return t * 1e6

        out = []
        for label, shape, f in rows:
            out.append({"call": label, "shape": shape, "host_us": round(best(f, dev[shape]), 2),
                        "cpu_us": round(best(f, cpu[shape]), 2)})
        calls = ctypes.c_long.in_dll(shim, "shim_calls").value
        assert calls == len(rows) * args.repeat * args.number, calls  # every call reached it
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{'call':16s} {'shape':11s} {'host us':>8s} {'cpu us':>8s}")
    for r in out:
        print(f"{r['call']:16s} {r['shape']:11s} {r['host_us']:8.2f} {r['cpu_us']:8.2f}")


if __name__ == "__main__":
    main()
