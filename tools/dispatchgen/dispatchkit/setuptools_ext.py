"""The setuptools route: a setup.py compiles its dispatchable sources per
target with the same planner, generated headers, guard, report and env
variables as the Meson route (`dispatchgen meson`, meson_plan.py).

    from setuptools import setup
    from dispatchkit.setuptools_ext import DispatchExtension, build_ext

    setup(ext_modules=[DispatchExtension("mymod", sources=["mymod.c"],
                                         dispatch=["add.dispatch.c"])],
          cmdclass={"build_ext": build_ext})

Only a client's build imports this module: setuptools is the client's build
requirement, never the toolkit's (the rest of dispatchkit is standard library
only, and nothing in it imports this file).

The CPU options, first found wins: `build_ext --cpu-baseline=... --cpu-dispatch=...
[--disable-optimization]` (through pip: `-C--build-option="build_ext
--cpu-baseline=avx2"`; or `[build_ext]` in setup.cfg), then the environment
(DISPATCHGEN_CPU_BASELINE, DISPATCHGEN_CPU_DISPATCH,
DISPATCHGEN_DISABLE_OPTIMIZATION, read by the CMake route too), then the
defaults (`min`, `max -xop -fma4`).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

from setuptools import Extension
from setuptools.command.build_ext import build_ext as _build_ext
from setuptools.errors import SetupError

from . import cli, meson_plan
from .errors import DispatchError
from .steps import DEFAULT_BASELINE, DEFAULT_DISPATCH

__all__ = ["DispatchExtension", "build_ext"]

ENV_BASELINE = "DISPATCHGEN_CPU_BASELINE"
ENV_DISPATCH = "DISPATCHGEN_CPU_DISPATCH"
ENV_DISABLE_OPTIMIZATION = "DISPATCHGEN_DISABLE_OPTIMIZATION"
_CXX = (".cpp", ".cc", ".cxx", ".c++")
_ASM = (".S", ".s")
_FALSE = ("", "0", "false", "no", "off")


class DispatchExtension(Extension):
    """An extension module whose init is the toolkit's guard (write
    `DISPATCH_MODULE_INIT(<module>)`, as for Meson): ``sources`` compile with
    the baseline flags, each of ``dispatch`` once per target, each
    ``variants`` file's variants with their target's flags, the CPU runtime
    without the baseline flags. ``options`` are a variants file's build
    options (``{"asm": "true"}``); ``env_prefix`` defaults to the package
    name in upper case. Every other keyword is setuptools' (include_dirs,
    define_macros, extra_compile_args, ...) and applies to every file.

    >>> DispatchExtension("mypkg._ext", ["_ext.c"], dispatch=["add.dispatch.c"])  # doctest: +SKIP
    """

    def __init__(self, name: str, sources: Sequence[str] = (), *,
                 dispatch: Iterable[str] = (), variants: Iterable[str] = (),
                 options: Optional[Dict[str, str]] = None, env_prefix: Optional[str] = None,
                 groups: Optional[str] = None, **kw) -> None:
        super().__init__(name, [str(s) for s in sources], **kw)
        self.dispatch = [str(s) for s in dispatch]
        self.variants = [str(s) for s in variants]
        self.options = dict(options or {})
        self.env_prefix = env_prefix
        self.groups = groups
        if self.language is None and any(s.endswith(_CXX) for s in [*self.sources, *self.dispatch]):
            self.language = "c++"  # linked by the C++ driver, as meson links a C++ target


def _is_msvc(compiler) -> bool:
    """setuptools' MSVC compiler class (cl.exe, /c, /Fo<obj>, extra_postargs last)."""
    return getattr(compiler, "compiler_type", "") == "msvc"


def _compiler_command(compiler, plat_name: Optional[str]) -> str:
    """The --cc of the probe, as one shell-quoted string.

    gcc-style: compiler_so up to its first flag (Python's own -O3 -Wall ...
    left out). MSVC: the cl.exe that setuptools found (it finds it on
    initialize, which compile() would otherwise do later), quoted so that the
    backslashes and spaces of its path survive the split (Note [MSVC-style
    compilers] in msvc.py).
    """
    if _is_msvc(compiler):
        if not compiler.initialized:
            compiler.initialize(plat_name)
        return shlex.quote(compiler.cc)
    words = list(compiler.compiler_so)
    cut = next((i for i, w in enumerate(words) if w.startswith("-")), len(words))
    return " ".join(words[:cut])


class build_ext(_build_ext):
    """setuptools' build_ext, plus the CPU options and DispatchExtension."""

    user_options = _build_ext.user_options + [
        ("cpu-baseline=", None, f"CPU features every part may use (default ${ENV_BASELINE}, "
                                f"else {DEFAULT_BASELINE!r})"),
        ("cpu-dispatch=", None, f"CPU features to dispatch on (default ${ENV_DISPATCH}, "
                                f"else {DEFAULT_DISPATCH!r})"),
        ("disable-optimization", None, "compile each dispatchable source once, as a "
                                       f"baseline source (default ${ENV_DISABLE_OPTIMIZATION})"),
    ]
    boolean_options = _build_ext.boolean_options + ["disable-optimization"]

    def initialize_options(self) -> None:
        super().initialize_options()
        self.cpu_baseline: Optional[str] = None
        self.cpu_dispatch: Optional[str] = None
        self.disable_optimization: Optional[bool] = None

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.cpu_baseline is None:
            self.cpu_baseline = os.environ.get(ENV_BASELINE) or DEFAULT_BASELINE
        if self.cpu_dispatch is None:
            self.cpu_dispatch = os.environ.get(ENV_DISPATCH) or DEFAULT_DISPATCH
        if self.disable_optimization is None:
            value = os.environ.get(ENV_DISABLE_OPTIMIZATION, "")
            self.disable_optimization = value.strip().lower() not in _FALSE

    def build_extension(self, ext) -> None:
        if not isinstance(ext, DispatchExtension):
            super().build_extension(ext)
            return
        outdir = Path(self.build_temp).resolve() / "dispatchgen" / ext.name
        libraries = self._plan(ext, outdir)
        msvc_style = _is_msvc(self.compiler)
        if not msvc_style:  # a variants file's assembly: the C driver preprocesses .S and assembles .s
            self.compiler.src_extensions = [*self.compiler.src_extensions,
                                            *(e for e in _ASM if e not in self.compiler.src_extensions)]
        # ELF's hidden symbols; a .pyd exports only what is dllexport (PyInit_<module>)
        hidden = [] if msvc_style else ["-fvisibility=hidden"]
        macros = [*ext.define_macros, *((name,) for name in ext.undef_macros)]
        objects: List[str] = []
        link: List[str] = []
        for name, sources, cflags, lflags in libraries:
            objects += self.compiler.compile(
                sources, output_dir=str(outdir / name), macros=macros,
                include_dirs=ext.include_dirs, debug=self.debug, depends=ext.depends,
                extra_postargs=[*cflags, *hidden, *ext.extra_compile_args])
            link += lflags
        # setuptools links what it compiled: here nothing, the objects above
        # coming in as extra objects (and as the inputs its up-to-date check reads)
        saved = ext.sources, ext.extra_objects, ext.extra_link_args, ext.depends
        ext.sources, ext.depends = [], [*objects, *ext.depends]
        ext.extra_objects = [*objects, *ext.extra_objects]
        ext.extra_link_args = [*link, *ext.extra_link_args]
        try:
            super().build_extension(ext)
        finally:
            ext.sources, ext.extra_objects, ext.extra_link_args, ext.depends = saved

    def _plan(self, ext: DispatchExtension, outdir: Path) -> list:
        """`dispatchgen meson`'s libraries for ext, in-process; an error is
        setuptools' one line (`error: add.dispatch.c:1: unknown target ...`)."""
        # The compiler without Python's own flags (-O3 -Wall ...): the probe
        # gets what Meson's and CMake's get, the user's CFLAGS and extra args.
        cflags = " ".join([os.environ.get("CFLAGS", ""), *ext.extra_compile_args]).strip()
        argv = ["meson", "--module", ext.name, "--outdir", str(outdir),
                "--cc", _compiler_command(self.compiler, self.plat_name), "--cflags", cflags,
                "--cpu-baseline", self.cpu_baseline, "--cpu-dispatch", self.cpu_dispatch,
                "--sources", *ext.sources, "--dispatch", *ext.dispatch,
                "--variants", *ext.variants,
                *(f"--option={k}={v}" for k, v in ext.options.items())]
        if ext.env_prefix:
            argv += ["--env-prefix", ext.env_prefix]
        if ext.groups:
            argv += ["--groups", str(ext.groups)]
        if self.disable_optimization:
            argv.append("--disable-optimization")
        args = cli.build_parser().parse_args(cli._attach_raw_values(argv))
        try:
            libraries, summary = meson_plan.libraries_and_summary(args)
        except (DispatchError, OSError) as exc:
            raise SetupError(f"dispatchgen: {exc}") from None
        sys.stderr.write("".join(f"{line}\n" for line in summary))
        return libraries
