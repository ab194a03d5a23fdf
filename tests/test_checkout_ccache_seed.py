"""tests/_checkout.py's seed_ccache: the session's ccache starts as a copy of
the user's (where README's install put its objects), without the user's
ccache.conf or half-written files, and not at all past SEED_LIMIT. The
saving it is for is test_build_cache.py's: its first clone's gcc build takes
the pip install's objects."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _checkout  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache is not installed")


def _user_cache(root: Path) -> Path:
    cache = root / "user-cache"
    for name, body in {"a/b/0123456789abcdefR": b"x" * 100, "a/b/0123456789abcdefM": b"m" * 7,
                       "0/stats": b"1 2 3\n", "ccache.conf": b"max_size = 1G\n",
                       "a/b/fedcba.tmp.A1b2C3": b"half"}.items():
        (cache / name).parent.mkdir(parents=True, exist_ok=True)
        (cache / name).write_bytes(body)
    return cache


def test_the_entries_are_copied_not_the_config_nor_temporaries(tmp_path, monkeypatch):
    monkeypatch.setenv("CCACHE_DIR", str(_user_cache(tmp_path)))
    dest = tmp_path / "session"
    dest.mkdir()
    assert _checkout.seed_ccache(dest) == 100 + 7 + 6
    got = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert got == ["0/stats", "a/b/0123456789abcdefM", "a/b/0123456789abcdefR"]


def test_a_cache_past_the_limit_is_not_copied(tmp_path, monkeypatch):
    monkeypatch.setenv("CCACHE_DIR", str(_user_cache(tmp_path)))
    monkeypatch.setattr(_checkout, "SEED_LIMIT", 50)
    dest = tmp_path / "session"
    dest.mkdir()
    assert _checkout.seed_ccache(dest) == 0
    assert list(dest.iterdir()) == []


def test_no_user_cache_or_the_same_folder_copies_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("CCACHE_DIR", str(tmp_path / "absent"))
    assert _checkout.seed_ccache(tmp_path) == 0
    cache = _user_cache(tmp_path)
    monkeypatch.setenv("CCACHE_DIR", str(cache))
    assert _checkout.seed_ccache(cache) == 0
