"""A new narrow float needs no edit in sources/cuda/ (issue 39, item 3; Note
[CUDA narrow floats] in sources/cuda/cuda_device_types.cuh).

On a copy of the sources with float8_e4m3fn added to dtype.h by the dtype
recipe's own edit (tools/dtype_recipe.py: its dtype line and its format's
row): the CUDA sources that instantiate its kernels compile (its loops, its
casts to and from every float, its reductions), its device type converts
as the recipe's reference of the format says (tools/narrow_float_ref.py; run
on the CPU: nvcc compiles the generic conversions for the host too), and a
hardware type named without its NarrowTraits is a compile error. No GPU is
needed; nvcc is.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from dtype_recipe import LIST, apply_float_recipe  # noqa: E402
from narrow_float_ref import FORMATS, Format  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NVCC = shutil.which("nvcc")
# nvcc and the probes are plain programs: never the sanitizer job's preloaded libasan
PLAIN_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """The headers and CUDA sources with float8_e4m3fn in both lists, and the
    generated loop header."""
    tmp = tmp_path_factory.mktemp("narrow_cuda")
    for d in ("sources/include", "sources/cuda", "tools/dispatchgen/dispatchkit/include"):
        shutil.copytree(ROOT / d, tmp / d)
    if "FLOAT8_E4M3FN" not in (tmp / LIST).read_text():  # the list may have it already
        apply_float_recipe(tmp)  # the recipe's own two lines
    (tmp / "gen/dispatch").mkdir(parents=True)
    subprocess.run([sys.executable, str(ROOT / "tools/opgen.py"),
                    str(ROOT / "sources/dispatcher/operators.toml"),
                    "--loops-h", str(tmp / "gen/dispatch/_loops.h")], check=True, env=PLAIN_ENV)
    return tmp


def _dtype_id(tree: Path) -> int:
    body = (tree / LIST).read_text()
    body = body[body.index("#define DISPATCH_FORALL_DTYPES_WITH(X, A)"):]
    names = re.findall(r"^\s*X\(A,\s*(\w+),", body, re.MULTILINE)
    return names.index("FLOAT8_E4M3FN")


def _nvcc(tree: Path, *args: str) -> list[str]:
    return [NVCC, "-std=c++17", "-O3", "-fmad=false", f"-I{tree / 'sources/include'}",
            f"-I{tree / 'gen'}", f"-I{tree / 'tools/dispatchgen/dispatchkit/include'}",
            f"-I{tree / 'sources/cuda'}", *args]


def test_the_cuda_sources_compile_with_a_new_narrow_float(tree, tmp_path):
    dt = _dtype_id(tree)
    shards = re.search(r"#define DCU_SHARDS (\d+)",
                       (tree / "sources/cuda/cuda_device_types.cuh").read_text())
    shard = f"-DDCU_SHARD={dt % int(shards.group(1))}"  # the shard of its kernels
    jobs = {}
    for src, extra in (("cuda_elementwise.cu", []), ("cuda_elementwise_shard.cu", [shard]),
                       ("cuda_reduce_shard.cu", [shard])):
        out = tmp_path / (src + ".ptx")
        cmd = _nvcc(tree, "-gencode", "arch=compute_75,code=compute_75", *extra, "-ptx",
                    str(tree / "sources/cuda" / src), "-o", str(out))
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=PLAIN_ENV)
        jobs[src] = (proc, out)
    ptx = {}
    for src, (proc, out) in jobs.items():
        log = proc.communicate(timeout=600)[0]
        assert proc.returncode == 0, f"{src} with float8_e4m3fn appended:\n{log}"
        ptx[src] = out.read_text()
    t = f"10dcu_narrowILi{dt}EE"  # dcu_narrow<dt>, mangled
    # its loops: e.g. add, the vector, generic and row kernels of its loop id
    loops = set(re.findall(r"\.entry (_Z\w*kernelILi(\d+)E" + t + r"\w*)\(",
                           ptx["cuda_elementwise_shard.cu"]))
    assert len({loop for _, loop in loops}) >= 20, sorted(loops)[:5]
    # its casts to and from every other float, the loop in either dtype
    casts = re.findall(r"\.entry (_Z11cast_kernel\w*)\(", ptx["cuda_elementwise.cu"])
    nfloat = round((1 + math.sqrt(1 + 2 * len(casts))) / 2)  # 2 n (n - 1) kernels
    assert 2 * nfloat * (nfloat - 1) == len(casts)
    assert sum(t in c for c in casts) == 2 * 2 * (nfloat - 1), [c for c in casts if t in c]
    # its reductions: sum, max and min
    for op in range(3):
        kernel = r"\.entry _Z11rows_kernelI" + t + f"Li{op}E"
        assert re.search(kernel, ptx["cuda_reduce_shard.cu"]), op


# float8_e4m3fn from its definition (4 exponent bits, bias 7, 3 mantissa
# bits, no inf, NaN 0x7f/0xff, overflow NaN): the recipe's reference.
E4M3FN = Format(*FORMATS["float8_e4m3fn"][0])


def test_the_generic_device_type_converts_as_its_format_says(tree, tmp_path):
    dt = _dtype_id(tree)
    values = [0.0, -0.0, 1.0, -1.5, 0.1, 1 / 1024, 1 / 512 * 1.5, 2.0**-10, 2.0**-11, 240.0, 448.0,
              460.0, 464.0, 465.0, 500.0, -1e30, 3.3, 17.0, 18.0, 19.0, 2.0**-9 * 0.75]
    probe = tmp_path / "probe.cu"
    probe.write_text(
        '#include <stdio.h>\n#include "cuda_device_types.cuh"\n'
        f"typedef DevType<{dt}>::type T;\n"
        "typedef NarrowTraits<T> N;\n"
        'static_assert(sizeof(T) == 1, "float8 is one byte");\n'
        "int main(void) {\n"
        "    for (int b = 0; b < 256; b++) printf(\"%a\\n\", (double)N::to_float(T{(uint8_t)b}));\n"
        f"    const double xs[] = {{{', '.join(map(float.hex, values))}, NAN, -NAN, INFINITY}};\n"
        "    for (double x : xs)\n"
        "        printf(\"%d %d\\n\", N::from_double(x).bits, N::from_float((float)x).bits);\n"
        "    printf(\"%d %d %d\\n\", N::quiet_nan().bits, N::from_i64(-3).bits,\n"
        "           N::from_i64(1000).bits);\n"
        "}\n")
    exe = tmp_path / "probe"
    r = subprocess.run(_nvcc(tree, str(probe), "-o", str(exe)), capture_output=True, text=True,
                       check=False, env=PLAIN_ENV)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                           env=PLAIN_ENV).stdout
    lines = lines.split("\n")
    for b in range(256):
        got, want = float.fromhex(lines[b]), E4M3FN.decode(b)
        if math.isnan(want):
            assert math.isnan(got), (b, got)
        else:
            assert (got, math.copysign(1, got)) == (want, math.copysign(1, want)), (b, got, want)
    for i, x in enumerate(values + [math.nan, -math.nan, math.inf]):
        d, f = map(int, lines[256 + i].split())
        want = E4M3FN.encode(x)
        if math.isnan(x):  # a NaN's sign: the one it had ("-NAN" is negative in C)
            want = 0xFF if i == len(values) + 1 else 0x7F
        assert d == want, (x, hex(d), hex(want))
        # through float: the float's value rounded once (the same here but for
        # values the double -> float rounding moved)
        if not math.isnan(x):
            x = struct.unpack("f", struct.pack("f", x))[0] if abs(x) < 3e38 else x * math.inf
            want = E4M3FN.encode(x)
        assert f == want, (x, hex(f), hex(want))
    nan, m3, big = map(int, lines[256 + len(values) + 3].split())
    assert nan == 0x7F  # a sum's NaN: the positive one
    assert m3 == E4M3FN.encode(-3.0) and big == 0x7F


def test_a_hardware_type_without_its_traits_does_not_compile(tree, tmp_path):
    """Naming a hardware type for a narrow float (here a plain byte) without
    its NarrowTraits stops the build, never a kernel with integer math."""
    dt = _dtype_id(tree)
    cuda = tmp_path / "cuda"
    shutil.copytree(tree / "sources/cuda", cuda)
    header = cuda / "cuda_device_types.cuh"
    text = header.read_text()
    anchor = ("template <> struct NarrowHardware<DISPATCH_BFLOAT16> "
              "{ typedef __nv_bfloat16 type; };\n")
    assert anchor in text, "NarrowHardware's bfloat16 line moved: fix this test"
    byte = f"template <> struct NarrowHardware<{dt}> {{ typedef unsigned char type; }};\n"
    header.write_text(text.replace(anchor, anchor + byte))
    probe = cuda / "probe.cu"
    probe.write_text('#include "cuda_device_types.cuh"\n')
    r = subprocess.run([NVCC, "-std=c++17", f"-I{tree / 'sources/include'}", f"-I{cuda}",
                        "-c", str(probe), "-o", str(tmp_path / "probe.o")],
                       capture_output=True, text=True, check=False, env=PLAIN_ENV)
    log = r.stdout + r.stderr
    assert r.returncode != 0, "a narrow float's hardware type without NarrowTraits compiled"
    assert "NarrowTraits lacks the CUDA device type of narrow float FLOAT8_E4M3FN" in log, log
