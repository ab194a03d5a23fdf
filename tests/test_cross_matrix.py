"""The C runtime on aarch64, ppc64le, s390x (big-endian) and riscv64
(and, through the CPU report only, big-endian ppc64),
cross-built (Debian's gcc-<triple>; clang 19 for riscv64, whose GCC 12 has
no RVV intrinsics) and run under qemu-user, one row per emulated CPU: the
runtime reports the features that CPU has, the kernels choose the expected
target and every kernel gives the reference loops' bits (test_kernels.c),
and a build whose baseline is above the CPU stops with the baseline error,
never SIGILL.

The targets: sources/kernels/arith.dispatch.c has VSX3/VSX4 and
VX/VXE/VXE2, int_arith.dispatch.c SVE and RVV; both are portable C compiled
with each target's flags, which the compilers vectorise (the SVE and RVV
code is vector-length agnostic: predicated SVE loops, vsetvli strip-mining;
test_sve_and_rvv_targets_are_scalable_vector_code reads the objects).

Each architecture is built once per session (-Dpython=false, no CUDA; the
`cross_tree` fixture in conftest.py); the rows only start qemu. What this
qemu (7.2) emulates, found by running it:
- aarch64: cortex-a53 (ARMv8.0), cortex-a76 and neoverse-n1 (ASIMDHP,
  ASIMDDP, no SVE), a64fx (SVE, 512-bit, without DotProd or FHM), max (SVE
  with every vector length, SVE2, I8MM, BF16; `sve-default-vector-length` in
  bytes picks the one a process starts with).
- ppc64le: `-cpu power8 | power9 | power10`, with AT_HWCAP2's ISA bits
  2.07 / 3.00 / 3.1 (VSX2 / VSX3 / VSX4).
- s390x: the named models (z13, z14, gen15a, and their -base forms) refuse
  to start under TCG (they ask for crypto and other facilities it lacks), so
  the rows switch the vector facilities of the `qemu` model instead: vx=off
  (pre-z13), vxeh=off (z13: VX), the plain model (z14: VX VXE). No model
  reports VXE2 (z15) in AT_HWCAP, not even `max,vxeh2=on`: the VXE2 target is
  built and checked by compiling only.
- riscv64: `rv64` has no V (SIGILL on a vector instruction);
  `rv64,v=true,vlen=N` has it, AT_HWCAP bit 'V' set.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from itertools import takewhile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cross import GUEST_ENV, REPORT_TARGETS, TARGETS  # noqa: E402
from _cross import require as _target  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DISPATCHGEN = REPO / "tools" / "dispatchgen" / "dispatchgen"
TOOLKIT_INCLUDE = REPO / "tools" / "dispatchgen" / "dispatchkit" / "include"

pytestmark = pytest.mark.cross_build  # skipped in the sanitizer job (conftest.py)

# The compile line of the direct builds (cpu_report); the meson builds take
# the same from the cross file.
CC_ARGS = {"riscv64": ["--target=riscv64-linux-gnu"]}

_SVE = {"ASIMDHP", "SVE"}
_V82 = {"ASIMDHP", "ASIMDDP"}
_V86 = {"I8MM", "BF16", "SVE2"}  # beyond NumPy's table (issue 37)
# (arch, qemu -cpu, features it has, features it lacks, {kernel source: target})
ROWS = [
    ("aarch64", "cortex-a53", set(), _V82 | _V86 | {"ASIMDFHM", "SVE"},
     {"int_arith": "baseline"}),
    ("aarch64", "neoverse-n1", _V82, _V86 | {"SVE"}, {"int_arith": "baseline"}),
    ("aarch64", "cortex-a76", _V82, _V86 | {"SVE"}, {"int_arith": "baseline"}),
    # SVE without DotProd or FHM: Note [SVE implies ASIMDHP only] in features/arm.py
    ("aarch64", "a64fx", _SVE, _V86 | {"ASIMDDP", "ASIMDFHM"}, {"int_arith": "SVE"}),
    ("aarch64", "max,sve-default-vector-length=16", _SVE | _V82 | _V86, set(),
     {"int_arith": "SVE"}),
    ("aarch64", "max,sve-default-vector-length=64", _SVE | _V82 | _V86, set(),
     {"int_arith": "SVE"}),
    ("ppc64le", "power8", {"VSX", "VSX2"}, {"VSX3", "VSX4"}, {"arith": "baseline"}),
    ("ppc64le", "power9", {"VSX", "VSX2", "VSX3"}, {"VSX4"}, {"arith": "VSX3"}),
    ("ppc64le", "power10", {"VSX", "VSX2", "VSX3", "VSX4"}, set(), {"arith": "VSX4"}),
    ("s390x", "qemu,vx=off,vxeh=off", set(), {"VX", "VXE", "VXE2"}, {"arith": "baseline"}),
    ("s390x", "qemu,vxeh=off", {"VX"}, {"VXE", "VXE2"}, {"arith": "VX"}),
    ("s390x", "qemu", {"VX", "VXE"}, {"VXE2"}, {"arith": "VXE"}),
    ("riscv64", "rv64", set(), {"RVV"}, {"int_arith": "baseline"}),
    ("riscv64", "rv64,v=true,vlen=128,vext_spec=v1.0", {"RVV"}, set(), {"int_arith": "RVV"}),
    ("riscv64", "rv64,v=true,vlen=256,vext_spec=v1.0", {"RVV"}, set(), {"int_arith": "RVV"}),
    ("riscv64", "rv64,v=true,vlen=512,vext_spec=v1.0", {"RVV"}, set(), {"int_arith": "RVV"}),
]
ROW_IDS = [f"{arch}-{cpu}" for arch, cpu, *_ in ROWS]
# Big-endian POWER (issue 37), through the CPU report only: (arch, qemu -cpu,
# features it has, features it lacks). Its minimum is empty: 970 and
# POWER5+ have no VSX at all.
REPORT_ROWS = [
    ("ppc64", "970", set(), {"VSX", "VSX2", "VSX3", "VSX4"}),
    ("ppc64", "power7", {"VSX"}, {"VSX2", "VSX3", "VSX4"}),
    ("ppc64", "power8", {"VSX", "VSX2"}, {"VSX3", "VSX4"}),
    ("ppc64", "power9", {"VSX", "VSX2", "VSX3"}, {"VSX4"}),
    ("ppc64", "power10", {"VSX", "VSX2", "VSX3", "VSX4"}, set()),
]
REPORT_ARCHES = [*TARGETS, *REPORT_TARGETS]


def _run(cmd: list[str], check: bool = False, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check, **kw)


@pytest.fixture(scope="session")
def tree(cross_tree):
    def build(arch: str) -> Path:
        _target(arch)
        return cross_tree(arch)
    return build


@pytest.fixture(scope="session")
def cpu_report(tmp_path_factory):
    """report(arch, baseline) -> tests/cross/cpu_report.c built with the
    toolkit's CPU runtime for that baseline, by the cross compiler directly:
    the runtime and the check without the baseline flags, the payload with."""
    programs: dict[tuple[str, str], Path] = {}

    def report(arch: str, baseline: str) -> Path:
        target = _target(arch)
        key = (arch, baseline)
        if key not in programs:
            out = tmp_path_factory.mktemp(f"report-{arch}-{baseline}")
            cc = [target.cc, *CC_ARGS.get(arch, [])]
            r = _run(["python3", str(DISPATCHGEN), "configure", "--cc", " ".join(cc), "--cpu-baseline",
                      baseline, "--cpu-dispatch", "none", "--outdir", str(out / "dispatch"),
                      "--package", "dispatch", "--meson"])
            assert r.returncode == 0, r.stderr
            cfg = dict(line.split("\t", 1) for line in r.stdout.splitlines())
            runtime, defines = cfg["runtime"].split("\t")
            inc = ["-I", str(out), "-I", str(TOOLKIT_INCLUDE)]
            payload = out / "payload.o"
            r = _run([*cc, "-O2", *cfg["baseline_flags"].split(), "-c",
                      str(REPO / "tests" / "cross" / "payload.c"), "-o", str(payload)])
            assert r.returncode == 0, r.stderr
            exe = out / "cpu_report"
            r = _run([*cc, "-std=c11", "-O2", *inc, *defines.split(), *runtime.split(),
                      str(REPO / "tests" / "cross" / "cpu_report.c"), str(payload),
                      "-o", str(exe)])
            assert r.returncode == 0, r.stderr
            programs[key] = exe
        return programs[key]

    return report


def _guest(arch: str, cpu: str, exe: Path) -> subprocess.CompletedProcess:
    target = TARGETS.get(arch) or REPORT_TARGETS[arch]
    return _run([target.qemu, "-cpu", cpu, "-L", f"/usr/{target.triple}", str(exe)],
                env=GUEST_ENV)


@pytest.mark.parametrize("arch", TARGETS)
def test_c_tests_pass_under_qemu(tree, cross_meson_test, arch):
    """Every C test of the runtime (the CPU runtime, the dispatcher, the
    narrow float conversions, the float -> integer casts, the kernels against the
    reference loops) on the default CPU of the architecture's qemu."""
    tree(arch)  # skips where the architecture's tools are missing
    r = cross_meson_test(arch)
    assert r.returncode == 0, r.stdout[-6000:]
    for name in ("cpu_runtime", "dispatcher", "kernels", "narrow_float", "casts"):
        assert re.search(rf"dispatch:{name}\s+OK", r.stdout), name


@pytest.mark.parametrize("arch,cpu,has,lacks", [row[:4] for row in ROWS] + REPORT_ROWS,
                         ids=ROW_IDS + [f"{arch}-{cpu}" for arch, cpu, *_ in REPORT_ROWS])
def test_emulated_cpu_reports_its_features(cpu_report, arch, cpu, has, lacks):
    r = _guest(arch, cpu, cpu_report(arch, "min"))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"arch {arch}"
    reported = dict(line.split() for line in lines[1:] if not line.startswith("payload"))
    present = {name for name, have in reported.items() if have == "1"}
    assert has <= present and not lacks & present, reported


@pytest.mark.parametrize("arch,cpu,has,lacks,chosen", ROWS, ids=ROW_IDS)
def test_emulated_cpu_chooses_its_target_and_gets_the_reference_bits(tree, arch, cpu, has,
                                                                     lacks, chosen):
    r = _guest(arch, cpu, tree(arch) / "sources" / "test_kernels")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    # the leading "source target" lines
    got = dict(takewhile(lambda f: len(f) == 2, map(str.split, r.stdout.splitlines())))
    assert {source: got[source] for source in chosen} == chosen
    assert r.stdout.splitlines()[-1] == "ok"


@pytest.mark.parametrize("arch", REPORT_ARCHES)
def test_baseline_above_the_cpu_fails_with_the_baseline_error(cpu_report, arch):
    target = _target(arch)
    r = _guest(arch, target.low_cpu, cpu_report(arch, target.high_baseline))
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)  # never -SIGILL
    assert re.search(rf"baseline error: this CPU lacks .*\b{target.missing}\b", r.stdout), r.stdout


@pytest.mark.parametrize("arch", REPORT_ARCHES)
def test_baseline_build_runs_where_the_cpu_has_it(cpu_report, arch):
    target = _target(arch)
    r = _guest(arch, target.high_cpu, cpu_report(arch, target.high_baseline))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "payload 523776.0"


def test_ppc64_report_is_big_endian_elfv1(cpu_report):
    """The ppc64 rows run on a big-endian POWER with the ELFv1 ABI, not
    ppc64le's build relabelled."""
    exe = cpu_report("ppc64", "min")
    head = exe.read_bytes()[:64]
    assert head[:6] == b"\x7fELF\x02\x02"  # ELFCLASS64, ELFDATA2MSB
    assert int.from_bytes(head[48:52], "big") & 3 in (0, 1)  # e_flags: ELFv1 (or unset)


def test_s390x_build_is_big_endian(tree):
    """The s390x rows run the C tests on a big-endian machine: float16 bits
    (test_narrow_float.c), integer views of floats (test_kernels.c's ulp reads)."""
    exe = tree("s390x") / "sources" / "test_kernels"
    assert exe.read_bytes()[:6] == b"\x7fELF\x02\x02"  # ELFCLASS64, ELFDATA2MSB


@pytest.mark.parametrize("arch,library,pattern", [
    ("aarch64", "libint_arith_dispatch_c_SVE.a", r"\bwhilelo\s+p\d+\.s"),
    ("riscv64", "libint_arith_dispatch_c_RVV.a", r"\bvsetvli\b.*\be32\b"),
])
def test_sve_and_rvv_targets_are_scalable_vector_code(tree, arch, library, pattern):
    """Vector-length agnostic: SVE loops run under a predicate built from the
    remaining count (whilelo), RVV loops ask vsetvli for the length."""
    objdump = shutil.which("llvm-objdump-19")
    if objdump is None:
        pytest.skip("no llvm-objdump-19 (Debian: llvm-19)")
    lib = tree(arch) / "sources" / "kernels" / library
    asm = _run([objdump, "-d", str(lib)], check=True).stdout
    assert re.search(pattern, asm), f"{library}: no {pattern}"


def test_a_cross_compiler_without_rvv_intrinsics_skips_rvv_with_the_reason():
    """GCC 12 for riscv64 accepts -march=rv64gcv but has no riscv_vector.h:
    the object-producing check finds it, and `max` builds without RVV."""
    if shutil.which("riscv64-linux-gnu-gcc") is None:
        pytest.skip("needs gcc-riscv64-linux-gnu")
    r = _run(["python3", str(DISPATCHGEN), "report", "--cc", "riscv64-linux-gnu-gcc",
              "--cpu-baseline", "min", "--cpu-dispatch", "max", "--json"])
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["arch"] == "riscv64" and report["dispatch"]["features"] == []
    assert report["skipped"] == [{"feature": "RVV", "option": "cpu-dispatch", "reason":
                                  "compiler lacks it (error: riscv_vector.h: No such file or "
                                  "directory)"}]
