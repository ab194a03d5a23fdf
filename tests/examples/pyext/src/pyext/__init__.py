"""pyext: a downstream extension built with the toolkit dispatchgen.

Its CPU report is its own: __cpu_baseline__, __cpu_dispatch__,
__cpu_features__ and __cpu_targets__ (function -> chosen target), and its
env variables are PYEXT_DISABLE_CPU_FEATURES / PYEXT_ENABLE_CPU_FEATURES.
"""
from ._pyext import (  # noqa: F401
    __cpu_baseline__,
    __cpu_dispatch__,
    __cpu_features__,
    __cpu_targets__,
    scale,
    sum,
    targets,
)
