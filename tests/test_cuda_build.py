"""The CUDA build (issue 14, part 1): the options cuda and cuda-arch, the module
dispatch/_cuda with machine code per requested architecture plus PTX (read from
its ELF .nv_fatbin section: there is no cuobjdump here), cudart linked
statically, and the caching allocator's host-side bookkeeping (a C test over a
fake backend). None of this needs a GPU."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dispatch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _fatbin  # noqa: E402
import cuda_arch  # noqa: E402

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH: the CUDA module is not built")
AVAILABLE = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121}


def _meson_setup(tmp_path: Path, *options: str, env: dict | None = None) -> subprocess.CompletedProcess:
    # Without the sanitizer job's preloaded libasan: nvcc segfaults under it,
    # and meson would then find no working CUDA compiler.
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "LD_PRELOAD"}
    return subprocess.run([sys.executable, "-m", "mesonbuild.mesonmain", "setup",
                           str(tmp_path / "build"), str(ROOT), "-Dtests=false", *options],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


def _path_without_nvcc(shadow: Path) -> str:
    """PATH with nvcc hidden and every other tool kept: a folder that holds
    nvcc (on some machines /usr/bin, beside ld and cat) is replaced by a
    shadow folder of links to all its other entries."""
    dirs = []
    for i, d in enumerate(os.environ["PATH"].split(os.pathsep)):
        if d and os.path.exists(os.path.join(d, "nvcc")):
            copy = shadow / f"path{i}"
            copy.mkdir(parents=True)
            for entry in os.scandir(d):
                if entry.name != "nvcc":
                    (copy / entry.name).symlink_to(entry.path)
            d = str(copy)
        dirs.append(d)
    return os.pathsep.join(dirs)


# cuda-arch, the grammar (tools/cuda_arch.py) ------------------------------------------------

def test_cuda_arch_default_is_sass_for_each_listed_arch_and_ptx_of_the_highest():
    assert cuda_arch.parse("default", AVAILABLE) == ([75, 80, 86, 89, 90, 100, 120], [120])
    assert cuda_arch.parse("", {75, 80, 86, 89, 90}) == ([75, 80, 86, 89, 90], [90])


def test_cuda_arch_accepts_torch_spellings():
    assert cuda_arch.parse("8.6+PTX, sm_90;compute_100", AVAILABLE) == ([86, 90], [86, 100])
    assert cuda_arch.parse("75 8.0", AVAILABLE) == ([75, 80], [])
    assert cuda_arch.gencode_flags([80], [90]) == ["--generate-code=arch=compute_80,code=sm_80",
                                                   "--generate-code=arch=compute_90,code=compute_90"]


@pytest.mark.parametrize("bad", ["sm_999", "foo", "8.6+ptx sm_12", ",,"])
def test_cuda_arch_bad_value_quotes_it(bad):
    with pytest.raises(ValueError, match="cuda-arch: .*" + (repr(bad.split()[-1]) if bad != ",," else "names no")):
        cuda_arch.parse(bad, AVAILABLE)


# cuda-arch's default: this machine's GPUs (a fake nvidia-smi on PATH) ------------------------

def _fake_smi(folder: Path, stdout: str, status: int = 0) -> Path:
    """A folder with an nvidia-smi that prints stdout (what --query-gpu=compute_cap
    prints; "\\n" for a newline) and exits status. Shell builtins only: the
    fake must work whatever else PATH holds (on a GPU machine the real
    nvidia-smi shares /usr/bin with cat and ld)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "out.txt").write_text(stdout.replace("\\n", "\n"))
    smi = folder / "nvidia-smi"
    smi.write_text("#!/bin/sh\n"
                   "[ \"$1 $2\" = '--query-gpu=compute_cap --format=csv,noheader' ] || exit 64\n"
                   f"while IFS= read -r line; do printf '%s\\n' \"$line\"; done < '{folder / 'out.txt'}'\n"
                   f"exit {status}\n")
    smi.chmod(0o755)
    return folder


def _smi_path(folder: Path, stdout: str, status: int = 0) -> str:
    """PATH with a fake nvidia-smi first: it shadows a real one further on,
    and every other tool (cc, ld, cat) stays where it is."""
    return str(_fake_smi(folder, stdout, status)) + os.pathsep + os.environ["PATH"]


def test_default_arch_is_the_gpus_nvidia_smi_lists_with_ptx_of_the_highest(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _smi_path(tmp_path, "9.0\\n8.6\\n9.0\\n"))
    sass, ptx, why = cuda_arch.choose("default", AVAILABLE)
    assert (sass, ptx) == ([86, 90], [90])
    assert "nvidia-smi: 8.6 9.0" in why and "-Dcuda-arch=all" in why
    assert cuda_arch.choose("", AVAILABLE)[:2] == ([86, 90], [90])


@pytest.mark.parametrize("stdout, status, seen", [
    (None, 0, "nvidia-smi is not on PATH"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the driver\\n", 9,
     "nvidia-smi failed (exit 9): NVIDIA-SMI has failed"),
    ("", 0, "nvidia-smi lists no GPU"),
])
def test_default_arch_without_a_gpu_seen_is_the_full_list_saying_why(tmp_path, monkeypatch,
                                                                     stdout, status, seen):
    # choose() runs in this process and needs no other tool: an empty folder
    # is a PATH without nvidia-smi, wherever the real one lives
    empty = tmp_path / "empty"
    empty.mkdir()
    path = str(empty) if stdout is None else _smi_path(tmp_path, stdout, status)
    monkeypatch.setenv("PATH", path)
    sass, ptx, why = cuda_arch.choose("default", AVAILABLE)
    # Note [PTX where no GPU is seen]: PTX of the oldest default architecture only
    assert (sass, ptx) == ([], [75])
    assert why.startswith(f"no GPU seen at configure ({seen}")
    assert "PTX for the oldest default architecture" in why and "-Dcuda-arch=all" in why


def test_default_without_a_gpu_seen_takes_the_oldest_default_arch_this_nvcc_has(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cuda_arch.choose("default", {80, 86, 90, 100})[:2] == ([], [80])
    assert cuda_arch.choose("", {60, 70})[:2] == ([], [60])  # below the default list: its oldest


def test_all_and_explicit_values_ignore_the_gpus_present(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _smi_path(tmp_path, "9.0\\n"))
    sass, ptx, why = cuda_arch.choose("all", AVAILABLE)
    assert (sass, ptx) == ([75, 80, 86, 89, 90, 100, 120], [120]) and "release" in why
    assert cuda_arch.choose("8.0", AVAILABLE) == ([80], [], "-Dcuda-arch=8.0")


def test_a_gpu_newer_than_nvcc_gets_ptx_the_driver_can_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _smi_path(tmp_path, "9.0\\n13.0\\n"))
    sass, ptx, _ = cuda_arch.choose("default", {75, 80, 86, 89, 90, 100})
    assert sass == [90] and ptx == [100]


@needs_nvcc
def test_configure_builds_for_the_gpu_nvidia_smi_lists_and_records_why(tmp_path):
    env = dict(os.environ, PATH=_smi_path(tmp_path / "smi", "8.6\\n"))
    proc = _meson_setup(tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "machine code (SASS) for sm_86; PTX compute_86 (the GPUs of the machine" in proc.stdout
    info = (tmp_path / "build" / "dispatch" / "_cuda_build.py").read_text()
    assert '"sm_86"' in info and 'ARCH_WHY = "the GPUs of the machine that built it (nvidia-smi: 8.6)' in info


def test_python_m_dispatch_says_which_archs_and_why():
    if not dispatch.__cuda_archs__:
        pytest.skip(f"not built with CUDA ({dispatch.cuda.unavailable_reason()})")
    from dispatch import _cuda_build

    # -I: `python -m` would put the working directory (a checkout) first
    proc = subprocess.run([sys.executable, "-I", "-m", "dispatch"], capture_output=True,
                          text=True, timeout=120, cwd=Path(sys.executable).parent)
    assert proc.returncode == 0, proc.stderr
    built = [ln for ln in proc.stdout.splitlines() if ln.strip().startswith("built")]
    assert " ".join(dispatch.__cuda_archs__) in built[0]
    assert _cuda_build.ARCH_WHY and _cuda_build.ARCH_WHY in built[1], proc.stdout


# configure ---------------------------------------------------------------------------------

@needs_nvcc
def test_bad_cuda_arch_is_one_configure_error_quoting_it(tmp_path):
    proc = _meson_setup(tmp_path, "-Dcuda-arch=sm_999")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    errors = [ln for ln in out.splitlines() if "ERROR:" in ln]
    assert len(errors) == 1, out
    assert "cuda-arch: 'sm_999'" in errors[0] and "it has: sm_75" in errors[0]


@needs_nvcc
def test_configure_without_a_gpu_seen_builds_ptx_only_and_says_why(tmp_path):
    env = dict(os.environ, PATH=_smi_path(tmp_path / "smi", "No devices were found\\n", 6))
    proc = _meson_setup(tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CUDA architectures: machine code (SASS) for (none); PTX compute_75 (no GPU seen" in proc.stdout
    info = (tmp_path / "build" / "dispatch" / "_cuda_build.py").read_text()
    assert 'SASS = "".split()' in info and 'PTX = "compute_75".split()' in info, info
    flags = (tmp_path / "build" / "build.ninja").read_text()
    assert "--generate-code=arch=compute_75,code=compute_75" in flags and "code=sm_" not in flags
    # nvcc's lines, as meson's C lines, name folders relative to the build
    # folder and carry no -g option, which ccache (4.7) would take for debug
    # information and hash the folder for: clones anywhere share nvcc's
    # objects (docs/toolkit.md, "Builds that cache and distribute").
    nvcc = [ln for ln in flags.splitlines() if "nvcc" in ln and "-DDCU_SHARD" in ln]
    assert nvcc, "no nvcc line for the shards in build.ninja"
    for line in nvcc:
        args = line.split()
        assert not [a for a in args if a.startswith("-I/")], line
        assert not args[args.index("-c") + 1].startswith("/"), line
        assert not [a for a in args if a.startswith("-g")], line


@needs_nvcc
def test_configure_prints_the_architectures_built(tmp_path):
    proc = _meson_setup(tmp_path, "-Dcuda-arch=8.6+PTX sm_90")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CUDA architectures: machine code (SASS) for sm_86 sm_90; PTX compute_86" in proc.stdout
    info = (tmp_path / "build" / "dispatch" / "_cuda_build.py").read_text()
    assert "BUILT = True" in info and '"sm_86 sm_90"' in info


def test_cuda_enabled_without_nvcc_fails_at_configure_in_one_line(tmp_path):
    env = dict(os.environ, PATH=_path_without_nvcc(tmp_path / "shadow"))
    proc = _meson_setup(tmp_path, "-Dcuda=enabled", env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    errors = [ln for ln in out.splitlines() if "ERROR:" in ln]
    assert len(errors) == 1, out
    assert "-Dcuda=enabled, but nvcc (the CUDA compiler) is not on PATH" in errors[0]


def test_cuda_auto_without_nvcc_configures_everything_else_and_says_why(tmp_path):
    env = dict(os.environ, PATH=_path_without_nvcc(tmp_path / "shadow"))
    proc = _meson_setup(tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    info = (tmp_path / "build" / "dispatch" / "_cuda_build.py").read_text()
    assert "BUILT = False" in info and "nvcc was not found on PATH" in info
    assert "_core" in (tmp_path / "build" / "build.ninja").read_text()


def test_cuda_disabled_records_the_option_as_the_reason(tmp_path):
    proc = _meson_setup(tmp_path, "-Dcuda=disabled")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    info = (tmp_path / "build" / "dispatch" / "_cuda_build.py").read_text()
    assert "BUILT = False" in info and "configured with -Dcuda=disabled" in info
    assert "_cuda." not in (tmp_path / "build" / "build.ninja").read_text()


# the built module ---------------------------------------------------------------------------

def _module() -> str:
    spec = importlib.util.find_spec("dispatch._cuda")
    if spec is None:
        if NVCC is not None and dispatch.__cuda_archs__:
            pytest.fail("nvcc is here and __cuda_archs__ is set, but dispatch._cuda is missing")
        pytest.skip(f"this package has no CUDA module ({dispatch.cuda.unavailable_reason()})")
    return spec.origin


def test_module_is_built_wherever_nvcc_is():
    if NVCC is None:
        pytest.skip("nvcc is not on PATH")
    from dispatch import _cuda_build

    # the build's own record, not a guess: .ci/sanitize.sh builds without it
    if _cuda_build.WHY == "configured with -Dcuda=disabled":
        pytest.skip("this build was configured with -Dcuda=disabled")
    assert dispatch.__cuda_archs__, dispatch.cuda.unavailable_reason()
    assert Path(_module()).is_file()


def test_module_holds_sass_for_each_requested_arch_plus_ptx():
    entries = _fatbin.fatbin_entries(_fatbin.elf_section(_module(), ".nv_fatbin"))
    sass = {f"sm_{a}" for kind, a in entries if kind == "sass"}
    ptx = {f"compute_{a}" for kind, a in entries if kind == "ptx"}
    want = dispatch.__cuda_archs__
    assert {a for a in want if a.startswith("sm_")} <= sass, entries
    assert {a for a in want if a.startswith("compute_")} <= ptx, entries
    assert any(a.startswith("compute_") for a in want)  # the default carries PTX


def test_module_links_cudart_statically_and_exports_only_its_api():
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf")
    path = _module()
    dyn = subprocess.run([readelf, "-d", path], capture_output=True, text=True, check=True).stdout
    assert "libcudart" not in dyn and "libcuda.so" not in dyn, dyn
    syms = subprocess.run([readelf, "--dyn-syms", "-W", path], capture_output=True, text=True,
                          check=True).stdout
    exported = {ln.split()[-1] for ln in syms.splitlines()
                if " GLOBAL " in ln and " DEFAULT " in ln and " UND " not in ln}
    assert {"dcu_device_count", "dcu_allocator", "dcu_memcpy"} <= exported
    assert not {s for s in exported if s.startswith("cuda")}, exported  # cudart stays inside


def test_default_arch_list_matches_this_nvcc():
    if NVCC is None or not dispatch.__cuda_archs__:
        pytest.skip("not built with CUDA")
    from dispatch import _cuda_build

    if not _cuda_build.ARCH_WHY.startswith("no GPU seen at configure"):
        pytest.skip(f"built with a GPU seen or an explicit list: {_cuda_build.ARCH_WHY}")
    oldest = cuda_arch.oldest_ptx(cuda_arch.nvcc_codes(NVCC))
    assert dispatch.__cuda_archs__ == [f"compute_{oldest}"] == ["compute_75"]


# the caching allocator's bookkeeping, on the host -----------------------------------------

def test_caching_allocator_bookkeeping_c_test_passes(cuda_host_c_test):
    proc = cuda_host_c_test("cuda_cache", "-pthread")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
