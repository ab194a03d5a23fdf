"""Check a narrow float dtype of an installed runtime through its public
interface against tools/narrow_float_ref.py, the pure-Python reference of its
format: the float recipe of tools/dtype_recipe.py runs it for float8_e4m3fn
on the scratch copy's build, and tests/test_dtype_recipe.py runs it for the
runtime's float16 and bfloat16 (which proves the check itself).

    python tools/narrow_float_check.py float8_e4m3fn --appended-after bfloat16

What "right" means (Note [Narrow floats] in sources/include/dispatch/dtype.h):
conversions round once to nearest even from the source value (a double is
not rounded to float32 first); every operator is the float32 operator on the
widened values, rounded once; reductions accumulate in float32 and round
once. Exactly-rounded float32 operators (add, sub, mul, div, sqrt, maximum,
...) are computed here with NumPy float32; exp and addcmul, whose float32
results are the runtime's own (its float32 exp and its order of addcmul's
operations), with the runtime's float32 operator on the widened values.
Bits are read and written through `Tensor.data_ptr()` (the runtime has no
view-as-dtype); NaNs compare as "a NaN" where the operator gives one (its
sign is the hardware's), bit for bit where a conversion gives one.
Exit status 0 and one line per group of checks; an AssertionError naming the
check otherwise.
"""

from __future__ import annotations

import argparse
import array
import ctypes
import math
import random
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from narrow_float_ref import FORMATS, Format  # noqa: E402

import numpy as np  # noqa: E402

import dispatch  # noqa: E402

F32 = np.float32


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", choices=sorted(FORMATS), help="the dtype to check")
    ap.add_argument("--appended-after", metavar="DTYPE",
                    help="the dtype its id must follow (the last of the list before it)")
    args = ap.parse_args(argv)
    Check(args.name, args.appended_after).run()
    return 0


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


class Check:
    def __init__(self, name: str, after: str | None) -> None:
        (e, m, nans), self.dl_code = FORMATS[name]
        self.name, self.after = name, after
        self.fmt = Format(e, m, nans)
        self.dt = getattr(dispatch, name)
        self.code = "B" if self.fmt.itemsize == 1 else "H"
        n = 1 << self.fmt.nbits
        # every pattern of an 8-bit format; a sample (and the edges) of a 16-bit one
        rng = random.Random(0)
        self.patterns = list(range(n)) if n <= 256 else sorted(
            set(rng.sample(range(n), 3000)) | {0, self.fmt.sign_bit, 1, self.fmt.max_bits,
                                               self.fmt.max_bits | self.fmt.sign_bit,
                                               self.fmt.nan, self.fmt.nan | self.fmt.sign_bit})
        self.finite = [b for b in self.patterns if math.isfinite(self.fmt.decode(b))]
        self.rng = rng
        self._encoded: dict[float, int] = {}

    # bits in and out, through data_ptr ------------------------------------------------
    def bits_of(self, t: dispatch.Tensor) -> list[int]:
        assert t.dtype is self.dt, ("the result's dtype", t.dtype, self.dt)
        t = t.contiguous()
        raw = ctypes.string_at(t.data_ptr(), t.numel() * self.fmt.itemsize)
        return list(array.array(self.code, raw))

    def from_bits(self, bits: list[int]) -> dispatch.Tensor:
        t = dispatch.empty(len(bits), dtype=self.dt)
        ctypes.memmove(t.data_ptr(), array.array(self.code, bits).tobytes(),
                       len(bits) * self.fmt.itemsize)
        return t

    def value(self, b: int) -> float:
        return self.fmt.decode(b)

    def same(self, got: list[int], want: list[int], what) -> None:
        """Bits equal, a NaN matching any NaN (an operator's NaN sign is the hardware's)."""
        assert len(got) == len(want), (what, len(got), len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            if self.fmt.is_nan(w) and self.fmt.is_nan(g):
                continue
            assert g == w, (what, i, hex(g), hex(w))

    def rounded(self, values) -> list[int]:
        cache = self._encoded
        out = []
        for v in values:
            v = float(v)
            b = cache.get(v) if v == v else None  # (NaNs are not keys: their signs differ)
            if b is None or (v == 0 and math.copysign(1, v) < 0):
                b = self.fmt.encode(v)
                if v == v and v != 0:
                    cache[v] = b
            out.append(b)
        return out

    # the checks -----------------------------------------------------------------------
    def run(self) -> None:
        for step in (self.facts, self.widening, self.rounding, self.casts, self.python_values,
                     self.binary_ops, self.unary_ops, self.scalars_and_in_place,
                     self.comparisons_and_where, self.reductions, self.promotion, self.printing,
                     self.dlpack):
            step()
            print(f"{self.name}: {step.__name__}: ok")
        print(f"{self.name}: every check holds")

    def facts(self) -> None:
        dt = self.dt
        assert dt.name == self.name and repr(dt) == f"dispatch.{self.name}"
        assert dt.itemsize == self.fmt.itemsize and dt.is_floating_point
        assert self.name in dispatch.__all__ and dispatch.tensor([1.0], dtype=self.name).dtype is dt
        if self.after is not None:  # appended: the ids before it are kept
            assert dt.num == getattr(dispatch, self.after).num + 1, ("appended", dt.num)
        if hasattr(np, self.name):  # NumPy has it (float16): its export
            assert dt.typestr.endswith(np.dtype(self.name).str[1:]), dt.typestr
            assert dispatch.tensor([1.5], dtype=dt).numpy().dtype == np.dtype(self.name)
        else:  # none: a TypeError that says to convert, never another dtype's bytes
            assert dt.typestr == "" and dt.format == "", (dt.typestr, dt.format)
            t = dispatch.tensor([1.0], dtype=dt)
            for what in (lambda: t.numpy(), lambda: t.__array_interface__, lambda: dt.numpy):
                try:
                    what()
                except TypeError as e:
                    assert self.name in str(e), e
                else:
                    raise AssertionError(("a NumPy export of", self.name))

    def widening(self) -> None:
        """Every pattern (a sample of 16-bit ones) to float32 and float64, exactly."""
        t = self.from_bits(self.patterns)
        assert self.bits_of(t) == self.patterns and self.bits_of(t.clone()) == self.patterns
        for wide in (dispatch.float32, dispatch.float64):
            got = t.to(wide).tolist()
            for b, g in zip(self.patterns, got):
                w = self.value(b)
                if math.isnan(w):  # a NaN keeps its sign
                    assert math.isnan(g) and math.copysign(1, g) == math.copysign(1, w), \
                        ("widening a NaN", wide, hex(b), g)
                else:
                    assert g == w and math.copysign(1, g) == math.copysign(1, w), \
                        ("widening", wide, hex(b), g, w)
        # float32 bit for bit: a NaN is a quiet NaN of its sign (fn: the canonical one)
        got32 = t.to(dispatch.float32).numpy().view(np.uint32).tolist()
        for b, g in zip(self.patterns, got32):
            w = self.value(b)
            if not math.isnan(w):
                assert g == f32_bits(w), ("float32 bits", hex(b), hex(g))
            elif self.fmt.nans == "FN":
                assert g == 0x7FC00000 | (0x80000000 if b & self.fmt.sign_bit else 0), \
                    ("float32 bits of NaN", hex(b), hex(g))
            else:
                sign = b >> (self.fmt.nbits - 1)
                assert g & 0x7F800000 == 0x7F800000 and g & 0x7FFFFF and g >> 31 == sign, \
                    ("float32 bits of NaN", hex(b), hex(g))
        # and back: every finite value is its own bits again
        back = t.to(dispatch.float32).to(self.dt)
        finite = set(self.finite)
        fin = [i for i, b in enumerate(self.patterns) if b in finite]
        got = self.bits_of(back)
        assert [got[i] for i in fin] == [self.patterns[i] for i in fin], "float32 round trip"
        assert all(self.fmt.is_nan(got[i]) for i, b in enumerate(self.patterns)
                   if self.fmt.is_nan(b)), "a NaN comes back a NaN"

    def _doubles(self) -> list[float]:
        """Ties between neighbours, just off them (where a float32 step first
        would round the wrong way), subnormals, the largest value and beyond,
        inf, NaN, signed zeros, and random doubles of the format's range."""
        fmt, rng, xs = self.fmt, self.rng, []
        pos = sorted({b & (fmt.sign_bit - 1) for b in self.finite})
        for b in pos:
            lo = fmt.decode(b)
            hi = fmt.decode(b + 1) if b < fmt.max_bits else 2 * fmt.max - fmt.decode(b - 1)
            tie = (lo + hi) / 2
            xs += [tie, tie * (1 + 2.0**-40), tie * (1 - 2.0**-40), lo, (3 * lo + hi) / 4]
        xs += [fmt.max, fmt.max * (1 + 2.0**-30), math.inf, math.nan, 0.0, -0.0, 1e300, 1e-300,
               5e-324, 2.0**-200]
        lo_exp, hi_exp = 1 - fmt.bias - fmt.m - 2, fmt.bias + 2
        xs += [math.ldexp(rng.random() + 0.5, rng.randint(lo_exp, hi_exp)) for _ in range(2000)]
        return xs + [-x for x in xs]

    def rounding(self) -> None:
        """float64 and float32 sources rounded once, and tensor() of Python floats."""
        xs = self._doubles()
        want = self.rounded(xs)
        d64 = dispatch.tensor(xs, dtype=dispatch.float64)
        assert self.bits_of(d64.to(self.dt)) == want, "float64 -> " + self.name
        assert self.bits_of(dispatch.tensor(xs, dtype=self.dt)) == want, "tensor(floats)"
        assert self.bits_of(dispatch.from_numpy(np.array(xs)).to(self.dt)) == want, "from_numpy"
        assert self.bits_of(dispatch.tensor(np.array(xs), dtype=self.dt)) == want, \
            "tensor(NumPy float64 data)"
        # float32: every value xs rounds to in float32, plus random float32 bit patterns
        with np.errstate(over="ignore"):
            x32 = np.array(xs, np.float64).astype(F32)
        rand = np.array([self.rng.getrandbits(32) for _ in range(4000)], np.uint32).view(F32)
        x32 = np.concatenate([x32, rand])
        got = self.bits_of(dispatch.from_numpy(x32).to(self.dt))
        self.same(got, self.rounded(x32.tolist()), "float32 -> " + self.name)
        # float16 and bfloat16 sources are exact in float32: rounded once from there
        for other in ("float16", "bfloat16"):
            if other == self.name:
                continue
            (oe, om, on), _ = FORMATS[other]
            ofmt = Format(oe, om, on)
            obits = list(range(0, 1 << 16, 7))
            src = dispatch.empty(len(obits), dtype=getattr(dispatch, other))
            ctypes.memmove(src.data_ptr(), array.array("H", obits).tobytes(), 2 * len(obits))
            self.same(self.bits_of(src.to(self.dt)),
                      self.rounded(ofmt.decode(b) for b in obits), f"{other} -> {self.name}")

    def casts(self) -> None:
        """To and from the other dtypes: to a float exactly (or rounded once by its
        format), to an integer as float32 would (finite values), from an integer once."""
        fin = self.from_bits(self.finite)
        vals = [self.value(b) for b in self.finite]
        for other in ("float16", "bfloat16"):
            if other == self.name:
                continue
            (oe, om, on), _ = FORMATS[other]
            ofmt = Format(oe, om, on)
            got = fin.to(getattr(dispatch, other)).tolist()
            assert got == [ofmt.decode(ofmt.encode(v)) for v in vals], f"{self.name} -> {other}"
        for other in ("bool", "int8", "uint8", "int16", "int32", "int64"):
            od = getattr(dispatch, other)
            assert fin.to(od).tolist() == fin.to(dispatch.float32).to(od).tolist(), \
                f"{self.name} -> {other} as float32 -> {other}"
        ints = [0, 1, -1, 3, 17, 100, 255, -128, 1000, 30000, 2**40 + 1, -(2**62)]
        got = self.bits_of(dispatch.tensor(ints, dtype=dispatch.int64).to(self.dt))
        assert got == self.rounded(ints), f"int64 -> {self.name}"
        got = self.bits_of(dispatch.tensor([True, False], dtype=dispatch.bool).to(self.dt))
        assert got == self.rounded([1.0, 0.0]), f"bool -> {self.name}"

    def python_values(self) -> None:
        """tolist, item, float(), tensor() of exact values and of NumPy data."""
        t = self.from_bits(self.patterns)
        for b, g in zip(self.patterns, t.tolist()):
            w = self.value(b)
            assert (math.isnan(g) and math.isnan(w)) or (g == w and isinstance(g, float)), \
                ("tolist", hex(b), g)
        for i in (0, len(self.patterns) // 3, len(self.patterns) - 1):
            w, g = self.value(self.patterns[i]), t[i].item()
            assert (math.isnan(g) and math.isnan(w)) or g == w, ("item", i, g, w)
        vals = [self.value(b) for b in self.finite]
        assert self.bits_of(dispatch.tensor(vals, dtype=self.dt)) == self.finite, "exact values"
        two = dispatch.tensor([[0.5, -2.0], [0.1, 3.0]], dtype=self.dt)
        assert two.shape == (2, 2) and two.tolist() == [
            [self.value(self.fmt.encode(v)) for v in row] for row in ([0.5, -2.0], [0.1, 3.0])]
        assert float(dispatch.tensor(0.1, dtype=self.dt)) == self.value(self.fmt.encode(0.1))

    def _operands(self, n: int, seed: int) -> tuple[list[int], list[int]]:
        """Every pair of patterns of an 8-bit format (NaNs included); n random pairs
        of a 16-bit one."""
        if len(self.patterns) == 1 << self.fmt.nbits and len(self.patterns) <= 256:
            return ([a for a in self.patterns for _ in self.patterns],
                    [b for _ in self.patterns for b in self.patterns])
        rng = random.Random(seed)
        return ([rng.choice(self.patterns) for _ in range(n)],
                [rng.choice(self.patterns) for _ in range(n)])

    def wide(self, bits: list[int]) -> np.ndarray:
        return np.array([self.value(b) for b in bits], np.float64).astype(F32)

    def binary_ops(self) -> None:
        a, b = self._operands(6000, 1)
        ta, tb = self.from_bits(a), self.from_bits(b)
        wa, wb = self.wide(a), self.wide(b)
        with np.errstate(all="ignore"):
            for name, fn, ref in [("add", dispatch.ops.add, np.add),
                                  ("sub", dispatch.ops.sub, np.subtract),
                                  ("mul", dispatch.ops.mul, np.multiply),
                                  ("div", dispatch.ops.div, np.divide),
                                  ("maximum", dispatch.ops.maximum, np.maximum),
                                  ("minimum", dispatch.ops.minimum, np.minimum),
                                  ("operator +", lambda x, y: x + y, np.add),
                                  ("add alpha=2", lambda x, y: dispatch.ops.add(x, y, alpha=2),
                                   lambda x, y: x + F32(2) * y)]:
                self.same(self.bits_of(fn(ta, tb)), self.rounded(ref(wa, wb).tolist()), name)
        # non-contiguous and broadcast operands through the same loops
        m = ta.view(len(a) // 4, 4) if len(a) % 4 == 0 else ta[: len(a) // 4 * 4].view(-1, 4)
        got = self.bits_of(m.T + m[:, 0])
        wm = wa[: m.numel()].reshape(-1, 4)
        with np.errstate(all="ignore"):
            self.same(got, self.rounded((wm.T + wm[:, 0]).ravel().tolist()),
                      "add, transposed + broadcast")

    def unary_ops(self) -> None:
        a = self.patterns
        t, w = self.from_bits(a), self.wide(a)
        with np.errstate(all="ignore"):
            for name, fn, ref in [("neg", lambda x: -x, np.negative), ("abs", abs, np.abs),
                                  ("sqrt", dispatch.ops.sqrt, np.sqrt)]:
                self.same(self.bits_of(fn(t)), self.rounded(ref(w).tolist()), name)
        t32 = t.to(dispatch.float32)
        for name in ("exp", "log", "tanh"):  # the runtime's float32 function, rounded once
            fn = getattr(dispatch.ops, name)
            self.same(self.bits_of(fn(t)), self.rounded(fn(t32).tolist()), name)
        b, c = self._operands(6000, 2)
        n = min(len(b), len(a) * 40)
        x = self.from_bits([a[i % len(a)] for i in range(n)])
        y, z = self.from_bits(b[:n]), self.from_bits(c[:n])
        for v in (1.0, 0.5, 0.1):
            got = dispatch.ops.addcmul(x, y, z, value=v)
            want = dispatch.ops.addcmul(x.to(dispatch.float32), y.to(dispatch.float32),
                                        z.to(dispatch.float32), value=v)
            self.same(self.bits_of(got), self.rounded(want.tolist()), ("addcmul", v))

    def scalars_and_in_place(self) -> None:
        """A Python scalar of mul and div stays float32 (not rounded to the dtype
        first), one of add and sub is the dtype's value of it, as PyTorch's CPU
        operators (Note [float16 with a scalar] in sources/dispatcher/operators_elementwise.c)."""
        t, w = self.from_bits(self.patterns), self.wide(self.patterns)
        with np.errstate(all="ignore"):
            for s in (2.0, 0.1, 3.3, 1e-3):
                r = F32(self.value(self.fmt.encode(s)))  # s rounded to the dtype
                for name, got, want in [("mul", t * s, w * F32(s)), ("div", t / s, w / F32(s)),
                                        ("rmul", s * t, F32(s) * w), ("rdiv", s / t, F32(s) / w),
                                        ("add", t + s, w + r), ("sub", t - s, w - r)]:
                    self.same(self.bits_of(got), self.rounded(want.tolist()), ("scalar", name, s))
            y = t.clone()
            y *= 0.1
            self.same(self.bits_of(y), self.rounded((w * F32(0.1)).tolist()), "in-place *=")
            y = t.clone()
            y += t
            self.same(self.bits_of(y), self.rounded((w + w).tolist()), "in-place +=")
        g = dispatch.empty(5, dtype=self.dt)
        for v in (0.1, -3.0, -self.fmt.max, math.nan):
            g.fill_(v)
            assert self.bits_of(g) == [self.fmt.encode(v)] * 5, ("fill_", v)
        # beyond the finite range: PyTorch's c10::overflows, a ValueError (inf
        # too where the format has none); an int as well as a float
        bad = [self.fmt.max * (1 + 2.0**-20), -self.fmt.max * 2]
        bad += [math.inf, -math.inf] if self.fmt.nans == "FN" else []
        bad += [int(self.fmt.max) + 1] if self.fmt.max < 2**63 else []
        for v in bad:
            try:
                g.fill_(v)
            except ValueError as e:
                assert self.name in str(e), e
            else:
                raise AssertionError(("fill_ beyond the range accepted", v, self.bits_of(g)))
        if self.fmt.nans == "IEEE":
            g.fill_(-math.inf)
            assert self.bits_of(g) == [self.fmt.encode(-math.inf)] * 5, "fill_(-inf)"
        assert self.bits_of(dispatch.full((3,), 0.3, dtype=self.dt)) == [self.fmt.encode(0.3)] * 3
        src = dispatch.tensor([0.1, 1e9, -7.3], dtype=dispatch.float64)
        dst = dispatch.empty(3, dtype=self.dt)
        dst.copy_(src)
        assert self.bits_of(dst) == self.rounded([0.1, 1e9, -7.3]), "copy_ from float64"
        z = dispatch.zeros(4, dtype=self.dt)
        z[1] = 0.3
        assert self.bits_of(z) == [0, self.fmt.encode(0.3), 0, 0], "setitem"

    def comparisons_and_where(self) -> None:
        a, b = self._operands(6000, 3)
        ta, tb = self.from_bits(a), self.from_bits(b)
        wa, wb = self.wide(a), self.wide(b)
        for name, ref in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                          ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
            got = getattr(dispatch.ops, name)(ta, tb)
            assert got.dtype is dispatch.bool and got.tolist() == ref(wa, wb).tolist(), name
        cond = ta < tb
        w = dispatch.ops.where(cond, ta, tb)
        assert self.bits_of(w) == [x if c else y for c, x, y in zip(cond.tolist(), a, b)], "where"
        w = dispatch.ops.where(cond, ta, 0.1)  # a Python scalar: the dtype's value of it
        assert self.bits_of(w) == [x if c else self.fmt.encode(0.1)
                                   for c, x in zip(cond.tolist(), a)], "where, scalar"

    def reductions(self) -> None:
        """float32 accumulation, one rounding: on data whose float32 sum is exact
        (so the order of additions cannot matter), against that sum rounded once."""
        rng = random.Random(4)
        small = [b for b in self.finite if 0.125 <= abs(self.value(b)) <= 16]
        bits = [rng.choice(small) for _ in range(3000)]
        vals = [self.value(b) for b in bits]
        exact = math.fsum(vals)
        s32 = float(np.sum(np.array(vals, F32), dtype=F32))
        assert s32 == exact, "the premise: a float32 sum that is exact"
        t = self.from_bits(bits)
        s = t.sum()
        assert s.dtype is self.dt and self.bits_of(s.view(1)) == [self.fmt.encode(exact)], \
            ("sum", s.item(), exact)
        m = t.mean()
        assert self.bits_of(m.view(1)) == [self.fmt.encode(float(F32(exact) / F32(3000)))], \
            ("mean", m.item())
        rows = t.view(30, 100)
        want = [math.fsum(vals[r * 100:(r + 1) * 100]) for r in range(30)]
        assert self.bits_of(rows.sum(1)) == self.rounded(want), "sum(dim)"
        cols = [math.fsum(vals[c::100]) for c in range(100)]
        assert self.bits_of(dispatch.ops.sum(rows, [0])) == self.rounded(cols), "sum(dim 0)"
        # a sum beyond the largest finite value: what the format's overflow gives
        big = dispatch.full((64,), self.fmt.max, dtype=self.dt)
        assert self.bits_of(big.sum().view(1)) == [self.fmt.encode(64 * self.fmt.max)], "overflow"
        # max, min, argmax, argmin: exact, the first of equal extremes
        fin = [b for b in self.finite]
        pick = [rng.choice(fin) for _ in range(1000)]
        x, v = self.from_bits(pick), [self.value(b) for b in pick]
        assert x.max().item() == max(v) and x.min().item() == min(v), "max, min"
        assert x.max().dtype is self.dt and x.amax().item() == max(v), "amax"
        assert dispatch.ops.argmax(x).item() == v.index(max(v)), "argmax"
        assert dispatch.ops.argmin(x).item() == v.index(min(v)), "argmin"
        vals2, idx = dispatch.ops.max(x.view(10, 100), 1)
        assert vals2.tolist() == [max(v[r * 100:(r + 1) * 100]) for r in range(10)], "max(dim)"
        assert idx.tolist() == [v[r * 100:(r + 1) * 100].index(max(v[r * 100:(r + 1) * 100]))
                                for r in range(10)], "max(dim) indices"
        withnan = self.from_bits([self.fmt.encode(1.0), self.fmt.nan, self.fmt.encode(2.0)])
        assert math.isnan(withnan.max().item()) and math.isnan(withnan.sum().item()), "NaN"

    def promotion(self) -> None:
        """Floats by item size (two of one size: the narrowest wider one); an integer
        or bool tensor, or a Python scalar, keeps the float."""
        t = dispatch.tensor([1.5, -2.0], dtype=self.dt)
        for other in ("float16", "bfloat16", "float32", "float64", self.name):
            od = getattr(dispatch, other)
            if od is self.dt:
                want = self.dt
            elif od.itemsize != self.dt.itemsize:
                want = od if od.itemsize > self.dt.itemsize else self.dt
            else:
                want = dispatch.float32
            for got in ((t + dispatch.zeros(1, dtype=od)).dtype,
                        (dispatch.zeros(1, dtype=od) + t).dtype):
                assert got is want, ("promotion", other, got, want)
            assert (t + dispatch.zeros(1, dtype=od)).tolist() == [1.5, -2.0]
        for other in ("bool", "int8", "uint8", "int16", "int32", "int64"):
            got = (t + dispatch.zeros(2, dtype=getattr(dispatch, other))).dtype
            assert got is self.dt, ("promotion with an integer tensor", other, got)
        assert (t + 1).dtype is self.dt and (t * 2.5).dtype is self.dt, "Python scalars"

    def printing(self) -> None:
        t = dispatch.tensor([0.5, -1.75, math.nan, 2.0], dtype=self.dt)
        text = repr(t)
        assert text.startswith("tensor([") and text.endswith(f"dtype=dispatch.{self.name})"), text
        for v in ("0.5", "-1.75", "nan", "2."):
            assert v in text, (v, text)
        assert str(t) == text
        one = repr(dispatch.tensor(self.fmt.max, dtype=self.dt))  # the digits read back
        number = one[len("tensor("):one.index(",")]
        assert self.fmt.encode(float(number)) == self.fmt.max_bits, one
        many = self.from_bits([self.finite[i % len(self.finite)] for i in range(3000)])
        assert "..." in repr(many.view(30, 100)), "summarized"
        repr(self.from_bits(self.patterns))  # every value, subnormals and NaNs included

    def dlpack(self) -> None:
        t = self.from_bits(self.finite)
        u = dispatch.from_dlpack(t)
        assert u.dtype is self.dt and u.data_ptr() == t.data_ptr(), "from_dlpack shares memory"
        assert self.bits_of(u) == self.finite
        for versioned in (True, False):
            cap = t.__dlpack__(max_version=(1, 0) if versioned else None)
            code, bits, lanes = dl_dtype(cap, versioned)
            assert (code, bits, lanes) == (self.dl_code, 8 * self.fmt.itemsize, 1), \
                ("DLPack dtype", versioned, code, bits, lanes)
            assert dispatch.from_dlpack(_Capsule(cap)).dtype is self.dt, "DLPack code back"


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


class _Versioned(ctypes.Structure):  # DLManagedTensorVersioned (DLPack >= 1.0)
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


class _Legacy(ctypes.Structure):  # DLManagedTensor
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


def dl_dtype(capsule, versioned: bool) -> tuple[int, int, int]:
    """(type code, bits, lanes) of a DLPack capsule, read as the DLPack ABI lays it out."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    ptr = get(capsule, b"dltensor_versioned" if versioned else b"dltensor")
    dl = (_Versioned if versioned else _Legacy).from_address(ptr).dl_tensor
    return dl.code, dl.bits, dl.lanes


class _Capsule:
    """A producer handing over a capsule it already made (as a foreign library would)."""

    def __init__(self, capsule) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


if __name__ == "__main__":
    sys.exit(main())
