"""Both parsers, fed anything: a result or a DispatchError, never another
exception (and through the CLI: exit 0 or 2, never a traceback)."""

from __future__ import annotations

import shutil

import pytest
from dispatchkit.errors import DispatchError
from dispatchkit.features import AARCH64, ARCHES, X86_64
from dispatchkit.options import parse_option
from dispatchkit.targets import parse, resolve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
