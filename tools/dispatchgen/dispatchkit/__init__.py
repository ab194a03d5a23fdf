"""dispatchkit: the engine of the dispatchgen toolkit (its CLI, tools/dispatchgen/dispatchgen).

Build-time only, standard library only (runs from a bare checkout with any
Python >= 3.9). Data flows one way:

    features/ (tables) -> options (cpu-baseline/cpu-dispatch algebra)
    -> probe (validate against the real compiler, cached) -> config (BuildConfig)
    -> targets (parse @targets of one source) -> generate (headers, wrappers)
"""

__version__ = "0.1.0"  # also in ../pyproject.toml and lib/pkgconfig/dispatchgen.pc (tests/toolkit/test_packaging.py)
