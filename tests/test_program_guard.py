"""Programs guarded like modules (issue 37, item 1): tests/examples/hello,
the C program of README's "A C program" template, built with a baseline
above the CPU it runs on, stops before `main` with one line on stderr naming
the program and what the CPU lacks, and status 1, never SIGILL; the same
build runs on a CPU that has the baseline. The guard is the toolkit's
(Note [Program guard] in tools/dispatchgen/dispatchkit/cpu/cpu_program_guard.c),
compiled without the baseline flags; the program's main.c is unchanged.

One build per architecture (module fixture): x86-64 natively with an AVX2
baseline, run under qemu-x86_64 -cpu Nehalem / Haswell; aarch64, ppc64le,
big-endian ppc64, s390x and riscv64 with the cross files of tests/cross/ and
tests/_cross.py's high baseline, run under qemu-user on its low and high CPU.
loongarch64 is not here: Debian bookworm has no loongarch64 cross compiler or
C library to link a program with (docs/cpu-features.md)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cross import GUEST_ENV, REPORT_TARGETS, TARGETS, Target, require  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "tests" / "examples" / "hello"
IS_X86_64 = os.uname().machine == "x86_64"

pytestmark = pytest.mark.cross_build  # skipped in the sanitizer job (conftest.py)

# x86 beside the cross targets: built natively, run under qemu-x86_64.
X86 = Target("x86_64-linux-gnu", "cc", "qemu-x86_64", "avx2", "AVX2", "Nehalem", "Haswell")
# (arch, baseline, what the low CPU lacks, low CPU, high CPU): each
# architecture's high baseline of tests/_cross.py, and the two more the issue
# names (SVE on cortex-a76, VSX4 on power9).
ROWS = [("x86_64", X86.high_baseline, X86.missing, X86.low_cpu, X86.high_cpu)]
ROWS += [(arch, t.high_baseline, t.missing, t.low_cpu, t.high_cpu)
         for arch, t in {**TARGETS, **REPORT_TARGETS}.items()]
ROWS += [("aarch64", "sve", "SVE", "cortex-a76", "a64fx"),
         ("ppc64le", "vsx4", "VSX4", "power9", "power10")]
ROW_IDS = [f"{arch}-{baseline}" for arch, baseline, *_ in ROWS]


def _target(arch: str) -> Target:
    if arch != "x86_64":
        return require(arch)
    if not IS_X86_64:
        pytest.skip("the x86 rows build natively: this machine is not x86-64")
    if shutil.which("qemu-x86_64") is None:
        pytest.skip("x86_64: needs qemu-x86_64 (Debian: qemu-user)")
    return X86


def _vendored(tmp: Path, example: Path) -> Path:
    src = tmp / "src"
    shutil.copytree(example, src)
    (src / "tools").mkdir()  # the toolkit vendored where meson.build looks first
    (src / "tools" / "dispatchgen").symlink_to(REPO / "tools" / "dispatchgen",
                                               target_is_directory=True)
    return src


def _build(build_tool, tmp: Path, src: Path, *options: str) -> Path:
    env = {**os.environ, "DISPATCHGEN_CACHE_DIR": str(tmp / "cache")}
    env.pop("LD_PRELOAD", None)
    for cmd in ([build_tool("meson"), "setup", str(tmp / "build"), str(src), *options],
                [build_tool("ninja"), "-C", str(tmp / "build")]):
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return tmp / "build"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory, build_tool):
    """build(arch, baseline) -> hello built with that baseline, once."""
    builds: dict[tuple[str, str], Path] = {}

    def build(arch: str, baseline: str) -> Path:
        target = _target(arch)
        if (arch, baseline) not in builds:
            tmp = tmp_path_factory.mktemp(f"guarded-{arch}-{baseline}")
            cross = [] if arch == "x86_64" else [
                "--cross-file", str(REPO / "tests" / "cross" / f"{target.triple}.ini")]
            build_dir = _build(build_tool, tmp, _vendored(tmp, EXAMPLE), *cross,
                               f"-Dcpu-baseline={baseline}")
            builds[arch, baseline] = build_dir / "hello"
        return builds[arch, baseline]

    return build


def _guest(target: Target, cpu: str, exe: Path, *args: str) -> subprocess.CompletedProcess:
    sysroot = [] if target is X86 else ["-L", f"/usr/{target.triple}"]
    return subprocess.run([target.qemu, "-cpu", cpu, *sysroot, str(exe), *args],
                          capture_output=True, text=True, env=GUEST_ENV)


def _guest_lines(stderr: str) -> list[str]:
    """stderr less qemu's own warnings (-cpu Haswell: features TCG lacks)."""
    return [ln for ln in stderr.splitlines() if not ln.startswith("qemu-")]


@pytest.mark.parametrize("arch,baseline,missing,low_cpu,high_cpu", ROWS, ids=ROW_IDS)
def test_a_program_on_a_cpu_below_its_baseline_names_what_is_missing(
        guarded, arch, baseline, missing, low_cpu, high_cpu):
    target = _target(arch)
    r = _guest(target, low_cpu, guarded(arch, baseline))
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)  # never -SIGILL
    assert r.stdout == ""  # main never ran
    lines = _guest_lines(r.stderr)
    assert len(lines) == 1, r.stderr
    assert re.fullmatch(rf"hello: this CPU lacks (\w+ )*{missing}( \w+)*, which this "
                        r"build of hello requires \(its baseline is '[\w ]+' .*\); build it "
                        r"with a lower cpu-baseline or run it on a CPU that has them",
                        lines[0]), lines[0]
    if arch == "x86_64":  # the line docs/toolkit.md shows, as it is
        assert f"\n{lines[0]}\n" in (REPO / "docs" / "toolkit.md").read_text()


@pytest.mark.parametrize("arch,baseline,missing,low_cpu,high_cpu", ROWS, ids=ROW_IDS)
def test_the_same_program_runs_on_a_cpu_with_its_baseline(
        guarded, arch, baseline, missing, low_cpu, high_cpu):
    target = _target(arch)
    r = _guest(target, high_cpu, guarded(arch, baseline))
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert _guest_lines(r.stderr) == []
    chosen, info = r.stdout.split(maxsplit=1)
    assert chosen in info.split(), r.stdout  # the variant it chose, and the report of it


# A program whose own constructor runs baseline instructions (AVX2) and a
# shared library with its guard as a constructor, on x86 only: the ordering
# does not depend on the architecture, and x86 is built natively (fast).
EARLY_MAIN = """#include <immintrin.h>
#include <stdio.h>
volatile int early_sum;
__attribute__((constructor)) static void early(void)
{
    /* AVX2 in a constructor of the program's own code, compiled with the baseline */
    __m256i v = _mm256_add_epi32(_mm256_set1_epi32(early_sum + 1), _mm256_set1_epi32(2));
    early_sum = _mm256_extract_epi32(v, 3);
}
int down_answer(void);
int main(void)
{
    printf("early %d answer %d\\n", early_sum, down_answer());
    return 0;
}
"""
LIB_SOURCE = ("int down_answer(void);\n"  # exported: the template's libraries are hidden
              "__attribute__((visibility(\"default\"))) int down_answer(void) { return 42; }\n")


def _downstream(src: Path, *, shared: bool) -> None:
    """A project of README's template lines: a program, or (shared) a shared
    library of the same sources with --shared-library and a program using it."""
    text = (EXAMPLE / "meson.build").read_text()
    text = text.replace("files('main.c')", "files('main.c', 'lib.c')")
    text = text.replace("files('hello.dispatch.c')", "[]").replace("'hello'", "'down'")
    if shared:
        text = text.replace("files('main.c', 'lib.c')", "files('lib.c'), '--shared-library'")
        text = text.replace("executable('down', dependencies: libs)",
                            "lib = shared_library('down', dependencies: libs)\n"
                            "executable('use', 'use.c', link_with: lib)")
    (src / "meson.build").write_text(text)
    (src / "main.c").write_text(EARLY_MAIN)
    (src / "lib.c").write_text(LIB_SOURCE)
    (src / "use.c").write_text('#include <stdio.h>\nint down_answer(void);\n'
                               'int main(void) { printf("%d\\n", down_answer()); return 0; }\n')
    (src / "hello.dispatch.c").unlink()


@pytest.fixture(scope="module")
def x86_downstream(tmp_path_factory, build_tool):
    """(the program with an AVX2 constructor, the program using the shared
    library), both of an AVX2 baseline."""
    _target("x86_64")
    out = []
    for shared in (False, True):
        tmp = tmp_path_factory.mktemp("shared" if shared else "early")
        src = _vendored(tmp, EXAMPLE)
        _downstream(src, shared=shared)
        out.append(_build(build_tool, tmp, src, "-Dcpu-baseline=avx2") /
                   ("use" if shared else "down"))
    return out


def test_the_guard_runs_before_the_programs_own_constructors(x86_downstream):
    exe = x86_downstream[0]
    r = _guest(X86, "Nehalem", exe)
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert _guest_lines(r.stderr)[0].startswith("down: this CPU lacks AVX F16C AVX2,")
    r = _guest(X86, "Haswell", exe)
    assert (r.returncode, r.stdout) == (0, "early 3 answer 42\n"), r.stderr


def test_a_programs_guard_is_a_preinit_array_entry(x86_downstream):
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf (Debian: binutils)")
    sections = subprocess.run([readelf, "-SW", str(x86_downstream[0])], capture_output=True,
                              text=True, check=True).stdout
    assert re.search(r"\.preinit_array\s+PREINIT_ARRAY", sections), sections


def test_a_shared_librarys_guard_runs_when_it_loads(x86_downstream):
    exe = x86_downstream[1]
    r = _guest(X86, "Nehalem", exe)
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert _guest_lines(r.stderr)[0].startswith("down: this CPU lacks AVX F16C AVX2,")
    r = _guest(X86, "Haswell", exe)
    assert (r.returncode, r.stdout) == (0, "42\n"), r.stderr
