"""Row predicates over columns of different structures, read through positions.

A value predicate (expr.compare, kind "value") whose columns are ep.Tensors
that do not share one structure holds at the entries every column stores
(runtime.align finds them once per tuple of Tensors). Written as it is, its
kernel reads each further column at the structure's position, so every call
gathers those columns' values at the aligned positions (a numpy pass over the
common entries). `marked` rewrites such a predicate for a call whose inputs
are known apart (runtime.shared's partition of the inputs into structures):
its columns are read through int64 (int32) position arrays (`CompareVar.through`),
`values[positions[q]]` at the structure's entry q, so a call passes each
column's values as they are and the positions kept for its Tensors.
proofs_notes/predicates.md ("Aligned columns").
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .compare import CompareVar
from .nodes import Access, Expr
from .walk import map_operands


def marked(e: Expr, classes: dict, tensors: set, dtype) -> Expr:
    """e with each value predicate marked `through` its columns read at
    positions (their `at` None) when those columns are all among `tensors` (the
    ep.Tensor inputs of the call), not all of one class of `classes` (input
    name -> the first input over its structure), and the predicate has no bins,
    terms, narrow or keyed columns; e itself when none is marked, or when
    `dtype`, the values' (and so the position arrays') dtype, is not numbers
    of 4 or 8 bytes (the positions ride as int32 or int64 in arrays of it)."""
    dt = np.dtype(dtype)
    if dt.itemsize not in (4, 8) or dt.kind not in "fiu":
        return e
    view = f"int{dt.itemsize * 8}"

    def one(tv: CompareVar) -> CompareVar:
        ks = tuple(k for k, c in enumerate(tv.columns) if c[2] is None)
        names = [tv.columns[k][0] for k in ks]
        if tv.bins or tv.terms or tv.narrow or tv.keyed or tv.through or len(ks) < 2 \
                or ks[0] != 0 or not set(names) <= tensors \
                or len({classes.get(n, n) for n in names}) == 1:
            return tv
        return dataclasses.replace(tv, through=ks, through_view=view)

    def walk(x: Expr) -> Expr:
        if isinstance(x, Access):
            tv = x.tensor
            if isinstance(tv, CompareVar) and tv.kind == "value":
                new = one(tv)
                return x if new is tv else dataclasses.replace(x, tensor=new)
            return x
        return map_operands(x, walk)
    out = walk(e)
    return out if out != e else e
