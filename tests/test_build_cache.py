"""Builds that cache and distribute (docs/toolkit.md "Builds that cache and distribute").

The generated files and the compile lines hold no absolute path and no time
stamp, and `native` resolves to explicit feature flags at configure
(tests/toolkit/test_native.py), so

- two clones in different directories, each built in its own `build/`
  through ccache, share every object: the second build is all cache hits,
  without CCACHE_BASEDIR;
- a build through distcc to a distccd on 127.0.0.1 compiles every object
  remotely, and the per-target objects hold the same instructions as a local
  build (objdump).

The build commands are the manual's lines, run verbatim in each clone.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "tools" / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_isa  # noqa: E402
from _checkout import copy_checkout  # noqa: E402

MANUAL = REPO / "docs" / "toolkit.md"
SECTION = "## Builds that cache and distribute"


def which(name: str) -> str | None:
    return shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def need(*names: str) -> None:
    for name in names:
        if not which(name):
            pytest.skip(f"{name} is not installed (.ci/run installs it with apt-get)")


def manual_build_line(cc: str) -> str:
    """The manual's build command for CC="<cc>" (the line the test runs)."""
    text = MANUAL.read_text()
    assert SECTION in text, f"{MANUAL.name} has no '{SECTION}' section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    lines = [ln.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)
             for ln in block.splitlines()]
    found = [ln for ln in lines if ln.startswith(f'CC="{cc}" ')]
    assert len(found) == 1, f"the section has no single build line for CC=\"{cc}\""
    return found[0]


def clone(dest: Path) -> Path:
    """A copy of the checkout's files (tracked and untracked-not-ignored) at dest."""
    if copy_checkout(dest) is None:
        pytest.skip("needs a git checkout to list the project's files")
    return dest


def build_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CCACHE_", "DISTCC_", "SCCACHE_")) and k not in ("CC", "CFLAGS")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def run(cmd, cwd: Path, env: dict, shell: bool = False) -> str:
    r = subprocess.run(cmd, cwd=cwd, env=env, shell=shell, capture_output=True, text=True,
                       executable="/bin/bash" if shell else None)
    assert r.returncode == 0, f"{cmd} failed:\n{r.stdout[-4000:]}{r.stderr[-4000:]}"
    return r.stdout + r.stderr


def compile_commands(build: Path) -> list:
    return json.loads((build / "compile_commands.json").read_text())


def ccache_stats(env: dict) -> dict:
    out = run(["ccache", "--print-stats"], Path.cwd(), env)
    return {k: int(v) for k, v in (ln.split("\t") for ln in out.splitlines() if "\t" in ln)}


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    need("meson", "ninja", "cc")
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def first_clone(work: Path, runtime_ccache: Path) -> tuple[Path, dict]:
    """Clone one, built through ccache with the manual's line. Its cache is
    the session's, a copy of the user's (tests/_checkout.py): where README's
    install or test_compilers.py's gcc tree compiled first, this build takes
    their objects; either way the second clone below finds every object in
    it."""
    if runtime_ccache is None:
        pytest.skip("ccache is not installed, or older than 4.2 (no --print-stats to count "
                    "hits with); .ci/run installs it with apt-get")
    env = build_env(CCACHE_DIR=str(runtime_ccache),
                    DISPATCHGEN_CACHE_DIR=str(work / "probe-cache"))
    src = clone(work / "one" / "dispatch")
    run(manual_build_line("ccache cc"), src, env, shell=True)
    return src, env


def test_second_clone_elsewhere_is_all_ccache_hits(work, first_clone):
    one, env = first_clone
    two = clone(work / "two" / "elsewhere" / "dispatch")
    line = manual_build_line("ccache cc")
    setup, build = line.split(" && ")
    run(setup, two, env, shell=True)
    run(["ccache", "--zero-stats"], two, env)
    run(build, two, env, shell=True)
    stats = ccache_stats(env)
    objects = len(compile_commands(two / "build"))
    hits = stats["direct_cache_hit"] + stats["preprocessed_cache_hit"]
    print(f"ccache: {objects} objects, {hits} hits "
          f"({stats['direct_cache_hit']} direct), {stats['cache_miss']} misses")
    assert objects >= 40
    assert stats["cache_miss"] == 0 and hits == objects, stats


def test_generated_files_and_compile_lines_are_the_same_in_both_clones(work, first_clone):
    one, _ = first_clone
    two = work / "two" / "elsewhere" / "dispatch"
    if not (two / "build" / "compile_commands.json").exists():
        pytest.skip("the second clone was not configured")
    gen = lambda root: {p.relative_to(root / "build"): p.read_bytes()
                        for p in sorted((root / "build" / "sources").rglob("*"))
                        if p.is_file() and p.suffix in (".c", ".h", ".json")}
    assert gen(one) and gen(one) == gen(two)
    for root in (one, two):
        commands = [(c["command"], c["file"], c["output"]) for c in
                    compile_commands(root / "build")]
        for path in (str(work), str(REPO), "march=native"):
            assert not [c for c in commands if path in " ".join(c)], (root, path)
    strip = lambda root: [c["command"] for c in compile_commands(root / "build")]
    assert strip(one) == strip(two)


# -- distcc ------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def distccd(tmp_path):
    """A distccd on 127.0.0.1:<free port>: yields (port, log path)."""
    need("distcc", "distccd")
    port, log = free_port(), tmp_path / "distccd.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [which("distccd"), "--daemon", "--no-detach", "--allow", "127.0.0.1",
             "--listen", "127.0.0.1", "--port", str(port), "--jobs", "2",
             "--log-stderr", "--log-level", "info"],
            stdout=fh, stderr=fh, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 15
        while True:
            assert proc.poll() is None, f"distccd exited:\n{log.read_text()}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"distccd did not listen:\n{log.read_text()}"
                time.sleep(0.1)
        yield port, log
    finally:
        # distccd preforks: stop its whole process group (started above, by id).
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def mnemonics(lib: Path) -> collections.Counter:
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(lib)], check=True,
                         capture_output=True, text=True).stdout
    return collections.Counter(m.group(1) for m in
                               re.finditer(r"^\s+[0-9a-f]+:\s+([a-z][a-z0-9.]*)", asm, re.M))


def test_distcc_compiles_remotely_with_the_same_instructions(work, first_clone, distccd):
    need("objdump")
    port, log = distccd
    local, _ = first_clone
    src = clone(work / "distcc" / "dispatch")
    (work / "distcc-state").mkdir(exist_ok=True)
    env = build_env(DISTCC_HOSTS=f"127.0.0.1:{port}/2", DISTCC_FALLBACK="0",
                    DISTCC_SKIP_LOCAL_RETRY="1", DISTCC_BACKOFF_PERIOD="0",
                    DISTCC_DIR=str(work / "distcc-state"),
                    DISPATCHGEN_CACHE_DIR=str(work / "probe-cache"))
    run(manual_build_line("distcc cc"), src, env, shell=True)

    # Every object of the build was compiled by distccd.
    remote = collections.Counter(m.group(1) for m in re.finditer(
        r"COMPILE_OK exit:0 .* (\S+)\s*$", log.read_text(), re.M))
    commands = compile_commands(src / "build")
    wanted = collections.Counter(c["file"] for c in commands)  # as on the compile line
    # per-target objects: a dispatchable source built into lib<stem>_dispatch_c_<TARGET>
    per_target = [c["output"] for c in commands
                  if re.search(r"_dispatch_c_(?!baseline)\w+\.a\.p/", c["output"])]
    print(f"distcc: {sum(wanted.values())} objects, {len(per_target)} per-target; "
          f"distccd compiled {sum(remote.values())} files")
    assert len(per_target) >= 20
    assert {n: k for n, k in wanted.items() if remote[n] < k} == {}, log.read_text()[-3000:]

    # ... and holds what the local build holds, per target: same ISA checks,
    # same instructions.
    here, there = check_isa.scan(local / "build"), check_isa.scan(src / "build")
    assert here and here == there
    assert {f"{v.source} {v.target}": v.problems() for v in there if v.problems()} == {}
    libs = sorted((src / "build" / "sources" / "kernels").glob("lib*_dispatch_c_*.a"))
    for lib in libs:
        ref = local / "build" / lib.relative_to(src / "build")
        assert mnemonics(lib) == mnemonics(ref), lib.name
