"""tools/opgen.py: the operator table generator."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "sources" / "dispatcher" / "operators.toml"


def opgen():
    return load_file(ROOT / "tools" / "opgen.py", "opgen")


def test_output_is_deterministic_and_path_free(tmp_path):
    g = opgen()
    outs = []
    for i in range(2):
        c, p = tmp_path / f"a{i}.c", tmp_path / f"a{i}.py"
        assert g.main([str(TABLE), "--c-out", str(c), "--py-out", str(p)]) == 0
        outs.append((c.read_bytes(), p.read_bytes()))
    assert outs[0] == outs[1]
    assert str(ROOT).encode() not in outs[0][0] + outs[0][1]


def test_every_listed_operator_is_in_the_table():
    names = {op.name for op in opgen().load(TABLE)}
    assert {"add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs", "sqrt", "exp", "log",
            "addcmul", "where", "eq", "lt", "gt", "sum", "mean", "max", "min", "dot", "copy_",
            "fill_", "cast"} <= names


def test_duplicate_operator_is_reported_with_both_lines(tmp_path, capsys):
    bad = tmp_path / "ops.toml"
    entry = '[[operator]]\nschema = "f(Tensor self) -> Tensor"\nkernel = "unary"\n\n'
    bad.write_text(entry * 2)
    assert opgen().main([str(bad)]) == 1
    assert "operator 'f' already declared at line 2" in capsys.readouterr().err


def test_unknown_field_is_an_error(tmp_path, capsys):
    bad = tmp_path / "ops.toml"
    bad.write_text('[[operator]]\nschema = "f(Tensor self) -> Tensor"\nkernel = "k"\nkernal = 1\n')
    assert opgen().main([str(bad)]) == 1
    assert "unknown field(s) ['kernal']" in capsys.readouterr().err


def test_gather_strided_lists_the_marked_loops_and_checks_its_value(tmp_path, capsys):
    g = opgen()
    table = tmp_path / "ops.toml"
    table.write_text('[[loop]]\nname = "cheap"\nnin = 1\n\n'
                     '[[loop]]\nname = "costly"\nnin = 1\ngather_strided = true\n')
    header = tmp_path / "_loops.h"
    assert g.main([str(table), "--loops-h", str(header)]) == 0
    text = header.read_text()
    gathered = text[text.index("DISPATCH_FORALL_GATHERED_LOOPS"):]
    assert "X(COSTLY)" in gathered and "CHEAP" not in gathered
    table.write_text('[[loop]]\nname = "costly"\nnin = 1\ngather_strided = "yes"\n')
    assert g.main([str(table), "--loops-h", str(header)]) == 1
    assert "ops.toml:1: gather_strided must be true or false, got 'yes'" in capsys.readouterr().err
