"""A value column read only by comparisons, held in a narrow integer dtype, and
the bounds it is compared with converted to that dtype exactly
(proofs_notes/narrow.md).

    narrowed(values)          Narrow(dtype, scale) of a column, or None: the
                              narrowest exact form of its values (the rule below)
    Narrow.stored(values)     the column in that form: round(values * scale), dtype
    Narrow.slot(op, bound)    the integer t, in the dtype's range, such that for
                              every stored k of the form's range,
                              (k / scale) op bound  iff  k op t

Read so by a kernel (Tuning.narrow_compared; runtime.shared's one walk):

    twin(t), kept(t)          an ep.Tensor's narrow form and its integers packed
                              into an array of its value dtype, kept on t while
                              Tensor.unwritten_mark says nothing wrote its values
    compared_only(tv)         the columns a value predicate only compares with bounds
    signature(kern, inputs)   the one walk's narrow reads for a call (runtime.shared)
    candidates(req), narrowed_expr(...)   which inputs may be read narrow, and a
                              one-walk expression with its predicates so marked
                              (CompareVar.narrow)
    blocked(program)          are its narrow reads all in flat_mask's blocked sums?
    slot_columns, read_slots  which slots a narrow column is compared with; the
                              slots array read back as numbers (the interpreters)

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
import dataclasses
import math
import numbers
from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..expr import formula
from ..expr.compare import CompareVar
from ..expr.nodes import Access
from ..expr.walk import accesses, map_operands
from .tensor import Tensor

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


# ---- a value predicate's columns read narrow (Tuning.narrow_compared) ----------

def compared_only(tv, first: bool = False) -> set[int]:
    """The columns k >= 1 (k >= 0 with `first`) of value predicate tv
    (expr.compare) that it reads only
    as `("cmp", op, ("col", k), bound)`, a bound on the right: at the structure's
    positions, not a weight, bin or term column, never scaled, offset or
    compared with another column."""
    used = {k for k, _ in tv.bins} | set(tv.weights) | {
        k for cols, located, *_ in tv.terms for k in cols + located}
    plain, other = set(), set()
    for n in formula.walk(tv.every_test):
        if n[0] != "cmp":
            continue
        if n[2][0] == "col" and n[3][0] in formula.BOUNDS:
            plain.add(n[2][1])
        else:
            other |= set(_columns(n[2])) | set(_columns(n[3]))
    return {k for k in plain - other - used
            if (first or k >= 1) and tv.columns[k][2] is None} if not tv.keyed else set()


def _columns(x):
    if x[0] == "col":
        yield x[1]
    elif x[0] in ("scaled", "plus"):
        yield from _columns(x[1])
        if isinstance(x[2], tuple):
            yield from _columns(x[2])


def twin(t) -> tuple | None:
    """(Narrow, the stored integers packed into an array of t's value dtype) of
    ep.Tensor t's values, or None (no narrow form, or t's values may be held
    elsewhere now: Tensor.unwritten_mark is None). Made once and kept on t while
    its mark stays the same (a write needs a hand-out of its values, which moves
    the mark: proofs_notes/unwritten.md); then O(1)."""
    mark = t.unwritten_mark()
    if mark is None:
        return None
    kept = t.__dict__.get("_etchpy_narrow")
    if kept is not None and kept[0] == mark:
        return kept[1]
    form = narrowed(t._vals)
    made = None if form is None else (form, packed(form.stored(t._vals), t._vals.dtype))
    t.__dict__["_etchpy_narrow"] = (t.unwritten_mark(), made)
    return made


def kept(t) -> np.ndarray:
    """The packed twin `twin(t)` last made (the one this call's kernel was chosen
    by: a write from another thread while a call runs is a race, as for any
    input's values)."""
    return t.__dict__["_etchpy_narrow"][1][1]


def packed(stored: np.ndarray, dtype) -> np.ndarray:
    """The bytes of `stored` as an array of `dtype` (zero bytes after them up to a
    whole element): what a kernel reads back as stored's integers (imp Load view)."""
    dtype = np.dtype(dtype)
    n = -(-stored.nbytes // dtype.itemsize)
    out = np.zeros(max(n, 1), dtype=dtype)
    out.view(np.uint8)[:stored.nbytes] = stored.view(np.uint8)
    return out


def fits(form: Narrow, dtype) -> bool:
    """Can an array of `dtype` (a semiring's float values) carry form's integers
    packed (runtime.predicates reads the slots back as those integers too)?"""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" and dtype.itemsize >= form.dtype.itemsize


def slot_columns(f, forms: dict):
    """(slot, k) for each slot of formula f (expr.formula.slots order) that is the
    bound of a comparison of column k, k among `forms`."""
    s = 0
    for n in formula.walk(f):
        if n[0] != "cmp":
            continue
        if n[2][0] == "col" and n[2][1] in forms:
            yield s, n[2][1]
        s += sum(1 for x in n[2:] for _ in formula._slots(x, n[1]))


def candidates(req) -> tuple[str, ...]:
    """The inputs of request `req` (a kernel's) that some value predicate reads
    only by comparisons with bounds (any column of it): those whose narrow twin
    a one-walk kernel may read (runtime.shared)."""
    out = set()
    for a in accesses(req.expr):
        tv = a.tensor
        if isinstance(tv, CompareVar) and tv.kind == "value":
            out |= {tv.columns[k][0] for k in compared_only(tv, first=True)}
    return tuple(sorted(out))


def narrowed_expr(expr, forms: dict, flat: set, sr):
    """(expr with each value predicate's columns k >= 1 that it only compares,
    whose input is among `forms` (name -> (dtype name, scale)) and `flat` (read
    as its stored values) and read by nothing else, marked narrow (CompareVar
    `narrow`), the names of those inputs)."""
    uses: dict = {}
    for a in accesses(expr):
        tv = a.tensor
        cols = [c[0] for c in tv.columns] if isinstance(tv, CompareVar) else [tv.name]
        for n in cols:
            uses[n] = uses.get(n, 0) + 1
    done: set = set()

    def one(tv):
        ks = sorted(k for k in compared_only(tv) if tv.columns[k][0] in forms
                    and tv.columns[k][0] in flat and uses[tv.columns[k][0]] == 1)
        done.update(tv.columns[k][0] for k in ks)
        item = np.dtype(sr.dtype).itemsize
        return tuple((k, *forms[tv.columns[k][0]],
                      item // np.dtype(forms[tv.columns[k][0]][0]).itemsize) for k in ks)

    def walk(e):
        if isinstance(e, Access):
            tv = e.tensor
            if isinstance(tv, CompareVar) and tv.kind == "value" and (nar := one(tv)):
                return dataclasses.replace(e, tensor=dataclasses.replace(tv, narrow=nar))
            return e
        return map_operands(e, walk)
    out = walk(expr)
    return (out, done) if done else (expr, done)


def blocked(program) -> bool:
    """Is every narrow read (an Imp Load with a view) of the lowered `program`
    inside a flat sum blocked by its tests' byte mask (lower.schedule.flat_mask),
    the form in which narrow columns pay (docs/performance.md)?"""
    def views(x):
        return sum(1 for y in imp.subterms(x) if isinstance(y, imp.Load) and y.view)
    inside = sum(views(x) for x in imp.subterms(program.body) if isinstance(x, imp.Block)
                 and any(isinstance(y, imp.LocalArray) and y.array.endswith("_fm_mask")
                         for y in imp.seq_parts(x.body)))
    return inside == views(program.body)


def read_slots(tv, p) -> list:
    """The slots array `p` of value predicate tv as numbers: each slot of a
    comparison of a narrow column (tv.narrow) read back as its integer."""
    out = list(p)
    forms = {k: (np.dtype(dt), step) for k, dt, _, step in tv.narrow}
    for s, k in slot_columns(tv.every_test, forms):
        out[s] = int(np.asarray(p).view(forms[k][0])[s * forms[k][1]])
    return out


def signature(kern, inputs: dict) -> tuple:
    """((input name, dtype name, scale), ...) of the inputs that kernel `kern`'s one
    walk may read narrow (Tuning.narrow_compared: columns only compared, of an
    ep.Tensor with a narrow twin now) under a semiring of float values that allows
    NaN; () when none (or off)."""
    names = kern.__dict__.get("_narrow_names")
    if names is None:
        names = kern._narrow_names = candidates(kern.request) \
            if kern.request.tuning.narrow_compared > 0 else ()
    if not names:
        return ()
    sr = kern._semiring_of(inputs)
    if not sr.allows_nan or sr.dtype.kind != "f":
        return ()
    out = []
    for n in names:
        t = inputs.get(n)
        made = twin(t) if type(t) is Tensor and t._vals.ndim == 1 else None
        if made is not None and fits(made[0], sr.dtype):
            out.append((n, made[0].dtype.name, made[0].scale))
    return tuple(out)
