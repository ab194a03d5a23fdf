"""Both parsers, fed anything: a result or a DispatchError, never another
exception (and through the CLI: exit 0 or 2, never a traceback)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from dispatchkit.errors import DispatchError
from dispatchkit.features import AARCH64, ARCHES, X86_64
from dispatchkit.options import parse_option
from dispatchkit.targets import parse, resolve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

DISPATCHGEN = Path(__file__).resolve().parents[2] / "tools" / "dispatchgen" / "dispatchgen"

WORDS = sorted({n.lower() for a in ARCHES.values() for n in [*a.by_name, *a.group_by_name]}
               | {"min", "max", "native", "none", "baseline", "$keep_baseline", "$keep_sort",
                  "$maxopt", "$werror", "$autovec", "$bogus", "#g", "#h", "#", "$", "avx3"})
PUNCT = ["(", ")", "+", "-", ",", "*", "/", " ", "\n", "\t", "*/", "/*@targets", "ß", "ı"]
token = st.one_of(st.sampled_from(WORDS), st.sampled_from(PUNCT),
                  st.sampled_from(WORDS).map(lambda w: "+" + w),
                  st.sampled_from(WORDS).map(lambda w: "-" + w),
                  st.sampled_from(WORDS).map(str.upper))
tokens = st.lists(token, max_size=12).map(" ".join)
anything = st.one_of(st.text(max_size=60), tokens, st.lists(token, max_size=12).map("".join))
GROUPS = {"g": "avx2 (fma3 avx2) #h", "h": "sse42 $maxopt", "loop": "#loop"}
FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(value=anything, arch=st.sampled_from([X86_64, AARCH64]))
def test_parse_option_returns_or_raises_dispatch_error(value, arch):
    try:
        sel = parse_option(value, arch, "cpu-dispatch", lambda: list(arch.minimum))
    except DispatchError as exc:
        assert exc.where == "cpu-dispatch" and exc.message
    else:
        assert set(sel.names) <= set(arch.by_name)


@FUZZ
@given(body=anything, wrap=st.booleans(), arch=st.sampled_from([X86_64, AARCH64]))
def test_targets_parse_returns_or_raises_dispatch_error(body, wrap, arch):
    text = f"/*@targets {body} */" if wrap else body
    try:
        stmt = parse(text, "f.c", arch, GROUPS)
    except DispatchError as exc:
        assert exc.where and exc.where.startswith("f.c:") and exc.message
    else:
        for target in stmt.targets:
            assert set(target.features) <= set(arch.by_name)


@FUZZ
@given(body=tokens)
def test_resolving_any_parsed_statement_never_fails(gcc_config, body):
    try:
        stmt = parse(f"/*@targets {body} */", "f.c", X86_64, GROUPS)
    except DispatchError:
        return
    res = resolve(stmt, gcc_config)
    for target in res.targets:
        assert set(target.enables) <= set(gcc_config.baseline) | set(gcc_config.dispatch)


cli_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                   max_size=30) | tokens


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dispatch=cli_text, body=cli_text)
def test_the_cli_never_shows_a_traceback(cli, cache_dir, gcc_config, tmp_path, dispatch, body):
    src = tmp_path / "f.dispatch.c"
    src.write_text(f"/*@targets {body} */\n", encoding="utf-8")
    proc = cli(["targets", "--cc", "gcc", "--cache-dir", str(cache_dir),
                f"--cpu-dispatch={dispatch}", str(src), "--json"])
    assert proc.returncode in (0, 2), proc.stderr
    assert "Traceback" not in proc.stderr
    if proc.returncode == 2:
        assert len(proc.stderr.splitlines()) == 1


# -- issue 10: random bytes, sizes and groups; never a traceback, never a hang --------

class Hang(Exception):
    pass


@contextlib.contextmanager
def no_hang(seconds: float = 10.0):
    """Fail (instead of hanging the suite) if the body runs longer than ``seconds``."""
    def expire(signum, frame):
        raise Hang(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def assert_one_clean_line(exc: DispatchError) -> None:
    text = str(exc)
    assert text and text.isprintable(), repr(text)


GROUP_NAMES = ["a", "b", "c", "d"]
group_token = st.one_of(token, st.sampled_from(["#" + g for g in GROUP_NAMES]))
group_body = st.lists(group_token, max_size=8).map(" ".join)
# Bytes as a source file holds them: anything, decoded the way a file name or
# a lenient reader would (undecodable bytes become surrogates).
raw_text = st.binary(max_size=200).map(lambda b: b.decode("utf-8", "surrogateescape"))
sized = st.tuples(st.lists(token, min_size=1, max_size=6).map(" ".join),
                  st.integers(1, 20_000)).map(lambda t: (t[0] + "\n") * t[1])


@FUZZ
@given(body=st.one_of(tokens, raw_text, sized),
       groups=st.dictionaries(st.sampled_from(GROUP_NAMES), group_body, max_size=4),
       arch=st.sampled_from([X86_64, AARCH64]))
def test_targets_with_any_groups_any_bytes_any_size_returns_or_raises_one_line(body, groups,
                                                                              arch):
    with no_hang():
        try:
            stmt = parse(f"/*@targets {body} */", "f.c", arch, groups)
        except DispatchError as exc:
            assert exc.where and exc.where.startswith("f.c:")
            assert_one_clean_line(exc)
        else:
            assert all(set(t.features) <= set(arch.by_name) for t in stmt.targets)


@FUZZ
@given(value=st.one_of(anything, raw_text, sized), arch=st.sampled_from([X86_64, AARCH64]))
def test_options_of_any_bytes_and_size_return_or_raise_one_line(value, arch):
    with no_hang():
        try:
            sel = parse_option(value, arch, "cpu-dispatch", lambda: list(arch.minimum))
        except DispatchError as exc:
            assert exc.where == "cpu-dispatch"
            assert_one_clean_line(exc)
        else:
            assert set(sel.names) <= set(arch.by_name)


@FUZZ
@given(levels=st.integers(0, 60), fan_out=st.integers(1, 6), cycle=st.booleans())
def test_group_chains_of_any_depth_and_width_end_quickly(levels, fan_out, cycle):
    groups = {f"g{i}": " ".join([f"#g{i + 1}"] * fan_out) for i in range(levels)}
    groups[f"g{levels}"] = "#g0" if cycle else "avx2"
    with no_hang():
        try:
            stmt = parse("/*@targets #g0 */", "f.c", X86_64, groups)
        except DispatchError as exc:
            assert_one_clean_line(exc)
        else:
            assert {t.name for t in stmt.targets} == {"AVX2"}


file_bytes = st.one_of(
    st.binary(max_size=300),
    st.tuples(st.binary(max_size=60), st.lists(token, max_size=10).map(" ".join),
              st.binary(max_size=60)).map(
        lambda t: t[0] + b"/*@targets " + t[1].encode() + b" */" + t[2]),
)
file_name = st.one_of(
    st.sampled_from([b"k.dispatch.c", b"my k\xc3\xa9.c", b"a\tb.c", b'a"b.c', b"a\nb.c"]),
    st.binary(min_size=1, max_size=20).filter(
        lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")))
groups_bytes = st.one_of(group_body.map(lambda t: t.encode("utf-8", "surrogateescape")),
                         st.binary(max_size=200))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=file_bytes, name=file_name, groups=groups_bytes,
       command=st.sampled_from(["targets", "meson-source", "wrapper"]))
def test_the_cli_given_any_bytes_exits_0_or_2_with_one_line(gcc_config, source, name, groups,
                                                            command):
    with tempfile.TemporaryDirectory() as tmp:
        base = os.fsencode(tmp)
        config = os.path.join(tmp, "dispatch_config.json")
        with open(config, "w") as fh:
            fh.write(gcc_config.to_json())
        ini = os.path.join(tmp, "groups.ini")
        with open(ini, "wb") as fh:
            fh.write(b"[groups]\ng = " + groups + b"\na = avx2 #b\nb = sse42\n")
        src = base + b"/" + name
        with open(src, "wb") as fh:
            fh.write(source)
        args = {"targets": ["targets", src, "--config", config, "--json"],
                "meson-source": ["meson-source", src, "--config", config,
                                 "--outdir", os.path.join(tmp, "out")],
                "wrapper": ["wrapper", src, "avx2", "--config", config]}[command]
        proc = subprocess.run([sys.executable, str(DISPATCHGEN), *args, "--groups", ini],
                              capture_output=True, timeout=60, env={**os.environ, "LC_ALL": "C"})
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode in (0, 2), stderr
    assert "Traceback" not in stderr
    if proc.returncode == 2:
        assert len(stderr.splitlines()) == 1 and stderr.startswith("dispatchgen: error: ")
