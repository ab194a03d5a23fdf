"""One source per table: C's lists and what Python reads from them agree.

Every id Python uses (dtypes, loops, error kinds, dispatch keys, devices,
reductions, kernel sources) is read from the compiled runtime at import
(dispatch/_tables.py); these tests cross-check each one through C's own
name functions, against NumPy, and against the tables the lists come from
(operators.toml's [[loop]] entries, meson's loop_kernel_sources).
"""

from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

import dispatch
from dispatch import _tables, iterator, kernels, library
from dispatch._core import ffi, lib

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "sources" / "dispatcher" / "operators.toml"
KERNELS = ROOT / "sources" / "kernels"


def _s(p) -> str:
    return ffi.string(p).decode()


def opgen():
    return load_file(ROOT / "tools" / "opgen.py", "opgen")


# dtypes ------------------------------------------------------------------------------

def test_every_c_dtype_is_a_python_dtype_with_the_same_id_name_and_size():
    assert len(dispatch._dtypes._DTYPES) == lib.DISPATCH_NUM_DTYPES
    for i in range(lib.DISPATCH_NUM_DTYPES):
        d = getattr(dispatch, _s(lib.dispatch_dtype_name(i)))
        assert d.num == i and d.name in dispatch.__all__
        assert d.itemsize == lib.dispatch_dtype_itemsize(i)
        assert iterator.DTYPES[d.name] == i
        assert d.is_floating_point == (lib.dispatch_dtype_category_of(i) == lib.DISPATCH_CAT_FLOAT)


@pytest.mark.parametrize("num", range(lib.DISPATCH_NUM_DTYPES))
def test_dtype_list_agrees_with_numpy(num):
    d = dispatch._dtypes._DTYPES[num]
    try:
        npd = np.dtype(d.name)
    except TypeError:  # (bfloat16): no typestr, no struct format, no NumPy export
        assert d.typestr == d.format == "" and d.name not in {
            _s(lib.dispatch_dtype_name(i)) for i in iterator._TYPESTR.values()}
        with pytest.raises(TypeError, match=f"NumPy has no {d.name}"):
            d.numpy
        return
    assert d.typestr == npd.str  # kind, size and native byte order
    assert d.numpy == npd
    assert struct.calcsize(d.format) == d.itemsize == npd.itemsize
    assert np.dtype(d.format) == npd  # the buffer format names the same type
    assert iterator._TYPESTR[npd.str] == num
    cat = lib.dispatch_dtype_category_of(num)
    expected = {"b": lib.DISPATCH_CAT_BOOL, "i": lib.DISPATCH_CAT_INT, "u": lib.DISPATCH_CAT_INT,
                "f": lib.DISPATCH_CAT_FLOAT}[npd.kind]
    assert cat == expected


@pytest.mark.parametrize("num", range(lib.DISPATCH_NUM_DTYPES))
def test_integer_ranges_come_from_the_storage_type_and_are_numpys(num):
    """Note [Integer facts]: min and max follow from the list's C type; Python reads them."""
    cat = lib.dispatch_dtype_category_of(num)
    lo, hi = lib.dispatch_dtype_min(num), lib.dispatch_dtype_max(num)
    if cat == lib.DISPATCH_CAT_INT:
        info = np.iinfo(np.dtype(_s(lib.dispatch_dtype_name(num))))
        assert (lo, hi) == (info.min, info.max)
        assert _tables.DTYPE_INT_RANGES[num] == (lo, hi)
    else:
        assert (lo, hi) == ((0, 1) if cat == lib.DISPATCH_CAT_BOOL else (0, 0))
        assert num not in _tables.DTYPE_INT_RANGES


def test_out_of_range_dtypes_have_no_facts():
    n = lib.DISPATCH_NUM_DTYPES
    for bad in (-1, n):
        assert _s(lib.dispatch_dtype_name(bad)) == "?"
        assert lib.dispatch_dtype_itemsize(bad) == 0
        assert lib.dispatch_dtype_category_of(bad) == -1
        assert _s(lib.dispatch_dtype_typestr(bad)) == _s(lib.dispatch_dtype_format(bad)) == ""
        assert lib.dispatch_dtype_min(bad) == lib.dispatch_dtype_max(bad) == 0


def test_item_uses_the_dtype_category_not_its_id():
    assert dispatch.tensor([1.5], dtype=dispatch.float16).item() == 1.5
    assert dispatch.tensor([True]).item() is True
    assert dispatch.tensor([3], dtype=dispatch.int8).item() == 3


# loops -------------------------------------------------------------------------------

def test_python_loop_ids_name_the_same_c_loops():
    """Would fail if a Python table kept numbers while a loop was inserted in C."""
    assert len(iterator.LOOPS) == lib.DISPATCH_NUM_LOOPS
    for name, i in iterator.LOOPS.items():
        assert _s(lib.dispatch_loop_name(i)) == name
    for name, i in kernels.LOOPS.items():
        assert _s(lib.dispatch_loop_name(i)) == name
        assert kernels._NIN[name] == lib.dispatch_loop_nin(i)


def test_loop_ids_are_the_order_of_the_table():
    loops = opgen().load_loops(TABLE)
    assert [lp.name for lp in loops] == list(iterator.LOOPS)
    for i, lp in enumerate(loops):
        assert lib.dispatch_loop_nin(i) == lp.nin
        kind = {"none": lib.DISPATCH_LOOP_CTX_NONE, "optional": lib.DISPATCH_LOOP_CTX_OPTIONAL,
                "required": lib.DISPATCH_LOOP_CTX_REQUIRED}[lp.ctx]
        assert lib.dispatch_loop_ctx_kind(i) == kind
        for k in range(lp.nin + 1):
            want = iterator.DTYPES["bool"] if k in lp.bool_operands else iterator.DTYPES["float32"]
            assert lib.dispatch_loop_operand_dtype(i, k, iterator.DTYPES["float32"]) == want


def test_known_loop_facts_are_kept():
    L = iterator.LOOPS
    assert list(L)[:6] == ["add", "sub", "mul", "div", "maximum", "minimum"]
    assert {n: lib.dispatch_loop_nin(L[n]) for n in ("add", "neg", "addcmul", "where", "fill")} \
        == {"add": 2, "neg": 1, "addcmul": 3, "where": 3, "fill": 0}
    assert iterator._CTX_OPTIONAL == {"add", "sub"}
    assert iterator._CTX_REQUIRED == {"addcmul", "fill"}
    assert kernels._CTX_REQUIRED == {"addcmul", "fill"}
    # every loop is a dispatched loop (Note [Generic dispatched loops])
    assert set(kernels.LOOPS) == set(L)
    assert _s(lib.dispatch_loop_name(-1)) == _s(lib.dispatch_loop_name(len(L))) == "?"
    assert lib.dispatch_loop_nin(len(L)) == lib.dispatch_loop_ctx_kind(len(L)) == -1


def test_a_loop_inserted_in_the_table_renumbers_the_generated_ids(tmp_path):
    g = opgen()
    text = TABLE.read_text()
    extra = '[[loop]]\nname = "twice"\nnin = 1\n\n'
    first_mul = text.index('[[loop]]\nname = "mul"')
    bigger = tmp_path / "ops.toml"
    bigger.write_text(text[:first_mul] + extra + text[first_mul:])
    names = [lp.name for lp in g.load_loops(bigger)]
    assert names.index("twice") == iterator.LOOPS["mul"]
    assert names.index("mul") == iterator.LOOPS["mul"] + 1
    header = g.render_loops_h(g.load_loops(bigger), "ops.toml")
    xs = re.findall(r"^    X\((\w+),", header, re.M)
    assert xs[iterator.LOOPS["mul"]] == "TWICE" and xs[-1] == "FILL"


def test_generated_loops_header_is_deterministic_and_not_rewritten(tmp_path):
    g = opgen()
    out = tmp_path / "_loops.h"
    assert g.main([str(TABLE), "--loops-h", str(out)]) == 0
    first, stamp = out.read_bytes(), out.stat().st_mtime_ns
    assert g.main([str(TABLE), "--loops-h", str(out)]) == 0
    assert out.read_bytes() == first and out.stat().st_mtime_ns == stamp
    assert str(ROOT).encode() not in first
    assert b"DISPATCH_FORALL_LOOPS(X)" in first


@pytest.mark.parametrize("entry, message", [
    ('name = "a"\nnin = 1\n\n[[loop]]\nname = "a"\nnin = 2\n', "loop 'a' already declared at line 1"),
    ('name = "a"\nnin = 4\n', "nin must be 0 to 3"),
    ('name = "a"\nnin = 1\nctx = "maybe"\n', "ctx must be one of"),
    ('name = "A"\nnin = 1\n', "loop name must be lower-case"),
    ('name = "a"\nnin = 1\nbool_operands = [2]\n', "bool_operands must list operand numbers"),
    ('name = "a"\nnin = 1\nnim = 1\n', "unknown field(s) ['nim']"),
    ('nin = 1\n', "missing field 'name'"),
])
def test_bad_loop_entries_are_reported_with_their_line(tmp_path, capsys, entry, message):
    bad = tmp_path / "ops.toml"
    bad.write_text("[[loop]]\n" + entry)
    assert opgen().main([str(bad), "--loops-h", str(tmp_path / "h")]) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "h").exists()


def test_every_operator_ctx_loop_is_a_declared_loop():
    loops = {lp.name.upper() for lp in opgen().load_loops(TABLE)}
    for op in opgen().load(TABLE):
        if op.ctx.startswith("DISPATCH_LOOP_"):
            assert op.ctx[len("DISPATCH_LOOP_"):] in loops, op.full_name


# errors, keys, devices, reductions ----------------------------------------------------

def test_error_kinds_raise_the_exception_c_names():
    raise_ = dispatch._errors._raise
    for kind in range(1, lib.DISPATCH_NUM_ERROR_KINDS):
        name = _s(lib.dispatch_error_kind_name(kind))
        if kind == lib.DISPATCH_ERR_PYTHON:
            assert name == "" and dispatch._errors._ERR_PYTHON == kind
            continue
        assert iterator._ERRORS[kind].__name__ == name
        lib.dispatch_error_set_message(kind, b"boom")
        with pytest.raises(iterator._ERRORS[kind], match="boom"):
            raise_()
    assert _s(lib.dispatch_error_kind_name(0)) == ""
    assert _s(lib.dispatch_error_kind_name(lib.DISPATCH_NUM_ERROR_KINDS)) == ""


def test_dispatch_keys_are_read_from_c():
    n = lib.DISPATCH_NUM_KEYS
    assert library.KEYS == tuple(_s(lib.dispatch_key_name(k)) for k in range(1, n))
    for k, name in enumerate(library.KEYS, start=1):
        assert lib.dispatch_key_from_name(name.encode()) == k
    assert _s(lib.dispatch_key_name(library._PYTHON_KEY)) == "Python"
    assert library.KEYS[:3] == ("CPU", "CUDA", "Meta")


def test_devices_are_read_from_c():
    devices = dispatch._devices._DEVICES
    assert len(devices) == lib.DISPATCH_NUM_DEVICES
    for name, d in devices.items():
        assert _s(lib.dispatch_device_name(d)) == name
    assert dispatch.empty(2, device="meta").device == "meta"
    assert dispatch.empty(2).device == "cpu"


def test_reductions_are_read_from_c():
    assert iterator._REDUCE == {"sum": 0, "mean": 1, "max": 2, "min": 3, "prod": 4}
    for name, r in iterator._REDUCE.items():
        assert _s(lib.dispatch_reduce_name(r)) == name
    assert lib.dispatch_reduce_name(lib.DISPATCH_NUM_REDUCTIONS) == ffi.NULL


# kernel sources ----------------------------------------------------------------------

def _meson_loop_kernel_sources() -> list[str]:
    text = (KERNELS / "meson.build").read_text()
    block = re.search(r"loop_kernel_sources = \[(.*?)\]", text, re.S).group(1)
    return [s.removesuffix(".dispatch.c") for s in re.findall(r"'([^']+)'", block)]


def test_kernel_sources_are_meson_s_list_read_from_c():
    assert list(kernels.SOURCES) == _meson_loop_kernel_sources()
    assert lib.dispatch_kernels_source_name(len(kernels.SOURCES)) == ffi.NULL
    for s in kernels.SOURCES:
        assert kernels.chosen(s)
    with pytest.raises(ValueError, match="unknown kernel source"):
        kernels.chosen("probe")


def test_every_source_exporting_a_table_is_listed_in_meson():
    exporting = sorted(p.name.removesuffix(".dispatch.c") for p in KERNELS.glob("*.dispatch.c")
                       if "DISPATCH_KERNELS_EXPORT(" in p.read_text())
    assert exporting == sorted(_meson_loop_kernel_sources())


def test_every_exported_loop_is_registered_for_its_dtype():
    """The hand-written entries (DISPATCH_KERNELS_LOOP and _LOOP_WITH_2D lines) are each
    registered, none twice; with the generated sources' entries (Note
    [Generic dispatched loops]) every pair that has a loop has a kernel
    (test_loops_targets.c compares every entry of every target)."""
    entry = re.compile(r"DISPATCH_KERNELS_LOOP(?:_WITH_2D)?\((\w+), (\w+), (\w+)(?:, [01])?\)")
    generated = {"int_loops", "float_loops", "narrow_loops", "cast_loops"}
    seen = set()
    for src in _meson_loop_kernel_sources():
        if src in generated:
            continue
        for loop, dt, fn in entry.findall((KERNELS / f"{src}.dispatch.c").read_text()):
            pair = (loop.lower(), dt.lower())
            assert pair not in seen, f"{fn}: ({loop}, {dt}) is exported twice"
            seen.add(pair)
            assert kernels.has(loop.lower(), dt.lower()), fn
    assert ("add", "float32") in seen and ("add", "int32") in seen  # the pattern still matches
    assert generated <= set(_meson_loop_kernel_sources())
    for name, i in iterator.LOOPS.items():
        for dt, d in iterator.DTYPES.items():
            want = bool(lib.dispatch_loop_supported(i, d))
            assert bool(lib.dispatch_kernels_has(i, d)) == want, (name, dt)
