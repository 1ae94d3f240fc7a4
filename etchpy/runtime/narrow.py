"""A value column read only by comparisons, held in a narrow integer dtype, and
the bounds it is compared with converted to that dtype exactly
(proofs_notes/narrow.md).

    narrowed(values)          Narrow(dtype, scale) of a column, or None: the
                              narrowest exact form of its values (the rule below)
    Narrow.stored(values)     the column in that form: round(values * scale), dtype
    Narrow.slot(op, bound)    the integer t, in the dtype's range, such that for
                              every stored k of the form's range,
                              (k / scale) op bound  iff  k op t

The rule (chosen from the values, never from their dtype alone):
- integers, or floats that are all whole numbers: scale 1;
- else floats that are all two-digit decimals, each value exactly the float64
  nearest to k / 100 for an integer k (a price in cents, a discount in
  hundredths, as a database's DECIMAL(15,2) read as float64 is): scale 100;
- the dtype is the narrowest of int8, int16, int32 whose range, less its two
  end values, holds every stored k (the ends are left free so that a clamped
  bound still decides every stored value as the unclamped one would);
- anything else (NaN or infinities, other decimals, values past int32 once
  scaled, an empty column, booleans, non-numbers): None, kept as it is.

A stored k stands for k / scale computed in float64 (the value the column
held), so a comparison with a bound is decided as the float64 column's would
be, to the last bit: `slot` finds the threshold by comparing k / scale with
the bound exactly (Python compares a float with an int or a float exactly),
not by scaling the bound (which rounds).
"""
from __future__ import annotations

import bisect
import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

DTYPES = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32))
SCALES = (1, 100)
_OPS = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class Narrow:
    """A column's narrow form: its values are stored as integers k of `dtype`,
    each standing for k / scale (float64)."""

    dtype: np.dtype
    scale: int

    def stored(self, values) -> np.ndarray:
        """`values` (which `narrowed` accepted for this form) as stored integers."""
        v = np.asarray(values)
        if self.scale == 1 and v.dtype.kind in "iu":
            return v.astype(self.dtype)
        return np.rint(v.astype(np.float64) * self.scale).astype(self.dtype)

    def value(self, k: int) -> float | int:
        """What stored integer k stands for (the float64 value, or k itself at scale 1)."""
        return k if self.scale == 1 else k / self.scale

    def slot(self, op: str, bound) -> int:
        """The integer t (a Python int in the dtype's range) with `value(k) op bound`
        iff `k op t` for every k of the dtype but its two end values; InputError
        for a bound that is not one real number or is NaN."""
        if op not in _OPS:
            raise ValueError(f"not a comparison: {op!r}")
        b = _real(bound)
        info = np.iinfo(self.dtype)
        lo, hi = int(info.min), int(info.max)
        if op in ("<", ">="):    # k < t iff value(k) < b: t = the least k with value(k) >= b
            t = self._least(lambda k: self.value(k) >= b, lo, hi)
        else:                    # k <= t iff value(k) <= b: t = the greatest such k
            t = self._least(lambda k: self.value(k) > b, lo, hi) - 1
        return min(max(t, lo), hi)

    def _least(self, holds, lo: int, hi: int) -> int:
        """The least k in lo..hi where the monotone test `holds` (false below,
        true from some k on) is true; hi + 1 when there is none (a bisection)."""
        return lo + bisect.bisect_left(range(lo, hi + 1), True, key=holds)


def _real(bound):
    """bound as an exact Python int or a float, not NaN."""
    b = bound.item() if isinstance(bound, np.generic) else bound
    if isinstance(b, bool) or not isinstance(b, numbers.Real):
        raise InputError(f"bound {bound!r} is not a number")
    if isinstance(b, numbers.Integral):
        return int(b)
    b = float(b)
    if math.isnan(b):
        raise InputError("bound is NaN, which compares with no value")
    return b


def narrowed(values) -> Narrow | None:
    """The narrow form of a value column under the rule of the module docstring,
    or None (the column kept as it is)."""
    v = np.asarray(values)
    if v.ndim != 1 or not len(v) or v.dtype.kind not in "iuf":
        return None
    if v.dtype.kind in "iu":
        return _fitting(int(v.min()), int(v.max()), 1)
    if not np.all(np.isfinite(v)):
        return None
    lo, hi = float(v.min()), float(v.max())
    for scale in SCALES:
        if max(abs(lo), abs(hi)) * scale >= 2.0 ** 31:
            return None
        k = np.rint(v * scale)
        back = k if scale == 1 else k / scale
        if np.array_equal(back, v):
            return _fitting(int(k.min()), int(k.max()), scale)
    return None


def _fitting(lo: int, hi: int, scale: int) -> Narrow | None:
    for dt in DTYPES:
        info = np.iinfo(dt)
        if info.min < lo and hi < info.max:
            return Narrow(dt, scale)
    return None
