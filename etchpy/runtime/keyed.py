"""The codes where a keyed column's comparisons hold (expr.keyed), at call time.

A column read in an order keyed by its value (expr.compare.KeyedVar) holds at
every stored entry V[c], c the entry's code at mode `by`, V nondecreasing; a
comparison of it with bounds is a range of those codes (expr.keyed). This
module finds the range from the tensor passed for the column:

    mark(t, by)                       the mark of a table's copy of such a column
                                      (relational.stored): values sorted along
                                      its positions, its first level mode `by`
    carry(t, made, runs)              the mark kept on t read with runs of levels
                                      below its first as one (runtime.shared)
    code_range(t, by, tests, name)    (lo, hi): the codes c whose value passes
                                      every (op, threshold) of `tests`

On a marked tensor the values are sorted along the positions (the first
level is the value's code) and can be written by nothing (immutable, as its
index arrays: runtime.tensor `frozen`), so the mark stays true: each bound is
one binary search of the values, then one of the first level's positions by
the first position of the last level below each (formats.positions): no
pass over the rows. Any other tensor is checked in one pass (sorted by its
codes at `by`, its values nondecreasing and one per code) and is an
InputError naming the input when it is not so keyed. A table builds the
order again when the value column was written (relational.stored), and
hands out the new copy, marked. proofs_notes/predicates.md ("A comparison
on a value-keyed order").
"""
from __future__ import annotations

import bisect

import numpy as np

from ..errors import InputError
from ..formats.positions import head_span, leaf_start
from .tensor import Tensor, frozen

_MARK = "_etchpy_keyed"
_SIDE = {">=": "left", ">": "right", "<": "left", "<=": "right"}


def mark(t: Tensor, by: int) -> Tensor:
    """Mark `t` (a column of an order keyed by its value at mode `by`, stored
    first, sorted along its positions; its values immutable) as such; `t`."""
    if t.format.mode_order[0] == by and frozen(t._vals):
        t.__dict__[_MARK] = by
    return t


def carry(t: Tensor, made: Tensor, runs) -> Tensor:
    """`made`, Tensor t with runs (k, j) of its levels read as one (runtime.shared),
    marked as t is when no run takes in its first level: its first level, its
    positions and its values are t's."""
    by = t.__dict__.get(_MARK)
    if by is not None and all(k > 0 for k, _ in runs):
        mark(made, by)
    return made


def code_range(t: Tensor, by: int, tests, name: str) -> tuple[int, int]:
    """(lo, hi): the codes c of mode `by` such that the entries of `t` at c pass
    every (op, x) of `tests` (x in t's dtype, compared as the kernel would),
    given that t is keyed at `by` (module docstring); lo == hi when none."""
    fast = _searched(t, tests) if t.__dict__.get(_MARK) == by else None
    return fast if fast is not None else _checked(t, by, tests, name)


def _searched(t: Tensor, tests):
    """code_range on a marked tensor: binary searches only; None when its levels
    below the first are not all unique compressed or singleton ones."""
    fmt, levels = t.format, t._levels
    span = head_span(fmt, levels, t.shape[fmt.mode_order[0]])
    if span is None or t.order < 2 or leaf_start(fmt, levels, 0) is None:
        return None
    n, crd = span
    vals = t._vals
    first, end = 0, len(vals)
    for op, x in tests:
        at = int(np.searchsorted(vals, x, side=_SIDE[op]))
        first, end = (max(first, at), end) if op in (">=", ">") else (first, min(end, at))
    if first >= end:
        return 0, 0
    lo = _least(n, lambda i: leaf_start(fmt, levels, i) >= first)
    hi = _least(n, lambda i: leaf_start(fmt, levels, i) >= end)
    if crd is None:
        return lo, hi
    return (int(crd[lo]), int(crd[hi - 1]) + 1) if lo < hi else (0, 0)


def _least(n: int, holds) -> int:
    """The least i in 0..n where `holds` (false, then true; true at n): a bisection."""
    return bisect.bisect_left(range(n), True, key=holds)


def _checked(t: Tensor, by: int, tests, name: str) -> tuple[int, int]:
    """code_range by one pass over t's entries, checking that t is keyed at `by`."""
    coords, vals = t.to_coords()
    order = np.argsort(coords[by], kind="stable")
    c, v = coords[by][order], vals[order]
    bad = (len(v) > 1 and bool(np.any(v[1:] < v[:-1]) or np.any((c[1:] == c[:-1])
                                                                & (v[1:] != v[:-1])))
           or v.dtype.kind == "f" and bool(np.isnan(v).any()))
    if bad:
        raise InputError(f"input {name} is declared as a column read in an order keyed by "
                         f"its value at mode {by} (Table.var of a value-keyed order), but "
                         f"its values are not one nondecreasing value per code of that "
                         f"mode; pass the table's Tensor of that order "
                         f"(T.tensor(value, order))")
    keep = np.ones(len(v), dtype=bool)
    for op, x in tests:
        keep &= {">=": np.greater_equal, ">": np.greater, "<": np.less,
                 "<=": np.less_equal}[op](v, x)
    on = c[keep]
    return (int(on[0]), int(on[-1]) + 1) if len(on) else (0, 0)
