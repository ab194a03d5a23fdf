"""The C runtime on ppc64le and s390x (big-endian), cross-built with Debian's
gcc-{powerpc64le,s390x}-linux-gnu and run under qemu-user, one row per
emulated CPU: the runtime reports the features that CPU has, the kernels
choose the expected target (sources/kernels/arith.dispatch.c has VSX3/VSX4
and VX/VXE/VXE2 targets: portable C compiled with each target's flags) and
every kernel gives the reference loops' bits (test_kernels.c), and a build
whose baseline is above the CPU stops with the baseline error, never SIGILL.

Each architecture is built once per session (-Dpython=false, no CUDA); the
rows only start qemu. What this qemu (7.2) emulates, found by running it:
- ppc64le: `-cpu power8 | power9 | power10`, with AT_HWCAP2's ISA bits
  2.07 / 3.00 / 3.1 (VSX2 / VSX3 / VSX4).
- s390x: the named models (z13, z14, gen15a, and their -base forms) refuse
  to start under TCG (they ask for crypto and other facilities it lacks), so
  the rows switch the vector facilities of the `qemu` model instead: vx=off
  (pre-z13), vxeh=off (z13: VX), the plain model (z14: VX VXE). No model
  reports VXE2 (z15) in AT_HWCAP, not even `max,vxeh2=on`: the VXE2 target is
  built and checked by compiling only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DISPATCHGEN = REPO / "tools" / "dispatchgen" / "dispatchgen"
TOOLKIT_INCLUDE = REPO / "tools" / "dispatchgen" / "dispatchkit" / "include"

# qemu's guests never get the sanitizer job's x86 libasan (tests/conftest.py).
GUEST_ENV = {k: v for k, v in os.environ.items()
             if k != "LD_PRELOAD" and not k.startswith("DISPATCH_")}


@dataclass(frozen=True)
class Target:
    triple: str          # Debian's cross gcc and its sysroot /usr/<triple>
    qemu: str
    name: str            # the toolkit's arch name
    high_baseline: str   # -Dcpu-baseline above the lowest row's CPU
    missing: str         # what that CPU lacks of it
    low_cpu: str
    high_cpu: str        # a CPU that has it

    @property
    def cross_file(self) -> Path:
        return REPO / "tests" / "cross" / f"{self.triple}.ini"

    def missing_tools(self) -> list[str]:
        return [t for t in (f"{self.triple}-gcc", self.qemu) if shutil.which(t) is None] + \
            ([] if Path("/usr", self.triple).is_dir() else [f"/usr/{self.triple}"])


TARGETS = {
    "ppc64le": Target("powerpc64le-linux-gnu", "qemu-ppc64le", "ppc64le", "vsx3", "VSX3",
                      "power8", "power9"),
    "s390x": Target("s390x-linux-gnu", "qemu-s390x", "s390x", "vxe", "VXE",
                    "qemu,vxeh=off", "qemu"),
}

# (arch, qemu -cpu, the features the runtime must report, arith's target)
ROWS = [
    ("ppc64le", "power8", {"VSX", "VSX2"}, "baseline"),
    ("ppc64le", "power9", {"VSX", "VSX2", "VSX3"}, "VSX3"),
    ("ppc64le", "power10", {"VSX", "VSX2", "VSX3", "VSX4"}, "VSX4"),
    ("s390x", "qemu,vx=off,vxeh=off", set(), "baseline"),
    ("s390x", "qemu,vxeh=off", {"VX"}, "VX"),
    ("s390x", "qemu", {"VX", "VXE"}, "VXE"),
]


def _target(arch: str) -> Target:
    target = TARGETS[arch]
    missing = target.missing_tools()
    if missing:
        pytest.skip(f"{arch}: needs {', '.join(missing)} (Debian: gcc-{target.triple} "
                    f"and libc6-dev-*-cross, qemu-user)")
    return target


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


@pytest.fixture(scope="session")
def cross_tree(tmp_path_factory, build_tool):
    """tree(arch) -> the -Dpython=false build of `arch`, built once per session."""
    trees: dict[str, Path] = {}

    def tree(arch: str) -> Path:
        target = _target(arch)
        if arch not in trees:
            path = tmp_path_factory.mktemp(f"cross-{arch}")
            for cmd in ([build_tool("meson"), "setup", str(path), str(REPO), "--cross-file",
                         str(target.cross_file), "-Dpython=false", "-Dcuda=disabled"],
                        [build_tool("ninja"), "-C", str(path)]):
                r = _run(cmd)
                assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
            trees[arch] = path
        return trees[arch]

    return tree


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
            cc = f"{target.triple}-gcc"
            r = _run(["python3", str(DISPATCHGEN), "configure", "--cc", cc, "--cpu-baseline",
                      baseline, "--cpu-dispatch", "none", "--outdir", str(out / "dispatch"),
                      "--package", "dispatch", "--meson"])
            assert r.returncode == 0, r.stderr
            cfg = dict(line.split("\t", 1) for line in r.stdout.splitlines())
            runtime, defines = cfg["runtime"].split("\t")
            inc = ["-I", str(out), "-I", str(TOOLKIT_INCLUDE)]
            payload = out / "payload.o"
            r = _run([cc, "-O2", *cfg["baseline_flags"].split(), "-c",
                      str(REPO / "tests" / "cross" / "payload.c"), "-o", str(payload)])
            assert r.returncode == 0, r.stderr
            exe = out / "cpu_report"
            r = _run([cc, "-std=c11", "-O2", *inc, *defines.split(), *runtime.split(),
                      str(REPO / "tests" / "cross" / "cpu_report.c"), str(payload),
                      "-o", str(exe)])
            assert r.returncode == 0, r.stderr
            programs[key] = exe
        return programs[key]

    return report


def _guest(arch: str, cpu: str, exe: Path) -> subprocess.CompletedProcess:
    target = TARGETS[arch]
    return _run([target.qemu, "-cpu", cpu, "-L", f"/usr/{target.triple}", str(exe)],
                env=GUEST_ENV)


@pytest.mark.parametrize("arch", TARGETS)
def test_c_tests_pass_under_qemu(cross_tree, build_tool, arch):
    """Every C test of the runtime (the CPU runtime, the dispatcher, the
    float16 conversions, the kernels against the reference loops) on the
    default CPU of the architecture's qemu."""
    r = _run([build_tool("meson"), "test", "-C", str(cross_tree(arch)), "--print-errorlogs"],
             env=GUEST_ENV)
    assert r.returncode == 0, r.stdout[-6000:]
    for name in ("cpu_runtime", "dispatcher", "kernels", "half"):
        assert re.search(rf"dispatch:{name}\s+OK", r.stdout), name


@pytest.mark.parametrize("arch,cpu,features,arith", ROWS)
def test_emulated_cpu_reports_its_features(cpu_report, arch, cpu, features, arith):
    r = _guest(arch, cpu, cpu_report(arch, "min"))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"arch {TARGETS[arch].name}"
    reported = dict(line.split() for line in lines[1:] if not line.startswith("payload"))
    assert {name for name, have in reported.items() if have == "1"} == features, reported


@pytest.mark.parametrize("arch,cpu,features,arith", ROWS)
def test_emulated_cpu_chooses_its_target_and_gets_the_reference_bits(cross_tree, arch, cpu,
                                                                     features, arith):
    r = _guest(arch, cpu, cross_tree(arch) / "sources" / "test_kernels")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    chosen = dict(line.split() for line in r.stdout.splitlines()[:5])
    assert chosen["arith"] == arith
    assert r.stdout.splitlines()[-1] == "ok"


@pytest.mark.parametrize("arch", TARGETS)
def test_baseline_above_the_cpu_fails_with_the_baseline_error(cpu_report, arch):
    target = TARGETS[arch]
    r = _guest(arch, target.low_cpu, cpu_report(arch, target.high_baseline))
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)  # never -SIGILL
    assert re.search(rf"baseline error: this CPU lacks .*\b{target.missing}\b", r.stdout), r.stdout


@pytest.mark.parametrize("arch", TARGETS)
def test_baseline_build_runs_where_the_cpu_has_it(cpu_report, arch):
    target = TARGETS[arch]
    r = _guest(arch, target.high_cpu, cpu_report(arch, target.high_baseline))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "payload 523776.0"


def test_s390x_build_is_big_endian(cross_tree):
    """The s390x rows run the C tests on a big-endian machine: float16 bits
    (test_half.c), integer views of floats (test_kernels.c's ulp reads)."""
    exe = cross_tree("s390x") / "sources" / "test_kernels"
    assert exe.read_bytes()[:6] == b"\x7fELF\x02\x02"  # ELFCLASS64, ELFDATA2MSB
