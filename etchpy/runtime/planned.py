"""Planned conversions at call time: the inputs a plan reads in another format.

The planner may read an input converted to another format (plan.convert). The
conversion runs here, on every call, before the kernel: a planned conversion
gives no PerformanceWarning (the plan chose it; the warning is for an input
whose layout is not the declared one).

    kernel_inputs(plan, tensors)   name -> (user's tensor, TensorVar, planned)
    bind(value, tv, sr)            one planned input as a calling.Bound
    with_conversions(plan, bound)  the Tensors of the streams and Imp backends,
                                   with every converted copy added
    converted_structure(t, fmt)    a Tensor's structure in another format, kept on it
    has_structure(t, fmt)          whether it is kept already
    store_structure(t, fmt)        kept as a stored order (a table's): the planner
                                   prices a read of it as a check of the values
    stored_formats(t)              the formats stored so
    unstore_structure(t, fmt)      no longer a stored order (its kept values dropped)
    wanted_formats(t)              format -> how many calls converted `t` to it
                                   without a stored order (a table's demand:
                                   relational.secondary)

Only an `ep.Tensor`'s conversion is kept across calls: its structure cannot be
rebound, so the converted index arrays and, for each converted position, the
position of its value in the Tensor are kept on the Tensor itself (they go
when it goes). Its values may be written in place, so they are gathered again
on every call (one O(nnz) pass); in a stored order (a table's, made ahead of
the queries: `store_structure`) the gathered values are kept too, with the
values they were gathered from, and gathered again only when those differ
(one sequential comparison of the bytes a call, runtime.bits). A scipy or
numpy input may be changed by its owner between calls, so it is converted
again on every call: a canonical scipy csr/csc read as the other is
transposed by scipy's own compiled conversion, after the structural check
every scipy input gets.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import calling
from .bits import same_bits
from . import convert as cv
from .tensor import Tensor, truth_values
from ..plan.convert import bindings

__all__ = ["kernel_inputs", "bind", "with_conversions", "converted_structure",
           "has_structure", "store_structure", "stored_formats", "unstore_structure",
           "wanted_formats"]

def kernel_inputs(plan, tensors: dict) -> dict:
    """The kernel's inputs: name -> (the user's tensor it is bound from, its
    TensorVar, whether it is a planned conversion)."""
    return bindings(plan, tensors)


def bind(value, tv, sr) -> calling.Bound:
    """`value` (the user's input) as input `tv`, a planned conversion of it."""
    if type(value) is Tensor:
        return _tensor_bind(value, tv, sr)
    other = calling.transposed(value, tv, sr)
    if other is not None:
        return calling.bind(other, tv, sr)
    return calling.bind(value, tv, sr)


def with_conversions(plan, bound: dict) -> dict:
    """`bound` (Tensors by the expression's tensor names) with every converted
    copy the plan reads added under its own name."""
    convs = getattr(plan, "conversions", ())
    if not convs:
        return bound
    out = dict(bound)
    for c in convs:
        out[c.name] = bound[c.source].convert(c.format)
    return out


class _Positions(NamedTuple):
    """A tensor whose values are the positions of its own values (for runtime.convert)."""

    shape: tuple
    format: object
    levels: tuple
    vals: np.ndarray
    fill: object


def converted_structure(t: Tensor, fmt, like: Tensor | None = None) -> tuple:
    """(levels, where, missing): Tensor `t`'s structure in format `fmt`, made once
    and kept on `t` (what a planned conversion of `t` reads): the index arrays,
    for each converted position the position of its value in `t.vals`, and the
    positions nothing is stored at (None if none). `like`, a Tensor over the
    same index arrays (one structure, several value columns) whose kept
    structure is shared rather than made again. Called ahead of a query (a
    table's secondary order, relational.stored), the first call converts nothing.

        >>> levels, where, _ = converted_structure(t, ep.Format.named("csc", 2))
    """
    memo = t.__dict__.setdefault("_etchpy_planned", {})
    hit = memo.get(fmt)
    if hit is None and like is not None and _one_structure(like, t):
        hit = memo[fmt] = converted_structure(like, fmt)
    if hit is None:
        n = len(t.vals)
        parts = cv.convert(_Positions(t.shape, t.format, t.levels,
                                      np.arange(n, dtype=np.int64), -1), fmt)
        where = parts.vals
        missing = where < 0                  # dense positions nothing is stored at
        hit = memo[fmt] = (parts.levels, np.where(missing, 0, where),
                           missing if missing.any() else None)
    return hit


def has_structure(t: Tensor, fmt) -> bool:
    """Whether Tensor `t` keeps its structure in format `fmt` already (a planned
    read of it in `fmt` then gathers its values alone)."""
    return fmt in t.__dict__.get("_etchpy_planned", {})


def store_structure(t: Tensor, fmt, like: Tensor | None = None) -> tuple:
    """converted_structure(t, fmt, like), and `fmt` recorded as a stored order of
    `t` (a table's, relational.stored): the planner prices a read of it as one
    check of the values (plan.convert, pipeline.Measured.stored)."""
    hit = converted_structure(t, fmt, like)
    t.__dict__.setdefault("_etchpy_stored", set()).add(fmt)
    return hit


def stored_formats(t) -> tuple:
    """The formats `t` (any input) keeps made as stored orders (store_structure)."""
    return tuple(t.__dict__.get("_etchpy_stored", ())) if type(t) is Tensor else ()


def unstore_structure(t: Tensor, fmt) -> None:
    """`fmt` no longer a stored order of `t` (a table's secondary order replaced):
    a planned read of it is priced and gathered as any conversion again."""
    t.__dict__.get("_etchpy_stored", set()).discard(fmt)
    gathered = t.__dict__.get("_etchpy_gathered", {})
    for key in [k for k in gathered if k[0] == fmt]:
        del gathered[key]


def wanted_formats(t) -> dict:
    """format -> the calls that read Tensor `t` converted to it while it was not
    a stored order of `t` (each counted in `_tensor_bind`)."""
    return dict(t.__dict__.get("_etchpy_wanted", {})) if type(t) is Tensor else {}


def _one_structure(a: Tensor, b: Tensor) -> bool:
    """Whether a and b are over the same index arrays (the same objects)."""
    return a.format == b.format and len(a.levels) == len(b.levels) and all(
        x.keys() == y.keys() and all(x[r] is y[r] for r in x)
        for x, y in zip(a.levels, b.levels))


def _tensor_bind(t: Tensor, tv, sr) -> calling.Bound:
    """Tensor `t` as the planned conversion `tv`: the converted structure, made
    once per format and kept on `t`, and `t`'s current values gathered into it."""
    hit = converted_structure(t, tv.format)
    levels, where, missing = hit
    stored = tv.format in t.__dict__.get("_etchpy_stored", ())
    if not stored:                             # a conversion paid: the table's demand
        wanted = t.__dict__.setdefault("_etchpy_wanted", {})
        wanted[tv.format] = wanted.get(tv.format, 0) + 1
    kept = t.__dict__.get("_etchpy_gathered", {}).get((tv.format, sr.name)) if stored else None
    if kept is not None and same_bits(t.vals, kept[0]):
        vals = kept[1]                       # the values as they were gathered
    else:
        vals = sr.cast(t.vals, what=f"input {tv.name}")[where] if len(t.vals) else \
            np.full(len(where), sr.zero, dtype=sr.dtype)
        if missing is not None:
            vals[missing] = sr.zero
        vals = truth_values(vals)
        if stored:
            t.__dict__.setdefault("_etchpy_gathered", {})[tv.format, sr.name] = (
                t.vals.copy(), vals)
    roles = {"vals": vals}
    for k, arrays in enumerate(levels):
        for key, arr in arrays.items():
            roles[f"{key}{k}"] = arr
    return calling.Bound(t.shape, roles, calling._all_int32(roles))
