"""The toolkit's feature tables (tools/dispatchgen/dispatchkit/features) and the runtime's
feature enum (tools/dispatchgen/dispatchkit/include/dispatch/cpu_features.h) name the same features.

The generated dispatch headers test `DISPATCH_CPU_HAVE(<NAME>)` for every
feature and group a target needs, so a name in a table without an enum value
is a compile error in every dispatchable source, and an enum value without a
table entry is a feature nobody can select. Runs from a bare checkout.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tools" / "dispatchgen") not in sys.path:
    sys.path.insert(0, str(ROOT / "tools" / "dispatchgen"))

from dispatchkit.features import ARCHES  # noqa: E402

HEADER = ROOT / "tools" / "dispatchgen" / "dispatchkit" / "include" / "dispatch" / "cpu_features.h"
NOT_FEATURES = {"NONE", "MAX"}


def enum_values() -> dict:
    text = HEADER.read_text()
    found = re.findall(r"^\s*DISPATCH_CPU_FEATURE_([A-Z0-9_]+)\s*=\s*(\d+)\s*,?", text, re.M)
    return {name: int(value) for name, value in found}


def table_names() -> set:
    return {name for arch in ARCHES.values()
            for name in [*arch.by_name, *arch.group_by_name]}


def test_the_header_declares_the_enum():
    assert len(enum_values()) > len(NOT_FEATURES)


@pytest.mark.parametrize("name", sorted(table_names()))
def test_every_table_feature_and_group_has_an_enum_value(name):
    assert name in enum_values(), f"add DISPATCH_CPU_FEATURE_{name} to {HEADER.name}"


@pytest.mark.parametrize("name", sorted(set(enum_values()) - NOT_FEATURES))
def test_every_enum_value_is_a_table_feature_or_group(name):
    assert name in table_names(), f"DISPATCH_CPU_FEATURE_{name} is in no feature table"


@pytest.mark.parametrize("name", sorted({d for arch in ARCHES.values()
                                         for f in arch.features for d in f.detect_names}))
def test_every_runtime_detection_name_has_an_enum_value(name):
    assert name in enum_values()


def test_enum_values_are_distinct():
    values = list(enum_values().values())
    assert len(values) == len(set(values))


def test_every_feature_is_below_the_max_sentinel():
    values = enum_values()
    assert all(v < values["MAX"] for k, v in values.items() if k != "MAX")
    assert values["NONE"] == 0
