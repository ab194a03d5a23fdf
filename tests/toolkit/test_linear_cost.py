"""The toolkit's cost grows with its input, not with its square (issue 45).

Counted, not timed: the work a step does (characters it scans) at n and 4n.
A quadratic step scans 16x more at 4n; a linear one about 4x.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from dispatchkit import variants
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
