"""The x86 SIMD targets a test can force in a child interpreter: for each,
the features DISPATCH_DISABLE_CPU_FEATURES turns off so that it is the
highest target left, and the feature the hardware needs to run it. The one
copy of these facts for the tests that run code on every target."""

from __future__ import annotations

import os

import dispatch

# target -> features to disable so that it is the highest one left, highest first
DISABLE = {
    "AVX512_SPR": "",
    "AVX512_SKX": "AVX512_SPR",
    "FMA3__AVX2": "AVX512F",
    "SSE42": "AVX",
    "baseline": "SSE41",
}
# A target runs here when the hardware has this feature.
NEEDS = {"AVX512_SPR": "AVX512_SPR", "AVX512_SKX": "AVX512_SKX", "FMA3__AVX2": "AVX2",
         "SSE42": "SSE42", "baseline": "SSE2"}


def runnable(target: str) -> bool:
    return bool(dispatch.__cpu_features__.get(NEEDS[target], False))


def forced_env(target: str) -> dict:
    """This process's environment without DISPATCH_* settings, the features
    above `target` disabled."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCH_")}
    if DISABLE[target]:
        env["DISPATCH_DISABLE_CPU_FEATURES"] = DISABLE[target]
    return env
