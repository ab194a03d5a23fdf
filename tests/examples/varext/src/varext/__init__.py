"""varext: a downstream extension whose per-ISA files (one in assembly) are
the variants of a variants file, built with the dispatchgen toolkit."""

from ._varext import __cpu_baseline__, __cpu_dispatch__, __cpu_features__, __cpu_targets__
from ._varext import impl, xor

__all__ = ["xor", "impl", "__cpu_baseline__", "__cpu_dispatch__", "__cpu_features__",
           "__cpu_targets__"]
