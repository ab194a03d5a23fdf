"""The toolkit's cost grows with its input, not with its square (issue 45).

Counted, not timed: the work a step does (characters it scans) at n and 4n.
A quadratic step scans 16x more at 4n; a linear one about 4x.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

from dispatchkit import variants
from dispatchkit.errors import DispatchError
from dispatchkit.options import parse_option
from dispatchkit.probe import Probe
from dispatchkit.features import X86_64

# pytest's importlib mode puts no test folder on sys.path: the sibling's
# helper is imported by path, as tests/test_kernels_targets.py does
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_numpy_parity import table_config  # noqa: E402


class _CountingRe:
    """Stands in for the module's `re`: counts the characters re.split scans."""

    def __init__(self) -> None:
        self.scanned = 0

    def split(self, pattern, text, *args, **kwargs):
        self.scanned += len(text)
        return re.split(pattern, text, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(re, name)


def _scanned_loading(tmp_path: Path, n: int, monkeypatch) -> int:
    ini = tmp_path / f"v{n}.ini"
    ini.write_text("[library]\nname = mylib\n[avx2]\nsources = "
                   + " ".join(f"f{i}.c" for i in range(n)) + "\nsum = s\n")
    counting = _CountingRe()
    monkeypatch.setattr(variants, "re", counting)
    _, built, _ = variants.load(ini, table_config(X86_64, "min", "AVX2"))
    assert len(built[0].sources) == n
    assert built[0].source_lines == [4] * n
    return counting.scanned


def test_the_lines_of_a_sections_sources_cost_linear_in_their_number(tmp_path, monkeypatch):
    """Each source's line was found by splitting the whole `sources =` value
    again: n sources scanned n times n words (8,000 took 6.5 s; 200,000 did
    not finish in 30 minutes). Now each value is split once."""
    small = _scanned_loading(tmp_path, 1000, monkeypatch)
    large = _scanned_loading(tmp_path, 4000, monkeypatch)
    assert large <= 5 * small, (small, large)


def _sections_ini(tmp_path: Path, n: int) -> Path:
    """n sections, each a distinct target this build skips (features of XOP
    and AVX-512 in parentheses: the dispatch set is AVX2), so every one is
    parsed and resolved."""
    feats = ["XOP", "FMA4", "AVX512F", "AVX512CD", "AVX512_SKX", "AVX512BW", "AVX512VL",
             "AVX512DQ", "AVX512_CLX", "AVX512_CNL", "AVX512_ICL", "F16C", "FMA3"]
    names = ["(" + " ".join(f for k, f in enumerate(feats) if i >> k & 1) + ")"
             for i in range(1, n + 1)]
    ini = tmp_path / f"s{n}.ini"
    ini.write_text("[library]\nname = mylib\n"
                   + "".join(f"[{s}]\nsources = f.c\nsum = s\n" for s in names))
    return ini


def _parsed_chars(tmp_path: Path, n: int, monkeypatch) -> int:
    seen = [0]
    real = variants.parse

    def counting(text, *args, **kwargs):
        seen[0] += len(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(variants, "parse", counting)
    _, built, notes = variants.load(_sections_ini(tmp_path, n), table_config(X86_64, "min",
                                                                             "AVX2"))
    assert not built and len(notes) >= n
    return seen[0]


def test_the_sections_of_a_variants_file_cost_linear_in_their_number(tmp_path, monkeypatch):
    """Each section's name was parsed as a statement padded with one newline
    per line above it, so that its tokens had their lines: n sections parsed
    n times the file's lines. Now the line is passed."""
    small = _parsed_chars(tmp_path, 200, monkeypatch)
    large = _parsed_chars(tmp_path, 800, monkeypatch)
    assert large <= 5 * small, (small, large)


class _Name(str):
    """An entry point's name that counts its comparisons."""

    compared = 0

    def __eq__(self, other):
        _Name.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def _entry_comparisons(n: int) -> int:
    avx2 = variants.Variant("avx2", "AVX2", [], ["AVX2"], ["a.c"],
                            {_Name(f"e{i}"): f"e{i}_avx2" for i in range(n)})
    base = variants.Variant("baseline", "baseline", [], [], ["b.c"],
                            {_Name(f"e{i}"): f"e{i}_base" for i in range(n)})
    _Name.compared = 0
    text = variants.header("mylib", [avx2, base], "mylib.ini")
    assert text.count("#define MYLIB_DISPATCH__e") == n
    return _Name.compared


def test_the_entries_of_a_variants_file_cost_linear_in_their_number():
    """The header's list of entry points was built with `not in` a list:
    each entry of a second section compared with every entry before it."""
    small = _entry_comparisons(500)
    large = _entry_comparisons(2000)
    assert large <= 5 * max(small, 1), (small, large)


def test_operators_without_names_in_an_option_cost_linear_in_their_number():
    """`+ + + ...` grew the pending operators by copying a string (1M of them
    took minutes); refused now in time linear in the value."""
    start = time.perf_counter()
    with pytest.raises(DispatchError, match="operator without a feature name"):
        parse_option("+ " * 1_000_000, X86_64, "cpu-dispatch", list)
    assert time.perf_counter() - start < 10  # about 1 s; the copying took about 30


def test_native_written_many_times_asks_the_compiler_once(gcc_configure, monkeypatch):
    """Each `native` token ran the compiler's -march=native query again."""
    asked = []
    real = Probe.macros

    def counting(self, extra=()):
        if list(extra) == ["-march=native"]:
            asked.append(1)
        return real(self, extra)

    monkeypatch.setattr(Probe, "macros", counting)
    cfg = gcc_configure("min", " ".join(["native"] * 200))
    assert len(asked) == 1 and cfg.dispatch
