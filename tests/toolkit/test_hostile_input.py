"""The generator attacked as a hostile user would (issue 10): huge statements,
exploding target groups, I/O failures, racing writers, corrupt config and
cache files, source names the generated files cannot carry; and (issue 35)
inputs whose outputs share a path, links planted where outputs go or in a
vendored folder, missing sources, escape bytes in the env variables. Each is
one clean error (or a right result), never a traceback, a hang, a
half-written set or a write through a link."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dispatchkit import generate
from dispatchkit.build_config import BuildConfig, configure
from dispatchkit.errors import DispatchError
from dispatchkit.features import X86_64
from dispatchkit.options import parse_option
from dispatchkit.probe import Probe
from dispatchkit.targets import MAX_GROUP_DEPTH, MAX_GROUP_NAMES, load_groups, parse, tokenize

TOOLS = Path(__file__).resolve().parents[2] / "tools" / "dispatchgen"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _cpu_program import CC, compile_program, write_headers  # noqa: E402

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
SOURCE = "/*@targets baseline sse42 avx2 */\nint DISPATCH_CPU_DISPATCH_CURFX(f)(void);\n"


def one_clean_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    """The CLI contract: exit 2, one line on stderr, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("dispatchgen: error: ")
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def gcc_args(cache_dir, gcc_config):
    return ["--cc", "gcc", "--cflags", "", "--cache-dir", str(cache_dir)]


# -- 1. tokenizing is linear ----------------------------------------------------

MEGABYTE = 1 << 20


def test_a_1mb_targets_statement_parses_in_well_under_a_second():
    body = "avx2 sse42\n * (avx2 fma3), vsx2\n" * (MEGABYTE // 32)
    text = f"/*@targets {body} */\n"
    assert len(text) >= MEGABYTE
    start = time.perf_counter()
    stmt = parse(text, "big.c", X86_64)
    elapsed = time.perf_counter() - start
    print(f"1 MB @targets statement: {elapsed:.3f} s")  # about 0.5 s; 37-78 s before
    assert elapsed < 5
    assert len(stmt.targets) == 3 * (MEGABYTE // 32)


def test_a_1mb_statement_still_reports_the_exact_line_of_a_bad_token():
    lines = MEGABYTE // 5
    text = "int a;\n" + "/*@targets\n" + "avx2\n" * lines + "  avx3 */\n"
    start = time.perf_counter()
    with pytest.raises(DispatchError) as info:
        parse(text, "big.c", X86_64)
    assert time.perf_counter() - start < 5
    assert info.value.where == f"big.c:{lines + 3}" and "'avx3'" in info.value.message


def test_tokens_keep_their_lines():
    toks = tokenize("a\n\n b (c\n d)\n\n", 7)
    assert [(t.text, t.line) for t in toks] == [("a", 7), ("b", 9), ("(", 9), ("c", 9),
                                                ("d", 10), (")", 10)]


def test_a_1mb_text_before_the_statement_and_a_1mb_option_value_are_fast():
    start = time.perf_counter()
    stmt = parse("/" * MEGABYTE + "/*@targets avx2 */", "f.c", X86_64)
    sel = parse_option("max -avx512f " * (MEGABYTE // 13), X86_64, "cpu-dispatch", list)
    elapsed = time.perf_counter() - start
    print(f"1 MB before the statement + 1 MB option value: {elapsed:.3f} s")
    assert elapsed < 5
    assert stmt.line == 1 and "AVX512F" not in sel.names


def test_an_error_quotes_a_huge_token_cut_short():
    with pytest.raises(DispatchError) as info:
        parse("/*@targets " + "x" * MEGABYTE + " */", "f.c", X86_64)
    assert len(str(info.value)) < 1000 and "xxx..." in str(info.value)


@needs_gcc
def test_the_cli_reads_a_1mb_source_quickly(cli, gcc_args, tmp_path):
    src = tmp_path / "big.dispatch.c"
    src.write_text("/*@targets baseline " + "avx2 sse42\n" * (MEGABYTE // 11) + "*/\n")
    start = time.perf_counter()
    proc = cli(["targets", *gcc_args, str(src)])
    elapsed = time.perf_counter() - start
    print(f"dispatchgen targets on a 1 MB source: {elapsed:.3f} s")
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 10
    assert proc.stdout.startswith(f"{src}: AVX2 SSE42 baseline")


# -- 2. group expansion is bounded ------------------------------------------------

def doubling_chain(levels: int, fan_out: int = 2) -> dict:
    groups = {f"g{i}": " ".join([f"#g{i + 1}"] * fan_out) for i in range(levels)}
    groups[f"g{levels}"] = "avx2"
    return groups


def test_a_40_level_doubling_chain_of_groups_is_an_error_at_once():
    start = time.perf_counter()
    with pytest.raises(DispatchError) as info:
        parse("/*@targets\n #g0 */", "f.c", X86_64, doubling_chain(40))
    assert time.perf_counter() - start < 1
    assert info.value.where == "f.c:2"
    assert f"nested more than {MAX_GROUP_DEPTH} groups deep" in info.value.message


def test_a_3000_deep_chain_of_groups_is_an_error_not_a_recursion_error():
    with pytest.raises(DispatchError, match="nested more than"):
        parse("/*@targets #g0 */", "f.c", X86_64, doubling_chain(3000, fan_out=1))


def test_groups_within_the_depth_limit_still_expand():
    stmt = parse("/*@targets #g0 */", "f.c", X86_64, doubling_chain(MAX_GROUP_DEPTH - 1, 1))
    assert [t.name for t in stmt.targets] == ["AVX2"]


def test_groups_expanding_to_too_many_names_are_an_error_at_once():
    start = time.perf_counter()
    with pytest.raises(DispatchError) as info:  # 10**10 names, 10 levels deep
        parse("/*@targets #g0 */", "f.c", X86_64, doubling_chain(10, fan_out=10))
    assert time.perf_counter() - start < 1
    assert f"expand to more than {MAX_GROUP_NAMES} names" in info.value.message


def test_a_group_cycle_is_an_error_naming_the_cycle():
    with pytest.raises(DispatchError) as info:
        parse("/*@targets avx2\n #a */", "f.c", X86_64, {"a": "sse42 #b", "b": "#c", "c": "#a"})
    assert info.value.where == "f.c:2"
    assert "'#a' includes itself (#a -> #b -> #c -> #a)" in info.value.message


def test_groups_ini_values_are_not_interpolated(tmp_path):
    # configparser's default `%(name)s` interpolation was a second, unbounded
    # expansion, and a lone '%' was a traceback.
    ini = tmp_path / "groups.ini"
    lines = ["[groups]", "pct = avx2 %"]
    lines += [f"i{k} = " + f"%(i{k + 1})s " * 20 for k in range(10)] + ["i10 = avx2"]
    ini.write_text("\n".join(lines) + "\n")
    groups = load_groups(ini)
    assert groups["pct"] == "avx2 %" and groups["i0"].startswith("%(i1)s")
    with pytest.raises(DispatchError, match="'%' is not a target name"):
        parse("/*@targets #pct */", "f.c", X86_64, groups)


def test_a_groups_file_that_is_not_utf8_is_an_error(tmp_path):
    ini = tmp_path / "groups.ini"
    ini.write_bytes(b"[groups]\ng = avx2 \xff\n")
    with pytest.raises(DispatchError, match="cannot read target groups"):
        load_groups(ini)


@needs_gcc
def test_the_cli_refuses_an_exploding_groups_file_in_one_line(cli, gcc_args, tmp_path):
    ini = tmp_path / "groups.ini"
    ini.write_text("[groups]\n" + "".join(f"g{k} = #g{k + 1} #g{k + 1}\n" for k in range(40))
                   + "g40 = avx2\n")
    src = tmp_path / "k.dispatch.c"
    src.write_text("/*@targets #g0 */\n")
    proc = cli(["targets", *gcc_args, "--groups", str(ini), str(src)], timeout=60)
    one_clean_error(proc, f"{src}:1", "nested more than")


# -- 3. I/O failures: one error, no partial output -------------------------------------

@needs_gcc
def test_configure_into_an_outdir_that_is_a_file_is_one_error(cli, gcc_args, tmp_path):
    out = tmp_path / "not-a-dir"
    out.write_text("x")
    one_clean_error(cli(["configure", *gcc_args, "--outdir", str(out)]), "not-a-dir")
    one_clean_error(cli(["configure", *gcc_args, "--outdir", str(out / "sub")]), "not-a-dir")
    assert out.read_text() == "x"


@needs_gcc
def test_a_directory_where_the_config_should_be_leaves_the_old_header(cli, gcc_args, tmp_path):
    out = tmp_path / "build"
    assert cli(["configure", *gcc_args, "--outdir", str(out),
                "--cpu-dispatch", "avx2"]).returncode == 0
    header = (out / "_cpu_dispatch.h").read_bytes()
    (out / "dispatch_config.json").unlink()
    (out / "dispatch_config.json").mkdir()
    proc = cli(["configure", *gcc_args, "--outdir", str(out), "--cpu-dispatch", "avx512_skx"])
    one_clean_error(proc, "dispatch_config.json", "is a directory")
    assert (out / "_cpu_dispatch.h").read_bytes() == header  # not rewritten for avx512_skx
    assert sorted(p.name for p in out.iterdir()) == ["_cpu_dispatch.h", "_cpu_features_table.h",
                                                     "dispatch_config.json"]


@needs_gcc
def test_meson_source_into_a_bad_outdir_is_one_error(cli, gcc_args, tmp_path):
    build = tmp_path / "build"
    assert cli(["configure", *gcc_args, "--outdir", str(build)]).returncode == 0
    src = tmp_path / "k.dispatch.c"
    src.write_text(SOURCE)
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = cli(["meson-source", str(src), "--config", str(build / "dispatch_config.json"),
                "--outdir", str(blocker)])
    one_clean_error(proc, "file")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "k.dispatch.h").mkdir()
    proc = cli(["meson-source", str(src), "--config", str(build / "dispatch_config.json"),
                "--outdir", str(tmp_path / "out")])
    one_clean_error(proc, "k.dispatch.h", "is a directory")


def test_a_failed_set_replaces_nothing_and_leaves_no_temporary_file(tmp_path):
    (tmp_path / "a.h").write_text("old a")
    (tmp_path / "blocker").write_text("")
    with pytest.raises(DispatchError, match="cannot write"):
        generate.write_files([(tmp_path / "a.h", "new a"),
                              (tmp_path / "blocker" / "b.json", "new b")])
    assert (tmp_path / "a.h").read_text() == "old a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.h", "blocker"]


def test_written_files_get_the_usual_mode_not_mkstemps_0600(tmp_path):
    old = os.umask(0o022)
    try:
        generate.write_files([(tmp_path / "new.h", "x")])
    finally:
        os.umask(old)
    assert (tmp_path / "new.h").stat().st_mode & 0o777 == 0o644
    (tmp_path / "new.h").chmod(0o640)
    generate.write_files([(tmp_path / "new.h", "y")])
    assert (tmp_path / "new.h").stat().st_mode & 0o777 == 0o640


def test_unchanged_files_are_not_rewritten(tmp_path):
    path = tmp_path / "a.h"
    assert generate.write_files([(path, "x")]) == [path]
    mtime = path.stat().st_mtime_ns
    assert generate.write_files([(path, "x")]) == []
    assert path.stat().st_mtime_ns == mtime


WRITER = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from dispatchkit.generate import write_files
out, me, rounds = Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
texts = [Path(p).read_text() for p in sys.argv[5:]]
for i in range(rounds):
    t = texts[(i + me) % len(texts)]
    write_files([(out / "_cpu_dispatch.h", t), (out / "dispatch_config.json", t)])
"""

READER = """
import os, sys, time
from pathlib import Path
out, done = Path(sys.argv[1]), Path(sys.argv[2])
valid = {Path(p).read_text() for p in sys.argv[3:]}
reads = bad = 0
while not done.exists():
    for name in ("_cpu_dispatch.h", "dispatch_config.json"):
        try:
            text = (out / name).read_text()
        except FileNotFoundError:
            continue
        reads += 1
        bad += text not in valid
print(reads, bad)
"""


def test_concurrent_writers_never_show_a_reader_a_torn_file(tmp_path):
    # A fixed `<name>.tmp` shared by all writers gave 4% torn reads with 4 writers.
    out = tmp_path / "out"
    contents = []
    for k in range(3):
        path = tmp_path / f"content{k}.txt"
        path.write_text(json.dumps({"set": k, "pad": [str(k) * 64] * (2000 + 1000 * k)}))
        contents.append(str(path))
    done = tmp_path / "done"
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(out), str(done), *contents],
                                stdout=subprocess.PIPE, text=True) for _ in range(2)]
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(TOOLS), str(out), str(me),
                                 "150", *contents]) for me in range(4)]
    try:
        assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    finally:
        done.write_text("")
        results = [r.communicate(timeout=60)[0].split() for r in readers]
    reads = sum(int(r[0]) for r in results)
    torn = sum(int(r[1]) for r in results)
    print(f"{reads} reads during 4 x 150 writes, {torn} torn")
    assert reads > 0 and torn == 0
    assert sorted(p.name for p in out.iterdir()) == ["_cpu_dispatch.h", "dispatch_config.json"]


# -- 4. config and cache files with wrong types -----------------------------------------

@pytest.fixture
def config_dict(gcc_config):
    return json.loads(gcc_config.to_json())


@needs_gcc
@pytest.mark.parametrize("change, message", [
    ({"baseline": 42}, "'baseline' must be a list of strings, got a number"),
    ({"baseline": ["SSE", None]}, "'baseline' must be a list of strings, got a list"),
    ({"arch": "vax"}, "'arch' is 'vax', not one of x86_64"),
    ({"arch": ["x86_64"]}, "'arch' must be a string, got a list"),
    ({"dispatch": ["AVX2", "NOPE"]}, "'dispatch' names 'NOPE', not a feature of x86_64"),
    ({"dispatch_flags": {"AVX2": "-mavx2"}}, "'dispatch_flags' must be an object of lists"),
    ({"unsupported": {"AVX2": 42}}, "'unsupported' must be an object of strings, got an obj"),
    ({"skipped": [1]}, "'skipped' must be a list of objects of strings"),
    ({"baseline_flags": ["-msse\tx"]}, "'-msse\\tx' is not printable text"),
    ({"unsupported": {"AVX2": "no\nnote\tinjected"}}, "is not printable text"),
    ({"surprise": 1}, "unknown key 'surprise'"),
    ({"compiler_family": None}, "'compiler_family' must be a string, got null"),
])
def test_a_config_with_wrong_types_is_an_error_naming_file_and_field(config_dict, tmp_path,
                                                                     change, message):
    config_dict.update(change)
    path = tmp_path / "dispatch_config.json"
    path.write_text(json.dumps(config_dict))
    with pytest.raises(DispatchError) as info:
        BuildConfig.load(path)
    assert info.value.where == str(path)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@needs_gcc
def test_a_config_missing_a_field_is_an_error(config_dict, tmp_path):
    del config_dict["dispatch"]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config_dict))
    with pytest.raises(DispatchError, match="'dispatch' is missing"):
        BuildConfig.load(path)


@pytest.mark.parametrize("text", ["[" * 100_000, '{"arch": ' * 50_000, "1e999999",
                                  "9" * 10_000, '"\\ud800"'],
                         ids=["deep-list", "deep-object", "inf", "huge-int", "surrogate"])
def test_a_pathological_config_is_an_error_not_a_traceback(tmp_path, text):
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(DispatchError, match="cannot read build configuration"):
        BuildConfig.load(path)


@needs_gcc
def test_meson_source_with_a_corrupt_config_is_one_line(cli, config_dict, tmp_path):
    config_dict["dispatch_flags"] = {"AVX2": [1]}
    cfg = tmp_path / "dispatch_config.json"
    cfg.write_text(json.dumps(config_dict))
    src = tmp_path / "k.dispatch.c"
    src.write_text(SOURCE)
    proc = cli(["meson-source", str(src), "--config", str(cfg), "--outdir", str(tmp_path)])
    one_clean_error(proc, str(cfg), "'dispatch_flags'")


def copied_cache(cache_dir: Path, tmp_path: Path) -> Path:
    """A copy of the session's probe cache; returns the path of gcc's file in it."""
    dest = tmp_path / "cache"
    shutil.copytree(cache_dir, dest)
    path = Probe(["gcc"], [], dest)._cache_path
    assert path is not None and path.is_file()
    return path


@needs_gcc
def test_a_cache_entry_of_the_wrong_type_is_a_miss_and_rewritten(cache_dir, gcc_config,
                                                                 tmp_path):
    path = copied_cache(cache_dir, tmp_path)
    data = json.loads(path.read_text())
    compiles = sorted(k for k in data if k.startswith("compile "))[:3]
    data[compiles[0]] = 42              # read as "compiler lacks it (42)" before
    data[compiles[1]] = ["not", "str"]
    data[compiles[2]] = "error: two\nlines"
    macros = next(k for k in data if k.startswith("macros"))
    data[macros] = {"__x86_64__": 1}
    path.write_text(json.dumps(data))
    # exhaustive: per-feature answers are what is asked again (the union
    # probe's own entry: test_a_union_cache_entry_of_the_wrong_type_is_a_miss)
    cfg = configure("gcc", "", "min", "max -xop -fma4", path.parent, exhaustive=True)
    assert cfg == gcc_config
    fixed = json.loads(path.read_text())
    assert all(fixed[k] == "" for k in compiles)
    assert all(isinstance(v, str) for v in fixed[macros].values())


@needs_gcc
@pytest.mark.parametrize("bad", [42, ["not", "str"], "error: two\nlines"])
def test_a_union_cache_entry_of_the_wrong_type_is_a_miss_and_rewritten(
        tmp_path, gcc_config, bad):
    cfg = configure("gcc", "", "min", "max -xop -fma4", tmp_path)  # union only
    (path,) = tmp_path.glob("probe-*.json")
    data = json.loads(path.read_text())
    (union,) = [k for k in data if k.startswith("union ")]
    assert not any(k.startswith("compile ") for k in data)
    data[union] = bad
    path.write_text(json.dumps(data))
    assert configure("gcc", "", "min", "max -xop -fma4", tmp_path) == cfg == gcc_config
    assert json.loads(path.read_text())[union] == ""


@needs_gcc
@pytest.mark.parametrize("text", ["[]", "[" * 100_000, "\xff", '{"macros ": 7}'],
                         ids=["list", "deep-list", "not-utf8", "macros-not-an-object"])
def test_a_corrupt_cache_file_is_ignored_and_rewritten(cache_dir, gcc_config, tmp_path, text):
    path = copied_cache(cache_dir, tmp_path)
    path.write_text(text, encoding="latin-1")
    probe = Probe(["gcc"], [], path.parent)
    assert "__x86_64__" in probe.macros()  # asked again, not read from the bad file
    probe.save()
    data = json.loads(path.read_text())
    assert isinstance(data, dict) and "__x86_64__" in data["macros "]


@needs_gcc
def test_a_cache_path_that_is_a_directory_costs_only_speed(cache_dir, gcc_config, tmp_path):
    path = copied_cache(cache_dir, tmp_path)
    path.unlink()
    path.mkdir()
    probe = Probe(["gcc"], [], path.parent)
    assert "__x86_64__" in probe.macros()
    probe.save()
    assert not [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]


@needs_gcc
def test_a_compiler_printing_bytes_that_are_not_utf8_is_not_a_traceback(cli, tmp_path):
    cc = tmp_path / "cc"
    cc.write_text("#!/bin/sh\nprintf 'error: \\377\\376 no\\n' >&2\nexit 1\n")
    cc.chmod(0o755)
    proc = cli(["report", "--cc", str(cc), "--no-cache"])
    one_clean_error(proc, "failed")


# -- 5. source names the generated files cannot carry ----------------------------------

@pytest.fixture
def built(cli, gcc_args, tmp_path) -> Path:
    out = tmp_path / "build"
    assert cli(["configure", *gcc_args, "--outdir", str(out)]).returncode == 0
    return out / "dispatch_config.json"


@needs_gcc
@pytest.mark.parametrize("name, shown", [
    ("a\tb.dispatch.c", "\\t"), ("a\nb.dispatch.c", "\\n"), ('a"b.dispatch.c', "'\"'"),
    ("a\\b.dispatch.c", "'\\\\'"), ("a??=b.dispatch.c", "'??'"), ("a\x1bb.dispatch.c", "\\x1b"),
    ("a\rb.dispatch.c", "\\r"), ("a\u2028b.dispatch.c", "\\u2028"),
])
def test_an_unusable_source_name_is_refused_naming_it(cli, built, tmp_path, name, shown):
    src = tmp_path / name
    src.write_text(SOURCE)
    out = tmp_path / "out"
    for args in (["meson-source", str(src), "--config", str(built), "--outdir", str(out)],
                 ["wrapper", str(src), "avx2", "--config", str(built)]):
        proc = cli(args)
        line = one_clean_error(proc, "unusable source", shown)
        assert proc.stdout == ""
    assert "b.dispatch.c" in line
    assert not out.exists()


@needs_gcc
def test_a_source_in_a_directory_with_a_tab_is_refused(cli, built, tmp_path):
    src = tmp_path / "we\tird" / "k.dispatch.c"
    src.parent.mkdir()
    src.write_text(SOURCE)
    proc = cli(["meson-source", str(src), "--config", str(built), "--outdir", str(tmp_path)])
    one_clean_error(proc, "unusable source path", "we\\tird")


@needs_gcc
def test_a_source_name_that_is_not_utf8_is_refused(built, tmp_path):
    raw = os.fsencode(tmp_path) + b"/k\xff.dispatch.c"
    with open(raw, "w") as fh:
        fh.write(SOURCE)
    proc = subprocess.run([sys.executable, str(TOOLS / "dispatchgen"), "meson-source", raw,
                           "--config", str(built), "--outdir", str(tmp_path / "out")],
                          capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    one_clean_error(proc, "unusable source path", "\\udcff")


@needs_gcc
def test_a_source_name_with_spaces_and_accents_is_fine(cli, built, tmp_path):
    src = tmp_path / "my kernel é.dispatch.c"
    src.write_text(SOURCE)
    out = tmp_path / "out"
    proc = cli(["meson-source", str(src), "--config", str(built), "--outdir", str(out)])
    assert proc.returncode == 0, proc.stderr
    fields = [ln.split("\t") for ln in proc.stdout.splitlines()]
    assert ["baseline", "my kernel é_dispatch_c_baseline", str(src.resolve())] == \
        next(f for f in fields if f[0] == "baseline")[:3]
    proc = cli(["wrapper", str(src), "avx2", "--config", str(built)])
    assert proc.returncode == 0 and '#include "my kernel é.dispatch.c"' in proc.stdout


def test_every_error_is_one_printable_line():
    err = DispatchError("unknown target 'a\x1bb'", "dir\nname.c:3")
    assert str(err) == "dir\\nname.c:3: unknown target 'a\\x1bb'"


def test_the_unusable_name_check_is_silent_for_ordinary_names():
    generate.check_source_path(Path("sources/kernels/add-1.dispatch.c"))
    generate.check_source_path(Path("a?b??.c"))


# -- files that never end ---------------------------------------------------------

needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")


@needs_dev_zero
@pytest.mark.parametrize("args,what", [
    (["targets", "--no-cache", "/dev/zero"], "source"),
    (["targets", "--no-cache", "--groups", "/dev/zero", "SRC"], "target groups"),
    (["meson-sources", "--config", "/dev/zero", "--outdir", "OUT", "SRC"],
     "build configuration"),
    (["meson-variants", "--config", "/dev/zero", "--outdir", "OUT", "/dev/zero"],
     "build configuration"),
], ids=["source", "groups", "config", "variants-config"])
def test_an_endless_input_is_one_error_not_a_process_the_kernel_kills(cli, tmp_path, args, what):
    """Every file the CLI reads is read with a bound (dispatchkit/inputs.py):
    /dev/zero (or a FIFO that never ends) grew the process until it was
    killed (rc 137; found by fuzzing). Now: one line naming the file."""
    src = tmp_path / "k.dispatch.c"
    src.write_text(SOURCE)
    args = [str(src) if a == "SRC" else str(tmp_path / "out") if a == "OUT" else a for a in args]
    # refused before a byte is read (issue 49), the 64 MiB bound behind it
    one_clean_error(cli(args, timeout=120), "/dev/zero", f"cannot read {what}",
                    "it is a character device, not a regular file")


def test_read_input_names_the_file_for_each_failure(tmp_path):
    from dispatchkit.inputs import read_input
    big = tmp_path / "big.c"
    big.write_bytes(b"x" * 1001)
    with pytest.raises(DispatchError, match="longer than") as info:
        read_input(big, "source", limit=1000)
    assert info.value.where == str(big)
    assert read_input(big, "source", limit=1001) == "x" * 1001
    bad = tmp_path / "bad.c"
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(DispatchError, match="cannot read source: 'utf-8' codec"):
        read_input(bad, "source")
    with pytest.raises(DispatchError, match="cannot read variants file: .*No such file"):
        read_input(tmp_path / "missing.ini", "variants file")


def test_a_directory_or_an_unreadable_file_is_one_error_naming_it(tmp_path):
    """Fuzzing left these two untried (its session ran as root)."""
    from dispatchkit.inputs import read_input
    with pytest.raises(DispatchError, match="cannot read source: it is a directory") as info:
        read_input(tmp_path, "source")
    assert info.value.where == str(tmp_path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads a file whatever its mode")
def test_an_unreadable_source_is_one_error_naming_it(cli, tmp_path):
    src = tmp_path / "k.dispatch.c"
    src.write_text(SOURCE)
    src.chmod(0)
    one_clean_error(cli(["targets", "--no-cache", str(src)]), str(src), "cannot read source",
                    "Permission denied")


# -- issue 35: outputs never written through a planted link --------------------------------

def _files(root: Path, files: dict) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _meson(cli, gcc_args, root: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return cli(["meson", *gcc_args, "--outdir", str(root / "out"), *args], cwd=root, **kwargs)


def _nothing_written(root: Path) -> None:
    assert not (root / "out").exists(), sorted(p.name for p in (root / "out").rglob("*"))


@needs_gcc
def test_a_link_where_a_header_goes_is_replaced_not_written_through(cli, gcc_args, tmp_path):
    _files(tmp_path, {"k.dispatch.c": SOURCE, "victim": "mine\n", "out/.keep": ""})
    (tmp_path / "victim").chmod(0o700)
    (tmp_path / "out" / "k.dispatch.h").symlink_to("../victim")
    proc = _meson(cli, gcc_args, tmp_path, "--name", "prog", "--dispatch", "k.dispatch.c")
    assert proc.returncode == 0, proc.stderr
    header = tmp_path / "out" / "k.dispatch.h"
    assert not header.is_symlink() and "Generated by dispatchgen" in header.read_text()
    assert (tmp_path / "victim").read_text() == "mine\n"
    assert (header.stat().st_mode & 0o777) == (0o666 & ~_umask())  # not the victim's 0700


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@needs_gcc
@pytest.mark.parametrize("kind", ["fifo", "link to a fifo", "link to /dev/zero"])
def test_a_fifo_or_device_where_a_header_goes_is_replaced_not_read(cli, gcc_args, tmp_path, kind):
    """A FIFO where an output goes hung the build (opened to compare), a link
    to /dev/zero grew it until the kernel killed it (read to the end)."""
    if kind == "link to /dev/zero" and not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    _files(tmp_path, {"k.dispatch.c": SOURCE, "out/.keep": ""})
    header = tmp_path / "out" / "k.dispatch.h"
    if kind == "fifo":
        os.mkfifo(header)
    elif kind == "link to a fifo":
        os.mkfifo(tmp_path / "fifo")
        header.symlink_to("../fifo")
    else:
        header.symlink_to("/dev/zero")
    proc = _meson(cli, gcc_args, tmp_path, "--name", "prog", "--dispatch", "k.dispatch.c",
                  timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert header.is_file() and not header.is_symlink()


@needs_gcc
def test_a_linked_configuration_folder_is_refused(cli, gcc_args, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "dispatch").symlink_to("../elsewhere")
    proc = _meson(cli, gcc_args, tmp_path, "--name", "prog")
    one_clean_error(proc, f"{tmp_path / 'out' / 'dispatch'}: is a symbolic link")
    assert list((tmp_path / "elsewhere").iterdir()) == []


# -- issue 35, 3: one path, one output ----------------------------------------------------
# Note [One path, one output] in generate.py: two inputs whose outputs share a
# path, or an output that would replace an input, are one line naming both.

VARIANTS = "[library]\nname = {name}\n[{section}]\nsources = {src}\nf = f_{section}\n"


COLLISIONS = {
    # each: the project's files, the arguments, what the line names
    "two variants files with one name": (
        {"a.ini": VARIANTS.format(name="mylib", section="baseline", src="p.c"),
         "b.ini": VARIANTS.format(name="mylib", section="avx2", src="v.c"), "p.c": "", "v.c": ""},
        ["--variants", "a.ini", "b.ini"],
        ["a.ini:2 ([library] name = mylib)", "b.ini:2 ([library] name = mylib)",
         "would both generate mylib_dispatch.h in"]),
    "one variants file twice": (
        {"a.ini": VARIANTS.format(name="mylib", section="avx2", src="v.c"), "v.c": ""},
        ["--variants", "a.ini", "a.ini"],
        ["a.ini:2 ([library] name = mylib) is named twice (both would generate "
         "mylib_dispatch.h in"]),
    "a dispatchable source beside a variants library": (
        {"mylib_dispatch.c": SOURCE, "a.ini": VARIANTS.format(name="mylib", section="avx2",
                                                              src="v.c"), "v.c": ""},
        ["--dispatch", "mylib_dispatch.c", "--variants", "a.ini"],
        ["--dispatch mylib_dispatch.c and a.ini:2 ([library] name = mylib) would both "
         "generate mylib_dispatch.h in"]),
    "two dispatchable sources of one name in two folders": (
        {"a/k.dispatch.c": SOURCE, "b/k.dispatch.c": SOURCE},
        ["--dispatch", "a/k.dispatch.c", "b/k.dispatch.c"],
        ["a/k.dispatch.c and b/k.dispatch.c would both generate k.dispatch.h in"]),
    "a C and a C++ dispatchable source of one stem": (
        {"k.dispatch.c": SOURCE, "k.dispatch.cpp": SOURCE},
        ["--dispatch", "k.dispatch.c", "k.dispatch.cpp"],
        ["k.dispatch.c and k.dispatch.cpp would both generate k.dispatch.h in"]),
    "one dispatchable source twice": (
        {"k.dispatch.c": SOURCE}, ["--dispatch", "k.dispatch.c", "./k.dispatch.c"],
        ["k.dispatch.c is named twice (both would generate k.dispatch.h in"]),
    "two dispatchable sources making one library": (
        {"k.dispatch.c": SOURCE, "k_dispatch.c": SOURCE},
        ["--dispatch", "k.dispatch.c", "k_dispatch.c"],
        ["k.dispatch.c and k_dispatch.c", "static library 'k_dispatch_c_AVX2'"]),
    "a dispatchable source and a variants file making one library": (
        {"k.dispatch.c": SOURCE, "a.ini": VARIANTS.format(name="k_dispatch_c",
                                                          section="baseline", src="p.c"),
         "p.c": ""},
        ["--dispatch", "k.dispatch.c", "--variants", "a.ini"],
        ["--dispatch k.dispatch.c", "a.ini:2 ([library] name = k_dispatch_c)",
         "static library 'k_dispatch_c_baseline'"]),
    # an output where an input is: each kind of file `dispatchgen meson` writes
    "a variants file where its own header goes": (
        {"out/mylib_dispatch.h": VARIANTS.format(name="mylib", section="avx2", src="v.c"),
         "out/v.c": ""},
        ["--variants", "out/mylib_dispatch.h"],
        ["out/mylib_dispatch.h:2 ([library] name = mylib) would generate mylib_dispatch.h",
         "which is --variants out/mylib_dispatch.h itself"]),
    "a groups file where a source's header goes": (
        {"k.dispatch.c": SOURCE, "out/k.dispatch.h": "[groups]\n"},
        ["--dispatch", "k.dispatch.c", "--groups", "out/k.dispatch.h"],
        ["k.dispatch.c would generate k.dispatch.h",
         "which is the groups file out/k.dispatch.h itself"]),
    "a module source where the version script goes": (
        {"out/_mod.exports": "int y;\n"},
        ["--sources", "out/_mod.exports"],
        ["--module pkg._mod would generate _mod.exports",
         "which is --sources out/_mod.exports itself"]),
    "a groups file where the configuration goes": (
        {"k.dispatch.c": SOURCE, "out/dispatch/_cpu_dispatch.h": "[groups]\n"},
        ["--dispatch", "k.dispatch.c", "--groups", "out/dispatch/_cpu_dispatch.h"],
        ["the build's configuration would generate _cpu_dispatch.h",
         "which is --groups out/dispatch/_cpu_dispatch.h itself"]),
    "a variant's source where the header goes": (
        {"out/a.ini": VARIANTS.format(name="mylib", section="avx2", src="mylib_dispatch.h"),
         "out/mylib_dispatch.h": ""},
        ["--variants", "out/a.ini"],
        ["out/a.ini:2 ([library] name = mylib) would generate mylib_dispatch.h",
         "mylib_dispatch.h of out/a.ini"]),
}


@needs_gcc
@pytest.mark.parametrize("case", list(COLLISIONS))
def test_two_outputs_with_one_path_are_one_error_naming_both_inputs(cli, gcc_args, tmp_path,
                                                                    case):
    """Two variants files named mylib, or `--dispatch mylib_dispatch.c` beside
    a variants file named mylib, both wrote mylib_dispatch.h with status 0:
    the first file's variants were compiled and never chosen."""
    files, args, words = COLLISIONS[case]
    _files(tmp_path, files)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    proc = _meson(cli, gcc_args, tmp_path, "--module", "pkg._mod", *args)
    one_clean_error(proc, *words)
    assert proc.stdout == ""
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # nothing written, no input replaced


@needs_gcc
@pytest.mark.parametrize("args, words", [
    (["SRC", "SUB"], ["k.dispatch.c and sub/k.dispatch.c would both generate k.dispatch.h"]),
    (["SRC", "UNDERSCORED"], ["k_dispatch.c", "static library 'k_dispatch_c_AVX2'"]),
])
def test_meson_sources_refuses_two_sources_with_one_output(cli, built, tmp_path, args, words):
    _files(tmp_path, {"k.dispatch.c": SOURCE, "sub/k.dispatch.c": SOURCE, "k_dispatch.c": SOURCE})
    names = {"SRC": "k.dispatch.c", "SUB": "sub/k.dispatch.c", "UNDERSCORED": "k_dispatch.c"}
    proc = cli(["meson-sources", *[names[a] for a in args], "--config", str(built),
                "--outdir", str(tmp_path / "out")], cwd=tmp_path)
    one_clean_error(proc, *words)
    _nothing_written(tmp_path)


@needs_gcc
def test_meson_variants_refuses_to_replace_its_own_variants_file(cli, built, tmp_path):
    ini = tmp_path / "mylib_dispatch.h"
    _files(tmp_path, {ini.name: VARIANTS.format(name="mylib", section="avx2", src="v.c"),
                      "v.c": ""})
    proc = cli(["meson-variants", str(ini), "--config", str(built), "--outdir", str(tmp_path)])
    one_clean_error(proc, "would generate mylib_dispatch.h",
                    f"which is the variants file {ini} itself")
    assert ini.read_text().startswith("[library]")


def test_check_outputs_compares_the_entries_a_write_replaces(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real")
    with pytest.raises(DispatchError, match="a.c and b.c would both generate x.h in"):
        generate.check_outputs([(tmp_path / "real" / "x.h", "a.c"),
                                (tmp_path / "alias" / "x.h", "b.c")])
    # a link where an output goes is replaced, not written through: no clash
    (tmp_path / "real" / "link.h").symlink_to("input.ini")
    generate.check_outputs([(tmp_path / "real" / "link.h", "a.c")],
                           [(tmp_path / "real" / "input.ini", "the groups file")])


# -- issue 35, 6a: a missing source is named now, not by meson later -----------------------

@needs_gcc
@pytest.mark.parametrize("args, words", [
    (["--sources", "mod.c", "gone.c"], ["gone.c: does not exist (named by --sources)"]),
    (["--sources", "folder"], ["folder: is not a file (named by --sources)"]),
    (["--variants", "lib.ini"], ["lib.ini:8: [avx2] names the source 'gone.c', which does not "
                                 "exist"]),
])
def test_a_missing_source_is_one_error_naming_it(cli, gcc_args, tmp_path, args, words):
    _files(tmp_path, {"mod.c": "int y;\n", "folder/x": "",
                      "lib.ini": "[library]\nname = lib\n[baseline]\nsources = p.c\nf = f_p\n"
                                 "[avx2]\nsources = v.c\n  gone.c\nf = f_v\n",
                      "p.c": "", "v.c": ""})
    one_clean_error(_meson(cli, gcc_args, tmp_path, "--name", "prog", *args), *words)
    _nothing_written(tmp_path)


@needs_gcc
def test_meson_variants_names_a_missing_source_and_its_line(cli, built, tmp_path):
    _files(tmp_path, {"lib.ini": "[library]\nname = lib\n\n[avx2]\nsources[asm] = v.S\n"
                                 "sources[!asm] = v.c\nf = f_v\n", "v.S": ""})
    args = ["meson-variants", str(tmp_path / "lib.ini"), "--config", str(built),
            "--outdir", str(tmp_path / "out")]
    one_clean_error(cli([*args, "--option", "asm=false"]),
                    f"{tmp_path / 'lib.ini'}:6: [avx2] names the source 'v.c', which does "
                    "not exist")
    _nothing_written(tmp_path)
    proc = cli([*args, "--option", "asm=true"])  # v.c is not used: no error
    assert proc.returncode == 0, proc.stderr


# -- issue 35, 4 and 5: dispatch-config --vendor never follows a link ----------------------

def _vendor(tmp: Path, dest: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dispatchkit.dispatch_config", "--vendor", dest],
                          capture_output=True, text=True, cwd=tmp, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(TOOLS)})


def _vendor_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dispatch-config: error: "), proc.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _state(root: Path) -> dict:
    """Every entry under root: links as their text, files as bytes and mode."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                out[p] = ("link", os.readlink(p))
            elif p.is_file():
                out[p] = (p.read_bytes(), p.stat().st_mode)
            else:
                out[p] = ("dir",)
    return out


PLANTED = {  # where, what it points to (relative to where), the word the error names
    "a file link (the launcher)": ("d/dispatchgen", "../victim"),
    "a file link (the marker)": ("d/.dispatchgen-vendored", "../victim"),
    "a dir link to a folder outside": ("d/dispatchkit", "../outside"),
    "a dangling link": ("d/dispatchgen", "../nothere"),
    "a dangling marker": ("d/.dispatchgen-vendored", "../nothere"),
    "a dir link deeper inside": ("d/dispatchkit/cpu", "../../outside"),
    "a file link deeper inside": ("d/dispatchkit/cpu/cpu_features.c", "../../../victim"),
    "a link in a folder it never writes": ("d/extra/x", "../../victim"),
}


@pytest.mark.parametrize("case", list(PLANTED))
def test_vendor_again_refuses_a_link_planted_in_its_folder(tmp_path, case):
    """`--vendor d`, `ln -sf ../victim d/dispatchgen`, `--vendor d` overwrote
    victim (mode 755); a linked marker got the version written into its
    target; a linked d/dispatchkit received the package outside d."""
    assert _vendor(tmp_path, "d").returncode == 0
    where, to = PLANTED[case]
    link = tmp_path / where
    if link.is_dir() and not link.is_symlink():
        shutil.rmtree(link)
    elif os.path.lexists(link):
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(to)
    (tmp_path / "victim").write_text("mine\n")
    (tmp_path / "victim").chmod(0o600)
    (tmp_path / "outside").mkdir()
    before = _state(tmp_path)
    _vendor_error(_vendor(tmp_path, "d"), f"{where}: is a symbolic link (to {to})")
    assert _state(tmp_path) == before
    assert not (tmp_path / "nothere").exists()


@pytest.mark.parametrize("kind", ["to a fresh folder", "to a vendored folder", "dangling",
                                  "to itself"])
def test_vendor_refuses_a_destination_that_is_a_link(tmp_path, kind):
    (tmp_path / "real").mkdir()
    if kind == "to a vendored folder":
        assert _vendor(tmp_path, "real").returncode == 0
    to = {"dangling": "nothere", "to itself": "d"}.get(kind, "real")
    (tmp_path / "d").symlink_to(to)
    before = _state(tmp_path)
    _vendor_error(_vendor(tmp_path, "d"), "d: is a symbolic link")
    assert _state(tmp_path) == before


def test_vendor_below_a_link_loop_is_one_line(tmp_path):
    (tmp_path / "loop").symlink_to("loop")
    _vendor_error(_vendor(tmp_path, "loop/d"), "loop/d: cannot resolve the path")


def test_vendor_makes_a_deep_destination_without_recursion(tmp_path):
    """mkdir(parents=True) recursed once per level: RecursionError past ~1000."""
    dest = "/".join(["a"] * 1200)
    try:
        proc = _vendor(tmp_path, dest)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert os.access(tmp_path / dest / "dispatchgen", os.X_OK)
        proc = _vendor(tmp_path, dest)  # and replaces its copy there
        assert proc.returncode == 0, proc.stderr[-2000:]
    finally:
        _remove_chain(tmp_path, dest)


@pytest.mark.parametrize("levels", [2000, 2100])
def test_vendor_into_a_path_too_long_for_the_system_is_one_line(tmp_path, levels):
    """2000 levels: a RecursionError from mkdir(parents=True); the copy's
    paths (absolute) are beyond Linux's 4096 bytes. 2100: the name itself is."""
    dest = "/".join(["a"] * levels)
    line = _vendor_error(_vendor(tmp_path, dest))
    assert "too deep" in line or "File name too long" in line
    assert len(line) < 400
    assert not (tmp_path / "a").exists()


# -- issue 35, 6b: the CPU runtime escapes a bad env token ---------------------------------

ENV_MAIN = r"""
#include <stdio.h>
#include "dispatch/cpu_features.h"
int main(void)
{
    if (dispatch_cpu_init() != 0) {
        fputs(dispatch_cpu_error(), stdout);
        return 1;
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def cpu_runtime_program(tmp_path_factory) -> Path:
    """The toolkit's CPU runtime, compiled by cc alone (as tests/test_cpu_runtime_c.py
    does), with a main that prints dispatch_cpu_init()'s error."""
    if CC is None:
        pytest.skip("no C compiler found")
    work = tmp_path_factory.mktemp("cpu-env-escape")
    (work / "main.c").write_text(ENV_MAIN)
    return compile_program(CC, write_headers(work), work / "main.c", work / "env_error", "-O1")


@pytest.mark.parametrize("token, shown", [
    (b"AVX2\x1b]0;pwned\x07x", b"AVX2\\x1b]0;pwned\\x07x"),
    (b"\x1b[2J\x1b[31mAVX", b"\\x1b[2J\\x1b[31mAVX"),
    (b"a\x7fb", b"a\\x7fb"),
    (b"AVX2\xff", b"AVX2\\xff"),                       # not UTF-8
    (b"x\xc2\x9b31m", b"x\\x9b31m"),                   # U+009B, the C1 CSI
    (b"\xe9t\xc3\xa9", b"\\xe9t\xc3\xa9"),             # Latin-1 byte, then a real e-acute
    (b"back\\x1bslash", b"back\\\\x1bslash"),          # a backslash is not an escape
    (b"\xed\xa0\x80s", b"\\xed\\xa0\\x80s"),           # an encoded surrogate is not UTF-8
    ("é".encode() * 40, "é".encode() * 32),            # cut at 64 bytes, on a boundary
])
def test_a_bad_env_token_reaches_the_terminal_escaped(cpu_runtime_program, token, shown):
    """The runtime copied the raw bytes of an unknown name into its error, so
    an ESC sequence in DISPATCH_DISABLE_CPU_FEATURES reached the terminal."""
    env = {k: v for k, v in os.environb.items() if not k.startswith(b"DISPATCH_")}
    env[b"DISPATCH_DISABLE_CPU_FEATURES"] = token
    proc = subprocess.run([str(cpu_runtime_program)], env=env, capture_output=True, timeout=60)
    assert proc.returncode == 1, proc.stdout
    assert b"DISPATCH_DISABLE_CPU_FEATURES names '" + shown + b"', which is not a CPU feature" \
        in proc.stdout, proc.stdout
    quoted = proc.stdout.split(b"'")[1].decode("utf-8")  # well-formed, whatever came in
    assert quoted.isprintable(), quoted  # no C0, DEL or C1 control reaches the terminal


# -- issue 35: a deep --outdir or cache folder is made without recursion -------------------

def _remove_chain(root: Path, rel: str) -> None:
    """Remove root/rel, a chain of single folders deeper than shutil.rmtree
    (and pytest's cleanup) can recurse."""
    leaf = root / rel
    if leaf.exists():
        shutil.rmtree(leaf)
    while leaf != root:
        if leaf.exists():
            leaf.rmdir()
        leaf = leaf.parent


@needs_gcc
@pytest.mark.parametrize("what", ["--outdir", "--cache-dir"])
def test_a_1200_level_outdir_or_cache_dir_is_made_not_a_recursion_error(cli, tmp_path, what):
    """Path.mkdir(parents=True) recursed once per level: `configure --outdir`
    1200 folders deep was a RecursionError traceback."""
    deep = "/".join(["d"] * 1200)
    args = ["configure", "--cc", "gcc", "--cflags", "", "--outdir", "out",
            "--cache-dir", "cache", "--cpu-dispatch", "avx2"]
    args[args.index(what) + 1] = deep
    try:
        proc = cli(args, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        if what == "--outdir":
            assert (tmp_path / deep / "_cpu_dispatch.h").is_file()
        else:
            assert [p.suffix for p in (tmp_path / deep).iterdir()] == [".json"]
    finally:
        _remove_chain(tmp_path, deep)
