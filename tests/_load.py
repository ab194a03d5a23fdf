"""A Python file loaded as a module by its path: the scripts of tools/ (not
a package) and the tests' own files that a test reads as a module."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_file(path: Path, name: str) -> ModuleType:
    """path run as the module `name`, registered in sys.modules under it
    (dataclasses look their module up there while the file runs)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
