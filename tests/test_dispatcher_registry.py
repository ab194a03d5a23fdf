"""The dispatcher seen from Python: define/impl, errors, keys, fallthrough, TLS, tracer."""

import itertools
import subprocess
import sys
import threading

import pytest

import dispatch
from dispatch import library

_ids = itertools.count()


def fresh(schema_tail="(Tensor self) -> Tensor"):
    """A new operator name per test (registrations are process-wide)."""
    name = f"test_op{next(_ids)}"
    library.define(name + schema_tail)
    return name


def test_python_kernel_runs_for_cpu_tensors():
    name = fresh()
    library.impl(name, "CPU")(lambda self: self * 3)
    assert getattr(dispatch.ops, name)(dispatch.tensor([1, 2])).tolist() == [3, 6]


def test_missing_kernel_names_operator_key_and_available_keys():
    name = fresh()
    library.impl(name, "CPU")(lambda self: self)
    with pytest.raises(NotImplementedError,
                       match=rf"Could not run '{name}' with arguments from the 'Meta' backend\. "
                             rf"'{name}' is only available for these backends: \[CPU, Python \(fallthrough\), Tracer \(fallback\)\]"):
        getattr(dispatch.ops, name)(dispatch.empty(2, device="meta"))


def test_duplicate_define_names_both_sites():
    name = fresh()
    with pytest.raises(RuntimeError, match=rf"'{name}' is already defined: first registered at .*test_dispatcher_registry.py:\d+, registered again at .*test_dispatcher_registry.py:\d+"):
        library.define(name + "(Tensor self) -> Tensor")


def test_duplicate_impl_warns_and_replaces():
    name = fresh()
    library.impl(name, "CPU")(lambda self: self)
    with pytest.warns(UserWarning, match="Overriding a previously registered kernel"):
        library.impl(name, "CPU")(lambda self: self + 1)
    assert getattr(dispatch.ops, name)(dispatch.tensor([1])).tolist() == [2]


def test_bad_schema_is_a_value_error_with_the_column():
    with pytest.raises(ValueError, match=r"invalid schema .*: unknown type .* at column 7"):
        library.define("bad_x(Blob x) -> Tensor")


def test_impl_of_unknown_operator_is_an_error():
    with pytest.raises(ValueError, match="no operator named 'never_defined'"):
        library.impl("never_defined", "CPU")(lambda x: x)


def test_unknown_key_is_an_error():
    with pytest.raises(ValueError, match="unknown dispatch key 'GPU'"):
        library.impl("add.Tensor", "GPU")


def test_python_key_kernel_sees_calls_first_and_calls_below():
    name = fresh()
    seen = []
    library.impl(name, "CPU")(lambda self: self + 1)

    @library.impl(name, "Python")
    def wrapper(self):
        seen.append("python")
        return getattr(dispatch.ops, name)(self) * 10  # goes to CPU: Python is excluded

    with library.include_keys("Python"):
        out = getattr(dispatch.ops, name)(dispatch.tensor([1]))
    assert out.tolist() == [20] and seen == ["python"]


def test_fallthrough_skips_the_key():
    name = fresh()
    library.impl(name, "CPU")(lambda self: self)
    library.impl(name, "Python")(lambda self: pytest.fail("should be skipped"))
    with pytest.warns(UserWarning):
        library.fallthrough(name, "Python")
    with library.include_keys("Python"):
        assert getattr(dispatch.ops, name)(dispatch.tensor([5])).tolist() == [5]


def test_exclude_keys_removes_the_backend():
    with library.exclude_keys("CPU"), pytest.raises(NotImplementedError):
        dispatch.ops.neg(dispatch.tensor([1]))
    assert library.excluded_keys() == []


def test_tls_sets_are_per_thread():
    seen = []
    with library.include_keys("Tracer"):
        t = threading.Thread(target=lambda: seen.append(library.included_keys()))
        t.start()
        t.join()
        assert library.included_keys() == ["Tracer"]
    assert seen == [[]]


def test_tracer_records_calls_and_redispatches():
    a = dispatch.tensor([1.0, 2.0])
    with library.trace() as calls:
        r = dispatch.ops.sum(a * 2 + 1)
    assert calls == ["mul.Tensor", "add.Tensor", "sum"]
    assert r.item() == 8.0


def test_python_kernel_exception_propagates_unchanged():
    name = fresh()

    @library.impl(name, "CPU")
    def boom(self):
        raise KeyError("from the kernel")

    with pytest.raises(KeyError, match="from the kernel"):
        getattr(dispatch.ops, name)(dispatch.tensor([1]))


def test_meta_tensors_get_shapes_without_data():
    a = dispatch.empty(2, 1, 3, device="meta")
    b = dispatch.empty(4, 1, device="meta", dtype=dispatch.int32)
    r = a + b
    assert r.shape == (2, 4, 3) and r.device == "meta" and r.dtype is dispatch.float32
    assert dispatch.ops.sum(r, 1).shape == (2, 3)


def test_dump_table_shows_each_key_and_its_origin():
    name = fresh()
    library.impl(name, "CPU")(lambda self: self)
    table = getattr(dispatch.ops, name).dump_table()
    assert f"name: {name}" in table
    assert "CPU: kernel [" in table and "test_dispatcher_registry.py" in table
    assert "CUDA: missing" in table and "Tracer: fallback" in table


def test_overloads_resolve_by_argument_types():
    t = dispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert dispatch.ops.sum(t).item() == 10.0
    assert dispatch.ops.sum(t, 0).tolist() == [4.0, 6.0]
    assert dispatch.ops.sum(t, dim=1, keepdim=True).shape == (2, 1)


def test_bad_arguments_list_the_candidates():
    with pytest.raises(TypeError, match=r"sum\(\) received an invalid combination of arguments - got \(Tensor, str\)"):
        dispatch.ops.sum(dispatch.tensor([1]), "x")


def test_unknown_operator_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no operator named 'nope'"):
        dispatch.ops.nope


def test_registration_is_thread_safe():
    names = [f"threaded_op{next(_ids)}" for _ in range(32)]
    errors = []

    def work(n):
        try:
            library.define(n + "(Tensor self) -> Tensor")
            library.impl(n, "CPU")(lambda self: self)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for n in names:
        assert getattr(dispatch.ops, n)(dispatch.tensor([1])).tolist() == [1]


def test_package_level_operator_sees_an_overload_defined_after_its_first_use(tmp_path):
    """dispatch.<op> is kept as a module attribute after its first lookup;
    defining a new overload of that name drops it, so the next lookup
    resolves the new overload too. (In a child: the overload stays defined.)"""
    code = """
import dispatch
from dispatch import library
before = dispatch.abs
assert dispatch.abs is before  # the cached attribute
library.define("abs.registry_test_plus(Tensor self, int k) -> Tensor")
library.impl("abs.registry_test_plus", "CPU")(lambda x, k: dispatch.ops.abs(x) + k)
after = dispatch.abs
assert after is not before
assert len(after.overloads) == len(before.overloads) + 1
assert after(dispatch.tensor([-1.0, 2.0]), 1).tolist() == [2.0, 3.0]
assert after(dispatch.tensor([-1.0, 2.0])).tolist() == [1.0, 2.0]
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
