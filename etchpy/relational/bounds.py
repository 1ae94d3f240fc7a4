"""Bounds of a range of key values, compared exactly with the keys of a coding.

`Keys.codes_between(lo, hi)` needs, for each bound b, the number of key values
v < b (the code of the first value >= b). A bound may have another dtype than
the keys (a float against integers, a datetime of a finer unit, an integer
past the keys' dtype): it is never cast to the keys' dtype, which would round
or overflow, but compared as the value it is:

    integer keys   v < b  iff  v < ceil(b), an exact Python int (±inf: open)
    other keys     b cast to the keys' dtype is tb, the nearest or the next
                   lower value of that dtype; v < b iff v < tb when tb >= b,
                   else v <= tb (no value of the dtype lies between tb and b)

A bound that cannot be compared with the keys (a string against integers) or
that compares with nothing (NaN, NaT) is an InputError naming it.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import InputError


def int_ceiling(bound, where: str) -> float | int:
    """ceil(bound) as an exact Python int, or ±inf for an infinite bound, for
    integer keys (v < bound iff v < ceil(bound)); `where` names the bound."""
    b = bound.item() if isinstance(bound, np.generic) else bound
    if isinstance(b, bool) or not isinstance(b, numbers.Real):
        raise InputError(f"{where} = {bound!r} cannot be compared with integer keys; "
                         f"give a number")
    if isinstance(b, numbers.Integral):
        return int(b)
    b = float(b)
    if math.isnan(b):
        raise InputError(f"{where} is NaN, which compares with no key value")
    return b if math.isinf(b) else math.ceil(b)


def rank_below(table: np.ndarray, bound, where: str) -> int:
    """The number of values of `table` (sorted, distinct, not integers) less
    than `bound`, compared exactly (see the module docstring)."""
    b = _as_bound(bound, table.dtype, where)
    family = {"i": "f", "u": "f"}             # numbers compare with numbers only
    if family.get(b.dtype.kind, b.dtype.kind) != family.get(table.dtype.kind,
                                                            table.dtype.kind):
        raise InputError(f"{where} = {bound!r} (dtype {b.dtype}) cannot be compared "
                         f"with key values of dtype {table.dtype}")
    common = np.result_type(table.dtype, b.dtype)
    if b.dtype.kind in "fmM" and np.isnan(b):
        raise InputError(f"{where} is {b}, which compares with no key value")
    with np.errstate(all="ignore"):
        tb = b.astype(table.dtype)
    if common.kind == "f":          # Python compares a float and an int exactly
        exact = bound if isinstance(bound, numbers.Integral) else b.item()
        below = float(tb) < exact
    else:
        below = bool(tb.astype(common) < b.astype(common))
    return int(np.searchsorted(table, tb, side="right" if below else "left"))


def _as_bound(bound, dtype: np.dtype, where: str) -> np.ndarray:
    """`bound` as a 0-d array: a str is a date (or duration) for datetime (or
    timedelta) keys; a Python int past int64, which numpy holds only as an
    object, is a float (±inf past float64) for float keys and refused else."""
    if isinstance(bound, str) and dtype.kind in "mM":
        try:
            return np.asarray(np.datetime64(bound) if dtype.kind == "M" else
                              np.timedelta64(bound))
        except ValueError:
            raise InputError(f"{where} = {bound!r} is not a date") from None
    b = np.asarray(bound)
    if b.dtype == object and isinstance(bound, numbers.Integral) and dtype.kind == "f":
        huge = math.inf if bound > 0 else -math.inf
        b = np.asarray(float(bound) if abs(bound) < 2**1023 else huge)
    if b.shape != () or b.dtype == object:
        raise InputError(f"{where} = {bound!r} is not one value that compares with "
                         f"key values of dtype {dtype}")
    return b
