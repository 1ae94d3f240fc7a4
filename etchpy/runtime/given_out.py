"""A call's given output (`out=`): where a dense result may be written.

The generated C trusts its arrays and clears a dense output before it reads
its inputs, so a given output must be exactly the result's shape and the
semiring's dtype, C-contiguous and writeable, and share no memory with any
array the call reads. `checked_out` is the general path's check (InputError
naming what is wrong); `out_apart` and `out_fits` are a call plan's (a miss,
never an error: the general path then words it).
"""
from __future__ import annotations

import numpy as np

from . import binder
from ..errors import InputError
from .tensor import Tensor


def checked_out(out, shape, sr, inputs) -> np.ndarray:
    """`out` when a dense result of `shape` may be written there: a C-contiguous,
    writeable numpy array of the semiring's dtype sharing no memory with any of
    the `inputs` arrays (a kernel clears out before reading them). Else
    InputError."""
    if not isinstance(out, np.ndarray):
        raise InputError(f"out must be a numpy array, not {type(out).__name__}")
    if out.shape != shape or out.dtype != sr.dtype:
        raise InputError(f"out must have shape {shape} and dtype {np.dtype(sr.dtype)} "
                         f"(semiring {sr.name}); got shape {out.shape}, dtype {out.dtype}")
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise InputError("out must be C-contiguous and writeable")
    if any(np.may_share_memory(out, arr) for arr in inputs):
        raise InputError("out shares memory with an input; the kernel would overwrite "
                         "what it reads")
    return out


def _arrays(value):
    """The arrays a call reads of an input `value` (a number: none), or None for
    a kind not listed: a numpy array, an ep.Tensor, a scipy or pydata csr, csc, gcxs
    or coo array (their `data` and index arrays)."""
    if type(value) is np.ndarray:
        return (value,)
    if isinstance(value, Tensor):
        return (value._vals, *(a for level in value._levels for a in level.values()))
    if isinstance(value, (int, float, np.generic)):
        return ()
    fmt = getattr(value, "format", None)
    if fmt in ("csr", "csc", "gcxs") and hasattr(value, "indptr"):
        return (value.data, value.indices, value.indptr)
    if fmt == "coo" and hasattr(value, "coords"):
        return (value.data, *value.coords)
    return None


def out_apart(out, inputs: dict) -> bool:
    """Whether `out` is a numpy array sharing no memory with any array of the
    `inputs` (by name); False for an input kind `_arrays` does not list. The
    binder's C test answers where it is loaded (runtime.binder.out_test)."""
    if (test := binder.out_test()) is not None and (got := test(out, inputs, Tensor)) >= 0:
        return got == 1
    return apart_in_python(out, inputs)


def apart_in_python(out, inputs: dict) -> bool:
    """out_apart's answer worked out in Python (each array by np.may_share_memory)."""
    if type(out) is not np.ndarray:
        return False
    for value in inputs.values():
        arrays = _arrays(value)
        if arrays is None or any(np.may_share_memory(out, a) for a in arrays):
            return False
    return True


def out_fits(out, shape: tuple, dtype) -> bool:
    """Whether a dense result of `shape` and `dtype` may be written into `out`
    (apart from the inputs already: out_apart)."""
    return (out.shape == shape and out.dtype == dtype and out.flags.c_contiguous
            and out.flags.writeable)
