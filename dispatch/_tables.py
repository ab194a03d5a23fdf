"""The runtime's tables, read from C at import: never retyped in Python.

Dtypes, loops, error kinds, dispatch keys, devices and reductions are each one
list in the C headers (X-macros: DISPATCH_FORALL_DTYPES in dtype.h, the
loops of operators.toml in the generated _loops.h, DISPATCH_FORALL_ERRORS,
_KEYS, _DEVICES, _REDUCTIONS); this module asks the compiled runtime for ids,
names and facts through cffi, so inserting an entry anywhere in a C list
renumbers Python too. tests/test_tables_agree.py checks both sides agree.
"""

from __future__ import annotations

import builtins

from ._core import ffi, lib


def _str(p: object) -> str:
    return ffi.string(p).decode()


# dtypes (Note [One dtype list] in sources/include/dispatch/dtype.h), by id
MAX_DIMS = lib.DISPATCH_MAX_DIMS  # dims a tensor may have
NUM_DTYPES = lib.DISPATCH_NUM_DTYPES
DTYPE_NAMES = tuple(_str(lib.dispatch_dtype_name(i)) for i in range(NUM_DTYPES))
DTYPE_ITEMSIZES = tuple(int(lib.dispatch_dtype_itemsize(i)) for i in range(NUM_DTYPES))
DTYPE_TYPESTRS = tuple(_str(lib.dispatch_dtype_typestr(i)) for i in range(NUM_DTYPES))
DTYPE_FORMATS = tuple(_str(lib.dispatch_dtype_format(i)) for i in range(NUM_DTYPES))
DTYPE_CATEGORIES = tuple(lib.dispatch_dtype_category_of(i) for i in range(NUM_DTYPES))
CAT_BOOL, CAT_INT, CAT_FLOAT = lib.DISPATCH_CAT_BOOL, lib.DISPATCH_CAT_INT, lib.DISPATCH_CAT_FLOAT
DTYPES = {name: i for i, name in enumerate(DTYPE_NAMES)}  # name -> id
# id -> (min, max) of each integer dtype (Note [Integer facts] in dtype.h)
DTYPE_INT_RANGES = {i: (int(lib.dispatch_dtype_min(i)), int(lib.dispatch_dtype_max(i)))
                    for i in range(NUM_DTYPES) if DTYPE_CATEGORIES[i] == CAT_INT}


def ctx_ctype(dtype: int) -> str:
    """The cffi type of one scalar ctx of a loop of this dtype (float16, bfloat16: its bits)."""
    size, cat = DTYPE_ITEMSIZES[dtype], DTYPE_CATEGORIES[dtype]
    if cat == CAT_BOOL:
        return "bool"
    if cat == CAT_FLOAT:
        return {4: "float", 8: "double"}.get(size, f"uint{8 * size}_t")
    return f"{'u' if DTYPE_TYPESTRS[dtype][1] == 'u' else ''}int{8 * size}_t"


# loops (Note [One table] in sources/include/dispatch/loops.h), by id
NUM_LOOPS = lib.DISPATCH_NUM_LOOPS
LOOP_NAMES = tuple(_str(lib.dispatch_loop_name(i)) for i in range(NUM_LOOPS))
LOOPS = {name: i for i, name in enumerate(LOOP_NAMES)}  # name -> id
LOOP_NIN = {name: lib.dispatch_loop_nin(i) for i, name in enumerate(LOOP_NAMES)}
_LOOP_CTX = tuple(lib.dispatch_loop_ctx_kind(i) for i in range(NUM_LOOPS))
LOOP_CTX_OPTIONAL = frozenset(n for n, c in zip(LOOP_NAMES, _LOOP_CTX)
                              if c == lib.DISPATCH_LOOP_CTX_OPTIONAL)  # NULL means the default
LOOP_CTX_REQUIRED = frozenset(n for n, c in zip(LOOP_NAMES, _LOOP_CTX)
                              if c == lib.DISPATCH_LOOP_CTX_REQUIRED)

# error kinds (DISPATCH_FORALL_ERRORS in error.h): kind -> exception class
ERR_PYTHON = lib.DISPATCH_ERR_PYTHON  # a Python kernel raised: Python keeps the exception
ERRORS = {k: getattr(builtins, _str(lib.dispatch_error_kind_name(k)))
          for k in range(1, lib.DISPATCH_NUM_ERROR_KINDS) if k != ERR_PYTHON}

# dispatch keys (DISPATCH_FORALL_KEYS in dispatcher.h): name -> id, Undefined left out
KEYS = {_str(lib.dispatch_key_name(k)): k for k in range(1, lib.DISPATCH_NUM_KEYS)}

# devices (DISPATCH_FORALL_DEVICES in storage.h): name -> id
DEVICES = {_str(lib.dispatch_device_name(d)): d for d in range(lib.DISPATCH_NUM_DEVICES)}

# reductions of the engine (DISPATCH_FORALL_REDUCTIONS in iterator.h): name -> id
REDUCTIONS = {_str(lib.dispatch_reduce_name(r)): r for r in range(lib.DISPATCH_NUM_REDUCTIONS)}
