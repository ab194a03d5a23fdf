"""Emit the C source of the cffi extension ``dispatch._core`` (out-of-line API mode).

Run by meson at build time::

    python tools/cffi_build.py --out _core_cffi.c tools/cffi/a.cdef tools/cffi/b.cdef

Each ``.cdef`` file holds the declarations cffi exposes, and names the C
headers that declare them in ``// include: dispatch/x.h`` lines; the generated
module includes those headers, so the compiler checks every declaration
against the real one.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import cffi

_INCLUDE = re.compile(r"^//\s*include:\s*(\S+)\s*$", re.M)


def build(cdef_files: list[Path], out: Path) -> None:
    ffi = cffi.FFI()
    headers: list[str] = []
    for path in sorted(cdef_files, key=lambda p: p.name):
        text = path.read_text()
        headers += [h for h in _INCLUDE.findall(text) if h not in headers]
        ffi.cdef(text)
    prelude = "".join(f'#include "{h}"\n' for h in headers)
    ffi.set_source("dispatch._core", prelude)
    ffi.emit_c_code(str(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("cdefs", type=Path, nargs="+")
    args = parser.parse_args()
    build(args.cdefs, args.out)


if __name__ == "__main__":
    main()
