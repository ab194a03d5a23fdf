"""Fit the polynomial coefficients used by sources/kernels/exp_log.dispatch.c.

Run ``python3 tools/bench/fit_coefficients.py`` (needs mpmath) to print them;
the kernel file holds the printed values. Each polynomial is a Chebyshev fit
(near-minimax) of the part of the function the kernel does not compute
exactly, over the reduced argument range, in 60-digit arithmetic, then rounded
to the working precision.

- exp: e^r = 1 + r + r^2 * Q(r), |r| <= ln2/2; Q fitted to (e^r - 1 - r)/r^2.
- log: log(1+f) = 2 atanh(s), s = f/(2+f), |s| <= (sqrt2-1)/(sqrt2+1);
  2 atanh(s) = 2s + s * z * P(z), z = s^2; P fitted to (2atanh(s) - 2s)/s^3.
- tanh (float32): tanh(x) = x + x^3 * P(x^2), |x| <= 0.75; P fitted to
  (tanh(x) - x)/x^3 as a function of z = x^2. tanh_f16: the same with the
  degree float16's 11 bits need, computed in float32.
"""

from __future__ import annotations

import mpmath as mp

mp.mp.dps = 60

RANGES = {"exp_f32": 4, "exp_f64": 9, "log_f32": 3, "log_f64": 7, "tanh_f32": 5, "tanh_f16": 3}
TANH_SMALL = mp.mpf("0.75")  # |x| below which float32 tanh is the polynomial


def fit_exp(degree: int) -> list:
    half = mp.log(2) / 2

    def q(r):
        if abs(r) < mp.mpf("1e-20"):
            return mp.mpf(1) / 2
        return (mp.exp(r) - 1 - r) / r**2

    coeffs, err = mp.chebyfit(q, [-half, half], degree + 1, error=True)
    return coeffs, err


def fit_log(degree: int) -> list:
    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)

    def p(z):
        if z < mp.mpf("1e-30"):
            return mp.mpf(2) / 3
        s = mp.sqrt(z)
        return (2 * mp.atanh(s) - 2 * s) / s**3

    coeffs, err = mp.chebyfit(p, [0, smax**2], degree + 1, error=True)
    return coeffs, err


def fit_tanh(degree: int) -> list:
    def p(z):
        if z < mp.mpf("1e-40"):
            return -mp.mpf(1) / 3
        x = mp.sqrt(z)
        return (mp.tanh(x) - x) / x**3

    coeffs, err = mp.chebyfit(p, [0, TANH_SMALL**2], degree + 1, error=True)
    return coeffs, err


FITS = {"exp": fit_exp, "log": fit_log, "tanh": fit_tanh}


def main() -> None:
    import numpy as np

    for name, degree in RANGES.items():
        coeffs, err = FITS[name.split("_")[0]](degree)
        ftype = np.float64 if name.endswith("f64") else np.float32
        print(f"{name}: degree {degree}, fit error {mp.nstr(err, 3)} (highest first)")
        for c in coeffs:
            v = ftype(float(c))
            if ftype is np.float32:
                print(f"    {float(v).hex()}f,  /* {v!r} */")
            else:
                print(f"    {float(v).hex()},  /* {v!r} */")


if __name__ == "__main__":
    main()
