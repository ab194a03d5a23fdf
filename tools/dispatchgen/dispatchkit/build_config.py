"""Options + compiler -> BuildConfig: what this build will really do.

The BuildConfig is written to dispatch_config.json at configure time; every
later step (per-source headers, wrappers, reports) reads it instead of asking
the compiler again. (dispatch_config.py is another thing: the
`dispatch-config` command, which says where the installed toolkit is.)
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import msvc
from .errors import DispatchError
from .features import ARCHES, Arch, arch_from_macros
from .features.base import merge_keep_last
from .inputs import read_input
from .options import parse_option
from .probe import Probe

POLICY_FLAGS = {
    # policy -> compiler family -> flags; `$autovec` adds each feature's own
    # autovec flags too (512-bit vectors for AVX-512 targets)
    "$maxopt": {"gcc": ["-O3"], "clang": ["-O3"]},
    "$werror": {"gcc": ["-Werror"], "clang": ["-Werror"]},
    "$autovec": {"gcc": ["-ftree-vectorize", "-fvect-cost-model=dynamic"],
                 "clang": ["-fvectorize", "-fslp-vectorize"]},
}
for _family in msvc.FAMILIES:  # Note [MSVC-style compilers] in msvc.py
    for _policy, _flags in msvc.POLICY_FLAGS.items():
        POLICY_FLAGS[_policy][_family] = _flags


def feature_flags(family: str, arch: Arch, names: Sequence[str]) -> Optional[List[str]]:
    """The flags that enable ``names`` (and all they imply) with a compiler of
    ``family``; None when it has none (cl beyond what its /arch covers on an
    architecture it has no levels for)."""
    if family == msvc.MSVC:
        return msvc.cl_arch_flags(arch, names)
    return arch.flags_for(names)


def flag_merger(family: str, arch: Arch):
    return merge_keep_last(("/arch:",)) if family == msvc.MSVC else arch.merge


@dataclass
class BuildConfig:
    arch: str
    compiler: List[str]
    compiler_family: str
    compiler_version: str
    cflags: List[str]
    requested_baseline: str
    requested_dispatch: str
    baseline: List[str]
    baseline_flags: List[str]
    dispatch: List[str]
    dispatch_flags: Dict[str, List[str]]
    skipped: List[Dict[str, str]] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    unsupported: Dict[str, str] = field(default_factory=dict)

    @property
    def table(self) -> Arch:
        return ARCHES[self.arch]

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def load(cls, path: Path) -> "BuildConfig":
        """Read a dispatch_config.json; anything but what to_json writes is an error."""
        text = read_input(Path(path), "build configuration")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise DispatchError(f"cannot read build configuration: {exc}", str(path)) from None
        problem = _config_problem(data)
        if problem:
            raise DispatchError(f"cannot read build configuration: {problem} (run "
                                "configure again to rewrite it)", str(path))
        return cls(**data)

    def target_flags(self, features: Sequence[str]) -> List[str]:
        """The baseline's and ``features``' flags, merged (cl: one /arch for all)."""
        if self.compiler_family == msvc.MSVC:
            return msvc.cl_arch_flags(self.table, [*self.baseline, *features]) or []
        return self.table.merge(self.baseline_flags + self.table.flags_for(features))

    def policy_flags(self, policies: Sequence[str], features: Sequence[str]) -> List[str]:
        flags: List[str] = []
        if "$autovec" in policies and "$maxopt" not in policies:
            policies = [*policies, "$maxopt"]  # as in NumPy, $autovec implies $maxopt
        for policy in sorted(policies):
            flags += POLICY_FLAGS.get(policy, {}).get(self.compiler_family, [])
            if policy == "$autovec" and self.compiler_family != msvc.MSVC:
                for name in self.table.sort(self.table.closure(features)):
                    flags += [f for f in self.table.by_name[name].autovec if f not in flags]
        return flags


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _str_map(value_ok: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, dict) and all(isinstance(k, str) and value_ok(x)
                                                  for k, x in v.items())


_STR: Tuple[Callable[[Any], bool], str] = (lambda v: isinstance(v, str), "a string")
_STRS = (_strs, "a list of strings")
_FIELD_TYPES = {
    "arch": _STR, "compiler": _STRS, "compiler_family": _STR, "compiler_version": _STR,
    "cflags": _STRS, "requested_baseline": _STR, "requested_dispatch": _STR,
    "baseline": _STRS, "baseline_flags": _STRS, "dispatch": _STRS,
    "dispatch_flags": (_str_map(_strs), "an object of lists of strings"),
    "skipped": (lambda v: isinstance(v, list) and all(_str_map(_STR[0])(x) for x in v),
                "a list of objects of strings"),
    "notes": _STRS,
    "unsupported": (_str_map(_STR[0]), "an object of strings"),
}


def _config_problem(data: Any) -> str:
    """What is wrong with a loaded configuration ('' when nothing): the JSON types
    of every field, the arch and feature names, and that the flags and reasons
    meson gets on one line are printable text."""
    if not isinstance(data, dict):
        return f"expected a JSON object, got {type(data).__name__}"
    fields = {f.name: f for f in dataclasses.fields(BuildConfig)}
    for key in data:
        if key not in fields:
            return f"unknown key {key!r}"
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                return f"{name!r} is missing"
            continue
        ok, what = _FIELD_TYPES[name]
        if not ok(data[name]):
            return f"{name!r} must be {what}, got {_json_type(data[name])}"
    arch = ARCHES.get(data["arch"])
    if arch is None:
        return f"'arch' is {data['arch']!r}, not one of {', '.join(ARCHES)}"
    for name in ("baseline", "dispatch", "dispatch_flags", "unsupported"):
        unknown = next((n for n in data.get(name, ()) if n not in arch.by_name), None)
        if unknown is not None:
            return f"{name!r} names {unknown!r}, not a feature of {arch.name}"
    for name in ("baseline", "dispatch"):
        # each feature once (as configure writes them): every later step's cost
        # is then bounded by the architecture's features, not by the file
        seen: set = set()
        twice = next((n for n in data[name] if n in seen or seen.add(n)), None)
        if twice is not None:
            return f"{name!r} names {twice!r} twice"
    texts = [*data["baseline_flags"], *(f for v in data["dispatch_flags"].values() for f in v),
             *data.get("unsupported", {}).values()]
    bad = next((t for t in texts if not t.isprintable()), None)
    if bad is not None:
        return f"{bad!r} is not printable text"
    return ""


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def split_words(value: str) -> List[str]:
    try:
        return shlex.split(value)
    except ValueError as exc:
        raise DispatchError(f"cannot split '{value}': {exc}") from None


def configure(cc: str, cflags: str, baseline: str, dispatch: str,
              cache_dir: Optional[Path], exhaustive: bool = False) -> BuildConfig:
    """Validate both options against the compiler ``cc`` (a command line).

    ``exhaustive``: compile every feature's check on its own, never the one
    union compile (see Note [Union probe] in probe.py).
    """
    probe = Probe(split_words(cc), split_words(cflags), cache_dir)
    try:
        return _configure(probe, cc, cflags, baseline, dispatch, exhaustive)
    finally:
        probe.save()


def _apple_arches(words: Sequence[str]) -> List[str]:
    """The values of Apple clang's `-arch X` options in a command line."""
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w == "-arch"]


def _configure(probe: Probe, cc: str, cflags: str, baseline: str, dispatch: str,
               exhaustive: bool = False) -> BuildConfig:
    arches = _apple_arches([*probe.argv, *probe.cflags])
    if len(arches) > 1:
        raise DispatchError(
            f"--cc/--cflags: '{' '.join([*probe.argv, *probe.cflags])}' compiles for "
            f"{len(arches)} architectures at once ({', '.join('-arch ' + a for a in arches)}); "
            "features and flags differ per architecture: configure once per -arch and "
            "merge the builds (docs/downstream.md, macOS)")
    macros = probe.macros()
    arch = arch_from_macros(macros)
    if arch is None:
        raise DispatchError(f"--cc: cannot tell the target architecture of '{cc}' "
                            f"(known: {', '.join(ARCHES)})")
    family, version = probe.family_and_version()
    apple_notes: List[str] = []
    if "__APPLE__" in macros:
        missing = probe.hosted_headers_error()
        if missing:  # Note [Apple without an SDK] in probe.py
            probe.probe_flags = ["-ffreestanding"]
            apple_notes.append(
                f"--cc: '{cc}' finds no C library headers for its Apple target ({missing}): "
                "the feature checks were compiled -ffreestanding, to objects only; building "
                "needs the macOS SDK (-isysroot \"$(xcrun --show-sdk-path)\")")

    asked: List[List[str]] = []

    def native() -> List[str]:
        if family == msvc.MSVC:
            raise DispatchError("'native': cl has no flag for the building machine's CPU; "
                                "name the features (e.g. avx2 fma3)")
        # asked of the compiler once per configure, however often `native` is
        # written (each ask is a compiler run: 1,000 `native` took 1,000 runs)
        if not asked:
            nat = probe.macros(["-march=native"])
            asked.append([f.name for f in arch.features
                          if f.macros and all(m in nat for m in f.macros)])
        return list(asked[0])

    base_sel = parse_option(baseline, arch, "cpu-baseline", native)
    disp_sel = parse_option(dispatch, arch, "cpu-dispatch", native)
    notes = apple_notes + base_sel.notes + disp_sel.notes

    unsupported = _validate(probe, arch, family, exhaustive)

    # Features the compiler enables on its own (x86_64's SSE2, -mavx2 in CFLAGS)
    # are in every object it builds: they join the baseline.
    predefined = [f.name for f in arch.features
                  if f.macros and all(m in macros for m in f.macros)
                  and not unsupported.get(f.name)]
    base = set(arch.closure(base_sel.names))
    for name in arch.sort(set(arch.closure(predefined)) - base):
        notes.append(f"cpu-baseline: {name} joins the baseline: the compiler enables it "
                     "without flags")
    base |= arch.closure(predefined)

    skipped: List[Dict[str, str]] = []
    for name in arch.sort(base):
        reason = unsupported.get(name)
        if not reason:
            continue
        origin = base_sel.origin.get(name, "")
        if origin.upper() in ("MAX", "NATIVE"):
            skipped.append({"feature": name, "option": "cpu-baseline", "reason": reason})
            base.discard(name)
            for succ in arch.successors(name):
                base.discard(succ)
        else:
            raise DispatchError(
                f"{name} cannot be in the baseline: {reason}; the compiler '{cc}' "
                f"cannot build it. Remove it (and what implies it) from cpu-baseline",
                "cpu-baseline")

    base = set(arch.closure(base))
    dispatch_names: List[str] = []
    for name in arch.sort(disp_sel.names):
        if name in base:
            skipped.append({"feature": name, "option": "cpu-dispatch",
                            "reason": "already in the baseline"})
        elif unsupported.get(name):
            skipped.append({"feature": name, "option": "cpu-dispatch",
                            "reason": unsupported[name]})
        else:
            dispatch_names.append(name)

    base_sorted = arch.sort(base)
    base_flags = feature_flags(family, arch, base_sorted) or []
    return BuildConfig(
        arch=arch.name,
        compiler=probe.argv,
        compiler_family=family,
        compiler_version=version,
        cflags=probe.cflags,
        requested_baseline=baseline,
        requested_dispatch=dispatch,
        baseline=base_sorted,
        baseline_flags=base_flags,
        dispatch=dispatch_names,
        dispatch_flags={n: _with_baseline(family, arch, base_sorted, base_flags, n)
                        for n in dispatch_names},
        skipped=skipped,
        notes=notes,
        unsupported={k: v for k, v in sorted(unsupported.items()) if v},
    )


def _with_baseline(family: str, arch: Arch, base: List[str], base_flags: List[str],
                   name: str) -> List[str]:
    if family == msvc.MSVC:  # one /arch for the baseline and the feature together
        return msvc.cl_arch_flags(arch, [*base, name]) or []
    return arch.merge(base_flags + arch.flags_for([name]))


def _validate(probe: Probe, arch: Arch, family: str, exhaustive: bool = False) -> Dict[str, str]:
    """feature -> '' when the compiler builds it, else the reason it cannot.

    See Notes [Probe validation] and [Union probe] in probe.py.
    """
    flags = {f.name: feature_flags(family, arch, [f.name]) for f in arch.features}
    jobs = [(f.name, f.check_source, flags[f.name])
            for f in arch.features if not f.disable and flags[f.name] is not None]
    errors = None if exhaustive else probe.compile_union(jobs, flag_merger(family, arch))
    if errors is None:
        errors = probe.compile_checks(jobs)
    reasons: Dict[str, str] = {}
    for f in arch.features:
        if f.disable:
            reasons[f.name] = f.disable
        elif flags[f.name] is None:
            reasons[f.name] = msvc.cl_unsupported_reason(arch)
        elif errors[f.name]:
            reasons[f.name] = f"compiler lacks it ({errors[f.name]})"
    # A feature is only as supported as everything it implies.
    for f in arch.features:
        if reasons.get(f.name):
            continue
        missing = [d for d in arch.sort(arch.closure([f.name]) - {f.name}) if reasons.get(d)]
        if missing:
            reasons[f.name] = f"implies {missing[0]}, which the compiler lacks"
    return {f.name: reasons.get(f.name, "") for f in arch.features}
